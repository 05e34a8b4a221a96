import type { OracleRows } from './oracle';

/**
 * --check: the four reports as they should read, rendered from the oracle's counters with the
 * rounding of docs/architecture.md section 7, against every row the Reporting API returns (paged through), and
 * every difference spelled out.
 */

export const REPORTS = ['attribution', 'revenue', 'cohorts', 'events'] as const;
export type ReportName = (typeof REPORTS)[number];
export type ReportRow = Record<string, string | number | boolean>;
export type Reports = Record<ReportName, ReportRow[]>;

/** The columns that name a row; the others are its values. */
export const GROUP_COLUMNS: Record<ReportName, readonly string[]> = {
  attribution: ['day', 'partner', 'attribution_type'],
  revenue: ['day', 'partner'],
  cohorts: ['day'],
  events: ['day', 'event_name'],
};

const round = (value: number, decimals: number) => Math.round(value * 10 ** decimals) / 10 ** decimals;
const rate = (part: number, whole: number) => (whole === 0 ? 0 : round(part / whole, 4));

/** The oracle's "day|group" counters as report rows, ordered as the API orders them. */
export function expectedReports(rows: OracleRows): Reports {
  const out = {} as Reports;
  for (const report of REPORTS) {
    out[report] = Object.entries(rows[report])
      .map(([key, counters]) => render(report, key.split('|'), (name) => counters[name] ?? 0))
      .sort((a, b) => compareKeys(rowKey(report, a), rowKey(report, b)));
  }
  return out;
}

/** A field of an oracle row's key (its group, joined by '|'); a key short of it is the oracle's bug. */
function field(group: readonly string[], index: number): string {
  const value = group[index];
  if (value === undefined) throw new Error(`the oracle's row key ${group.join('|')} has no field ${index}`);
  return value;
}

function render(report: ReportName, group: string[], n: (name: string) => number): ReportRow {
  switch (report) {
    case 'attribution':
      return {
        day: field(group, 0),
        partner: field(group, 1),
        attribution_type: field(group, 2),
        installs: n('installs'),
        organic: n('organic'),
        reinstalls: n('reinstalls'),
        fraud_flagged: n('fraud_flagged'),
      };
    case 'revenue': {
      const micros = n('revenue_micros');
      const payers = n('payers');
      return {
        day: field(group, 0),
        partner: field(group, 1),
        purchases: n('purchases'),
        revenue_usd: micros / 1e6,
        arppu_usd: payers === 0 ? 0 : Math.round(micros / payers) / 1e6,
      };
    }
    case 'cohorts': {
      const installs = n('installs');
      const [d1, d7, d30] = [n('d1'), n('d7'), n('d30')];
      return {
        day: field(group, 0),
        installs,
        d1,
        d7,
        d30,
        d1_rate: rate(d1, installs),
        d7_rate: rate(d7, installs),
        d30_rate: rate(d30, installs),
      };
    }
    case 'events':
      return {
        day: field(group, 0),
        event_name: field(group, 1),
        events: n('events'),
        unique_installs: n('unique_installs'),
        revenue_usd: n('revenue_micros') / 1e6,
      };
  }
}

export const rowKey = (report: ReportName, row: ReportRow) => GROUP_COLUMNS[report].map((column) => String(row[column])).join(' ');
const compareKeys = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

export interface Difference {
  /** The report, or for the performance report its query. */
  report: string;
  row: string;
  /** A column that differs; absent when the whole row is missing or unexpected. */
  column?: string;
  expected?: string | number | boolean;
  actual?: string | number | boolean;
}

/** A row whose values are all zero (flags aside) says nothing, whichever side has it. */
const empty = (groupColumns: readonly string[], row: ReportRow) =>
  Object.entries(row).every(([column, value]) => groupColumns.includes(column) || value === 0 || typeof value === 'boolean');

export function compareReports(expected: Reports, actual: Reports): Difference[] {
  return REPORTS.flatMap((report) => compareRowSets(report, GROUP_COLUMNS[report], expected[report], actual[report]));
}

