import { addDays, DAY_MS, localDayOf, localDayStartMs, nextDay } from '../../functions/domain/common/days';
import { type Totals, totalsOf } from './breakdown-data';
import { type Change, change, count, orBlank, pct, usd } from './format';
import { mondayOf, type Period, periodOf, previousPeriod } from './period';
import { num, type ReportRow } from './report-rows';

/**
 * The overview's arithmetic (docs/console-analytics.md, "Overview"), DOM-free so the unit tests
 * run it in node: the period's totals from the performance report's rows (summed counters, ratios
 * from the sums, never sums of ratios), ARPPU from the revenue report, the change of each figure
 * against the previous period, the installs per day by partner, and the top rows.
 */

/** A row of the Reporting API, as `report show` answers it. */
export type ApiRow = ReportRow;

/** Dollars are summed as integer micro-dollars (the API renders them to 6 decimals), so the order of the rows cannot move a cent. */
const microsOf = (row: ApiRow, column: string): number => Math.round(num(row[column]) * 1_000_000);

/**
 * The performance report's totals are the breakdown's totals row (breakdown-data.ts `totalsOf`:
 * counters and micro-dollars summed, ratios from the sums, a cohort final only when every row is),
 * so the overview and a breakdown of the same period cannot disagree.
 */
export const sumPerformance = (rows: readonly ApiRow[]): Totals => totalsOf(rows);

/** The revenue report's rows summed: revenue, and paying installs (a row's payers are its revenue over its ARPPU). */
export interface RevenueTotals {
  readonly revenueMicros: number;
  readonly payers: number;
}

/**
 * The revenue report gives each (day, partner) row its revenue and ARPPU (revenue over distinct
 * paying installs); its payers are the quotient, rounded (ARPPU is rounded to the micro-dollar).
 * An install that paid on two days counts on both, as the daily rows count it.
 */
export function sumRevenue(rows: readonly ApiRow[]): RevenueTotals {
  let revenueMicros = 0;
  let payers = 0;
  for (const row of rows) {
    const revenue = microsOf(row, 'revenue_usd');
    const arppu = microsOf(row, 'arppu_usd');
    revenueMicros += revenue;
    if (arppu > 0) payers += Math.round(revenue / arppu);
  }
  return { revenueMicros, payers };
}

/** undefined when the denominator is 0 (a ratio that does not exist), else the quotient. */
const quotient = (numerator: number, denominator: number): number | undefined => (denominator > 0 ? numerator / denominator : undefined);

export const FIGURE_KEYS = [
  'installs',
  'non_organic_share',
  'cost',
  'ecpi',
  'revenue',
  'ad_revenue',
  'arppu',
  'roas_d7',
  'total_roas_d7',
  'roas_d7_blended',
  'retention_d1',
  'retention_d7',
] as const;
export type FigureKey = (typeof FIGURE_KEYS)[number];

/** The cohort a figure waits for: its value is blank until the performance report flags it final. */
export type Cohort = 'd1' | 'd7';

interface FigureSpec {
  readonly label: string;
  readonly format: (n: number) => string;
  /**
   * A cohort figure: computed over the rows (by day and partner) whose cohort is final, so a
   * period partly final shows the days that are ("N of M days final") instead of a blank.
   */
  readonly cohort?: Cohort;
  /** Paid figures leave out the organic rows: paid revenue over paid cost. */
  readonly paidOnly?: boolean;
  /** How the figure is computed, in a marketer's words (the card's title). */
  readonly means: string;
  /** undefined when the figure does not exist (a ratio over 0). */
  readonly value: (perf: Totals, revenue: RevenueTotals) => number | undefined;
}

const dollars = (micros: number): number => micros / 1_000_000;

