import {
  type AttributeValue,
  QueryCommand as RawQueryCommand,
  type QueryCommandInput as RawQueryInput,
  type QueryCommandOutput as RawQueryOutput,
} from '@aws-sdk/client-dynamodb';
import { QueryCommand, type QueryCommandInput, ScanCommand, type ScanCommandInput } from '@aws-sdk/lib-dynamodb';
import type { InitializeMiddleware } from '@smithy/types';
import { dynamoClient } from '../shared/clients/dynamo';

/**
 * The pages of a query or scan, each read only when the one before has been taken: a caller that
 * stops reading stops the reads. `read` sends the request that starts at a page's key.
 */
async function* pagesOf<K, P extends { LastEvaluatedKey?: K }>(read: (startKey: K | undefined) => Promise<P>): AsyncGenerator<P> {
  let startKey: K | undefined;
  do {
    const page = await read(startKey);
    yield page;
    startKey = page.LastEvaluatedKey;
  } while (startKey);
}

type Paged<Input> = Omit<Input, 'ExclusiveStartKey'>;

const queryPages = (input: Paged<QueryCommandInput>, limitOf?: () => number) =>
  pagesOf((ExclusiveStartKey: Record<string, unknown> | undefined) =>
    dynamoClient().send(new QueryCommand({ ...input, ...(limitOf ? { Limit: limitOf() } : {}), ExclusiveStartKey })),
  );

/**
 * The items of a query, page after page, for as long as the caller keeps reading: a caller that
 * finds what it wants stops, and no further page is read.
 */
export async function* queryItems<T>(input: Paged<QueryCommandInput>): AsyncGenerator<T> {
  for await (const page of queryPages(input)) for (const item of page.Items ?? []) yield item as T;
}

export async function queryAll<T>(input: Paged<QueryCommandInput>): Promise<T[]> {
  const items: T[] = [];
  for await (const item of queryItems<T>(input)) items.push(item);
  return items;
}

/**
 * The first `limit` items of a query, each page asking for what is still wanted, and whether the
 * query had more. A page that ends exactly at the limit may still say there is more when there is
 * not; a caller that comes back for the rest then finds none, which is harmless.
 */
export async function queryFirst<T>(input: Paged<QueryCommandInput>, limit: number): Promise<{ items: T[]; more: boolean }> {
  const items: T[] = [];
  for await (const page of queryPages(input, () => limit - items.length)) {
    items.push(...((page.Items ?? []) as T[]));
    if (items.length >= limit) return { items, more: page.LastEvaluatedKey !== undefined };
  }
  return { items, more: false };
}

/** The items of a scan, page after page, for as long as the caller keeps reading. */
export async function* scanItems<T>(input: Paged<ScanCommandInput>): AsyncGenerator<T> {
  const pages = pagesOf((ExclusiveStartKey: Record<string, unknown> | undefined) =>
    dynamoClient().send(new ScanCommand({ ...input, ExclusiveStartKey })),
  );
  for await (const page of pages) for (const item of page.Items ?? []) yield item as T;
}

export type RawItem = Record<string, AttributeValue>;

/**
 * The pages of a query as DynamoDB sends them (attribute values still typed, `{"N": "12"}`), for
 * a reader of many small items that converts only the attributes it needs: the document client's
 * conversion of every attribute, and the SDK's pass over the whole output that prepares it for a
 * logger, cost more per item than reading it (docs/reports.md, "Speed"). The query goes through
 * the same client, which sends a plain DynamoDB command as it is.
 */
export async function* queryRawPages(input: Paged<RawQueryInput>, limitOf: () => number): AsyncGenerator<RawItem[]> {
  const client = dynamoClient() as unknown as { send(command: RawQueryCommand): Promise<RawQueryOutput> };
  const pages = pagesOf((ExclusiveStartKey: RawItem | undefined) => {
    const command = new RawQueryCommand({ ...input, Limit: limitOf(), ExclusiveStartKey });
    command.middlewareStack.add(withoutOutputLogFilter, { step: 'initialize', priority: 'low', name: 'withoutOutputLogFilter' });
    return client.send(command);
  });
  for await (const page of pages) yield page.Items ?? [];
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
