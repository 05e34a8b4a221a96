import { gunzipSync } from 'node:zlib';
import { PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { SORT_SEPARATOR } from '../domain/aggregation/rows';
import { derivedClicks } from '../domain/analytics/click-counts';
import { type BuiltPage, type BuiltWeek, type PageStore, packPage, type StaleDay } from '../domain/analytics/pages';
import {
  COST_COUNTERS,
  type CostRow,
  type DimensionValues,
  decodeCostDay,
  NONE,
  PERF_COUNTERS,
  PERF_FAMILIES,
} from '../domain/analytics/performance';
import type {
  AnyCounter,
  DayFact,
  DayWindow,
  PageKind,
  PerformanceRows,
  StoredPerfPage,
  StoredWeekPage,
} from '../domain/analytics/performance-report';
import { clickTables } from '../shared/click-tables';
import { dynamoClient } from '../shared/clients/dynamo';
import { isConditionFailure } from './aws-errors';
import { clickCountsNow, unsettledDays } from './click-count-items';
import type { ClickTables } from './click-store';
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
 * A page's rows (encodePerfPage), gzipped by packPage, as a binary attribute: a busy day's 2,000
 * rows with every counter filled are about 440 KB of JSON and 30 to 60 KB gzipped, and a 30-day
 * read by campaign reads 30 of them. Seven times fewer read units, and the emulator's and the SDK's time goes with the bytes (docs/benchmarks.md).
 */
const PAGE_ROWS = 'rows_gz';

const num = (item: RawItem, name: string): number => Number(item[name]?.N ?? 0);

export class PerformanceStore implements PerformanceRows, PageStore {
  /** clicksTables: the click log, whose clicks not yet counted the clicks read here include (clickCountsNow). */
  constructor(
    private readonly tableName: string,
    private readonly clicksTables?: ClickTables,
  ) {}

  /** Resolved when first needed: a function that reads no click count has no click tables in its environment. */
  private get clickLog(): ClickTables {
    return this.clicksTables ?? clickTables();
  }

  /**
   * The stamps of the window's days, but for a day with a click the click-count lane has not
   * counted yet (ADR 0008): no page holds that click, so the report reads the day's rows, which
   * add it (clickFacts).
   */
  async stamps(appId: string, window: DayWindow): Promise<ReadonlyMap<string, number>> {
    const [items, unsettled] = await Promise.all([
      this.query(pk(appId, PERF_FAMILIES.perfStamp), window.firstDay, window.lastDay, ['sk', 'v']),
      unsettledDays(this.tableName, this.clickLog, appId, window),
    ]);
    return new Map(items.map((item) => [String(item.sk?.S), num(item, 'v')] as const).filter(([day]) => !unsettled.has(day)));
  }

  async pages(appId: string, kind: PageKind, window: DayWindow, consistent = false): Promise<ReadonlyMap<string, StoredPerfPage>> {
    const family = kind === 'rows' ? PERF_FAMILIES.perfPage : PERF_FAMILIES.partnerPage;
    const items = await this.query(pk(appId, family), window.firstDay, window.lastDay, ['sk', 'v', PAGE_ROWS, 'rows'], consistent);
    const pages = new Map<string, StoredPerfPage>();
    for (const item of items) {
      const rows = rowsOf(item);
      pages.set(String(item.sk?.S), rows === undefined ? { v: num(item, 'v'), overflow: true } : { v: num(item, 'v'), rows });
    }
    return pages;
  }

  async weeks(appId: string, kind: PageKind, window: DayWindow): Promise<ReadonlyMap<string, StoredWeekPage>> {
    const family = kind === 'rows' ? PERF_FAMILIES.weekPage : PERF_FAMILIES.partnerWeek;
    const items = await this.query(pk(appId, family), window.firstDay, window.lastDay, ['sk', 'vs', PAGE_ROWS, 'rows']);
    const weeks = new Map<string, StoredWeekPage>();
    for (const item of items) {
      const vs = (item.vs?.L ?? []).map((value) => Number(value.N ?? 0));
      const rows = rowsOf(item);
      weeks.set(String(item.sk?.S), rows === undefined ? { vs, overflow: true } : { vs, rows });
    }
    return weeks;
  }

  dayPages(appId: string, kind: PageKind, window: DayWindow): Promise<ReadonlyMap<string, StoredPerfPage>> {
    return this.pages(appId, kind, window, true);
  }

  /** The `perf` rows of the window, with the clicks of its click counter items (click-counts.ts) as rows of their own. */
  async perfRows(appId: string, window: DayWindow, consistent = false): Promise<readonly DayFact[]> {
    const [items, clicks] = await Promise.all([
      this.query(pk(appId, PERF_FAMILIES.perf), window.firstDay, `${window.lastDay}${DAY_END}`, ['sk', ...PERF_COUNTERS], consistent),
      this.clickFacts(appId, 'perf', window, consistent),
    ]);
    return [...items.map((item) => factOf(item, PERF_COUNTERS)), ...clicks];
  }

  async costDays(appId: string, window: DayWindow, consistent = false): Promise<readonly { day: string; rows: readonly CostRow[] }[]> {
    const items = await this.query(pk(appId, PERF_FAMILIES.cost), window.firstDay, window.lastDay, ['sk', 'rows'], consistent);
    return items.map((item) => ({ day: String(item.sk?.S), rows: item.rows?.S ? decodeCostDay(item.rows.S) : [] }));
  }

  /** The `perf_partner` rows of the window, with the clicks of its click counter items summed by partner as rows of their own. */
  async partnerRows(appId: string, window: DayWindow): Promise<readonly DayFact[]> {
    const [items, clicks] = await Promise.all([
      this.query(pk(appId, PERF_FAMILIES.perfPartner), window.firstDay, `${window.lastDay}${DAY_END}`, ['sk', ...PERF_COUNTERS]),
      this.clickFacts(appId, 'perf_partner', window, false),
    ]);
    return [...items.map((item) => factOf(item, PERF_COUNTERS)), ...clicks];
  }

  /** The window's click counters summed into the family's rows; the report and the pages merge facts of the same dimensions. */
  private async clickFacts(appId: string, family: 'perf' | 'perf_partner', window: DayWindow, consistent: boolean): Promise<DayFact[]> {
    const counts = await clickCountsNow(this.tableName, this.clickLog, appId, window, consistent);
    return derivedClicks(family, counts).map(({ day, group, clicks }) => {
      const [partner = NONE, campaign = NONE, country = NONE, platform = NONE] = group;
      return { day, dims: [partner, campaign, country, platform] as DimensionValues, counters: { clicks } };
    });
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

  async putPage(appId: string, kind: PageKind, day: string, page: BuiltPage): Promise<void> {
    // Two runs that overlap: the page of the later stamp stays.
    await this.putUnlessNewer(
      {
        pk: pk(appId, kind === 'rows' ? PERF_FAMILIES.perfPage : PERF_FAMILIES.partnerPage),
        sk: day,
        v: page.v,
        ...rowsItem(kind, page),
      },
      'v',
      page.v,
    );
  }

  async putWeek(appId: string, kind: PageKind, monday: string, week: BuiltWeek): Promise<void> {
    // Each day's page v only grows, so the week summed from the later pages has the larger sum.
    const vsum = week.vs.reduce((sum, v) => sum + v, 0);
    await this.putUnlessNewer(
      {
        pk: pk(appId, kind === 'rows' ? PERF_FAMILIES.weekPage : PERF_FAMILIES.partnerWeek),
        sk: monday,
        vs: [...week.vs],
        vsum,
        ...rowsItem(kind, week),
      },
      'vsum',
      vsum,
    );
  }

  private async putUnlessNewer(item: Record<string, unknown>, version: string, value: number): Promise<void> {
    try {
      await dynamoClient().send(
        new PutCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: 'attribute_not_exists(#v) OR #v <= :v',
          ExpressionAttributeNames: { '#v': version },
          ExpressionAttributeValues: { ':v': value },
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

/**
 * A page's rows attribute: gzipped for the pages of every dimension (a busy day's are about 440
 * KB of JSON, 30 to 60 KB gzipped; whether they fit one item is judged on these bytes), plain for
 * the partner pages (a dozen lines, under 2 KB: gzip would save no write unit and cost a gunzip
 * per read).
 */
function rowsItem(kind: PageKind, page: { rows: string } | { overflow: true }): Record<string, unknown> {
  if (!('rows' in page)) return { overflow: true };
  return kind === 'rows' ? { [PAGE_ROWS]: packPage(page.rows) } : { rows: page.rows };
}

function rowsOf(item: RawItem): string | undefined {
  const gz = item[PAGE_ROWS]?.B;
  if (gz !== undefined) return gunzipSync(gz).toString();
  return item.rows?.S;
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
