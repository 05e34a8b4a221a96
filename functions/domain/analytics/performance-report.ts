import { DAY_MS, daysFrom, localDayOf, localDayStartMs, nextDay } from '../common/days';
import { ServiceError } from '../common/errors';
import { appOfKey, pageAnswer, type ReportAnswer, type ServerKeys } from '../reports/answer-report';
import { parseReportQuery, type ReportQuery, windowDays } from '../reports/report-query';
import {
  type CostCounter,
  type CostRow,
  DIMENSIONS,
  type Dimension,
  type DimensionValues,
  daysOfWeek,
  GROUP_COLUMNS,
  type GroupColumn,
  PAGE_COUNTERS,
  type PerfCounter,
  weekOf,
} from './performance';

/**
 * GET /api/v1/reports/performance (docs/reports.md, "Performance report"; docs/analytics.md,
 * "Reading"): the four reports' key, window, paging and ETag rules, plus `group_by` and the
 * dimension filters. The rows are summed here from the cheapest exact source the dimensions
 * allow: the per-partner rows when only the partner is asked for, else each day's page when it
 * is as new as the day's stamp, else the day's rows and its cost.
 */

/** The refusals this report adds to the four reports' (REPORT_ERRORS). */
export const PERFORMANCE_ERRORS = { invalid_group_by: 400, invalid_filter: 400 } as const;
export type PerformanceErrorCode = keyof typeof PERFORMANCE_ERRORS;
const performanceError = (code: PerformanceErrorCode) => new ServiceError(PERFORMANCE_ERRORS[code], code);

export const DEFAULT_GROUP_BY: readonly GroupColumn[] = ['day', 'partner'];

/** Every counter of a summed row, in the page encoding's order (PAGE_COUNTERS). */
export const ALL_COUNTERS = PAGE_COUNTERS;
export type AnyCounter = PerfCounter | CostCounter;
export type CounterValues = Readonly<Partial<Record<AnyCounter, number>>>;

/** One stored row of a day: a `perf` row, a cost row, a page row, or (partner reads) a `perf_partner`/`cost_partner` row whose other dimensions are NONE. */
export interface DayFact {
  readonly day: string;
  readonly dims: DimensionValues;
  readonly counters: CounterValues;
}

export interface DayWindow {
  readonly firstDay: string;
  readonly lastDay: string;
}

/** A day's page as stored: its rows (encodePerfPage) and the stamp v it was built at, or a marker for a day too big for one item. */
export type StoredPerfPage = { readonly v: number; readonly rows: string } | { readonly v: number; readonly overflow: true };

/** A week's page as stored: the sums of its 7 day pages and their v's, Monday first (0: no page), or an overflow marker. */
export type StoredWeekPage =
  | { readonly vs: readonly number[]; readonly rows: string }
  | { readonly vs: readonly number[]; readonly overflow: true };

/** Pages of every dimension (`perf_page`, `perf_week`) or summed by partner (`perf_partner_page`, `perf_partner_week`). */
export type PageKind = 'rows' | 'partner';

/** The performance rows of the aggregates table (functions/adapters/performance-store.ts). */
export interface PerformanceRows {
  /** The `v` of each day's stamp in the window. */
  stamps(appId: string, window: DayWindow): Promise<ReadonlyMap<string, number>>;
  /** Each day's page of this kind in the window. */
  pages(appId: string, kind: PageKind, window: DayWindow): Promise<ReadonlyMap<string, StoredPerfPage>>;
  /** The week pages of this kind whose Monday is in the window, by Monday. */
  weeks(appId: string, kind: PageKind, window: DayWindow): Promise<ReadonlyMap<string, StoredWeekPage>>;
  /** The `perf` rows of the window's days. */
  perfRows(appId: string, window: DayWindow): Promise<readonly DayFact[]>;
  /** The `cost` days of the window. */
  costDays(appId: string, window: DayWindow): Promise<readonly { readonly day: string; readonly rows: readonly CostRow[] }[]>;
  /** The `perf_partner` rows of the window's days (dims: partner, then NONE). */
  partnerRows(appId: string, window: DayWindow): Promise<readonly DayFact[]>;
  /** The `cost_partner` rows of the window's days (dims: partner, then NONE). */
  costPartnerRows(appId: string, window: DayWindow): Promise<readonly DayFact[]>;
}

