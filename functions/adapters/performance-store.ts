import { gunzipSync, gzipSync } from 'node:zlib';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SORT_SEPARATOR } from '../domain/aggregation/rows';
import type { BuiltPage, PageStore, StaleDay } from '../domain/analytics/pages';
import {
  COST_COUNTERS,
  type CostRow,
  type DimensionValues,
  decodeCostDay,
  NONE,
  PERF_COUNTERS,
  PERF_FAMILIES,
} from '../domain/analytics/performance';
import type { AnyCounter, DayFact, DayWindow, PerformanceRows, StoredPerfPage } from '../domain/analytics/performance-report';
import { dynamoClient } from '../shared/clients/dynamo';
import { isConditionFailure } from './aws-errors';
import { queryRawPages, type RawItem } from './query-pages';

/**
 * The performance rows of the aggregates table (docs/analytics.md, "Rows"): pk
 * `<app_id>#<family>`, sk the day then the dimensions, joined by SORT_SEPARATOR. The report reads
 * them eventually consistently (it may trail a write by a second, as the four reports do); the
 * compactor reads consistently, as its pages must hold at least what the stamp it read covers.
 *
 * Reads convert DynamoDB's typed values themselves and ask for the attributes they use only
 * (query-pages.ts, queryRawPages: a page of a thousand items costs more to convert than to read).
 */
const pk = (appId: string, family: string) => `${appId}#${family}`;
/** Every sort key of a day starts with the day; the day's last possible key sorts below day + U+0002. */
const DAY_END = '\u0002';
/** DynamoDB stops a query page at 1 MB anyway: no smaller limit of items. */
const ITEMS_PER_QUERY = 100_000;

/**
 * A page's rows (encodePerfPage), gzipped, as a binary attribute: a busy day's 2,000 rows are
 * 230 KB of JSON and 33 KB gzipped, and a 30-day read by campaign reads 30 of them. Seven times
 * fewer read units, and the emulator's and the SDK's time goes with the bytes (docs/benchmarks.md).
 */
const PAGE_ROWS = 'rows_gz';

const num = (item: RawItem, name: string): number => Number(item[name]?.N ?? 0);

export class PerformanceStore implements PerformanceRows, PageStore {
  constructor(private readonly tableName: string) {}

  async stamps(appId: string, window: DayWindow): Promise<ReadonlyMap<string, number>> {
    const items = await this.query(pk(appId, PERF_FAMILIES.perfStamp), window.firstDay, window.lastDay, ['sk', 'v']);
    return new Map(items.map((item) => [String(item.sk?.S), num(item, 'v')]));
  }

  async pages(appId: string, window: DayWindow): Promise<ReadonlyMap<string, StoredPerfPage>> {
    const items = await this.query(pk(appId, PERF_FAMILIES.perfPage), window.firstDay, window.lastDay, ['sk', 'v', PAGE_ROWS, 'overflow']);
    return new Map(
      items.map((item): [string, StoredPerfPage] => {
        const rows = item[PAGE_ROWS]?.B;
        return [
          String(item.sk?.S),
          rows === undefined ? { v: num(item, 'v'), overflow: true } : { v: num(item, 'v'), rows: gunzipSync(rows).toString() },
        ];
      }),
    );
  }

  async perfRows(appId: string, window: DayWindow, consistent = false): Promise<readonly DayFact[]> {
    const items = await this.query(
      pk(appId, PERF_FAMILIES.perf),
      window.firstDay,
      `${window.lastDay}${DAY_END}`,
      ['sk', ...PERF_COUNTERS],
      consistent,
    );
    return items.map((item) => factOf(item, PERF_COUNTERS));
  }

  async costDays(appId: string, window: DayWindow, consistent = false): Promise<readonly { day: string; rows: readonly CostRow[] }[]> {
    const items = await this.query(pk(appId, PERF_FAMILIES.cost), window.firstDay, window.lastDay, ['sk', 'rows'], consistent);
    return items.map((item) => ({ day: String(item.sk?.S), rows: item.rows?.S ? decodeCostDay(item.rows.S) : [] }));
  }

