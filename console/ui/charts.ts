import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartConfiguration,
  type ChartDataset,
  type ChartTypeRegistry,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  type TooltipItem,
} from 'chart.js';
import { isMature, retentionFlag } from './cohort-matrix';
import { type SeriesKind, seriesDash, seriesFill, seriesStyle } from './colors';
import { BLANK, count, pct, usd } from './format';

/*
 * The console's charts (docs/console-analytics.md): every day of the period on the date axis (a
 * day without rows is 0, not skipped), one colour per partner and event name from colors.ts (the
 * same on every page and in every session), tooltips and axes in the numbers' own format ($, %),
 * and each chart's numbers as a table beside it. No DOM at import: node runs this module in the
 * unit tests (Chart.js registers without one).
 */

Chart.register(BarController, BarElement, LineController, LineElement, PointElement, CategoryScale, LinearScale, Legend, Tooltip);

type Row = Readonly<Record<string, string | number | boolean>>;

export interface ChartTable {
  readonly columns: readonly string[];
  readonly rows: readonly (readonly string[])[];
}

export interface ChartSpec {
  readonly config: ChartConfiguration;
  /** The chart said in words, for screen readers: the canvas's accessible name. */
  readonly summary: string;
  /** Every number the chart draws, written as the tooltips write it (`chartTable` shows it). */
  readonly table?: ChartTable;
}

const num = (value: unknown): number => (typeof value === 'number' ? value : Number(value ?? 0) || 0);
const sorted = (values: Iterable<string>) => [...new Set(values)].sort();

const BASE = { animation: false, responsive: true, maintainAspectRatio: false, interaction: { mode: 'index', intersect: false } } as const;

/** Axis ticks and tooltips in the value's format. */
function formatted(format: (value: number) => string, yTitle: string, stacked: boolean) {
  return {
    ...BASE,
    plugins: {
      tooltip: {
        callbacks: {
          label: (item: TooltipItem<keyof ChartTypeRegistry>) => {
            const y = (item.parsed as { y?: number | null }).y;
            return `${item.dataset.label ?? ''}: ${y === null || y === undefined ? BLANK : format(y)}`;
          },
        },
      },
    },
    scales: {
      x: { stacked },
      y: {
        stacked,
        beginAtZero: true,
        title: { display: true, text: yTitle },
        // Counts tick at whole numbers: "0, 0, 1, 1" from steps of 0.5 would mislead.
        ticks: { precision: format === count ? 0 : undefined, callback: (value: string | number) => format(Number(value)) },
      },
    },
  };
}

/** A value by day and series, every day of `days` present (0 where the rows have none). */
export function dailyValues(
  rows: readonly Row[],
  days: readonly string[],
  seriesKey: string,
  valueKey: string,
): { series: string[]; values: (series: string) => number[] } {
  const index = new Map(days.map((day, i) => [day, i]));
  const bySeries = new Map<string, number[]>();
  for (const row of rows) {
    const at = index.get(String(row.day));
    if (at === undefined) continue;
    const name = String(row[seriesKey]);
    const values = bySeries.get(name) ?? days.map(() => 0);
    bySeries.set(name, values);
    values[at] = (values[at] ?? 0) + num(row[valueKey]);
  }
  return { series: sorted(bySeries.keys()), values: (name) => bySeries.get(name) ?? days.map(() => 0) };
}

export interface DailyChartOptions {
  /** Every day of the period, in order (period.ts `Period.days`). */
  readonly days: readonly string[];
  /** The column that names a series (`partner`, `event_name`, any grouping). */
  readonly seriesKey: string;
  /** The column summed per day and series. */
  readonly valueKey: string;
  /** Whose colours the series take (colors.ts), usually the series key. */
  readonly kind: SeriesKind;
  /** The chart's title, the start of its summary ("Installs per day by partner"). */
  readonly title: string;
  /** How a value reads in tooltips, on the axis and in the table (format.ts). */
  readonly format: (value: number) => string;
  /** The value axis's title; the value column's name by default. */
  readonly yTitle?: string;
}

function dailyTable(
  days: readonly string[],
  series: readonly string[],
  values: (name: string) => number[],
  format: (n: number) => string,
): ChartTable {
  return {
    columns: ['day', ...series],
    rows: days.map((day, i) => [day, ...series.map((name) => format(values(name)[i] ?? 0))]),
  };
}

