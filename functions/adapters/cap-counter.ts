import { BatchGetCommand, DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamoClient } from '../shared/clients/dynamo';
import { BATCH_MARK_TTL_SECONDS, batchMarkKey, capCounterKeys, capShardOf, type CountedBatch } from '../domain/ingest/cap';

/**
 * The monthly accepted-event count of each company (counters table, attribute n, ADD only) and
 * the per-batch marks (ledger table) that let a retried batch count once. No transactions: the
 * local DynamoDB emulator lacks them, and one conditional put before one ADD is enough.
 */
export class CapCounter {
  constructor(
    private readonly countersTable: string,
    private readonly ledgerTable: string,
  ) {}

  /** The sum of the month's shards (functions/domain/ingest/cap.ts), read consistently in one call. */
  async acceptedThisMonth(companyId: string, nowMs: number): Promise<number> {
    let keys: Record<string, unknown>[] = capCounterKeys(companyId, nowMs).map((pk) => ({ pk }));
    let total = 0;
    for (let attempt = 0; keys.length > 0; attempt++) {
      if (attempt === 3) throw new Error('cap count: shards left unread by the batch read');
      const { Responses, UnprocessedKeys } = await dynamoClient().send(
        new BatchGetCommand({ RequestItems: { [this.countersTable]: { Keys: keys, ConsistentRead: true } } }),
      );
      for (const item of Responses?.[this.countersTable] ?? []) if (typeof item.n === 'number') total += item.n;
      keys = UnprocessedKeys?.[this.countersTable]?.Keys ?? [];
    }
    return total;
  }

  /**
   * Adds a stored batch's accepted events to its month, once per batch. Returns false when the
   * batch had been counted already (a retry whose first answer was lost). If the ADD fails after
   * the mark was written, the mark is taken back so the client's retry counts the batch; should
   * that fail too the batch stays uncounted, which errs on the customer's side.
   */
  async countOnce(batch: CountedBatch): Promise<boolean> {
    if (batch.accepted === 0) return true;
    const mark = batchMarkKey(batch.appId, batch.bodySha256);
    try {
      await dynamoClient().send(
        new PutCommand({
          TableName: this.ledgerTable,
          Item: { pk: mark, expires_at: Math.floor(batch.receivedMs / 1000) + BATCH_MARK_TTL_SECONDS, accepted: batch.accepted },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      if ((error as Error).name === 'ConditionalCheckFailedException') return false;
      throw error;
    }
    try {
      await dynamoClient().send(
        new UpdateCommand({
          TableName: this.countersTable,
          Key: { pk: capShardOf(batch.companyId, batch.receivedMs, batch.bodySha256) },
          UpdateExpression: 'ADD n :accepted',
          ExpressionAttributeValues: { ':accepted': batch.accepted },
        }),
      );
    } catch (error) {
      await dynamoClient().send(new DeleteCommand({ TableName: this.ledgerTable, Key: { pk: mark } })).catch(() => undefined);
      throw error;
    }
    return true;
  }
}