export interface PerformancePorts {
  readonly keys: ServerKeys;
  readonly rows: PerformanceRows;
  nowMs(): number;
}

export interface PerformanceRequest {
  readonly authorization?: string;
  readonly params: Readonly<Record<string, string | undefined>>;
  readonly ifNoneMatch?: string;
}

export interface PerformanceQuery extends ReportQuery {
  /** In GROUP_COLUMNS order, whatever order the request gave. */
  readonly groupBy: readonly GroupColumn[];
  /** The kept values of each filtered dimension. */
  readonly filters: Readonly<Partial<Record<Dimension, ReadonlySet<string>>>>;
}

/**
 * The four reports' parameters (parseReportQuery, its errors first), then:
 *   6. group_by, when given, is a comma list of distinct names from GROUP_COLUMNS   invalid_group_by
 *   7. partner, campaign, country, platform, when given, are comma lists of          invalid_filter
 *      non-empty values
 */
export function parsePerformanceQuery(params: Readonly<Record<string, string | undefined>>, nowMs: number): PerformanceQuery {
  const query = parseReportQuery(params, nowMs);
  let groupBy: readonly GroupColumn[] = DEFAULT_GROUP_BY;
  if (params.group_by !== undefined) {
    const names = params.group_by.split(',');
    const known = names.every((name) => (GROUP_COLUMNS as readonly string[]).includes(name));
    if (!known || new Set(names).size !== names.length) throw performanceError('invalid_group_by');
    groupBy = GROUP_COLUMNS.filter((column) => names.includes(column));
  }
  const filters: Partial<Record<Dimension, ReadonlySet<string>>> = {};
  for (const dimension of DIMENSIONS) {
    const value = params[dimension];
    if (value === undefined) continue;
    const values = value.split(',');
    if (values.some((v) => v.length === 0)) throw performanceError('invalid_filter');
    filters[dimension] = new Set(values);
  }
  return { ...query, groupBy, filters };
}

/** Whether the partner rows answer the query: no dimension but the partner is grouped or filtered. */
export const partnerRowsSuffice = (query: Pick<PerformanceQuery, 'groupBy' | 'filters'>): boolean =>
  query.groupBy.every((column) => column === 'day' || column === 'partner') &&
  DIMENSIONS.every((dimension) => dimension === 'partner' || query.filters[dimension] === undefined);

export async function answerPerformance(ports: PerformancePorts, request: PerformanceRequest): Promise<ReportAnswer> {
  const startedMs = ports.nowMs();
  const appId = await appOfKey(ports.keys, request.authorization);
  return answerAppPerformance(ports, { appId, timeZone: await ports.keys.appTimeZone(appId) }, request, startedMs);
}

/** Everything after the key, for an app already known: the API's, and the operator's `admin report show --report performance`. */
export async function answerAppPerformance(
  ports: Pick<PerformancePorts, 'rows' | 'nowMs'>,
  app: { readonly appId: string; readonly timeZone: string },
  request: Omit<PerformanceRequest, 'authorization'>,
  startedMs = ports.nowMs(),
): Promise<ReportAnswer> {
  const { appId, timeZone: zone } = app;
  const query = parsePerformanceQuery(request.params, startedMs);
  const days = windowDays(query, zone);
  const all = await sumsOf(ports.rows, appId, query, days);
  const today = localDayOf(startedMs, zone);
  // Days are YYYY-MM-DD: the earlier of two is the first in string order.
  const [lastInstallDay = today] = [days.lastDay, today].sort();
  const rows = all
    .slice(query.offset, query.offset + query.limit)
    .map((row) => renderRow(row, query.groupBy, lastInstallDay, zone, startedMs));
  return pageAnswer({ report: 'performance', appId, rows, query, days, ifNoneMatch: request.ifNoneMatch }, () =>
    Math.round(ports.nowMs() - startedMs),
  );
}

/** The days of a window, both ends included; a window of more than MAX_WINDOW_DAYS is refused before any loop (windowDays never makes one). */
export const daysOf = (window: DayWindow): string[] => daysFrom(window.firstDay, window.lastDay);

