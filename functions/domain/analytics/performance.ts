/**
 * The performance report's data (docs/analytics.md): install dimensions, the counters the
 * aggregator, the link redirect and the cost upload keep per local day and dimension group, and
 * the compact page encodings. One module, so the writers, the reader, the bench and the simulator
 * cannot disagree.
 */

import { addDays, daysFrom, mondayOf } from '../common/days';

/** The value of a dimension nobody gave (a cost row without a campaign, an install without a country). */
export const NONE = '(none)';

/** The install dimensions, in key order. */
export const DIMENSIONS = ['partner', 'campaign', 'country', 'platform'] as const;
export type Dimension = (typeof DIMENSIONS)[number];

/** An install's (or a click's, or a cost row's) values of the four dimensions, in DIMENSIONS order. */
export type DimensionValues = readonly [partner: string, campaign: string, country: string, platform: string];

/** The report's grouping columns: a day and the four dimensions. */
export const GROUP_COLUMNS = ['day', ...DIMENSIONS] as const;
export type GroupColumn = (typeof GROUP_COLUMNS)[number];

/**
 * Re-engagement (issue 37; functions/domain/aggregation/reengagement.ts): re-engagements on the
 * open's day under the link's partner and campaign, and revenue on the event's day under the
 * install's most recent attribution (a re-engagement within its window, else the install's own).
 * Added after pages were first stored, so a page line carries them last, after COST_COUNTERS: a
 * page stored before them reads them as 0, which they were.
 */
export const REENGAGEMENT_COUNTERS = ['reengagements', 'recent_revenue_micros'] as const;
/** Ad revenue (issue 40): the impressions' dollars on their day, and by the install's cohort windows. */
export const AD_REVENUE_COUNTERS = ['ad_revenue_micros', 'cohort_ad_d0_micros', 'cohort_ad_d7_micros', 'cohort_ad_d30_micros'] as const;
/**
 * Refunds (issue 40, item 6; docs/analytics.md, "Refunds"): refunds counted and their dollars on
 * the refund's day, by most recent attribution, and by the install's cohort windows. Kept apart
 * from revenue, so that every counter only grows; the report nets them from revenue as it reads.
 */
export const REFUND_COUNTERS = [
  'refunds',
  'refund_micros',
  'recent_refund_micros',
  'cohort_refund_d0_micros',
  'cohort_refund_d7_micros',
  'cohort_refund_d30_micros',
] as const;

/** Integer counters of the `perf` and `perf_partner` rows (revenue in micro-dollars). */
export const PERF_COUNTERS = [
  'clicks',
  'installs',
  'organic',
  'reinstalls',
  'fraud_flagged',
  'revenue_micros',
  'cohort_d0_micros',
  'cohort_d7_micros',
  'cohort_d30_micros',
  'retained_d1',
  'retained_d7',
  'retained_d30',
  ...REENGAGEMENT_COUNTERS,
  ...AD_REVENUE_COUNTERS,
  ...REFUND_COUNTERS,
] as const;
export type PerfCounter = (typeof PERF_COUNTERS)[number];

/** Integer counters of a cost row (cost in micro-dollars; clicks and impressions as the network reported them). */
export const COST_COUNTERS = ['cost_micros', 'network_clicks', 'impressions'] as const;
export type CostCounter = (typeof COST_COUNTERS)[number];

/**
 * A page line's counters, in order: PERF_COUNTERS as they were before issue 37, COST_COUNTERS, then
 * the counters added since, each group appended at the end so that a line stored before it still
 * reads right (its missing counters read as 0).
 */
const APPENDED_COUNTERS: readonly string[] = [...REENGAGEMENT_COUNTERS, ...AD_REVENUE_COUNTERS, ...REFUND_COUNTERS];
export const PAGE_COUNTERS = [
  ...PERF_COUNTERS.filter((name) => !APPENDED_COUNTERS.includes(name)),
  ...COST_COUNTERS,
  ...REENGAGEMENT_COUNTERS,
  ...AD_REVENUE_COUNTERS,
  ...REFUND_COUNTERS,
] as readonly (PerfCounter | CostCounter)[];

/** Cohort revenue windows: revenue of events before install time + N x 24 h. */
export const COHORT_REVENUE_DAYS = { cohort_d0_micros: 1, cohort_d7_micros: 7, cohort_d30_micros: 30 } as const;
/** The same windows for ad revenue (ad_revenue events: docs/analytics.md, "Ad revenue"). */
export const COHORT_AD_REVENUE_DAYS = { cohort_ad_d0_micros: 1, cohort_ad_d7_micros: 7, cohort_ad_d30_micros: 30 } as const;
/** The same windows for refunds, by the refund's time (docs/analytics.md, "Refunds"). */
export const COHORT_REFUND_DAYS = { cohort_refund_d0_micros: 1, cohort_refund_d7_micros: 7, cohort_refund_d30_micros: 30 } as const;

