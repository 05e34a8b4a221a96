import {
  type AttributeValue,
  QueryCommand as RawQueryCommand,
  type QueryCommandInput as RawQueryInput,
  type QueryCommandOutput as RawQueryOutput,
} from '@aws-sdk/client-dynamodb';
import { QueryCommand, type QueryCommandInput } from '@aws-sdk/lib-dynamodb';
import type { InitializeMiddleware } from '@smithy/types';
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

export type RawItem = Record<string, AttributeValue>;

/**
 * The pages of a query as DynamoDB sends them (attribute values still typed, `{"N": "12"}`), for
 * a reader of many small items that converts only the attributes it needs: the document client's
 * conversion of every attribute, and the SDK's pass over the whole output that prepares it for a
 * logger, cost more per item than reading it (docs/reports.md, "Speed"). The query goes through
 * the same client, which sends a plain DynamoDB command as it is.
 */
export async function* queryRawPages(input: Omit<RawQueryInput, 'ExclusiveStartKey'>, limitOf: () => number): AsyncGenerator<RawItem[]> {
  const client = dynamoClient() as unknown as { send(command: RawQueryCommand): Promise<RawQueryOutput> };
  let ExclusiveStartKey: RawItem | undefined;
  do {
    const command = new RawQueryCommand({ ...input, Limit: limitOf(), ExclusiveStartKey });
    command.middlewareStack.add(withoutOutputLogFilter, { step: 'initialize', priority: 'low', name: 'withoutOutputLogFilter' });
    const page = await client.send(command);
    yield page.Items ?? [];
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
}

/**
 * The SDK's logger middleware filters the whole output for sensitive fields before it hands it to
 * the logger, whether or not the logger prints anything (the default one never does): for a page
 * of 1,000 items that is a copy of every item, about a tenth of a report's time. Reports log no
 * query output, so the filter is the identity for these queries.
 */
const withoutOutputLogFilter: InitializeMiddleware<RawQueryInput, RawQueryOutput> = (next, context) => (args) => {
  context.outputFilterSensitiveLog = () => ({});
  return next(args);
};