/** The days of a list, in runs of consecutive days. */
function runsOf(days: readonly string[]): DayWindow[] {
  const runs: { firstDay: string; lastDay: string }[] = [];
  for (const day of days) {
    const run = runs.at(-1);
    if (run && nextDay(run.lastDay) === day) run.lastDay = day;
    else runs.push({ firstDay: day, lastDay: day });
  }
  return runs;
}

const weekWindow = (monday: string): DayWindow => ({ firstDay: monday, lastDay: daysOfWeek(monday)[6] as string });

/**
 * The stored rows the query's sums need, from the cheapest exact source (docs/analytics.md,
 * "Reading"). Pages of every dimension, or partner pages when only the partner is grouped or
 * filtered. Without `day` in the group, each week wholly in the window is read from its week
 * page when each of its 7 days' stamps still equals the v the week recorded for it; every other
 * day from its day page when that is as new as its stamp; and each run of remaining days (no page,
 * an older page, an overflow marker, no stamp) from its rows and its cost, one read each. Exact
 * either way: a page holds what the rows held at its stamp's v, and a changed day has a newer v.
 *
 * Reads: the stamps, the week pages and the day pages of the days outside whole weeks together;
 * then the day pages of the weeks that were stale; then the rows of the days still uncovered.
 */
async function sumsOf(rows: PerformanceRows, appId: string, query: PerformanceQuery, window: DayWindow): Promise<SummedRow[]> {
  const sums = new GroupSums(query);
  const kind: PageKind = partnerRowsSuffice(query) ? 'partner' : 'rows';
  const days = daysOf(window);
  const mondays = query.groupBy.includes('day')
    ? []
    : [...new Set(days.map(weekOf))].filter((monday) => monday >= window.firstDay && weekWindow(monday).lastDay <= window.lastDay);
  const inWeeks = new Set(mondays.flatMap(daysOfWeek));
  const edges = runsOf(days.filter((day) => !inWeeks.has(day)));
  const noWeeks: ReadonlyMap<string, StoredWeekPage> = new Map();
  const [stamps, weeks, ...edgePages] = await Promise.all([
    rows.stamps(appId, window),
    mondays.length === 0
      ? noWeeks
      : rows.weeks(appId, kind, { firstDay: mondays[0] as string, lastDay: mondays[mondays.length - 1] as string }),
    ...edges.map((run) => rows.pages(appId, kind, run)),
  ]);
  const staleWeeks: string[] = [];
  for (const monday of mondays) {
    const week = weeks.get(monday);
    if (week && 'rows' in week && daysOfWeek(monday).every((day, i) => (stamps.get(day) ?? 0) === week.vs[i]))
      sums.addPage(monday, week.rows);
    else staleWeeks.push(monday);
  }
  const weekPages = await Promise.all(runsOf(staleWeeks.flatMap(daysOfWeek)).map((run) => rows.pages(appId, kind, run)));
  const pages = new Map<string, StoredPerfPage>();
  for (const found of [...edgePages, ...weekPages]) for (const [day, page] of found) pages.set(day, page);
  const uncovered: string[] = [];
  for (const day of days) {
    if (inWeeks.has(day) && !staleWeeks.includes(weekOf(day))) continue;
    const page = pages.get(day);
    const v = stamps.get(day);
    if (page && 'rows' in page && v !== undefined && page.v === v) sums.addPage(day, page.rows);
    else uncovered.push(day);
  }
  await Promise.all(
    runsOf(uncovered).map(async (run) => {
      if (kind === 'partner') {
        const [perf, cost] = await Promise.all([rows.partnerRows(appId, run), rows.costPartnerRows(appId, run)]);
        for (const fact of perf) sums.addFact(fact);
        for (const fact of cost) sums.addFact(fact);
        return;
      }
      const [perf, cost] = await Promise.all([rows.perfRows(appId, run), rows.costDays(appId, run)]);
      for (const fact of perf) sums.addFact(fact);
      for (const { day, rows: costRows } of cost) for (const fact of costFacts(day, costRows)) sums.addFact(fact);
    }),
  );
  return sums.rows();
}

export const costFacts = (day: string, rows: readonly CostRow[]): DayFact[] =>
  rows.map((row) => ({
    day,
    dims: row.dims,
    counters: { cost_micros: row.cost_micros, network_clicks: row.network_clicks, impressions: row.impressions },
  }));

