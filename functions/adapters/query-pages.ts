import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import { dynamoClient } from '../shared/clients/dynamo';

/**
 * The items of a query, page after page, for as long as the caller keeps reading: a caller that
 * finds what it wants stops, and no further page is read.
 */
export async function* queryItems<T>(input: Omit<QueryCommandInput, 'ExclusiveStartKey'>): AsyncGenerator<T> {
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await dynamoClient().send(new QueryCommand({ ...input, ExclusiveStartKey }));
    for (const item of page.Items ?? []) yield item as T;
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
}

export async function queryAll<T>(input: Omit<QueryCommandInput, 'ExclusiveStartKey'>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of queryItems<T>(input)) items.push(item);
  return items;
}
