import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { TOP_UP_HOURS, topUp } from '../domain/aggregation/click-counts';
import { CLICK_COUNT_FAMILY, type ClickCount, clickCountOf, clickCountSortKey } from '../domain/analytics/click-counts';
import { dynamoClient } from '../shared/clients/dynamo';
import { isConditionFailure } from './aws-errors';
import { ClickLogStates } from './click-log-state';
import { ClickStore, type ClickTables } from './click-store';
import { queryRawPages } from './query-pages';

/**
 * The click counter items of the aggregates table (functions/domain/analytics/click-counts.ts):
 * pk `<app_id>#click`, sk `<day>␁<partner>␁<campaign>␁<country>␁<platform>␁<link_id>`, `clicks`.
 * Written by the click-count lane (addClicksOnce; before it, the link redirect), read by the stores that derive the
 * `perf`, `perf_partner` and `link` rows' clicks from them.
 */
const pk = (appId: string) => `${appId}#${CLICK_COUNT_FAMILY}`;
/** Every sort key of a day starts with the day; the day's last possible key sorts below day + U+0002. */
const DAY_END = '\u0002';

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

/** How often a read starts over because the click-count lane wrote its state meanwhile (an apply takes milliseconds). */
const SNAPSHOT_TRIES = 5;
/** A local day is never more than 14 hours from UTC's. */
const ZONE_MARGIN_MS = 14 * 3_600_000;
const utcDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Whether the window can hold the local day of a click of the top-up's hours: if not, nothing is topped up or read for it. */
const mayHoldUncounted = (window: { readonly firstDay: string; readonly lastDay: string } | undefined, nowMs: number): boolean =>
  window === undefined ||
  (window.lastDay >= utcDay(nowMs - TOP_UP_HOURS * 3_600_000 - ZONE_MARGIN_MS) && window.firstDay <= utcDay(nowMs + ZONE_MARGIN_MS));

const EVERY_DAY = { firstDay: '0000-01-01', lastDay: '9999-12-31' };

/**
 * The app's counter items of the window plus the clicks the click-count lane has not counted yet
 * (ADR 0008, "Freshness"; functions/domain/aggregation/click-counts.ts, topUp): exact at the
 * moment of the read, as the redirect's own ADD was. The lane's state is read before the items
 * and the log and again after them; if it moved, the read starts over, so the watermarks the
 * top-up starts from are the ones the items were counted to. Items are then read consistently.
 */
export async function clickCountsNow(
  tableName: string,
  clickTables: ClickTables,
  appId: string,
  window: { readonly firstDay: string; readonly lastDay: string } | undefined,
  consistent: boolean,
  nowMs = Date.now(),
): Promise<ClickCount[]> {
  if (!mayHoldUncounted(window, nowMs)) return clickCounts(tableName, appId, window, consistent);
  const states = new ClickLogStates(tableName);
  const log = new ClickStore(clickTables);
  for (let attempt = 1; attempt <= SNAPSHOT_TRIES; attempt += 1) {
    const before = await states.state(appId);
    const items = await clickCounts(tableName, appId, window, true);
    const applied = new Map(items.map((item) => [clickCountSortKey(item.day, item.dims, item.linkId), item.applied]));
    const uncounted = await topUp(log, appId, before, (key) => applied.get(key), window ?? EVERY_DAY, nowMs);
    const after = await states.state(appId);
    if (after?.rev === before?.rev) return [...items, ...uncounted.counts];
  }
  throw new Error(`click counts of ${appId}: the click-count lane kept writing during ${SNAPSHOT_TRIES} reads`);
}

/**
 * The window's days that have a click the lane has not finished counting: a page built before it
 * does not hold it, so the report reads those days' rows (which clickCountsNow tops up). Read
 * without a second look at the state: a watermark older than the log read only adds days.
 */
export async function unsettledDays(
  tableName: string,
  clickTables: ClickTables,
  appId: string,
  window: { readonly firstDay: string; readonly lastDay: string },
  nowMs = Date.now(),
): Promise<ReadonlySet<string>> {
  if (!mayHoldUncounted(window, nowMs)) return new Set();
  const state = await new ClickLogStates(tableName).state(appId);
  const uncounted = await topUp(new ClickStore(clickTables), appId, state, () => undefined, window, nowMs);
  return uncounted.unsettledDays;
}
