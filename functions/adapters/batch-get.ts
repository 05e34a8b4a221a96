import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { dynamoClient } from '../shared/clients/dynamo';

/** BatchGetItem reads at most 100 keys a call. */
export const BATCH_GET_KEYS = 100;
/** Calls per 100 keys before keys DynamoDB keeps leaving unprocessed fail the read. */
const BATCH_GET_ATTEMPTS = 5;

/**
 * The items of `keys` in one table, read consistently, 100 keys a call, in any order; absent ones
 * left out. Keys DynamoDB leaves unprocessed (throttling, 16 MB a call) are asked again after a
 * short, growing pause, as AWS advises; still left after a few calls, the read fails (the caller's
 * delivery is retried).
 */
export async function batchGetItems(tableName: string, keys: readonly Record<string, unknown>[]): Promise<Record<string, unknown>[]> {
  const items: Record<string, unknown>[] = [];
  for (let from = 0; from < keys.length; from += BATCH_GET_KEYS) {
    let unread: Record<string, unknown>[] = keys.slice(from, from + BATCH_GET_KEYS);
    for (let attempt = 0; unread.length > 0; attempt++) {
      if (attempt === BATCH_GET_ATTEMPTS) throw new Error(`${tableName}: keys left unread by the batch read`);
      if (attempt > 0) await new Promise((resolve) => setTimeout(resolve, 25 * 2 ** attempt));
      const { Responses, UnprocessedKeys } = await dynamoClient().send(
        new BatchGetCommand({ RequestItems: { [tableName]: { Keys: unread, ConsistentRead: true } } }),
      );
      items.push(...(Responses?.[tableName] ?? []));
      unread = UnprocessedKeys?.[tableName]?.Keys ?? [];
    }
  }
  return items;
}
