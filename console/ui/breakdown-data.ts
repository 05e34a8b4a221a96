import { BLANK, csvPct, csvUsd } from './format';
import { FILTERS, type Filter, GROUP_COLUMNS, type GroupColumn, num, type ReportRow } from './report-rows';

/**
 * The Breakdown page's rules, DOM-free so the unit tests run them in node (docs/console-analytics.md,
 * "Breakdown"): which columns it shows and how each is read, the totals row (sums of counters and
 * dollars, ratios recomputed from the sums, cohort figures blank unless every row is mature), the
 * sort order, the CSV's rows (the API's columns as they are, then display columns), and the
 * chart's series.
 */

export type Cohort = 'd0' | 'd1' | 'd7' | 'd30';
export const COHORTS: readonly Cohort[] = ['d0', 'd1', 'd7', 'd30'];

/** How a column is read and written: text (a group column), a count, dollars, or a rate (shown as %). */
export type ColumnKind = 'text' | 'count' | 'usd' | 'rate';

export interface BreakdownColumn {
  readonly key: string;
  readonly label: string;
  readonly kind: ColumnKind;
  /** A cohort figure: blank while the row's `<cohort>_mature` is false. */
  readonly cohort?: Cohort;
}

/** The performance report's summed counters (whole numbers). */
export const COUNTERS = [
  'clicks',
  'installs',
  'organic',
  'reinstalls',
  'fraud_flagged',
  'network_clicks',
  'impressions',
  'retained_d1',
  'retained_d7',
  'retained_d30',
] as const;
/** Its summed dollars (6 decimals in the API: summed in micro-dollars, so no float drift). */
export const DOLLARS = [
  'cost_usd',
  'revenue_usd',
  'cohort_revenue_d0_usd',
  'cohort_revenue_d7_usd',
  'cohort_revenue_d30_usd',
  'ad_revenue_usd',
  'cohort_ad_revenue_d0_usd',
  'cohort_ad_revenue_d7_usd',
  'cohort_ad_revenue_d30_usd',
  'total_revenue_usd',
] as const;
/** Its ratios, and what each is a ratio of (docs/openapi.yaml, PerformanceRow). */
export const RATIOS: Readonly<Record<string, { readonly over: (sums: Sums) => [number, number] }>> = {
  ecpi_usd: { over: (s) => [s.cost_usd, s.installs - s.organic] },
  roas_d0: { over: (s) => [s.cohort_revenue_d0_usd, s.cost_usd] },
  roas_d7: { over: (s) => [s.cohort_revenue_d7_usd, s.cost_usd] },
  roas_d30: { over: (s) => [s.cohort_revenue_d30_usd, s.cost_usd] },
  // Total ROAS: purchases and ad revenue of the cohort over cost (issue 40; docs/reports.md "Ad revenue").
  total_roas_d7: { over: (s) => [s.cohort_revenue_d7_usd + s.cohort_ad_revenue_d7_usd, s.cost_usd] },
  total_roas_d30: { over: (s) => [s.cohort_revenue_d30_usd + s.cohort_ad_revenue_d30_usd, s.cost_usd] },
  d1_rate: { over: (s) => [s.retained_d1, s.installs] },
  d7_rate: { over: (s) => [s.retained_d7, s.installs] },
  d30_rate: { over: (s) => [s.retained_d30, s.installs] },
};

export type Sums = Readonly<Record<(typeof COUNTERS)[number] | (typeof DOLLARS)[number], number>>;

const GROUP_LABELS: Readonly<Record<GroupColumn, string>> = {
  day: 'Day',
  partner: 'Partner',
  campaign: 'Campaign',
  country: 'Country',
  platform: 'Platform',
};