export const FIGURES: Readonly<Record<FigureKey, FigureSpec>> = {
  installs: { label: 'Installs', format: count, means: 'Installs, organic included', value: (p) => p.sums.installs },
  non_organic_share: {
    label: 'Non-organic share',
    format: pct,
    means: 'Attributed installs over all installs: 1 - organic / installs',
    value: (p) => quotient(p.sums.installs - p.sums.organic, p.sums.installs),
  },
  cost: { label: 'Cost', format: usd, means: 'Ad spend uploaded for the period', value: (p) => p.sums.cost_usd },
  ecpi: {
    label: 'eCPI',
    format: usd,
    means: 'Cost over attributed installs: cost / (installs - organic)',
    value: (p) => p.values.ecpi_usd,
  },
  revenue: {
    label: 'Purchase revenue',
    format: usd,
    means: 'Purchases on the period’s days, in USD (ad revenue is its own figure)',
    value: (p) => p.sums.revenue_usd,
  },
  ad_revenue: {
    label: 'Ad revenue',
    format: usd,
    means: 'Revenue of the ads shown in the app on the period’s days (ad_revenue events), in USD',
    value: (p) => p.sums.ad_revenue_usd,
  },
  arppu: {
    label: 'ARPPU',
    format: usd,
    means: 'Revenue over paying installs, per day as the revenue report counts them',
    value: (_, r) => quotient(dollars(r.revenueMicros), r.payers),
  },
  roas_d7: {
    label: 'Paid ROAS D7 (purchases)',
    format: pct,
    cohort: 'd7',
    paidOnly: true,
    means: 'Purchases within 7 days of the paid installs of the final days, over their cost (organic installs left out)',
    value: (p) => p.values.roas_d7,
  },
  total_roas_d7: {
    label: 'Paid total ROAS D7 (purchases + ads)',
    format: pct,
    cohort: 'd7',
    paidOnly: true,
    means: 'Purchases and ad revenue within 7 days of the paid installs of the final days, over their cost (organic installs left out)',
    value: (p) => p.values.total_roas_d7,
  },
  roas_d7_blended: {
    label: 'Blended ROAS D7 (organic included)',
    format: pct,
    cohort: 'd7',
    means:
      'Purchases within 7 days of every install of the final days, organic included, over the cost: overstates what the spend returned',
    value: (p) => p.values.roas_d7,
  },
  retention_d1: {
    label: 'D1 retention',
    format: pct,
    cohort: 'd1',
    means: 'Installs of the final days seen again on day 1, over those installs',
    value: (p) => p.values.d1_rate,
  },
  retention_d7: {
    label: 'D7 retention',
    format: pct,
    cohort: 'd7',
    means: 'Installs of the final days seen again on day 7, over those installs',
    value: (p) => p.values.d7_rate,
  },
};

/**
 * Days after the end of a cohort's last install day until its figures are final: the performance
 * report's MATURE_AFTER_DAYS (functions/domain/analytics/performance-report.ts; a unit test keeps
 * the two equal). Not imported: that module brings the report's server side into the bundle.
 */
export const FINAL_AFTER_DAYS: Readonly<Record<Cohort, number>> = { d1: 2, d7: 8 };

/** A row's cohort is final unless the report flags it not (`<cohort>_mature: false`), as the breakdown reads it. */
const isFinal = (row: ApiRow, cohort: Cohort): boolean => row[`${cohort}_mature`] !== false;

/**
 * A figure's value, or undefined when it does not exist (a ratio over 0). A cohort figure is
 * computed over the rows by day (and partner) whose cohort is final, and only those, paid rows only
 * when it is a paid figure; it is undefined when no row is final.
 */
export function figureValue(key: FigureKey, data: PeriodData): number | undefined {
  const spec = FIGURES[key];
  if (!spec.cohort) return spec.value(sumPerformance(data.performance), sumRevenue(data.revenue));
  const cohort = spec.cohort;
  const rows = data.byDay.filter((row) => isFinal(row, cohort) && (!spec.paidOnly || row.partner !== ORGANIC));
  if (!data.byDay.some((row) => isFinal(row, cohort))) return undefined;
  return spec.value(sumPerformance(rows), sumRevenue([]));
}

/** The local day on which `day`'s cohort becomes final: the day ends, then FINAL_AFTER_DAYS x 24 hours pass. */
function dayFinalOn(day: string, cohort: Cohort, timeZone: string): string {
  return localDayOf(localDayStartMs(nextDay(day), timeZone) + FINAL_AFTER_DAYS[cohort] * DAY_MS, timeZone);
}

/**
 * How many of the period's days so far (up to today) have their cohort final at `nowMs`, and on
 * which local day the first of them is final (the day a blank cohort figure gets a value).
 */
export function finalDays(
  period: Pick<Period, 'days' | 'timeZone'>,
  cohort: Cohort,
  nowMs: number,
): { final: number; of: number; firstFinalOn?: string } {
  const today = localDayOf(nowMs, period.timeZone);
  const elapsed = period.days.filter((day) => day <= today);
  const final = elapsed.filter((day) => dayFinalOn(day, cohort, period.timeZone) <= today).length;
  const [first] = elapsed;
  return { final, of: elapsed.length, ...(first !== undefined && { firstFinalOn: dayFinalOn(first, cohort, period.timeZone) }) };
}

/**
 * The local day a period's cohort figures become final: its last install day (today at the
 * latest) ends, then FINAL_AFTER_DAYS x 24 hours pass.
 */