export interface SummedRow {
  /** The values of the query's group columns, in its order. */
  readonly columns: readonly string[];
  readonly counters: Readonly<Record<AnyCounter, number>>;
}

/**
 * The facts kept by the filters, summed by the group columns; rows() gives them in the order of
 * the group columns (string order, column by column). A group whose counters are all 0 is left
 * out: the partner rows and the full rows agree on every sum but not always on which rows exist
 * with nothing in them (a cost row of 0 spend), and a row of zeros says nothing.
 *
 * A page's lines are summed straight from its compact JSON, without an object per line: a 30-day
 * read by campaign sums some 20,000 lines of a busy app (docs/benchmarks.md). A group's key is
 * its column values joined, built without an array, and its sums an array in ALL_COUNTERS order.
 */
export class GroupSums {
  private readonly groups = new Map<string, { columns: string[]; sums: number[] }>();
  /** Index of each group column in a page line ([...dims, ...counters]); -1 for the day. */
  private readonly columnAt: number[];
  private readonly filters: { i: number; kept: ReadonlySet<string> }[];

  constructor(query: Pick<PerformanceQuery, 'groupBy' | 'filters'>) {
    this.columnAt = query.groupBy.map((column) => (column === 'day' ? -1 : DIMENSIONS.indexOf(column as Dimension)));
    this.filters = DIMENSIONS.flatMap((dimension, i) => {
      const kept = query.filters[dimension];
      return kept ? [{ i, kept }] : [];
    });
  }

  /** The lines of a page (encodePerfPage): the four dimensions, then ALL_COUNTERS. */
  addPage(day: string, text: string): void {
    for (const line of JSON.parse(text) as (string | number)[][]) this.addLine(day, line);
  }

  addFact(fact: DayFact): void {
    this.addLine(fact.day, [...fact.dims, ...ALL_COUNTERS.map((name) => fact.counters[name] ?? 0)]);
  }

  private addLine(day: string, line: readonly (string | number)[]): void {
    for (const { i, kept } of this.filters) if (!kept.has(line[i] as string)) return;
    const columnAt = this.columnAt;
    let key = '';
    for (let c = 0; c < columnAt.length; c++) {
      const at = columnAt[c] as number;
      key += `${at < 0 ? day : line[at]}\u0000`;
    }
    let group = this.groups.get(key);
    if (!group) {
      group = { columns: columnAt.map((at) => (at < 0 ? day : String(line[at]))), sums: ALL_COUNTERS.map(() => 0) };
      this.groups.set(key, group);
    }
    const sums = group.sums;
    for (let i = 0; i < sums.length; i++) {
      const value = line[4 + i];
      if (value) sums[i] = (sums[i] as number) + Number(value);
    }
  }

  rows(): SummedRow[] {
    return [...this.groups.values()]
      .filter((group) => group.sums.some((sum) => sum !== 0))
      .sort((a, b) => compareColumns(a.columns, b.columns))
      .map(({ columns, sums }) => ({
        columns,
        counters: Object.fromEntries(ALL_COUNTERS.map((name, i) => [name, sums[i] ?? 0])) as Record<AnyCounter, number>,
      }));
  }
}