/** The figures the table shows, after the group columns (every other API column is in the CSV). */
export const METRIC_COLUMNS: readonly BreakdownColumn[] = [
  { key: 'clicks', label: 'Clicks', kind: 'count' },
  { key: 'impressions', label: 'Impressions', kind: 'count' },
  { key: 'installs', label: 'Installs', kind: 'count' },
  { key: 'organic', label: 'Organic', kind: 'count' },
  { key: 'reinstalls', label: 'Reinstalls', kind: 'count' },
  { key: 'fraud_flagged', label: 'Fraud flagged', kind: 'count' },
  { key: 'cost_usd', label: 'Cost', kind: 'usd' },
  { key: 'ecpi_usd', label: 'eCPI', kind: 'usd' },
  { key: 'revenue_usd', label: 'Purchase revenue', kind: 'usd' },
  { key: 'ad_revenue_usd', label: 'Ad revenue', kind: 'usd' },
  { key: 'total_revenue_usd', label: 'Total revenue', kind: 'usd' },
  { key: 'cohort_revenue_d0_usd', label: 'Cohort revenue D0', kind: 'usd', cohort: 'd0' },
  { key: 'cohort_revenue_d7_usd', label: 'Cohort revenue D7', kind: 'usd', cohort: 'd7' },
  { key: 'cohort_revenue_d30_usd', label: 'Cohort revenue D30', kind: 'usd', cohort: 'd30' },
  { key: 'cohort_ad_revenue_d7_usd', label: 'Cohort ad revenue D7', kind: 'usd', cohort: 'd7' },
  { key: 'roas_d0', label: 'ROAS D0', kind: 'rate', cohort: 'd0' },
  { key: 'roas_d7', label: 'ROAS D7', kind: 'rate', cohort: 'd7' },
  { key: 'roas_d30', label: 'ROAS D30', kind: 'rate', cohort: 'd30' },
  { key: 'total_roas_d7', label: 'Total ROAS D7', kind: 'rate', cohort: 'd7' },
  { key: 'total_roas_d30', label: 'Total ROAS D30', kind: 'rate', cohort: 'd30' },
  { key: 'd1_rate', label: 'Retention D1', kind: 'rate', cohort: 'd1' },
  { key: 'd7_rate', label: 'Retention D7', kind: 'rate', cohort: 'd7' },
  { key: 'd30_rate', label: 'Retention D30', kind: 'rate', cohort: 'd30' },
];

/**
 * The figures shown until a user chooses others (column-choice.ts): what a marketer reads every
 * morning, with fraud and ad revenue beside purchases; the others are one tick away.
 */
export const DEFAULT_METRICS: readonly string[] = [
  'installs',
  'organic',
  'fraud_flagged',
  'cost_usd',
  'ecpi_usd',
  'revenue_usd',
  'ad_revenue_usd',
  'roas_d7',
  'total_roas_d7',
  'd1_rate',
  'd7_rate',
];

/**
 * The table's columns for a grouping: the group columns (in the API's order), then the figures,
 * or only the `shown` ones (the user's choice) when given.
 */
export const columnsFor = (groups: readonly GroupColumn[], shown?: readonly string[]): BreakdownColumn[] => [
  ...groups.map((group): BreakdownColumn => ({ key: group, label: GROUP_LABELS[group], kind: 'text' })),
  ...(shown ? METRIC_COLUMNS.filter((column) => shown.includes(column.key)) : METRIC_COLUMNS),
];

/** The grouping a URL names, in the API's column order, unknown and repeated names dropped; partner when none is left. */
export function groupsOf(names: readonly string[]): GroupColumn[] {
  const groups = GROUP_COLUMNS.filter((column) => names.includes(column));
  return groups.length ? groups : ['partner'];
}

const isMature = (row: ReportRow, cohort: Cohort): boolean => row[`${cohort}_mature`] !== false;

/** What a row's cell holds: its text, its number, or undefined when the figure does not exist yet (blank). */
export function cellValue(row: ReportRow, column: BreakdownColumn): string | number | undefined {
  if (column.kind === 'text') return String(row[column.key] ?? '');
  if (column.cohort && !isMature(row, column.cohort)) return undefined;
  const ratio = RATIOS[column.key];
  // The API says 0 for a ratio over 0 (eCPI without attributed installs, ROAS without cost): blank here.
  if (ratio && ratio.over(sumsOf([row]))[1] <= 0) return undefined;
  return num(row[column.key]);
}