export function finalOn(period: Pick<Period, 'until' | 'timeZone'>, cohort: Cohort, nowMs: number): string {
  const today = localDayOf(nowMs, period.timeZone);
  const lastDay = [period.until, today].sort()[0] as string; // the earlier day
  return dayFinalOn(lastDay, cohort, period.timeZone);
}

/** Fewest days a cohort figure is shown over when none of the period's days is final: a week, so one quiet day is no figure. */
export const LATEST_FINAL_MIN_DAYS = 7;

/**
 * The days a cohort figure stands on when none of the period's days is final yet (issue 42: never a
 * bare blank): the latest days whose cohort is final at `nowMs`, as many as the period has and a
 * week at least, ending on the latest final day. Its previous period is the same number of days
 * before it.
 */
export function latestFinalPeriod(period: Pick<Period, 'days' | 'timeZone'>, cohort: Cohort, nowMs: number): Period {
  const today = localDayOf(nowMs, period.timeZone);
  let last = today;
  while (dayFinalOn(last, cohort, period.timeZone) > today) last = addDays(last, -1);
  const length = Math.max(period.days.length, LATEST_FINAL_MIN_DAYS);
  return periodOf('custom', addDays(last, -(length - 1)), last, period.timeZone);
}

/** The cohorts whose figures stand on the latest final days: those of which no day of the period so far is final. */
const waitingCohorts = (period: Period, nowMs: number): Cohort[] =>
  (Object.keys(FINAL_AFTER_DAYS) as Cohort[]).filter((cohort) => finalDays(period, cohort, nowMs).final === 0);

/**
 * The window the overview reads by day and partner for the figures of the latest final days (and
 * their previous periods), or undefined when every cohort figure has final days of its own.
 */
export function latestFinalWindow(period: Period, nowMs: number): Period | undefined {
  const periods = waitingCohorts(period, nowMs).flatMap((cohort) => {
    const latest = latestFinalPeriod(period, cohort, nowMs);
    return [latest, previousPeriod(latest)];
  });
  if (periods.length === 0) return undefined;
  const since = periods.map((p) => p.since).sort()[0] as string;
  const until = periods.map((p) => p.until).sort()[periods.length - 1] as string;
  return periodOf('custom', since, until, period.timeZone);
}

export interface PeriodData {
  /** The performance report by partner: the period's totals. */
  readonly performance: readonly ApiRow[];
  /** The performance report by day and partner: the cohort figures, over the days whose cohort is final. */
  readonly byDay: readonly ApiRow[];
  readonly revenue: readonly ApiRow[];
}

export interface OverviewFigure {
  readonly key: FigureKey;
  readonly label: string;
  readonly means: string;
  /** The value as shown: formatted, or BLANK. */
  readonly text: string;
  readonly value: number | undefined;
  readonly change: Change;
  /** Set on a cohort figure whose period is final only in part: over how many of its days so far it is computed. */
  readonly finalDays?: { readonly final: number; readonly of: number; readonly allFinalOn: string };
  /**
   * Set on a cohort figure of which no day of the period is final yet: it stands on these latest
   * final days instead (latestFinalPeriod), and `firstFinalOn` is when the period's first day is.
   */
  readonly latestFinal?: { readonly since: string; readonly until: string; readonly firstFinalOn?: string };
}

/** The rows by day and partner of a period's days only. */
const daysOf = (rows: readonly ApiRow[], period: Period): PeriodData => {
  const days = new Set(period.days);
  return { performance: [], revenue: [], byDay: rows.filter((row) => days.has(String(row.day))) };
};

/**
 * Every figure of the period with its change against the previous period's. A cohort figure of
 * which no day of the period is final stands on the latest final days, read from `latestRows` (the
 * report by day and partner over `latestFinalWindow`), and compares with the days just before them.
 */
export function overviewFigures(
  current: PeriodData,
  previous: PeriodData,
  period: Period,
  nowMs: number,
  latestRows: readonly ApiRow[] = [],
): OverviewFigure[] {
  return FIGURE_KEYS.map((key) => {
    const spec = FIGURES[key];
    const shown = { key, label: spec.label, means: spec.means };
    const cohort = spec.cohort;
    if (!cohort) {
      const value = figureValue(key, current);
      return { ...shown, value, text: orBlank(value, spec.format), change: change(value, figureValue(key, previous)) };
    }
    const days = finalDays(period, cohort, nowMs);
    if (days.final === 0) {
      const latest = latestFinalPeriod(period, cohort, nowMs);
      const value = figureValue(key, daysOf(latestRows, latest));
      return {
        ...shown,
        value,
        text: orBlank(value, spec.format),
        change: change(value, figureValue(key, daysOf(latestRows, previousPeriod(latest)))),
        latestFinal: { since: latest.since, until: latest.until, ...(days.firstFinalOn && { firstFinalOn: days.firstFinalOn }) },
      };
    }
    const value = figureValue(key, current);
    return {
      ...shown,
      value,
      text: orBlank(value, spec.format),
      change: change(value, figureValue(key, previous)),
      ...(days.final < days.of && { finalDays: { final: days.final, of: days.of, allFinalOn: finalOn(period, cohort, nowMs) } }),
    };
  });
}