/**
 * Two sets of rows of one report, matched by their group columns: every row missing, unexpected or
 * with a column that differs. `normalize` says which values count as equal (the same micro-dollar).
 */
export function compareRowSets(
  report: string,
  groupColumns: readonly string[],
  expected: readonly ReportRow[],
  actual: readonly ReportRow[],
  normalize: (column: string, value: string | number | boolean) => string | number | boolean = (_, value) => value,
): Difference[] {
  const differences: Difference[] = [];
  const keyOf = (row: ReportRow) => groupColumns.map((column) => String(row[column])).join(' ');
  const describe = (row: ReportRow) =>
    Object.entries(row)
      .filter(([column]) => !groupColumns.includes(column))
      .map(([column, value]) => `${column}=${value}`)
      .join(' ');
  const want = new Map(expected.filter((r) => !empty(groupColumns, r)).map((r) => [keyOf(r), r]));
  const got = new Map(actual.filter((r) => !empty(groupColumns, r)).map((r) => [keyOf(r), r]));
  for (const key of [...new Set([...want.keys(), ...got.keys()])].sort(compareKeys)) {
    const w = want.get(key);
    const g = got.get(key);
    if (!g && w) differences.push({ report, row: key, expected: describe(w) });
    else if (!w && g) differences.push({ report, row: key, actual: describe(g) });
    else if (w && g) {
      for (const column of new Set([...Object.keys(w), ...Object.keys(g)])) {
        const [a, b] = [w[column], g[column]];
        const same = a !== undefined && b !== undefined ? normalize(column, a) === normalize(column, b) : a === b;
        if (!same) differences.push({ report, row: key, column, expected: a, actual: b });
      }
    }
  }
  return differences;
}

export function formatDifference(d: Difference): string {
  if (d.column) return `${d.report} [${d.row}] ${d.column}: expected ${d.expected}, got ${d.actual}`;
  if (d.actual === undefined) return `${d.report} [${d.row}] missing row: expected ${d.expected}`;
  return `${d.report} [${d.row}] unexpected row: got ${d.actual}`;
}

/** Reads every row of the four reports for one server key. */
export async function fetchReports(baseUrl: string, serverKey: string, window: ReportWindow): Promise<Reports> {
  const out = {} as Reports;
  for (const report of REPORTS) out[report] = await fetchReport(baseUrl, serverKey, report, window);
  return out;
}

export interface ReportWindow {
  sinceMs: number;
  untilMs: number;
}

/** Every row of one report, a page of 1,000 at a time. */
export async function fetchReport(baseUrl: string, serverKey: string, report: ReportName, window: ReportWindow): Promise<ReportRow[]> {
  const rows = await fetchReportRows(baseUrl, serverKey, report, window);
  if (!rows) throw new Error(`GET /api/v1/reports/${report} answered 404`);
  return rows;
}

/** Every row of a report route, a page of 1,000 at a time; undefined when the route is not there (404, an older stack). */
export async function fetchReportRows(
  baseUrl: string,
  serverKey: string,
  report: string,
  window: ReportWindow,
): Promise<ReportRow[] | undefined> {
  const rows: ReportRow[] = [];
  for (let offset = 0; ; offset += 1000) {
    const url = new URL(`/api/v1/reports/${report}`, baseUrl);
    url.search = new URLSearchParams({
      since_ms: String(window.sinceMs),
      until_ms: String(window.untilMs),
      limit: '1000',
      offset: String(offset),
    }).toString();
    const response = await fetch(url, { headers: { authorization: `Bearer ${serverKey}` } });
    const body = (await response.json().catch(() => undefined)) as { rows?: ReportRow[]; error?: string } | undefined;
    if (response.status === 404 && offset === 0) return undefined;
    if (response.status !== 200 || !body?.rows)
      throw new Error(`GET ${url.pathname} answered ${response.status} ${body?.error ?? ''}`.trim());
    rows.push(...body.rows);
    if (body.rows.length < 1000) return rows;
  }
}

/** Every event of the window, from the events report: what the aggregator has counted so far. */
export const countedEvents = (rows: readonly ReportRow[]) => rows.reduce((sum, row) => sum + Number(row.events), 0);
