import { compareRowSets, type Difference, type ReportRow, type ReportWindow } from './check';
import { type RateTable, toMicroUsdOnDay } from './currencies';
import { daysFrom, localDay, localDayEndMs } from './local-days';
import { addToCell, CELL_COUNTERS, type CellCounter, cellKey, NONE, type PerfCells } from './oracle';
import type { Random } from './random';

/**
 * The performance report (GET /api/v1/reports/performance) as it should read: the oracle's cells
 * (sim/oracle.ts: installs, revenue, cohort revenue and retention from the events the service
 * accepted and the attribution the simulator arranged; clicks the service recorded; the cost rows
 * it accepted, last upload of a row winning) filtered, grouped and rendered by the rules of
 * docs/reports.md, for several group_by and filter combinations, and compared with every row the
 * service returns. Nothing is read from the service's tables.
 */

export const PERF_DIMENSIONS = ['partner', 'campaign', 'country', 'platform'] as const;
export type PerfDimension = (typeof PERF_DIMENSIONS)[number];
export type PerfColumn = 'day' | PerfDimension;

export interface PerfQuery {
  groupBy: readonly PerfColumn[];
  filters?: Partial<Record<PerfDimension, readonly string[]>>;
}

/** The combinations --check reads: with and without the day, one to all dimensions, filters alone and together. */
export const PERF_QUERIES: readonly PerfQuery[] = [
  { groupBy: ['day', 'partner'] },
  { groupBy: ['campaign', 'country'] },
  { groupBy: ['partner'] },
  { groupBy: ['platform'], filters: { country: ['US'] } },
  { groupBy: ['day', 'partner', 'campaign', 'country', 'platform'] },
  { groupBy: ['country'], filters: { partner: ['meta', 'google_ads'], platform: ['ios'] } },
  { groupBy: ['day', 'campaign'], filters: { partner: ['tiktok'] } },
  { groupBy: ['day'] },
];

export const queryLabel = (q: PerfQuery) =>
  `performance?group_by=${q.groupBy.join(',')}${Object.entries(q.filters ?? {})
    .map(([d, v]) => `&${d}=${(v ?? []).join(',')}`)
    .join('')}`;

/**
 * Days after the end of a row's latest install day until its cohort figures are final (docs/reports.md):
 * D0 revenue a day later, D1 retention two, D7 and D30 revenue and retention 8 and 31.
 */
const MATURITY = { d0_mature: 1, d1_mature: 2, d7_mature: 8, d30_mature: 31 } as const;
const DAY_MS = 86_400_000;
const round = (value: number, decimals: number) => Math.round(value * 10 ** decimals) / 10 ** decimals;
const rate = (part: number, whole: number) => (whole === 0 ? 0 : round(part / whole, 4));
const dollars = (micros: number) => micros / 1e6;

/** A recorded click, for its cell: the server stamped it between sent and answered. */
export interface PerfClick {
  partner: string;
  campaign?: string;
  country?: string;
  platform: string;
  sentMs: number;
  answeredMs: number;
}

/** Adds the recorded clicks to the cells; returns the clicks whose local day the stamp's moment decides. */
export function addClicks(cells: PerfCells, clicks: Iterable<PerfClick>, zone: string): number {
  let ambiguous = 0;
  for (const c of clicks) {
    const day = localDay(c.answeredMs, zone);
    if (day !== localDay(c.sentMs, zone)) ambiguous++;
    addToCell(cells, cellKey(day, [c.partner, c.campaign ?? NONE, c.country ?? NONE, c.platform]), { clicks: 1 });
  }
  return ambiguous;
}

/** One row of POST /api/v1/cost. */
export interface CostUpload {
  date: string;
  partner: string;
  campaign?: string;
  country?: string;
  platform?: string;
  cost: number;
  currency: string;
  clicks: number;
  impressions: number;
}

export const costIdentity = (row: CostUpload) => cellKey(row.date, dimsOfCost(row));
const dimsOfCost = (row: CostUpload) => [row.partner, row.campaign ?? NONE, row.country ?? NONE, row.platform ?? NONE];

/**
 * The ad spend the partners report: a row per (local day, partner, campaign, country, platform)
 * with paid installs, at the partner's cost per install give or take 15% (some in euros), and rows
 * for past days with no installs and a dimension or two left out. `requests` is what goes out, in
 * order: every row (some at a preliminary cost), then the restated rows and a few sent again
 * unchanged. The last accepted upload of a row is the one that counts (lastAccepted).
 */