/** Sums of counters and dollars over rows (dollars through integer micro-dollars). */
export function sumsOf(rows: readonly ReportRow[]): Sums {
  const sums: Record<string, number> = {};
  for (const key of COUNTERS) sums[key] = rows.reduce((sum, row) => sum + num(row[key]), 0);
  for (const key of DOLLARS) sums[key] = rows.reduce((sum, row) => sum + Math.round(num(row[key]) * 1e6), 0) / 1e6;
  return sums as Sums;
}

export interface Totals {
  /** How many rows were summed. */
  readonly rows: number;
  readonly sums: Sums;
  /** A cohort is mature in the totals only when every summed row is. */
  readonly mature: Readonly<Record<Cohort, boolean>>;
  /** Every metric column's total: undefined where blank (a ratio over 0, an immature cohort). */
  readonly values: Readonly<Record<string, number | undefined>>;
}

/** The totals row: sums of counters and dollars, ratios recomputed from the sums, never by adding ratios. */
export function totalsOf(rows: readonly ReportRow[]): Totals {
  const sums = sumsOf(rows);
  const mature = Object.fromEntries(COHORTS.map((c) => [c, rows.every((row) => isMature(row, c))])) as Record<Cohort, boolean>;
  const values: Record<string, number | undefined> = {};
  for (const column of METRIC_COLUMNS) {
    if (column.cohort && !mature[column.cohort]) values[column.key] = undefined;
    else if (RATIOS[column.key]) {
      const [numerator, denominator] = RATIOS[column.key]?.over(sums) ?? [0, 0];
      values[column.key] = denominator > 0 ? numerator / denominator : undefined;
    } else values[column.key] = sums[column.key as keyof Sums];
  }
  return { rows: rows.length, sums, mature, values };
}

export type SortDirection = 'asc' | 'desc';
export interface SortOrder {
  readonly key: string;
  readonly direction: SortDirection;
}

/** The table's order when the URL names none: most installs first. */
export const DEFAULT_SORT: SortOrder = { key: 'installs', direction: 'desc' };

/** `sort=installs:desc` read against the columns shown; anything else is the default order. */
export function parseSort(text: string | undefined, columns: readonly BreakdownColumn[]): SortOrder {
  const [key = '', direction = ''] = (text ?? '').split(':');
  if (!columns.some((c) => c.key === key)) return DEFAULT_SORT;
  return { key, direction: direction === 'asc' ? 'asc' : 'desc' };
}

export const formatSort = (order: SortOrder): string => `${order.key}:${order.direction}`;

/** A header's click: the same column turns around; another starts descending for figures, ascending for text. */
export function nextSort(current: SortOrder, column: BreakdownColumn): SortOrder {
  if (current.key === column.key) return { key: column.key, direction: current.direction === 'asc' ? 'desc' : 'asc' };
  return { key: column.key, direction: column.kind === 'text' ? 'asc' : 'desc' };
}

/**
 * The rows in a column's order. Blank figures come last either way (they are not smaller than 0,
 * they are not there yet); ties keep the API's order (by the group columns), as the sort is stable.
 */
export function sortRows(rows: readonly ReportRow[], order: SortOrder, columns: readonly BreakdownColumn[]): ReportRow[] {
  const column = columns.find((c) => c.key === order.key);
  if (!column) return [...rows];
  const sign = order.direction === 'asc' ? 1 : -1;
  return rows
    .map((row) => ({ row, value: cellValue(row, column) }))
    .sort((a, b) => {
      if (a.value === undefined || b.value === undefined) return a.value === b.value ? 0 : a.value === undefined ? 1 : -1;
      if (a.value === b.value) return 0;
      return (a.value < b.value ? -1 : 1) * sign;
    })
    .map(({ row }) => row);
}

