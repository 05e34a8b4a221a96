import { DAY_MS, localDayOf, localDayStartMs, nextDay } from '../../functions/domain/common/days';
import { mondayOf } from './period';

/**
 * The Cohorts page's matrix (docs/console-analytics.md, "Cohorts"), DOM-free so the unit tests run
 * it in node: the performance report grouped by day, as rows of install days or Monday weeks, with
 * each cohort's size, D1/D7/D30 retention and cohort revenue D0/D7/D30, a value only where the
 * cohort's window has elapsed, and the weighted averages of the mature rows. Also the maturity
 * rule for the interface's cohorts report (which has no flags) and the heat map's colours.
 */

/**
 * Days after the end of an install day until each cohort figure is final: the performance
 * report's rule (`MATURE_AFTER_DAYS` in functions/domain/analytics/performance-report.ts, which
 * the unit test holds this copy to; that module reads the stores, so the browser bundle does not
 * import it).
 */
export const MATURE_AFTER_DAYS = { d0_mature: 1, d1_mature: 2, d7_mature: 8, d30_mature: 31 } as const;
export type MaturityFlag = keyof typeof MATURE_AFTER_DAYS;

/** The instant an install day's figure becomes final: its local day's end plus the wait. */
export const matureAtMs = (day: string, flag: MaturityFlag, timeZone: string): number =>
  localDayStartMs(nextDay(day), timeZone) + MATURE_AFTER_DAYS[flag] * DAY_MS;

/** The local day on which an install day's figure becomes final. */
export const finalFrom = (day: string, flag: MaturityFlag, timeZone: string): string =>
  localDayOf(matureAtMs(day, flag, timeZone), timeZone);

/**
 * Whether an install day's figure is final at `nowMs` in the app's zone: the day ended, in the
 * zone, at least MATURE_AFTER_DAYS x 24 h ago. The cohorts report (the interface's) has no flags,
 * so the Reports page's retention lines leave a day's dN point out with this.
 */
export function isMature(day: string, flag: MaturityFlag, timeZone: string, nowMs: number): boolean {
  return nowMs >= matureAtMs(day, flag, timeZone);
}

/** The flag of a retention day N (D1, D7, D30). */
export const retentionFlag = (n: 1 | 7 | 30): MaturityFlag => `d${n}_mature`;

/** The performance report's row grouped by day, as far as the matrix reads it. */
export type PerformanceRow = Record<string, string | number | boolean>;

export type Grain = 'day' | 'week';

export interface MatrixColumn {
  readonly key: 'd1' | 'd7' | 'd30' | 'rev_d0' | 'rev_d7' | 'rev_d30' | 'total_d7' | 'total_d30';
  readonly label: string;
  /** The report's counter summed for the column. */
  readonly counter: string;
  /** A second counter added to it: the cohort's ad revenue, for the total (purchases + ads) columns. */
  readonly plus?: string;
  readonly flag: MaturityFlag;
  readonly kind: 'retention' | 'revenue';
}

export const RETENTION_COLUMNS: readonly MatrixColumn[] = [
  { key: 'd1', label: 'D1', counter: 'retained_d1', flag: 'd1_mature', kind: 'retention' },
  { key: 'd7', label: 'D7', counter: 'retained_d7', flag: 'd7_mature', kind: 'retention' },
  { key: 'd30', label: 'D30', counter: 'retained_d30', flag: 'd30_mature', kind: 'retention' },
];
export const REVENUE_COLUMNS: readonly MatrixColumn[] = [
  { key: 'rev_d0', label: 'Revenue D0', counter: 'cohort_revenue_d0_usd', flag: 'd0_mature', kind: 'revenue' },
  { key: 'rev_d7', label: 'Revenue D7', counter: 'cohort_revenue_d7_usd', flag: 'd7_mature', kind: 'revenue' },
  { key: 'rev_d30', label: 'Revenue D30', counter: 'cohort_revenue_d30_usd', flag: 'd30_mature', kind: 'revenue' },
  // Purchases and ad revenue together (issue 40): the performance report's cohort_ad_revenue_dN_usd.
  {
    key: 'total_d7',
    label: 'Revenue D7 + ads',
    counter: 'cohort_revenue_d7_usd',
    plus: 'cohort_ad_revenue_d7_usd',
    flag: 'd7_mature',
    kind: 'revenue',
  },
  {
    key: 'total_d30',
    label: 'Revenue D30 + ads',
    counter: 'cohort_revenue_d30_usd',
    plus: 'cohort_ad_revenue_d30_usd',
    flag: 'd30_mature',
    kind: 'revenue',
  },
];