export function planCost(
  random: Random,
  cells: PerfCells,
  cpi: Readonly<Record<string, number>>,
  campaigns: Readonly<Record<string, readonly string[]>>,
  historyDays: readonly string[],
  currencies = true,
): CostUpload[][] {
  const rows: CostUpload[] = [];
  const cents = (usd: number) => Math.round(usd * 100) / 100;
  for (const [key, counters] of cells) {
    const [date, partner, campaign, country, platform] = key.split('|') as [string, string, string, string, string];
    const paid = (counters.installs ?? 0) - (counters.organic ?? 0);
    const perInstall = cpi[partner];
    if (paid <= 0 || perInstall === undefined) continue;
    const usd = cents(paid * perInstall * random.between(0.85, 1.15));
    // Some networks bill in euros, when the service converts currencies.
    const euros = random.chance(0.2) && currencies;
    const networkClicks = paid * random.int(20, 60);
    rows.push({
      date,
      partner,
      ...(campaign !== NONE ? { campaign } : {}),
      ...(country !== NONE ? { country } : {}),
      ...(platform !== NONE ? { platform } : {}),
      cost: euros ? cents(usd / 1.08) : usd,
      currency: euros ? 'EUR' : 'USD',
      clicks: networkClicks,
      impressions: networkClicks * random.int(30, 120),
    });
  }
  // Spend on past days that brought no install the simulator can see, with dimensions left out.
  for (const [partner, perInstall] of Object.entries(cpi)) {
    for (let i = 0; i < 3 && historyDays.length > 0; i++) {
      const shape = random.int(0, 2);
      rows.push({
        date: random.pick(historyDays),
        partner,
        ...(shape !== 2 ? { campaign: random.pick(campaigns[partner] ?? ['(none)']) } : {}),
        ...(shape === 0 ? { country: random.pick(['US', 'GB', 'DE', 'JP']), platform: random.pick(['ios', 'android']) } : {}),
        cost: cents(random.int(5, 40) * perInstall),
        currency: 'USD',
        clicks: random.int(100, 900),
        impressions: random.int(5_000, 90_000),
      });
    }
  }
  const unique = new Map(rows.map((r) => [costIdentity(r), r]));
  const all = [...unique.values()];
  // Networks restate cost for days: a third go out first at a preliminary figure.
  const restated = all.filter(() => random.chance(0.33));
  const preliminary = new Set(restated);
  const first = all.map((r) => (preliminary.has(r) ? { ...r, cost: cents(r.cost * 0.8 + 1), clicks: r.clicks + 7 } : r));
  const again = all.filter((r) => !preliminary.has(r) && random.chance(0.1));
  return [first, [...restated, ...again]].filter((r) => r.length > 0);
}

/** The rows that count: of each identity, the last one the service accepted. */
export function lastAccepted(accepted: readonly CostUpload[]): Map<string, CostUpload> {
  return new Map(accepted.map((row) => [costIdentity(row), row]));
}

/** Adds the accepted cost rows to the cells, converted by the simulator's own rates at the row's date. */
export function addCost(cells: PerfCells, rows: Iterable<CostUpload>, rates: RateTable): string[] {
  const unconvertible: string[] = [];
  for (const row of rows) {
    const micros = toMicroUsdOnDay(rates, row.cost, row.currency, row.date);
    if (micros === undefined) unconvertible.push(costIdentity(row));
    else addToCell(cells, costIdentity(row), { cost_micros: micros, network_clicks: row.clicks, impressions: row.impressions });
  }
  return unconvertible;
}

/** The report's rows for a query and window: filtered, grouped, summed and rendered. */
export function expectedPerformance(cells: PerfCells, query: PerfQuery, window: ReportWindow, zone: string, nowMs: number): ReportRow[] {
  const days = new Set(daysFrom(localDay(window.sinceMs, zone), localDay(window.untilMs - 1, zone)));
  const groups = new Map<string, { columns: Record<string, string>; sums: Record<CellCounter, number> }>();
  // A row's latest install day: its day, or without the day the window's last day (today at the latest).
  const today = localDay(nowMs, zone);
  const lastWindowDay = localDay(window.untilMs - 1, zone);
  const windowLast = [lastWindowDay, today].sort()[0] ?? today;
  for (const [key, counters] of cells) {
    const [day, ...dims] = key.split('|') as [string, ...string[]];
    if (!days.has(day)) continue;
    const values: Record<PerfColumn, string> = {
      day,
      partner: dims[0] ?? NONE,
      campaign: dims[1] ?? NONE,
      country: dims[2] ?? NONE,
      platform: dims[3] ?? NONE,
    };
    if (!PERF_DIMENSIONS.every((d) => query.filters?.[d] === undefined || query.filters[d]?.includes(values[d]))) continue;
    const columns = Object.fromEntries(query.groupBy.map((c) => [c, values[c]]));
    const id = query.groupBy.map((c) => values[c]).join('|');
    const group = groups.get(id) ?? { columns, sums: Object.fromEntries(CELL_COUNTERS.map((c) => [c, 0])) as Record<CellCounter, number> };
    groups.set(id, group);
    for (const c of CELL_COUNTERS) group.sums[c] += counters[c] ?? 0;
  }
  return [...groups.values()].map(({ columns, sums }) => renderPerformance(columns, sums, columns.day ?? windowLast, zone, nowMs));
}