/** The display column a dollars or rate column adds in the CSV (`cost_usd_display`, `d7_rate_pct`). */
export const displayColumnOf = (column: BreakdownColumn): string | undefined =>
  column.kind === 'usd' ? `${column.key}_display` : column.kind === 'rate' ? `${column.key}_pct` : undefined;

/**
 * The CSV's rows: every column of the API's row as it is (group columns, counters, dollars to 6
 * decimals, ratios to 4, maturity flags), then a display column per dollars and rate column:
 * dollars to 2 decimals (`1234.50`), rates as percentages (`12.34%`), empty where the screen
 * shows a blank (an immature cohort, a ratio over 0). Every row has the same columns, in order.
 */
export function csvRows(rows: readonly ReportRow[]): Record<string, string | number | boolean>[] {
  const apiColumns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
  const display = METRIC_COLUMNS.flatMap((column) => {
    const name = displayColumnOf(column);
    return name ? [{ column, name }] : [];
  });
  return rows.map((row) => {
    const out: Record<string, string | number | boolean> = {};
    for (const key of apiColumns) out[key] = row[key] ?? '';
    for (const { column, name } of display) {
      const value = cellValue(row, column);
      out[name] = value === undefined ? '' : column.kind === 'usd' ? csvUsd(Number(value)) : csvPct(Number(value));
    }
    return out;
  });
}

/** `breakdown_my-app_2026-01-05_2026-01-11_by-campaign-country.csv` (and `_filtered` under a filter). */
export function csvFilename(appName: string, since: string, until: string, groups: readonly string[], filtered: boolean): string {
  const slug = appName
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return `breakdown_${slug || 'app'}_${since}_${until}_by-${groups.join('-')}${filtered ? '_filtered' : ''}.csv`;
}

export interface FilterCheck {
  /** The filters to send, values trimmed (countries upper-case), empty ones left out. */
  readonly filters: Partial<Record<Filter, string>>;
  /** The first filter at fault, said plainly. */
  readonly error?: { readonly filter: Filter; readonly message: string };
}

const COUNTRY = /^([A-Z]{2}|\(none\))$/;

/**
 * The filters a URL names (comma lists), checked before any request: a country is a two-letter
 * code (or `(none)`, the report's value for unknown). An empty value between commas is dropped,
 * as the API would refuse it (invalid_filter).
 */
export function checkFilters(given: Partial<Record<Filter, string | undefined>>): FilterCheck {
  const filters: Partial<Record<Filter, string>> = {};
  for (const filter of FILTERS) {
    const values = (given[filter] ?? '')
      .split(',')
      .map((value) => value.trim())
      .filter(Boolean)
      .map((value) => (filter === 'country' && value !== '(none)' ? value.toUpperCase() : value));
    if (values.length === 0) continue;
    if (filter === 'country' && !values.every((value) => COUNTRY.test(value)))
      return { filters, error: { filter, message: 'Country must be two-letter codes (such as US or DE), separated by commas.' } };
    filters[filter] = values.join(',');
  }
  return { filters };
}

/** The table shows this many rows, then this many more at each "Show more". */
export const SHOWN_ROWS = 50;

/** `page_size=` (rows per API read, 1 to 1000), or undefined for the API's largest. */
export function pageSizeOf(text: string | undefined): number | undefined {
  const size = Number(text);
  return Number.isInteger(size) && size >= 1 && size <= 1000 ? size : undefined;
}

export interface ChartSeries {
  readonly name: string;
  readonly values: readonly number[];
  /** The rows behind each label (for the tooltip's $ and %). */
  readonly totals: readonly Totals[];
}

export interface ChartData {
  /** `days`: installs per day, stacked by `dimension`; `groups`: a bar per group value. */
  readonly mode: 'days' | 'groups';
  /** The dimension whose values pick the colours (undefined: one series of all installs). */
  readonly dimension: GroupColumn | undefined;
  readonly labels: readonly string[];
  readonly series: readonly ChartSeries[];
  /** Groups mode: each bar's value of `dimension`, which picks its colour (OTHER for the rest). */
  readonly colorKeys: readonly string[];
}