/** A column's numerator from summed counters: its counter, plus its second one when it has one. */
const numeratorOf = (column: MatrixColumn, sums: Readonly<Record<string, number>>): number =>
  (sums[column.counter] ?? 0) + (column.plus ? (sums[column.plus] ?? 0) : 0);

/** How the revenue columns read: ROAS (cohort revenue over cost) when the window has cost, else dollars per install. */
export type RevenueMode = 'roas' | 'per_install' | 'none';

export interface MatrixCell {
  /** The figure, or undefined when it does not exist: immature, or a ratio over 0. */
  readonly value: number | undefined;
  readonly mature: boolean;
  /** When immature: the local day from which it is final. */
  readonly finalFrom?: string;
}

export interface MatrixRow {
  /** The install day, or the Monday of the week. */
  readonly cohort: string;
  /** The period's days in it. */
  readonly days: readonly string[];
  readonly installs: number;
  readonly cost: number;
  /** The summed counters of the columns. */
  readonly sums: Readonly<Record<string, number>>;
  readonly cells: Readonly<Record<MatrixColumn['key'], MatrixCell>>;
}

export interface CohortMatrix {
  readonly grain: Grain;
  readonly columns: readonly MatrixColumn[];
  readonly revenueMode: RevenueMode;
  readonly rows: readonly MatrixRow[];
  /** Sum of the columns' counters over the mature rows only, over the installs (or cost) of those rows. */
  readonly average: { readonly installs: number; readonly cells: Readonly<Record<MatrixColumn['key'], MatrixCell>> };
}

const num = (value: unknown): number => (typeof value === 'number' ? value : Number(value ?? 0) || 0);
const ratio = (part: number, whole: number): number | undefined => (whole > 0 ? part / whole : undefined);

export interface MatrixOptions {
  /** Every day of the period, in order. */
  readonly days: readonly string[];
  readonly grain: Grain;
  /** For the maturity of days the report has no row for (no installs, no cost). */
  readonly timeZone: string;
  readonly nowMs: number;
  /** How the revenue columns read, when the caller fixes it (a split's values read as the whole period does). */
  readonly revenueMode?: RevenueMode;
}

/**
 * The matrix of the period's days (or Monday weeks of them, a partial week at either end holding
 * only the period's days) from the performance report's rows grouped by day. A row's cell is
 * mature when every day in it is (the report's flag for a day it answered, the same rule for a
 * day it did not); an immature cell has no value, so it shows blank, never 0.
 */
export function cohortMatrix(reportRows: readonly PerformanceRow[], options: MatrixOptions): CohortMatrix {
  const byDay = new Map(reportRows.map((row) => [String(row.day), row]));
  const hasRevenue = reportRows.some((row) =>
    REVENUE_COLUMNS.some((c) => numeratorOf(c, { [c.counter]: num(row[c.counter]), ...(c.plus && { [c.plus]: num(row[c.plus]) }) }) > 0),
  );
  const hasCost = reportRows.some((row) => num(row.cost_usd) > 0);
  const revenueMode: RevenueMode = options.revenueMode ?? (hasCost ? 'roas' : hasRevenue ? 'per_install' : 'none');
  const columns = revenueMode === 'none' ? RETENTION_COLUMNS : [...RETENTION_COLUMNS, ...REVENUE_COLUMNS];
  const counters = [...new Set([...RETENTION_COLUMNS, ...REVENUE_COLUMNS].flatMap((c) => (c.plus ? [c.counter, c.plus] : [c.counter])))];

  const groups = new Map<string, string[]>();
  for (const day of options.days) {
    const cohort = options.grain === 'week' ? mondayOf(day) : day;
    const days = groups.get(cohort) ?? [];
    days.push(day);
    groups.set(cohort, days);
  }

  const matureDay = (day: string, flag: MaturityFlag): boolean => {
    const row = byDay.get(day);
    return row && typeof row[flag] === 'boolean' ? row[flag] === true : isMature(day, flag, options.timeZone, options.nowMs);
  };
  const figureOf = (column: MatrixColumn, sums: Record<string, number>, installs: number, cost: number) =>
    column.kind === 'retention' || revenueMode !== 'roas'
      ? ratio(numeratorOf(column, sums), installs)
      : ratio(numeratorOf(column, sums), cost);

  const rows: MatrixRow[] = [...groups].map(([cohort, days]) => {
    const sums: Record<string, number> = Object.fromEntries(counters.map((c) => [c, 0]));
    let installs = 0;
    let cost = 0;
    for (const day of days) {
      const row = byDay.get(day);
      if (!row) continue;
      installs += num(row.installs);
      cost += num(row.cost_usd);
      for (const counter of counters) sums[counter] = (sums[counter] ?? 0) + num(row[counter]);
    }
    const cells = {} as Record<MatrixColumn['key'], MatrixCell>;
    for (const column of columns) {
      const mature = days.every((day) => matureDay(day, column.flag));
      const last = days[days.length - 1] ?? cohort;
      cells[column.key] = mature
        ? { value: figureOf(column, sums, installs, cost), mature }
        : { value: undefined, mature, finalFrom: finalFrom(last, column.flag, options.timeZone) };
    }
    return { cohort, days, installs, cost, sums, cells };
  });

  const averageCells = {} as Record<MatrixColumn['key'], MatrixCell>;
  for (const column of columns) {
    const mature = rows.filter((row) => row.cells[column.key].mature);
    const sum = (pick: (row: MatrixRow) => number) => mature.reduce((total, row) => total + pick(row), 0);
    averageCells[column.key] = {
      value: figureOf(
        column,
        Object.fromEntries(counters.map((counter) => [counter, sum((row) => row.sums[counter] ?? 0)])),
        sum((row) => row.installs),
        sum((row) => row.cost),
      ),
      mature: mature.length > 0,
    };
  }
  return {
    grain: options.grain,
    columns,
    revenueMode,
    rows,
    average: { installs: rows.reduce((total, row) => total + row.installs, 0), cells: averageCells },
  };
}

