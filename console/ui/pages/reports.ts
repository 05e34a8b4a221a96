import {
  arppuChart,
  type ChartSpec,
  type ChartTable,
  chartTable,
  draw,
  eventsChart,
  installsChart,
  RETENTION_DAYS,
  retentionChart,
  revenueChart,
} from '../charts';
import { isMature, retentionFlag } from '../cohort-matrix';
import { download, toCsv } from '../csv';
import { h, notice, replace, table } from '../dom';
import { plainError } from '../errors';
import { csvPct, csvUsd } from '../format';
import { describePeriod, type Period } from '../period';
import { type ReadOptions, type ReportName, type ReportRow, readAll, readPage } from '../report-data';
import { selection } from '../state';

type ChartMaker = (rows: ReportRow[], period: Period, nowMs: number) => ChartSpec;

interface ReportView {
  readonly name: Extract<ReportName, 'attribution' | 'cohorts' | 'revenue' | 'events'>;
  readonly title: string;
  readonly charts: readonly { readonly id: string; readonly title: string; readonly make: ChartMaker }[];
}

const REPORTS: readonly ReportView[] = [
  {
    name: 'attribution',
    title: 'Installs per day by partner',
    charts: [{ id: 'attribution', title: 'Installs per day by partner', make: (rows, period) => installsChart(rows, period.days) }],
  },
  {
    name: 'cohorts',
    title: 'Retention (D1, D7, D30) by install day',
    charts: [
      {
        id: 'cohorts',
        title: 'Retention by install day',
        make: (rows, period, nowMs) => retentionChart(rows, period.days, period.timeZone, nowMs),
      },
    ],
  },
  {
    name: 'revenue',
    title: 'Revenue per day by partner, and ARPPU',
    charts: [
      { id: 'revenue', title: 'Revenue per day by partner', make: (rows, period) => revenueChart(rows, period.days) },
      { id: 'arppu', title: 'ARPPU by partner', make: (rows) => arppuChart(rows) },
    ],
  },
  {
    name: 'events',
    title: 'Events per day by name',
    charts: [{ id: 'events', title: 'Events per day by name', make: (rows, period) => eventsChart(rows, period.days) }],
  },
];

const PAGE_SIZES = ['10', '25', '100', '1000'] as const;

/**
 * The CSV of a report's whole window: the API's columns as they are, then a display column per
 * dollars (`revenue_usd_display`, 2 decimals) and rate column (`d1_rate_pct`, a percentage; empty
 * while the cohort's window has not elapsed), as the breakdown's CSV has them.
 */
export function reportCsvRows(report: ReportName, rows: readonly ReportRow[], period: Period, nowMs: number): ReportRow[] {
  return rows.map((row) => {
    const out: ReportRow = { ...row };
    for (const [column, value] of Object.entries(row)) {
      if (column.endsWith('_usd')) out[`${column}_display`] = csvUsd(Number(value));
      const n = RETENTION_DAYS.find((d) => column === `d${d}_rate`);
      if (n !== undefined)
        out[`${column}_pct`] =
          report === 'cohorts' && !isMature(String(row.day), retentionFlag(n), period.timeZone, nowMs) ? '' : csvPct(Number(value));
    }
    return out;
  });
}

/**
 * The four interface reports of the app over the header's period: each as charts of the whole
 * window (every day on the axis) with their numbers, a table paged as the API pages (row for row
 * the API's), and a CSV of the whole window.
 */