function dailySummary(
  title: string,
  days: readonly string[],
  series: readonly string[],
  values: (name: string) => number[],
  format: (n: number) => string,
) {
  const totals = series.map((name) => `${name} ${format(values(name).reduce((sum, v) => sum + v, 0))}`);
  const span = days.length ? ` from ${days[0]} to ${days[days.length - 1]}` : '';
  return `${title}${span}. Totals: ${totals.join(', ') || 'none'}.`;
}

/**
 * Bars per day of the period, one stacked series per value of `seriesKey` in its stable colour
 * (pattern past twelve). For any page: the overview's installs by partner, a breakdown by day.
 */
export function stackedDailyChart(rows: readonly Row[], options: DailyChartOptions): ChartSpec {
  const { days, seriesKey, valueKey, kind, title, format } = options;
  const { series, values } = dailyValues(rows, days, seriesKey, valueKey);
  return {
    summary: dailySummary(`${title}, stacked,`, days, series, values, format),
    table: dailyTable(days, series, values, format),
    config: {
      type: 'bar',
      data: {
        labels: [...days],
        datasets: series.map((name) => ({
          label: name,
          data: values(name),
          backgroundColor: seriesFill(kind, name),
          borderColor: seriesStyle(kind, name).color,
        })),
      },
      options: formatted(format, options.yTitle ?? valueKey, true),
    },
  };
}

/** Lines per day of the period, one per value of `seriesKey`, in its stable colour and dash. */
export function dailyLinesChart(rows: readonly Row[], options: DailyChartOptions): ChartSpec {
  const { days, seriesKey, valueKey, kind, title, format } = options;
  const { series, values } = dailyValues(rows, days, seriesKey, valueKey);
  return {
    summary: dailySummary(title, days, series, values, format),
    table: dailyTable(days, series, values, format),
    config: {
      type: 'line',
      data: {
        labels: [...days],
        datasets: series.map((name) => ({
          label: name,
          data: values(name),
          borderColor: seriesStyle(kind, name).color,
          backgroundColor: seriesStyle(kind, name).color,
          borderDash: seriesDash(kind, name),
        })),
      },
      options: formatted(format, options.yTitle ?? valueKey, false),
    },
  };
}

/** The attribution report: installs per day by partner. */
export const installsChart = (rows: readonly Row[], days: readonly string[]): ChartSpec =>
  stackedDailyChart(rows, {
    days,
    seriesKey: 'partner',
    valueKey: 'installs',
    kind: 'partner',
    title: 'Installs per day by partner',
    format: count,
    yTitle: 'installs',
  });

/** The events report: events per day by name. */
export const eventsChart = (rows: readonly Row[], days: readonly string[]): ChartSpec =>
  dailyLinesChart(rows, {
    days,
    seriesKey: 'event_name',
    valueKey: 'events',
    kind: 'event_name',
    title: 'Events per day by name',
    format: count,
    yTitle: 'events',
  });

/** The revenue report: revenue (USD) per day by partner. */
export const revenueChart = (rows: readonly Row[], days: readonly string[]): ChartSpec =>
  stackedDailyChart(rows, {
    days,
    seriesKey: 'partner',
    valueKey: 'revenue_usd',
    kind: 'partner',
    title: 'Revenue per day by partner',
    format: usd,
    yTitle: 'revenue (USD)',
  });

export interface PartnerArppu {
  readonly partner: string;
  readonly revenue: number;
  readonly payers: number;
  /** Undefined without payers. */
  readonly arppu: number | undefined;
}

/**
 * ARPPU by partner over the window. The report's rows are per day; a day's payers are its revenue
 * over its ARPPU, so the window's ARPPU is revenue over the sum of daily payers (a person who paid
 * on two days counts twice, as the daily rows count them).
 */
export function arppuByPartner(rows: readonly Row[]): PartnerArppu[] {
  const revenue = new Map<string, number>();
  const payers = new Map<string, number>();
  for (const row of rows) {
    const partner = String(row.partner);
    revenue.set(partner, (revenue.get(partner) ?? 0) + num(row.revenue_usd));
    payers.set(partner, (payers.get(partner) ?? 0) + (num(row.arppu_usd) > 0 ? Math.round(num(row.revenue_usd) / num(row.arppu_usd)) : 0));
  }
  return sorted(revenue.keys()).map((partner) => {
    const total = revenue.get(partner) ?? 0;
    const count = payers.get(partner) ?? 0;
    return { partner, revenue: total, payers: count, arppu: count > 0 ? total / count : undefined };
  });
}