/**
 * The latest Monday-to-Sunday week whose D7 cohorts (ROAS D7 and D7 retention) are all final at
 * `nowMs`: what "last week" can answer for D7 (the Overview's links open it, named as such).
 */
export function lastFinalWeek(timeZone: string, nowMs: number): Period {
  const today = localDayOf(nowMs, timeZone);
  let monday = mondayOf(today);
  while (dayFinalOn(addDays(monday, 6), 'd7', timeZone) > today) monday = addDays(monday, -7);
  return periodOf('custom', monday, addDays(monday, 6), timeZone);
}

/** Installs per day and partner over every day of the period (a day without rows is 0). */
export interface InstallsByDay {
  readonly days: readonly string[];
  /** Largest total first (the bottom of the stack), then by name. */
  readonly partners: readonly string[];
  readonly installs: (partner: string, day: string) => number;
  readonly totalOf: (partner: string) => number;
  readonly dayTotal: (day: string) => number;
  readonly total: number;
}

export function installsByDay(rows: readonly ApiRow[], days: readonly string[]): InstallsByDay {
  const inPeriod = new Set(days);
  const cells = new Map<string, number>();
  const byPartner = new Map<string, number>();
  const byDay = new Map<string, number>();
  for (const row of rows) {
    const [day, partner, installs] = [String(row.day), String(row.partner), num(row.installs)];
    if (!inPeriod.has(day)) continue;
    cells.set(`${partner}\u0000${day}`, (cells.get(`${partner}\u0000${day}`) ?? 0) + installs);
    byPartner.set(partner, (byPartner.get(partner) ?? 0) + installs);
    byDay.set(day, (byDay.get(day) ?? 0) + installs);
  }
  const partners = [...byPartner.keys()].sort((a, b) => (byPartner.get(b) ?? 0) - (byPartner.get(a) ?? 0) || (a < b ? -1 : a > b ? 1 : 0));
  return {
    days,
    partners,
    installs: (partner, day) => cells.get(`${partner}\u0000${day}`) ?? 0,
    totalOf: (partner) => byPartner.get(partner) ?? 0,
    dayTotal: (day) => byDay.get(day) ?? 0,
    total: [...byPartner.values()].reduce((sum, n) => sum + n, 0),
  };
}

/** A row of a top table: its group values, installs, cost and ROAS D7 (undefined when not final or without cost). */
export interface RankedRow {
  readonly group: Readonly<Record<string, string>>;
  readonly installs: number;
  readonly costUsd: number;
  readonly roasD7: number | undefined;
}

export type Ranking = 'installs' | 'roas_d7';

/** The partner organic installs count under: no partner, so not in the top tables. */
export const ORGANIC = 'organic';

const byName = (a: RankedRow, b: RankedRow, columns: readonly string[]): number => {
  for (const column of columns) {
    const [x, y] = [a.group[column] ?? '', b.group[column] ?? ''];
    if (x !== y) return x < y ? -1 : 1;
  }
  return 0;
};

/**
 * The top rows of a grouping (each API row is one group): by installs (most first), or by ROAS D7
 * among the rows that have one (highest first, then most installs); ties by name. Organic
 * installs are no partner's and are left out.
 */
export function topRows(rows: readonly ApiRow[], columns: readonly string[], ranking: Ranking, limit = 5): RankedRow[] {
  const ranked = rows
    .filter((row) => row.partner !== ORGANIC)
    .map((row): RankedRow => {
      const perf = sumPerformance([row]);
      return {
        group: Object.fromEntries(columns.map((column) => [column, String(row[column] ?? '')])),
        installs: perf.sums.installs,
        costUsd: perf.sums.cost_usd,
        // A group's ROAS D7 once its cohort is final (the row's flag), as the breakdown shows it.
        roasD7: isFinal(row, 'd7') ? perf.values.roas_d7 : undefined,
      };
    });
  const chosen =
    ranking === 'installs'
      ? ranked.sort((a, b) => b.installs - a.installs || byName(a, b, columns))
      : ranked
          .filter((row) => row.roasD7 !== undefined)
          .sort((a, b) => (b.roasD7 ?? 0) - (a.roasD7 ?? 0) || b.installs - a.installs || byName(a, b, columns));
  return chosen.slice(0, limit);
}