export async function reportsPage(root: HTMLElement): Promise<void> {
  const app = selection.app;
  const heading = h('h1', { tabindex: -1 }, app ? `Reports: ${app.name}` : 'Reports');
  if (!app) return replace(root, heading, notice('info', 'Select an app first (Companies and apps).'));

  const period = selection.period();
  const options: ReadOptions = { appKey: app.app_key, period };
  const pageSize = h(
    'select',
    { id: 'report-page-size', onchange: () => void Promise.all(sections.map((s) => s.showPage(0))) },
    PAGE_SIZES.map((size) => h('option', { value: size, selected: size === '25' }, size)),
  );
  const limit = () => Number(pageSize.value);
  const sections = REPORTS.map((report) => reportSection(report));
  replace(
    root,
    heading,
    h(
      'p',
      { class: 'inline-form' },
      h('span', { 'data-testid': 'report-period' }, describePeriod(period)),
      ' · ',
      h('label', { for: 'report-page-size' }, 'Rows per page'),
      ' ',
      pageSize,
    ),
    sections.map((s) => s.element),
  );
  await Promise.all(sections.map((s) => s.show()));

  function reportSection(report: ReportView) {
    const charts = report.charts.map((chart) => {
      const canvas = h('canvas', { 'data-testid': `chart-${chart.id}` });
      const numbers = h('div', { 'data-testid': `chart-numbers-${chart.id}` });
      return {
        ...chart,
        canvas,
        numbers,
        element: h('div', null, h('h3', null, chart.title), h('div', { class: 'chart' }, canvas), numbers),
      };
    });
    const chartArea = h(
      'div',
      { class: 'report-charts' },
      charts.map((c) => c.element),
    );
    const tableArea = h('div', { 'data-testid': `table-${report.name}` });
    const pager = h('div', { class: 'pager' });
    const csvStatus = h('span', { 'aria-live': 'polite' });
    const csvButton = h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        onclick: () => {
          replace(csvStatus, 'Reading the whole period…');
          readAll(report.name, options)
            .then((rows) => {
              if (rows.length === 0) return replace(csvStatus, notice('info', 'No rows in this period to download.'));
              download(
                `${report.name}_${app?.name.toLowerCase().replace(/[^a-z0-9]+/g, '-') || 'app'}_${period.since}_${period.until}.csv`,
                toCsv(reportCsvRows(report.name, rows, period, Date.now())),
              );
              replace(csvStatus, `${rows.length} rows downloaded.`);
            })
            .catch((error) => replace(csvStatus, notice('error', plainError(error))));
        },
      },
      'Download CSV (whole period)',
    );
    const element = h(
      'section',
      { 'aria-labelledby': `${report.name}-h`, class: 'report', 'data-report': report.name },
      h('h2', { id: `${report.name}-h` }, report.title, h('small', null, ` (${report.name} report)`)),
      chartArea,
      h('h3', null, `The ${report.name} report, as the API pages it`),
      tableArea,
      pager,
      h('div', { class: 'pager' }, csvButton, csvStatus),
    );

    /** A pager button's page: its failure is shown where the table was. */
    const turnTo = (offset: number) => () => void showPage(offset);

    async function showPage(offset: number): Promise<void> {
      const size = limit();
      let rows: ReportRow[];
      try {
        rows = await readPage(report.name, options, offset, size);
      } catch (error) {
        replace(tableArea, notice('error', plainError(error)));
        replace(pager);
        return;
      }
      replace(tableArea, table(`${report.name} report`, columnsOf(rows), rows, 'No rows in this period.'));
      const first = rows.length ? offset + 1 : offset;
      replace(
        pager,
        h(
          'button',
          { type: 'button', class: 'secondary', disabled: offset === 0, onclick: turnTo(Math.max(0, offset - size)) },
          'Previous page',
        ),
        h('span', { class: 'range' }, rows.length ? `Rows ${first}–${offset + rows.length}` : `No rows from ${offset + 1}`),
        // The API gives no total: a full page may have more after it.
        h('button', { type: 'button', class: 'secondary', disabled: rows.length < size, onclick: turnTo(offset + size) }, 'Next page'),
      );
    }

    async function showCharts(): Promise<void> {
      let rows: ReportRow[];
      try {
        rows = await readAll(report.name, options);
      } catch (error) {
        // The old pictures go: a chart of another period must not stand beside the error.
        replace(chartArea, notice('error', plainError(error)));
        return;
      }
      const nowMs = Date.now();
      for (const chart of charts) {
        const spec = chart.make(rows, period, nowMs);
        draw(chart.canvas, spec);
        chart.canvas.dataset.rows = String(rows.length);
        if (spec.table)
          replace(chart.numbers, chartTable(spec as ChartSpec & { table: ChartTable }, `${chart.title}: the chart's numbers`));
      }
    }

    return {
      element,
      showPage,
      show: () => Promise.all([showPage(0), showCharts()]),
    };
  }
}

function columnsOf(rows: readonly ReportRow[]) {
  const [first] = rows;
  if (first === undefined) return [];
  return Object.keys(first).map((name) => ({
    label: name,
    numeric: typeof first[name] === 'number',
    cell: (row: ReportRow) => String(row[name]),
  }));
}
