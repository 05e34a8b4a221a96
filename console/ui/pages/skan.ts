import type { ChartConfiguration } from 'chart.js';
import { type ChartSpec, draw } from '../charts';
import { seriesFill } from '../colors';
import { h, loadInto, notice, replace, table } from '../dom';
import { count, usd } from '../format';
import { describePeriod, type Period } from '../period';
import { type ReportRow, readAll, readSkanInvalid } from '../report-data';
import { postbacksPerDay, type SkanGroup, skanByPartnerAndWindow, windowLabel } from '../skan-summary';
import { selection } from '../state';
import { skanSchemaSection } from './skan-schema';

/**
 * The SKAN page (docs/console-analytics.md): the SKAN report (docs/ios.md section 3) of the
 * header's period, read whole and summed by partner and postback window, postbacks per day by
 * partner on a continuous date axis, and the app's conversion-value schema editor.
 */
export async function skanPage(root: HTMLElement): Promise<void> {
  const app = selection.app;
  if (!app) return replace(root, h('h1', { tabindex: -1 }, 'SKAN'), notice('info', 'Select an app first (Companies and apps).'));
  const period = selection.period();

  const report = h('div', { 'data-testid': 'skan-report' });
  const schema = h('div', { 'data-testid': 'skan-schema' });
  replace(
    root,
    h('h1', { tabindex: -1 }, `SKAN: ${app.name}`),
    h(
      'p',
      null,
      `Apple's SKAdNetwork and AdAttributionKit postbacks received ${describePeriod(period)}, by the partner that ran the ad and the postback window. Revenue is estimated from the conversion-value schema active when each postback arrived.`,
    ),
    report,
    schema,
  );

  // A failed read leaves no number of an earlier one: loadInto replaces the area with the error.
  let drawChart: (() => void) | undefined;
  const [shown] = await Promise.all([
    loadInto(report, async () => {
      const options = { appKey: app.app_key, period };
      const [rows, invalid] = await Promise.all([readAll('skan', options), readSkanInvalid(options)]);
      const built = reportOf(period, rows, invalid);
      drawChart = built.drawChart;
      return built.elements;
    }),
    loadInto(schema, () => skanSchemaSection(app)),
  ]);
  if (shown) drawChart?.();
}

/** The report's sections, and the chart to draw once they are on the page (Chart.js sizes itself to its box). */
function reportOf(period: Period, rows: readonly ReportRow[], invalid: number): { elements: HTMLElement[]; drawChart: () => void } {
  const { groups, total } = skanByPartnerAndWindow(rows);
  const summary = table<SkanGroup>(
    'SKAN postbacks by partner and postback window, with totals',
    [
      { label: 'Partner', cell: (g) => (g.window === undefined ? h('strong', null, g.partner) : g.partner) },
      { label: 'Window', cell: (g) => (g.window === undefined ? 'all' : windowLabel(g.window)) },
      { label: 'Postbacks', cell: (g) => count(g.postbacks), numeric: true },
      { label: 'Installs', cell: (g) => count(g.installs), numeric: true },
      { label: 'Redownloads', cell: (g) => count(g.redownloads), numeric: true },
      { label: 'Fine value', cell: (g) => count(g.with_fine_value), numeric: true },
      { label: 'Coarse value', cell: (g) => count(g.with_coarse_value), numeric: true },
      { label: 'No value', cell: (g) => count(g.without_value), numeric: true },
      { label: 'Estimated revenue', cell: (g) => usd(g.estimated_revenue_usd), numeric: true },
    ],
    groups.length ? [...groups, total] : [],
    'No SKAN postback in this period.',
  );

  const { partners, values } = postbacksPerDay(rows, period.days);
  const series = new Map(partners.map((partner) => [partner, values(partner)]));
  const canvas = h('canvas', { 'data-testid': 'chart-skan' });
  const perDay = table<number>(
    'SKAN postbacks per day by partner',
    [
      { label: 'Day', cell: (i) => period.days[i] ?? '' },
      ...partners.map((partner) => ({ label: partner, cell: (i: number) => count(series.get(partner)?.[i] ?? 0), numeric: true })),
    ],
    partners.length ? period.days.map((_, i) => i) : [],
    'No SKAN postback in this period.',
  );
  return {
    elements: [
      h(
        'section',
        { 'aria-labelledby': 'skan-summary-h', 'data-testid': 'skan-summary' },
        h('h2', { id: 'skan-summary-h' }, 'Postbacks by partner and window'),
        summary,
        // Anybody can send a postback naming any partner: one that fails Apple's signature is counted here only.
        h(
          'p',
          { 'data-testid': 'skan-invalid' },
          `Postbacks whose signature failed in this period: ${count(invalid)} (counted under no partner).`,
        ),
      ),
      h(
        'section',
        { 'aria-labelledby': 'skan-per-day-h', 'data-testid': 'skan-per-day' },
        h('h2', { id: 'skan-per-day-h' }, 'Postbacks per day by partner'),
        partners.length ? h('div', { class: 'chart' }, canvas) : null,
        perDay,
      ),
    ],
    drawChart: () => {
      if (partners.length) draw(canvas, perDayChart(period, series));
    },
  };
}

function perDayChart(period: Period, series: ReadonlyMap<string, number[]>): ChartSpec {
  const totals = [...series].map(([partner, values]) => `${partner} ${count(values.reduce((sum, n) => sum + n, 0))}`);
  const config: ChartConfiguration = {
    type: 'bar',
    data: {
      labels: [...period.days],
      datasets: [...series].map(([partner, values]) => ({ label: partner, data: values, backgroundColor: seriesFill('partner', partner) })),
    },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      interaction: { mode: 'index', intersect: false },
      scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, title: { display: true, text: 'postbacks' } } },
    },
  };
  return {
    config,
    summary: `SKAN postbacks per day by partner, stacked, ${describePeriod(period)}. Totals: ${totals.join(', ') || 'none'}.`,
  };
}