export function compareColumns(a: readonly string[], b: readonly string[]): number {
  for (let i = 0; i < a.length; i++) {
    const [x, y] = [a[i] ?? '', b[i] ?? ''];
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
}

const round = (value: number, decimals: number): number => {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
};
const usd = (micros: number): number => micros / 1_000_000;
/** A share of installs: 0 without installs, never above 1 (as the cohorts report's rates). */
const rate = (part: number, whole: number): number => (whole === 0 ? 0 : round(Math.min(part, whole) / whole, 4));
const roas = (revenueMicros: number, costMicros: number): number => (costMicros === 0 ? 0 : round(revenueMicros / costMicros, 4));

/**
 * Days after the end of a row's latest install day until each cohort figure is final: revenue
 * within N x 24 h of the install is final N x 24 h after the day ends (d0 is the first 24 hours),
 * retention at day N once its 24 hours that start N x 24 h after the install have passed. d7 and
 * d30 flag cohort revenue and retention together, so they wait for the later of the two.
 */
export const MATURE_AFTER_DAYS = { d0_mature: 1, d1_mature: 2, d7_mature: 8, d30_mature: 31 } as const;

export function maturityOf(day: string, zone: string, nowMs: number): Record<keyof typeof MATURE_AFTER_DAYS, boolean> {
  const endMs = localDayStartMs(nextDay(day), zone);
  const flag = (days: number) => nowMs >= endMs + days * DAY_MS;
  return {
    d0_mature: flag(MATURE_AFTER_DAYS.d0_mature),
    d1_mature: flag(MATURE_AFTER_DAYS.d1_mature),
    d7_mature: flag(MATURE_AFTER_DAYS.d7_mature),
    d30_mature: flag(MATURE_AFTER_DAYS.d30_mature),
  };
}

export type PerformanceRow = Record<string, string | number | boolean>;

/**
 * A summed row as the API shows it: the group columns, the counts, dollars to 6 decimals, eCPI
 * (cost over attributed installs), ROAS and rates to 4, and the maturity flags of the row's latest
 * install day: its day, or for a row without day the window's last day (today at the latest).
 */
export function renderRow(
  row: SummedRow,
  groupBy: readonly GroupColumn[],
  lastInstallDay: string,
  zone: string,
  nowMs: number,
): PerformanceRow {
  const c = row.counters;
  const out: PerformanceRow = {};
  groupBy.forEach((column, i) => {
    out[column] = row.columns[i] ?? '';
  });
  const paid = c.installs - c.organic;
  const revenue = c.revenue_micros - c.refund_micros;
  const cohort = {
    d0: c.cohort_d0_micros - c.cohort_refund_d0_micros,
    d7: c.cohort_d7_micros - c.cohort_refund_d7_micros,
    d30: c.cohort_d30_micros - c.cohort_refund_d30_micros,
  };
  Object.assign(out, {
    clicks: c.clicks,
    installs: c.installs,
    organic: c.organic,
    reinstalls: c.reinstalls,
    fraud_flagged: c.fraud_flagged,
    reengagements: c.reengagements,
    network_clicks: c.network_clicks,
    impressions: c.impressions,
    cost_usd: usd(c.cost_micros),
    ecpi_usd: paid > 0 ? round(c.cost_micros / paid, 0) / 1_000_000 : 0,
    // Purchases net of refunds, on the refund's day (docs/analytics.md, "Refunds"); refunds_usd shows what was netted.
    revenue_usd: usd(revenue),
    recent_revenue_usd: usd(c.recent_revenue_micros - c.recent_refund_micros),
    refunds: c.refunds,
    refunds_usd: usd(c.refund_micros),
    cohort_revenue_d0_usd: usd(cohort.d0),
    cohort_revenue_d7_usd: usd(cohort.d7),
    cohort_revenue_d30_usd: usd(cohort.d30),
    roas_d0: roas(cohort.d0, c.cost_micros),
    roas_d7: roas(cohort.d7, c.cost_micros),
    roas_d30: roas(cohort.d30, c.cost_micros),
    // Ad revenue (ad_revenue events) beside purchases, and ROAS on both (docs/analytics.md, "Ad revenue").
    ad_revenue_usd: usd(c.ad_revenue_micros),
    cohort_ad_revenue_d0_usd: usd(c.cohort_ad_d0_micros),
    cohort_ad_revenue_d7_usd: usd(c.cohort_ad_d7_micros),
    cohort_ad_revenue_d30_usd: usd(c.cohort_ad_d30_micros),
    total_revenue_usd: usd(revenue + c.ad_revenue_micros),
    total_roas_d0: roas(cohort.d0 + c.cohort_ad_d0_micros, c.cost_micros),
    total_roas_d7: roas(cohort.d7 + c.cohort_ad_d7_micros, c.cost_micros),
    total_roas_d30: roas(cohort.d30 + c.cohort_ad_d30_micros, c.cost_micros),
    retained_d1: c.retained_d1,
    retained_d7: c.retained_d7,
    retained_d30: c.retained_d30,
    d1_rate: rate(c.retained_d1, c.installs),
    d7_rate: rate(c.retained_d7, c.installs),
    d30_rate: rate(c.retained_d30, c.installs),
    ...maturityOf(groupBy.includes('day') ? String(out.day) : lastInstallDay, zone, nowMs),
  });
  return out;
}
