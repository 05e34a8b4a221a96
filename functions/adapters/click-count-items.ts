import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { CLICK_COUNT_FAMILY, type ClickCount, clickCountOf, clickCountSortKey } from '../domain/analytics/click-counts';
import type { DimensionValues } from '../domain/analytics/performance';
import { dynamoClient } from '../shared/clients/dynamo';
import { isConditionFailure } from './aws-errors';
import { queryRawPages } from './query-pages';

/**
 * The click counter items of the aggregates table (functions/domain/analytics/click-counts.ts):
 * pk `<app_id>#click`, sk `<day>␁<partner>␁<campaign>␁<country>␁<platform>␁<link_id>`, `clicks`.
 * Written by the link redirect (AggregateStore.countClick), read by the stores that derive the
 * `perf`, `perf_partner` and `link` rows' clicks from them.
 */
const pk = (appId: string) => `${appId}#${CLICK_COUNT_FAMILY}`;
/** Every sort key of a day starts with the day; the day's last possible key sorts below day + U+0002. */
const DAY_END = '\u0002';

/** One click more on its counter item: a plain ADD, one write unit (the item is ~120 bytes). */
export async function addClick(tableName: string, appId: string, day: string, dims: DimensionValues, linkId: string): Promise<void> {
  await dynamoClient().send(
    new UpdateCommand({
      TableName: tableName,
      Key: { pk: pk(appId), sk: clickCountSortKey(day, dims, linkId) },
      UpdateExpression: 'ADD #clicks :one',
      ExpressionAttributeNames: { '#clicks': 'clicks' },
      ExpressionAttributeValues: { ':one': 1 },
    }),
  );
}

/**
 * A click-count lane apply's clicks on one counter item (functions/domain/aggregation/click-counts.ts):
 * ADD `clicks` and SET `applied` to the apply's id, unless the item already holds that id (the
 * apply was retried after this write). One attribute, so the item does not grow with applies.
 */
export async function addClicksOnce(tableName: string, appId: string, applyId: string, count: ClickCount): Promise<void> {
  try {
    await dynamoClient().send(
      new UpdateCommand({
        TableName: tableName,
        Key: { pk: pk(appId), sk: clickCountSortKey(count.day, count.dims, count.linkId) },
        UpdateExpression: 'ADD #clicks :n SET #applied = :id',
        ConditionExpression: 'attribute_not_exists(#applied) OR #applied <> :id',
        ExpressionAttributeNames: { '#clicks': 'clicks', '#applied': 'applied' },
        ExpressionAttributeValues: { ':n': count.clicks, ':id': applyId },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}

/** The app's counter items of the days [firstDay, lastDay] (every day when absent), in key order. */
export async function clickCounts(
  tableName: string,
  appId: string,
  window: { readonly firstDay: string; readonly lastDay: string } | undefined,
  consistent: boolean,
): Promise<ClickCount[]> {
  const counts: ClickCount[] = [];
  const pages = queryRawPages(
    {
      TableName: tableName,
      ProjectionExpression: 'sk, clicks, applied',
      KeyConditionExpression: window ? 'pk = :pk AND sk BETWEEN :from AND :to' : 'pk = :pk',
      ExpressionAttributeValues: {
        ':pk': { S: pk(appId) },
        ...(window ? { ':from': { S: window.firstDay }, ':to': { S: `${window.lastDay}${DAY_END}` } } : {}),
      },
      ConsistentRead: consistent,
    },
    // DynamoDB stops a query page at 1 MB anyway: no smaller limit of items.
    () => 100_000,
  );
  for await (const items of pages) {
    for (const item of items) {
      const count = clickCountOf(String(item.sk?.S), Number(item.clicks?.N ?? 0), item.applied?.S);
      if (count) counts.push(count);
    }
  }
  return counts;
}