/** The range of a column's values over the rows (undefined when none has a value). */
export function columnRange(matrix: CohortMatrix, key: MatrixColumn['key']): { min: number; max: number } | undefined {
  const values = matrix.rows.map((row) => row.cells[key].value).filter((v): v is number => v !== undefined);
  return values.length ? { min: Math.min(...values), max: Math.max(...values) } : undefined;
}

export interface HeatColour {
  /** 0 (the column's lowest) to 1 (its highest). */
  readonly intensity: number;
  readonly background: string;
  readonly text: string;
}

/** The first series colour of colors.ts (COLORS[0]); written here because colors.ts needs the DOM's types and this module runs in node. */
export const HEAT_HUE = '#0072B2';
const rgbOf = (hex: string): [number, number, number] =>
  [1, 3, 5].map((i) => Number.parseInt(hex.slice(i, i + 2), 16)) as [number, number, number];

/** WCAG relative luminance of an sRGB colour. */
export function luminance([r, g, b]: readonly number[]): number {
  const linear = (c: number) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  };
  return 0.2126 * linear(r ?? 0) + 0.7152 * linear(g ?? 0) + 0.0722 * linear(b ?? 0);
}

export const contrast = (a: number, b: number): number => (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05);

/**
 * A cell's colour: one hue, from nearly white at the column's lowest value to the full hue at its
 * highest (a column of one value stays pale: it has no range to place it in), with black or white text, whichever
 * contrasts more with it.
 */
export function heatColour(value: number, range: { min: number; max: number }): HeatColour {
  const intensity = range.max > range.min ? Math.min(1, Math.max(0, (value - range.min) / (range.max - range.min))) : 0;
  const weight = 0.08 + 0.92 * intensity;
  const rgb = rgbOf(HEAT_HUE).map((c) => Math.round(255 + (c - 255) * weight)) as [number, number, number];
  const l = luminance(rgb);
  return {
    intensity,
    background: `rgb(${rgb.join(', ')})`,
    text: contrast(l, 0) >= contrast(l, 1) ? '#000000' : '#ffffff',
  };
}

/** A split's value (a partner, campaign, country or platform) and its cohorts' weighted averages. */
export interface SplitRow {
  readonly value: string;
  readonly installs: number;
  readonly cells: CohortMatrix['average']['cells'];
}

/**
 * The cohorts split by a dimension (the performance report grouped by day and that dimension):
 * each value's weighted averages over its elapsed cohorts, as the matrix's last row computes them,
 * the revenue columns read as the whole period's (`revenueMode`); most installs first, then by name.
 */
export function splitRows(
  reportRows: readonly PerformanceRow[],
  dimension: string,
  options: Omit<MatrixOptions, 'grain'> & { readonly revenueMode: RevenueMode },
): SplitRow[] {
  const byValue = new Map<string, PerformanceRow[]>();
  for (const row of reportRows) {
    const value = String(row[dimension] ?? '');
    byValue.set(value, [...(byValue.get(value) ?? []), row]);
  }
  return [...byValue]
    .map(([value, rows]) => {
      const matrix = cohortMatrix(rows, { ...options, grain: 'day' });
      return { value, installs: matrix.average.installs, cells: matrix.average.cells };
    })
    .sort((a, b) => b.installs - a.installs || (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
}