function renderPerformance(
  columns: Record<string, string>,
  n: Record<CellCounter, number>,
  lastDay: string,
  zone: string,
  nowMs: number,
): ReportRow {
  const paid = n.installs - n.organic;
  const cost = n.cost_micros;
  const row: ReportRow = {
    ...columns,
    clicks: n.clicks,
    installs: n.installs,
    organic: n.organic,
    reinstalls: n.reinstalls,
    fraud_flagged: n.fraud_flagged,
    reengagements: n.reengagements,
    network_clicks: n.network_clicks,
    impressions: n.impressions,
    cost_usd: dollars(cost),
    ecpi_usd: paid > 0 ? Math.round(cost / paid) / 1e6 : 0,
    revenue_usd: dollars(n.revenue_micros),
    recent_revenue_usd: dollars(n.recent_revenue_micros),
    // The simulator sends no refunds (docs/analytics.md, "Refunds"): nothing is netted.
    refunds: 0,
    refunds_usd: 0,
    cohort_revenue_d0_usd: dollars(n.cohort_d0_micros),
    cohort_revenue_d7_usd: dollars(n.cohort_d7_micros),
    cohort_revenue_d30_usd: dollars(n.cohort_d30_micros),
    roas_d0: cost > 0 ? round(n.cohort_d0_micros / cost, 4) : 0,
    roas_d7: cost > 0 ? round(n.cohort_d7_micros / cost, 4) : 0,
    roas_d30: cost > 0 ? round(n.cohort_d30_micros / cost, 4) : 0,
    ad_revenue_usd: dollars(n.ad_revenue_micros),
    cohort_ad_revenue_d0_usd: dollars(n.cohort_ad_d0_micros),
    cohort_ad_revenue_d7_usd: dollars(n.cohort_ad_d7_micros),
    cohort_ad_revenue_d30_usd: dollars(n.cohort_ad_d30_micros),
    total_revenue_usd: dollars(n.revenue_micros + n.ad_revenue_micros),
    total_roas_d0: cost > 0 ? round((n.cohort_d0_micros + n.cohort_ad_d0_micros) / cost, 4) : 0,
    total_roas_d7: cost > 0 ? round((n.cohort_d7_micros + n.cohort_ad_d7_micros) / cost, 4) : 0,
    total_roas_d30: cost > 0 ? round((n.cohort_d30_micros + n.cohort_ad_d30_micros) / cost, 4) : 0,
    retained_d1: n.retained_d1,
    retained_d7: n.retained_d7,
    retained_d30: n.retained_d30,
    d1_rate: rate(n.retained_d1, n.installs),
    d7_rate: rate(n.retained_d7, n.installs),
    d30_rate: rate(n.retained_d30, n.installs),
  };
  const end = localDayEndMs(lastDay, zone);
  for (const [flag, days] of Object.entries(MATURITY)) row[flag] = nowMs >= end + days * DAY_MS;
  return row;
}

/** Monetary columns compare to the micro-dollar, ratios to 4 decimals: only float noise is forgiven. */
export function normalizePerformance(column: string, value: string | number | boolean): string | number {
  if (typeof value === 'boolean') return String(value);
  if (typeof value !== 'number') return value;
  if (column.endsWith('_usd')) return Math.round(value * 1e6);
  if (/(^|_)roas_/.test(column) || column.endsWith('_rate')) return Math.round(value * 1e4);
  return value;
}

export function comparePerformance(query: PerfQuery, expected: ReportRow[], actual: ReportRow[]): Difference[] {
  return compareRowSets(queryLabel(query), query.groupBy, expected, actual, normalizePerformance);
}

/** Every row of one performance query, a page of 1,000 at a time; undefined when the route is not there (404). */
export async function fetchPerformance(
  baseUrl: string,
  serverKey: string,
  window: ReportWindow,
  query: PerfQuery,
): Promise<ReportRow[] | undefined> {
  const rows: ReportRow[] = [];
  for (let offset = 0; ; offset += 1000) {
    const url = new URL('/api/v1/reports/performance', baseUrl);
    const params = new URLSearchParams({
      since_ms: String(window.sinceMs),
      until_ms: String(window.untilMs),
      limit: '1000',
      offset: String(offset),
      group_by: query.groupBy.join(','),
    });
    for (const [dimension, values] of Object.entries(query.filters ?? {})) params.set(dimension, (values ?? []).join(','));
    url.search = params.toString();
    const response = await fetch(url, { headers: { authorization: `Bearer ${serverKey}` } });
    const body = (await response.json().catch(() => undefined)) as { rows?: ReportRow[]; error?: string } | undefined;
    if (response.status === 404 && offset === 0) return undefined;
    if (response.status !== 200 || !body?.rows)
      throw new Error(`GET ${url.pathname}?${url.search} answered ${response.status} ${body?.error ?? ''}`.trim());
    rows.push(...body.rows);
    if (body.rows.length < 1000) return rows;
  }
}