  async partnerRows(appId: string, window: DayWindow): Promise<readonly DayFact[]> {
    const items = await this.query(pk(appId, PERF_FAMILIES.perfPartner), window.firstDay, `${window.lastDay}${DAY_END}`, [
      'sk',
      ...PERF_COUNTERS,
    ]);
    return items.map((item) => factOf(item, PERF_COUNTERS));
  }

  async costPartnerRows(appId: string, window: DayWindow): Promise<readonly DayFact[]> {
    const items = await this.query(pk(appId, PERF_FAMILIES.costPartner), window.firstDay, `${window.lastDay}${DAY_END}`, [
      'sk',
      ...COST_COUNTERS,
    ]);
    return items.map((item) => factOf(item, COST_COUNTERS));
  }

  async staleDays(appId: string): Promise<readonly StaleDay[]> {
    const stale: StaleDay[] = [];
    const pages = queryRawPages(
      {
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ProjectionExpression: '#sk, #v, #page_v',
        ExpressionAttributeNames: { '#sk': 'sk', '#v': 'v', '#page_v': 'page_v' },
        ExpressionAttributeValues: { ':pk': { S: pk(appId, PERF_FAMILIES.perfStamp) } },
        ConsistentRead: true,
      },
      () => ITEMS_PER_QUERY,
    );
    for await (const items of pages) {
      for (const item of items) {
        const v = num(item, 'v');
        if (item.page_v?.N === undefined || Number(item.page_v.N) !== v) stale.push({ day: String(item.sk?.S), v });
      }
    }
    return stale;
  }

  async dayRows(appId: string, day: string): Promise<{ perf: readonly DayFact[]; cost: readonly CostRow[] }> {
    const window = { firstDay: day, lastDay: day };
    const [perf, cost] = await Promise.all([this.perfRows(appId, window, true), this.costDays(appId, window, true)]);
    return { perf, cost: cost.flatMap((costDay) => costDay.rows) };
  }

  async putPage(appId: string, day: string, page: BuiltPage): Promise<void> {
    try {
      await dynamoClient().send(
        new PutCommand({
          TableName: this.tableName,
          Item: {
            pk: pk(appId, PERF_FAMILIES.perfPage),
            sk: day,
            v: page.v,
            ...('rows' in page ? { [PAGE_ROWS]: gzipSync(page.rows) } : { overflow: true }),
          },
          // Two runs that overlap: the page of the later stamp stays.
          ConditionExpression: 'attribute_not_exists(#v) OR #v <= :v',
          ExpressionAttributeNames: { '#v': 'v' },
          ExpressionAttributeValues: { ':v': page.v },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async markBuilt(appId: string, day: string, v: number): Promise<void> {
    try {
      await dynamoClient().send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: pk(appId, PERF_FAMILIES.perfStamp), sk: day },
          UpdateExpression: 'SET #page_v = :v',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(#page_v) OR #page_v < :v)',
          ExpressionAttributeNames: { '#page_v': 'page_v' },
          ExpressionAttributeValues: { ':v': v },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  private async query(partition: string, from: string, to: string, columns: readonly string[], consistent = false): Promise<RawItem[]> {
    const items: RawItem[] = [];
    const pages = queryRawPages(
      {
        TableName: this.tableName,
        ProjectionExpression: columns.map((_, i) => `#p${i}`).join(', '),
        ExpressionAttributeNames: Object.fromEntries(columns.map((column, i) => [`#p${i}`, column])),
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': { S: partition }, ':from': { S: from }, ':to': { S: to } },
        ConsistentRead: consistent,
      },
      () => ITEMS_PER_QUERY,
    );
    for await (const page of pages) for (const item of page) items.push(item);
    return items;
  }
}

/** A row's day and dimensions from its sort key (dimensions it has not: NONE), and its counters. */
function factOf(item: RawItem, counters: readonly AnyCounter[]): DayFact {
  const [day = '', partner = NONE, campaign = NONE, country = NONE, platform = NONE] = String(item.sk?.S).split(SORT_SEPARATOR);
  const values: Partial<Record<AnyCounter, number>> = {};
  for (const name of counters) {
    const value = item[name]?.N;
    if (value !== undefined) values[name] = Number(value);
  }
  return { day, dims: [partner, campaign, country, platform] as DimensionValues, counters: values };
}