/** ARPPU by partner, in a chart of its own (dollars per payer, not on the revenue chart's axis). */
export function arppuChart(rows: readonly Row[]): ChartSpec {
  const partners = arppuByPartner(rows);
  const text = (value: number | undefined) => (value === undefined ? BLANK : usd(value));
  return {
    summary: `ARPPU (revenue per paying user) by partner over the period: ${
      partners.map((p) => `${p.partner} ${text(p.arppu)} (revenue ${usd(p.revenue)}, ${count(p.payers)} payers)`).join('; ') || 'none'
    }.`,
    table: {
      columns: ['partner', 'revenue', 'payers', 'ARPPU'],
      rows: partners.map((p) => [p.partner, usd(p.revenue), count(p.payers), text(p.arppu)]),
    },
    config: {
      type: 'bar',
      data: {
        labels: partners.map((p) => p.partner),
        datasets: [
          {
            label: 'ARPPU',
            data: partners.map((p) => p.arppu ?? null),
            backgroundColor: partners.map((p) => seriesFill('partner', p.partner)),
            borderColor: partners.map((p) => seriesStyle('partner', p.partner).color),
          },
        ],
      },
      options: { ...formatted(usd, 'ARPPU (USD)', false), plugins: { ...formatted(usd, '', false).plugins, legend: { display: false } } },
    },
  };
}

export const RETENTION_DAYS = [1, 7, 30] as const;

export interface RetentionDay {
  readonly day: string;
  readonly installs: number;
  /** D1, D7, D30 rates as the report gives them, null where immature or without installs. */
  readonly rates: readonly (number | null)[];
}

/**
 * The cohorts report (the interface's) by every day of the period. It has no maturity flags, so a
 * day's dN rate is left out (null) until the performance report would call it mature (cohort-
 * matrix.ts `isMature`: the day ended N+1 x 24 h ago in the app's zone): an immature 0 % is no 0 %.
 */
export function retentionDays(rows: readonly Row[], days: readonly string[], timeZone: string, nowMs: number): RetentionDay[] {
  const byDay = new Map(rows.map((row) => [String(row.day), row]));
  return days.map((day) => {
    const row = byDay.get(day);
    const installs = num(row?.installs);
    return {
      day,
      installs,
      rates: RETENTION_DAYS.map((n) =>
        row && installs > 0 && isMature(day, retentionFlag(n), timeZone, nowMs) ? num(row[`d${n}_rate`]) : null,
      ),
    };
  });
}

const RETENTION_COLOURS = ['#0072B2', '#E69F00', '#009E73'] as const;
const RETENTION_DASHES = [[], [6, 3], [2, 3]] as const;

/** D1, D7 and D30 retention lines by install day, immature points left out, each day's installs in its tooltip and table row. */
export function retentionChart(rows: readonly Row[], days: readonly string[], timeZone: string, nowMs: number): ChartSpec {
  const cohorts = retentionDays(rows, days, timeZone, nowMs);
  const installs = cohorts.reduce((sum, c) => sum + c.installs, 0);
  const datasets: ChartDataset<'line', (number | null)[]>[] = RETENTION_DAYS.map((n, i) => ({
    label: `D${n}`,
    data: cohorts.map((c) => c.rates[i] ?? null),
    borderColor: RETENTION_COLOURS[i],
    backgroundColor: RETENTION_COLOURS[i],
    borderDash: [...(RETENTION_DASHES[i] ?? [])],
    spanGaps: false,
  }));
  const options = formatted(pct, '% of installs', false);
  return {
    summary: `D1, D7 and D30 retention by install day${days.length ? ` from ${days[0]} to ${days[days.length - 1]}` : ''}, over ${count(installs)} installs; a day's point is left out until its window has elapsed.`,
    table: {
      columns: ['install day', 'installs', 'D1', 'D7', 'D30'],
      rows: cohorts.map((c) => [c.day, count(c.installs), ...c.rates.map(orBlankRate)]),
    },
    config: {
      type: 'line',
      data: { labels: [...days], datasets },
      options: {
        ...options,
        plugins: {
          tooltip: {
            callbacks: {
              ...options.plugins.tooltip.callbacks,
              afterTitle: (items: TooltipItem<keyof ChartTypeRegistry>[]) => {
                const cohort = cohorts[items[0]?.dataIndex ?? -1];
                return cohort ? `${count(cohort.installs)} installs` : '';
              },
            },
          },
        },
        scales: { ...options.scales, y: { ...options.scales.y, max: 1 } },
      },
    } as ChartConfiguration,
  };
}