/** Row families in the aggregates table (pk `<app_id>#<family>`). */
export const PERF_FAMILIES = {
  /** sk `<day>␁<partner>␁<campaign>␁<country>␁<platform>`: PERF_COUNTERS. */
  perf: 'perf',
  /** sk `<day>␁<partner>`: PERF_COUNTERS, the same contributions summed over the other dimensions. */
  perfPartner: 'perf_partner',
  /** sk `<day>`: `v` (every write to the day's perf rows or cost adds to it), `page_v` (the v its page was built at). */
  perfStamp: 'perf_stamp',
  /** sk `<day>`: `rows_gz` (gzip of encodePerfPage), `v` (the stamp it was built at), or `overflow: true`. */
  perfPage: 'perf_page',
  /** sk `<day>`: `rows` (encodePerfPage of the day's page summed by partner, other dimensions NONE), `v`. */
  partnerPage: 'perf_partner_page',
  /** sk `<monday>`: `rows_gz` (the 7 day pages of the week summed), `vs` (the 7 days' page v's, 0 for a day without one), `vsum`; or `overflow: true`. */
  weekPage: 'perf_week',
  /** sk `<monday>`: `rows` (the 7 day partner pages summed), `vs`, `vsum`. */
  partnerWeek: 'perf_partner_week',
  /** sk `<day>`: `rows` (encodeCostDay), `ver` (1 up per replace): the day's cost rows, the truth. */
  cost: 'cost',
  /** sk `<day>␁<partner>`: COST_COUNTERS summed over the day's cost rows of the partner, `ver` (the cost day's it was summed from). */
  costPartner: 'cost_partner',
} as const;

/** One cost row of a day: its dimensions, counters, and the amount and currency it was sent in. */
export interface CostRow {
  readonly dims: DimensionValues;
  readonly cost_micros: number;
  readonly network_clicks: number;
  readonly impressions: number;
  readonly currency: string;
  /** The amount as sent, in `currency`. */
  readonly cost: number;
}

/** One row of a perf page: the dimensions, then PERF_COUNTERS, then COST_COUNTERS (all integers). */
export interface PerfPageRow {
  readonly dims: DimensionValues;
  readonly counters: Readonly<Record<PerfCounter | CostCounter, number>>;
}

/** Compact JSON: `[[partner, campaign, country, platform, ...PAGE_COUNTERS], ...]`. */
export function encodePerfPage(rows: readonly PerfPageRow[]): string {
  return JSON.stringify(rows.map((row) => [...row.dims, ...PAGE_COUNTERS.map((c) => row.counters[c] ?? 0)]));
}

export function decodePerfPage(text: string): PerfPageRow[] {
  const cells = JSON.parse(text) as (string | number)[][];
  return cells.map((line) => {
    const counters = {} as Record<PerfCounter | CostCounter, number>;
    PAGE_COUNTERS.forEach((name, i) => {
      counters[name] = Number(line[4 + i] ?? 0);
    });
    return { dims: line.slice(0, 4).map(String) as unknown as DimensionValues, counters };
  });
}

/** Compact JSON: `[[partner, campaign, country, platform, cost_micros, network_clicks, impressions, currency, cost], ...]`. */
export function encodeCostDay(rows: readonly CostRow[]): string {
  return JSON.stringify(rows.map((row) => [...row.dims, row.cost_micros, row.network_clicks, row.impressions, row.currency, row.cost]));
}

export function decodeCostDay(text: string): CostRow[] {
  const cells = JSON.parse(text) as (string | number)[][];
  return cells.map((line) => ({
    dims: line.slice(0, 4).map(String) as unknown as DimensionValues,
    cost_micros: Number(line[4] ?? 0),
    network_clicks: Number(line[5] ?? 0),
    impressions: Number(line[6] ?? 0),
    currency: String(line[7] ?? 'USD'),
    cost: Number(line[8] ?? 0),
  }));
}

/**
 * The week of a local day: ISO weeks, Monday to Sunday, named by their Monday. Days are calendar
 * days (YYYY-MM-DD of the app's zone), so the week is the same whatever the zone.
 */
export const weekOf = mondayOf;

/** The 7 days of the week that starts on `monday` (a RangeError for the last week of 9999, which no accepted day is in). */
export const daysOfWeek = (monday: string): string[] => daysFrom(monday, addDays(monday, 6));

/** The key of a row's dimensions (the cost row's identity within its day). */
export const dimsKey = (dims: DimensionValues): string => dims.join('\u0001');
