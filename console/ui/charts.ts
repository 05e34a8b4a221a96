import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  type ChartConfiguration,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from 'chart.js';

Chart.register(BarController, BarElement, LineController, LineElement, PointElement, CategoryScale, LinearScale, Legend, Tooltip);

type Row = Record<string, string | number>;

/** Okabe-Ito: told apart with the common colour-vision deficiencies. */
const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#D55E00', '#CC79A7', '#56B4E9', '#F0E442', '#000000'];
const color = (i: number) => PALETTE[i % PALETTE.length];

const num = (value: unknown) => Number(value ?? 0);
const sorted = (values: Iterable<string>) => [...new Set(values)].sort();

/** Sums a value by two keys: day x series. */
function pivot(
  rows: readonly Row[],
  seriesKey: string,
  valueKey: string,
): { days: string[]; series: string[]; value: (day: string, series: string) => number } {
  const totals = new Map<string, number>();
  for (const row of rows) {
    const key = `${row.day}\u0000${row[seriesKey]}`;
    totals.set(key, (totals.get(key) ?? 0) + num(row[valueKey]));
  }
  return {
    days: sorted(rows.map((row) => String(row.day))),
    series: sorted(rows.map((row) => String(row[seriesKey]))),
    value: (day, series) => totals.get(`${day}\u0000${series}`) ?? 0,
  };
}

export interface ChartSpec {
  readonly config: ChartConfiguration;
  /** The chart said in words, for screen readers (the table below it has every number). */
  readonly summary: string;
}

const BASE = { animation: false, responsive: true, maintainAspectRatio: false, interaction: { mode: 'index', intersect: false } } as const;

export function installsChart(rows: readonly Row[]): ChartSpec {
  const { days, series, value } = pivot(rows, 'partner', 'installs');
  const totals = series.map((partner) => `${partner} ${days.reduce((sum, day) => sum + value(day, partner), 0)}`);
  return {
    summary: `Installs per day by partner, stacked. Totals: ${totals.join(', ') || 'none'}.`,
    config: {
      type: 'bar',
      data: {
        labels: days,
        datasets: series.map((partner, i) => ({ label: partner, data: days.map((day) => value(day, partner)), backgroundColor: color(i) })),
      },
      options: {
        ...BASE,
        scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, title: { display: true, text: 'installs' } } },
      },
    },
  };
}

export function retentionChart(rows: readonly Row[]): ChartSpec {
  const days = rows.map((row) => String(row.day));
  const lines = (['d1_rate', 'd7_rate', 'd30_rate'] as const).map((rate, i) => ({
    label: rate.replace('_rate', '').toUpperCase(),
    data: rows.map((row) => Math.round(num(row[rate]) * 1000) / 10),
    borderColor: color(i),
    backgroundColor: color(i),
  }));
  const installs = rows.reduce((sum, row) => sum + num(row.installs), 0);
  return {
    summary: `D1, D7 and D30 retention in percent by install day, over ${rows.length} install days and ${installs} installs.`,
    config: {
      type: 'line',
      data: { labels: days, datasets: lines },
      options: { ...BASE, scales: { y: { beginAtZero: true, max: 100, title: { display: true, text: '% of installs' } } } },
    },
  };
}

/**
 * Revenue per partner over the window, and its ARPPU. The report's rows are per day; a day's
 * payers are its revenue over its ARPPU, so the window's ARPPU is revenue over the sum of daily
 * payers (a person who paid on two days counts twice, as the daily rows count them).
 */
export function revenueChart(rows: readonly Row[]): ChartSpec {
  const partners = sorted(rows.map((row) => String(row.partner)));
  const revenue = new Map<string, number>();
  const payers = new Map<string, number>();
  for (const row of rows) {
    const partner = String(row.partner);
    revenue.set(partner, (revenue.get(partner) ?? 0) + num(row.revenue_usd));
    if (num(row.arppu_usd) > 0) payers.set(partner, (payers.get(partner) ?? 0) + Math.round(num(row.revenue_usd) / num(row.arppu_usd)));
  }
  const revenueOf = (p: string) => Math.round((revenue.get(p) ?? 0) * 100) / 100;
  const arppuOf = (p: string) => {
    const count = payers.get(p);
    return count ? Math.round(((revenue.get(p) ?? 0) / count) * 100) / 100 : 0;
  };
  return {
    summary: `Revenue and ARPPU in USD by partner: ${partners.map((p) => `${p} revenue ${revenueOf(p)}, ARPPU ${arppuOf(p)}`).join('; ') || 'none'}.`,
    config: {
      type: 'bar',
      data: {
        labels: partners,
        datasets: [
          { label: 'Revenue (USD)', data: partners.map(revenueOf), backgroundColor: color(0), yAxisID: 'y' },
          { label: 'ARPPU (USD)', data: partners.map(arppuOf), backgroundColor: color(1), yAxisID: 'arppu' },
        ],
      },
      options: {
        ...BASE,
        scales: {
          y: { beginAtZero: true, position: 'left', title: { display: true, text: 'revenue (USD)' } },
          arppu: { beginAtZero: true, position: 'right', grid: { drawOnChartArea: false }, title: { display: true, text: 'ARPPU (USD)' } },
        },
      },
    },
  };
}

export function eventsChart(rows: readonly Row[]): ChartSpec {
  const { days, series, value } = pivot(rows, 'event_name', 'events');
  const totals = series.map((name) => `${name} ${days.reduce((sum, day) => sum + value(day, name), 0)}`);
  return {
    summary: `Events per day by name. Totals: ${totals.join(', ') || 'none'}.`,
    config: {
      type: 'line',
      data: {
        labels: days,
        datasets: series.map((name, i) => ({
          label: name,
          data: days.map((day) => value(day, name)),
          borderColor: color(i),
          backgroundColor: color(i),
        })),
      },
      options: { ...BASE, scales: { y: { beginAtZero: true, title: { display: true, text: 'events' } } } },
    },
  };
}

/** Draws a chart into a canvas (replacing the one there); the canvas carries the summary as its label. */
export function draw(canvas: HTMLCanvasElement, spec: ChartSpec): void {
  Chart.getChart(canvas)?.destroy();
  canvas.setAttribute('role', 'img');
  canvas.setAttribute('aria-label', spec.summary);
  new Chart(canvas, spec.config);
}