/** How many values of a split the trend chart draws (by installs); the table under the page has every one. */
export const TREND_SERIES = 8;

/**
 * One retention day (D1, D7 or D30) by install day, a line per value of a dimension (the Cohorts
 * page's split): the performance report grouped by day and the dimension, each value's rate where
 * its cohort is final (retentionDays: an immature day is left out, not 0), the TREND_SERIES values
 * with the most installs, in their stable colours.
 */
export function retentionTrendChart(
  rows: readonly Row[],
  dimension: SeriesKind,
  n: (typeof RETENTION_DAYS)[number],
  days: readonly string[],
  timeZone: string,
  nowMs: number,
): ChartSpec {
  const at = RETENTION_DAYS.indexOf(n);
  const byValue = new Map<string, Row[]>();
  for (const row of rows) byValue.set(String(row[dimension] ?? ''), [...(byValue.get(String(row[dimension] ?? '')) ?? []), row]);
  const installsOf = (its: readonly Row[]) => its.reduce((sum, row) => sum + num(row.installs), 0);
  const values = [...byValue.keys()]
    .sort((a, b) => installsOf(byValue.get(b) ?? []) - installsOf(byValue.get(a) ?? []) || (a < b ? -1 : a > b ? 1 : 0))
    .slice(0, TREND_SERIES);
  const rates = new Map(
    values.map((value) => [value, retentionDays(byValue.get(value) ?? [], days, timeZone, nowMs).map((c) => c.rates[at] ?? null)]),
  );
  const options = formatted(pct, '% of installs', false);
  return {
    summary: `D${n} retention by install day and ${dimension}${days.length ? `, ${days[0]} to ${days[days.length - 1]}` : ''}: ${values.join(', ') || 'no installs'}; a day's point is left out until its window has elapsed.`,
    table: {
      columns: ['install day', ...values],
      rows: days.map((day, i) => [day, ...values.map((value) => orBlankRate(rates.get(value)?.[i] ?? null))]),
    },
    config: {
      type: 'line',
      data: {
        labels: [...days],
        datasets: values.map((value) => ({
          label: value,
          data: rates.get(value) ?? [],
          borderColor: seriesStyle(dimension, value).color,
          backgroundColor: seriesStyle(dimension, value).color,
          borderDash: seriesDash(dimension, value),
          spanGaps: false,
        })),
      },
      options: { ...options, scales: { ...options.scales, y: { ...options.scales.y, max: 1 } } },
    } as ChartConfiguration,
  };
}

const orBlankRate = (rate: number | null): string => (rate === null ? BLANK : pct(rate));

/** Draws a chart into a canvas (replacing the one there); the canvas carries the summary as its label. */
export function draw(canvas: HTMLCanvasElement, spec: ChartSpec): void {
  Chart.getChart(canvas)?.destroy();
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', spec.summary);
  canvas.dataset.points = String(spec.config.data.labels?.length ?? 0);
  new Chart(canvas, spec.config);
}

/** The chart's numbers as a table (folded under the chart): what a screen reader or a copy needs. */
export function chartTable(spec: ChartSpec & { table: ChartTable }, caption: string): HTMLElement {
  const element = <K extends keyof HTMLElementTagNameMap>(tag: K, text?: string): HTMLElementTagNameMap[K] => {
    const node = document.createElement(tag);
    if (text !== undefined) node.textContent = text;
    return node;
  };
  const details = element('details');
  details.className = 'chart-numbers';
  details.append(element('summary', `The chart's numbers (${spec.table.rows.length} rows)`));
  const wrap = element('div');
  wrap.className = 'table-wrap';
  wrap.tabIndex = 0;
  wrap.setAttribute('role', 'region');
  wrap.setAttribute('aria-label', caption);
  const table = element('table');
  const head = element('tr');
  spec.table.columns.forEach((column, i) => {
    const th = element('th', column);
    th.scope = 'col';
    if (i > 0) th.className = 'num';
    head.append(th);
  });
  const body = element('tbody');
  for (const row of spec.table.rows) {
    const tr = element('tr');
    row.forEach((cell, i) => {
      const td = element('td', cell);
      if (i > 0) td.className = 'num';
      tr.append(td);
    });
    body.append(tr);
  }
  const thead = element('thead');
  thead.append(head);
  table.append(element('caption', caption), thead, body);
  table.caption?.classList.add('visually-hidden');
  wrap.append(table);
  details.append(wrap);
  return details;
}
