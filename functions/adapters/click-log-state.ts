import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { ClickLogState } from '../domain/aggregation/click-counts';
import { dynamoClient } from '../shared/clients/dynamo';
import { isConditionFailure } from './aws-errors';

/**
 * The click-count lane's state per app (functions/domain/aggregation/click-counts.ts): one item of
 * the aggregates table, pk `<app_id>#click_log`, sk `state`, beside the counter items it governs,
 * so that a report reads it with the table it already reads. Every write is conditional on the
 * revision read: a holder that lost the lease cannot overwrite the one that has it.
 */
export class ClickLogStates {
  constructor(private readonly tableName: string) {}

  async state(appId: string): Promise<ClickLogState | undefined> {
    const { Item } = await dynamoClient().send(
      new GetCommand({ TableName: this.tableName, Key: { pk: `${appId}#click_log`, sk: 'state' }, ConsistentRead: true }),
    );
    if (!Item) return undefined;
    const { rev, next, hours, pending, log_from, no_legacy } = Item as ClickLogState;
    return {
      rev,
      next,
      hours: hours ?? {},
      ...(pending ? { pending } : {}),
      ...(log_from ? { log_from } : {}),
      ...(no_legacy === true ? { no_legacy } : {}),
    };
  }

  async putState(appId: string, state: ClickLogState, expectedRev: number | undefined): Promise<boolean> {
    try {
      await dynamoClient().send(
        new PutCommand({
          TableName: this.tableName,
          Item: { pk: `${appId}#click_log`, sk: 'state', ...state },
          ConditionExpression: expectedRev === undefined ? 'attribute_not_exists(pk)' : '#rev = :rev',
          ...(expectedRev === undefined
            ? {}
            : { ExpressionAttributeNames: { '#rev': 'rev' }, ExpressionAttributeValues: { ':rev': expectedRev } }),
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}

/**
 * The click-count lane's lease: one item of the ledger table, `click_counts#lease`, with its holder
 * and until when (epoch ms), as the aggregation lanes' leases (lease.ts).
 */
export class ClickLaneLease {
  constructor(private readonly tableName: string) {}

  async takeLease(holder: string, nowMs: number, leaseMs: number): Promise<boolean> {
    try {
      await dynamoClient().send(
        new PutCommand({
          TableName: this.tableName,
          Item: { pk: LEASE_KEY, holder, lease_until_ms: nowMs + leaseMs },
          ConditionExpression: 'attribute_not_exists(pk) OR lease_until_ms < :now',
          ExpressionAttributeValues: { ':now': nowMs },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async releaseLease(holder: string): Promise<void> {
    try {
      await dynamoClient().send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: LEASE_KEY },
          UpdateExpression: 'SET lease_until_ms = :free',
          ConditionExpression: 'holder = :holder',
          ExpressionAttributeValues: { ':free': 0, ':holder': holder },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }
}

const LEASE_KEY = 'click_counts#lease';
