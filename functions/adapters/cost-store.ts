import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { CostDay, CostDays, PartnerCost } from '../domain/analytics/cost';
import { type CostRow, decodeCostDay, encodeCostDay, PERF_FAMILIES } from '../domain/analytics/performance';
import { dynamoClient } from '../shared/clients/dynamo';
import { isConditionFailure } from './aws-errors';

const pkOf = (appId: string, family: string) => `${appId}#${family}`;

/**
 * The cost rows of the aggregates table (docs/analytics.md, "Rows"):
 * - `<app_id>#cost`, sk `<day>`: `rows` (encodeCostDay), `ver` (1 up per replace), `day`;
 * - `<app_id>#cost_partner`, sk `<day>\u0001<partner>`: COST_COUNTERS, `ver` (the cost day's they
 *   were summed from), `day`, `partner`;
 * - `<app_id>#perf_stamp`, sk `<day>`: `v`, which every write to the day's performance data adds to.
 */
export class CostStore implements CostDays {
  constructor(private readonly tableName: string) {}

  async readDay(appId: string, day: string): Promise<CostDay> {
    const { Item } = await dynamoClient().send(
      new GetCommand({ TableName: this.tableName, Key: { pk: pkOf(appId, PERF_FAMILIES.cost), sk: day }, ConsistentRead: true }),
    );
    if (!Item) return { rows: [], ver: 0 };
    return { rows: decodeCostDay(String(Item.rows ?? '[]')), ver: Number(Item.ver ?? 0) };
  }

  /** The day's item replaced whole, only over the version it was read at: two uploads of a day never lose each other's rows. */
  async replaceDay(appId: string, day: string, rows: readonly CostRow[], ver: number): Promise<boolean> {
    try {
      await dynamoClient().send(
        new PutCommand({
          TableName: this.tableName,
          Item: { pk: pkOf(appId, PERF_FAMILIES.cost), sk: day, day, rows: encodeCostDay(rows), ver },
          ConditionExpression: ver === 1 ? 'attribute_not_exists(ver)' : 'ver = :read',
          ExpressionAttributeValues: ver === 1 ? undefined : { ':read': ver - 1 },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /**
   * Each partner's sums, put only over sums of an older cost day: of two uploads racing, the one
   * that replaced the day last (whose rows include the other's) leaves its sums. A refusal means
   * sums at this ver or a later one are there already.
   */
  async putPartnerCosts(appId: string, day: string, ver: number, sums: readonly PartnerCost[]): Promise<void> {
    await Promise.all(
      sums.map(async ({ partner, counters }) => {
        try {
          await dynamoClient().send(
            new PutCommand({
              TableName: this.tableName,
              Item: { pk: pkOf(appId, PERF_FAMILIES.costPartner), sk: `${day}\u0001${partner}`, day, partner, ...counters, ver },
              ConditionExpression: 'attribute_not_exists(ver) OR ver < :ver',
              ExpressionAttributeValues: { ':ver': ver },
            }),
          );
        } catch (error) {
          if (!isConditionFailure(error)) throw error;
        }
      }),
    );
  }

  async touchDay(appId: string, day: string): Promise<void> {
    await dynamoClient().send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: pkOf(appId, PERF_FAMILIES.perfStamp), sk: day },
        UpdateExpression: 'ADD v :one',
        ExpressionAttributeValues: { ':one': 1 },
      }),
    );
  }
}