/** How many series or bars a chart shows by name; the rest are summed under OTHER. */
export const TOP = 12;
export const OTHER = 'other';

const installsOf = (rows: readonly ReportRow[]) => rows.reduce((sum, row) => sum + num(row.installs), 0);

/** Names by installs, most first (ties by name), the first TOP kept, the rest mapped to OTHER. */
function topNames(
  rows: readonly ReportRow[],
  nameOf: (row: ReportRow) => string,
): { names: string[]; keyOf: (row: ReportRow) => string; folded: boolean } {
  const byName = new Map<string, ReportRow[]>();
  for (const row of rows) byName.set(nameOf(row), [...(byName.get(nameOf(row)) ?? []), row]);
  const ranked = [...byName.entries()]
    .map(([name, its]) => ({ name, installs: installsOf(its) }))
    .sort((a, b) => b.installs - a.installs || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((entry) => entry.name);
  // Thirteen names are drawn as they are: "other" would stand for one name alone.
  if (ranked.length <= TOP + 1) return { names: ranked, keyOf: nameOf, folded: false };
  const kept = new Set(ranked.slice(0, TOP));
  return { names: [...kept, OTHER], keyOf: (row) => (kept.has(nameOf(row)) ? nameOf(row) : OTHER), folded: true };
}

/** A group's name for its bar: its values joined (`spring · US`). */
export const groupLabel = (row: ReportRow, groups: readonly GroupColumn[]): string => groups.map((g) => String(row[g] ?? '')).join(' · ');

/**
 * The chart of a breakdown. With day among the groups: installs per day of the period (every day,
 * 0 where there is no row), stacked by the first other group column's values (top 12 by installs,
 * then "other"). Without day: a bar per group (top 12 by installs, then "other").
 */
export function chartData(rows: readonly ReportRow[], groups: readonly GroupColumn[], days: readonly string[]): ChartData {
  if (groups.includes('day')) {
    const dimension = groups.find((g) => g !== 'day');
    const { names, keyOf } = dimension
      ? topNames(rows, (row) => String(row[dimension] ?? ''))
      : { names: ['installs'], keyOf: () => 'installs' };
    return {
      mode: 'days',
      dimension,
      labels: days,
      series: names.map((name) => {
        const its = rows.filter((row) => keyOf(row) === name);
        const totals = days.map((day) => totalsOf(its.filter((row) => row.day === day)));
        return { name, totals, values: totals.map((t) => t.sums.installs) };
      }),
      colorKeys: names,
    };
  }
  const { names, keyOf, folded } = topNames(rows, (row) => groupLabel(row, groups));
  const dimension = groups[0] ?? 'partner';
  const members = names.map((name) => rows.filter((row) => keyOf(row) === name));
  const totals = members.map(totalsOf);
  return {
    mode: 'groups',
    dimension,
    labels: names,
    series: [{ name: 'installs', totals, values: totals.map((t) => t.sums.installs) }],
    colorKeys: members.map((its, i) => (folded && i === names.length - 1 ? OTHER : String(its[0]?.[dimension] ?? ''))),
  };
}

/** The chart in words (its accessible name): what it counts, and each series' or bar's installs. */
export function chartSummary(data: ChartData, groups: readonly GroupColumn[]): string {
  const by = groups.join(', ');
  if (data.mode === 'days') {
    const parts = data.series.map((s) => `${s.name} ${s.values.reduce((a, b) => a + b, 0)}`);
    return `Installs per day${data.dimension ? ` by ${data.dimension}, stacked` : ''}, over ${data.labels.length} days. Totals: ${parts.join(', ') || 'none'}.`;
  }
  const [series] = data.series;
  const parts = data.labels.map((label, i) => `${label} ${series?.values[i] ?? 0}`);
  return `Installs by ${by}: ${parts.join(', ') || BLANK}.`;
}
