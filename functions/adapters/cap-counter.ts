import { BatchGetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { UsageCounter } from '../domain/aggregation/lanes';
import type { Stamp } from '../domain/aggregation/lease';
import { capCounterKeys } from '../domain/ingest/cap';
import type { CapStore, CounterItem, Hold } from '../domain/ingest/metering';
import { dynamoClient } from '../shared/clients/dynamo';
import { isConditionFailure } from './aws-errors';

/**
 * The monthly accepted-event count of each company (counters table: attribute n, and a map
 * attribute `h_<id>` {t, a, r} per batch hold) and the batch marks (ledger table, expiring). Each
 * method is one conditional write: the order that makes a batch count once is the domain's
 * (functions/domain/ingest/metering.ts). No transactions: the local DynamoDB emulator lacks them.
 */
export class CapCounter implements CapStore, UsageCounter {
  constructor(
    private readonly countersTable: string,
    private readonly ledgerTable: string,
  ) {}

  /** The sum of the month's shards (functions/domain/ingest/cap.ts), read consistently in one call. */
  async acceptedThisMonth(companyId: string, nowMs: number): Promise<number> {
    const items = await this.read(capCounterKeys(companyId, nowMs));
    return items.reduce((sum, item) => sum + item.n, 0);
  }

  async read(keys: readonly string[]): Promise<CounterItem[]> {
    let unread: Record<string, unknown>[] = keys.map((pk) => ({ pk }));
    const found = new Map<string, CounterItem>();
    for (let attempt = 0; unread.length > 0; attempt++) {
      if (attempt === 3) throw new Error('cap count: shards left unread by the batch read');
      const { Responses, UnprocessedKeys } = await dynamoClient().send(
        new BatchGetCommand({ RequestItems: { [this.countersTable]: { Keys: unread, ConsistentRead: true } } }),
      );
      for (const item of Responses?.[this.countersTable] ?? []) found.set(item.pk as string, counterItem(item));
      unread = UnprocessedKeys?.[this.countersTable]?.Keys ?? [];
    }
    return keys.map((key) => found.get(key) ?? { key, n: 0, holds: new Map() });
  }

  /**
   * The aggregator's addition to a company's month (the `#agg` item of functions/domain/ingest/cap.ts):
   * stamped like a report row with its lane's apply, and refused where the item holds that apply
   * or a later one of the lane, so a replayed apply adds once.
   */
  add(key: string, events: number, stamp: Stamp): Promise<boolean> {
    return this.conditionally({
      Key: { pk: key },
      UpdateExpression: 'ADD n :events SET #lane = :seq',
      ConditionExpression: 'attribute_not_exists(#lane) OR #lane < :seq',
      ExpressionAttributeNames: { '#lane': `l${stamp.lane}` },
      ExpressionAttributeValues: { ':events': events, ':seq': stamp.seq },
    });
  }

  hold(key: string, holdId: string, token: string, accepted: number, below: number | null): Promise<boolean> {
    return this.conditionally({
      Key: { pk: key },
      UpdateExpression: 'ADD n :accepted SET #hold = :hold',
      ConditionExpression:
        below === null ? 'attribute_not_exists(#hold)' : 'attribute_not_exists(#hold) AND (attribute_not_exists(n) OR n < :below)',
      ExpressionAttributeNames: { '#hold': holdId },
      ExpressionAttributeValues: {
        ':accepted': accepted,
        ':hold': { t: token, a: accepted, r: 1 },
        ...(below === null ? {} : { ':below': below }),
      },
    });
  }

  join(key: string, holdId: string, token: string): Promise<boolean> {
    return this.conditionally(this.onHold(key, holdId, token, 'SET #hold.r = #hold.r + :one', { ':one': 1 }));
  }

  async leave(key: string, holdId: string, token: string): Promise<number | undefined> {
    try {
      const { Attributes } = await dynamoClient().send(
        new UpdateCommand({
          TableName: this.countersTable,
          ...this.onHold(key, holdId, token, 'SET #hold.r = #hold.r - :one', { ':one': 1 }),
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return (Attributes?.[holdId] as { r?: number } | undefined)?.r;
    } catch (error) {
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  release(key: string, holdId: string, token: string, accepted: number, lastOnly: boolean): Promise<boolean> {
    if (!lastOnly) return this.conditionally(this.onHold(key, holdId, token, 'ADD n :taken REMOVE #hold', { ':taken': -accepted }));
    const update = this.onHold(key, holdId, token, 'ADD n :taken REMOVE #hold', { ':taken': -accepted, ':none': 0 });
    return this.conditionally({ ...update, ConditionExpression: `${update.ConditionExpression} AND #hold.r = :none` });
  }

  async mark(markKey: string, token: string, accepted: number, expiresAtS: number): Promise<boolean> {
    try {
      await dynamoClient().send(
        new PutCommand({
          TableName: this.ledgerTable,
          Item: { pk: markKey, t: token, accepted, expires_at: expiresAtS },
          ConditionExpression: 'attribute_not_exists(pk) OR t = :token',
          ExpressionAttributeValues: { ':token': token },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async unhold(key: string, holdId: string, token: string): Promise<void> {
    await this.conditionally(this.onHold(key, holdId, token, 'REMOVE #hold', {}));
  }

  /** An update of the item that holds only while the hold is token's. */
  private onHold(key: string, holdId: string, token: string, UpdateExpression: string, values: Record<string, unknown>) {
    return {
      Key: { pk: key },
      UpdateExpression,
      ConditionExpression: '#hold.t = :token',
      ExpressionAttributeNames: { '#hold': holdId },
      ExpressionAttributeValues: { ':token': token, ...values },
    };
  }

  /** An update of the counters table: false when its condition refused it. */
  private async conditionally(update: Omit<ConstructorParameters<typeof UpdateCommand>[0], 'TableName'>): Promise<boolean> {
    try {
      await dynamoClient().send(new UpdateCommand({ TableName: this.countersTable, ...update }));
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}

const HOLD = /^h_[0-9a-f]+$/;

function counterItem(item: Record<string, unknown>): CounterItem {
  const holds = new Map<string, Hold>();
  for (const [name, value] of Object.entries(item)) {
    if (!HOLD.test(name)) continue;
    const { t, a, r } = value as { t: string; a: number; r: number };
    holds.set(name, { token: t, accepted: a, refs: r });
  }
  return { key: item.pk as string, n: typeof item.n === 'number' ? item.n : 0, holds };
}
