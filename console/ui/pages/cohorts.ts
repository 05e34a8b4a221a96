import './cohorts.css';
import { type ChartSpec, chartTable, draw, RETENTION_DAYS, retentionChart, retentionTrendChart } from '../charts';
import {
  type CohortMatrix,
  cohortMatrix,
  columnRange,
  type Grain,
  heatColour,
  type MatrixCell,
  type MatrixColumn,
  type RevenueMode,
  type SplitRow,
  splitRows,
} from '../cohort-matrix';
import { h, notice, replace } from '../dom';
import { plainError } from '../errors';
import { BLANK, count, pct, usd } from '../format';
import { describePeriod } from '../period';
import { FILTERS, type Filter, type GroupColumn, readAll } from '../report-data';
import { selection } from '../state';
import { param, setView } from '../view';

const GRAINS: readonly { value: Grain; label: string }[] = [
  { value: 'day', label: 'Install day' },
  { value: 'week', label: 'Install week (Monday to Sunday)' },
];

/** What the cohorts can be split by (`split=`): the performance report's dimensions but day. */
const SPLITS: readonly { value: Exclude<GroupColumn, 'day'>; label: string }[] = [
  { value: 'partner', label: 'Partner' },
  { value: 'campaign', label: 'Campaign' },
  { value: 'country', label: 'Country' },
  { value: 'platform', label: 'Platform' },
];
type Trend = (typeof RETENTION_DAYS)[number];

/** How a revenue column is headed and written, by what the window has. */
const REVENUE_HEADS: Readonly<Record<RevenueMode, (label: string) => string>> = {
  roas: (label) => label.replace('Revenue', 'ROAS'),
  per_install: (label) => `${label} per install`,
  none: (label) => label,
};

/** The URL's filters, each a comma list of values (empty ones dropped): the performance report's. */
function filtersOfView(): Partial<Record<Filter, string>> {
  const filters: Partial<Record<Filter, string>> = {};
  for (const filter of FILTERS) {
    const values = (param(filter) ?? '')
      .split(',')
      .map((value) => value.trim())
      .filter(Boolean);
    if (values.length) filters[filter] = values.join(',');
  }
  return filters;
}

/**
 * Cohorts (docs/console-analytics.md, "Cohorts"): the performance report grouped by day, as a
 * heat map of install days (or weeks) by retention and cohort revenue, each cohort's size beside
 * it, blank where the window has not elapsed, and the weighted averages of the mature cohorts.
 */
export async function cohortsPage(root: HTMLElement): Promise<void> {
  const app = selection.app;
  const heading = h('h1', { tabindex: -1 }, app ? `Cohorts: ${app.name}` : 'Cohorts');
  if (!app) return replace(root, heading, notice('info', 'Select an app first (Companies and apps).'));

  const grain: Grain = param('grain') === 'week' ? 'week' : 'day';
  const split = SPLITS.find((s) => s.value === param('split'));
  const trend: Trend = RETENTION_DAYS.find((n) => `d${n}` === param('trend')) ?? 1;
  const period = selection.period();
  const filters = filtersOfView();
  const grainSelect = h(
    'select',
    { id: 'cohort-grain', onchange: () => setView({ grain: grainSelect.value === 'week' ? 'week' : null }) },
    GRAINS.map((g) => h('option', { value: g.value, selected: g.value === grain }, g.label)),
  );
  const splitSelect = h(
    'select',
    { id: 'cohort-split', 'data-testid': 'cohort-split', onchange: () => setView({ split: splitSelect.value || null }) },
    h('option', { value: '' }, 'Not split'),
    SPLITS.map((s) => h('option', { value: s.value, selected: s.value === split?.value }, s.label)),
  );
  const trendSelect = h(
    'select',
    {
      id: 'cohort-trend',
      'data-testid': 'cohort-trend',
      onchange: () => setView({ trend: trendSelect.value === 'd1' ? null : trendSelect.value }),
    },
    RETENTION_DAYS.map((n) => h('option', { value: `d${n}`, selected: n === trend }, `D${n}`)),
  );
  const filterText = Object.entries(filters)
    .map(([filter, values]) => `${filter} ${values}`)
    .join('; ');
  const data = h('div', { class: 'cohort-data', 'data-testid': 'cohort-data', 'aria-live': 'polite' }, notice('info', 'Loading…'));
  replace(
    root,
    heading,
    h(
      'div',
      { class: 'cohort-controls' },
      h('label', { for: 'cohort-grain' }, 'Rows'),
      grainSelect,
      h('label', { for: 'cohort-split' }, 'Split by'),
      splitSelect,
      split ? [h('label', { for: 'cohort-trend' }, 'Trend of'), trendSelect] : null,
      h('span', { class: 'period-note' }, describePeriod(period), filterText ? ` · filtered: ${filterText}` : ''),
      filterText
        ? h(
            'button',
            { type: 'button', class: 'secondary', onclick: () => setView(Object.fromEntries(FILTERS.map((f) => [f, null]))) },
            'Clear filters',
          )
        : null,
    ),
    data,
  );

  const nowMs = Date.now();
  const options = { days: period.days, timeZone: period.timeZone, nowMs };
  let matrix: CohortMatrix;
  let chart: ChartSpec & { table: NonNullable<ChartSpec['table']> };
  let bySplit: { label: string; rows: SplitRow[] } | undefined;
  try {
    const read = (groupBy: GroupColumn[]) => readAll('performance', { appKey: app.app_key, period, groupBy, filters });
    const [rows, splitRead] = await Promise.all([read(['day']), split ? read(['day', split.value]) : undefined]);
    matrix = cohortMatrix(rows, { ...options, grain });
    if (split && splitRead) {
      bySplit = { label: split.label, rows: splitRows(splitRead, split.value, { ...options, revenueMode: matrix.revenueMode }) };
      chart = retentionTrendChart(splitRead, split.value, trend, period.days, period.timeZone, nowMs) as typeof chart;
    } else chart = retentionChart(rows, period.days, period.timeZone, nowMs) as typeof chart;
  } catch (error) {
    replace(data, notice('error', plainError(error)));
    return;
  }
  const canvas = h('canvas', { 'data-testid': 'cohort-trend-chart' });
  const title = split ? `D${trend} retention by install day, by ${split.value}` : 'D1, D7 and D30 retention by install day';
  replace(
    data,
    explanation(matrix),
    h(
      'section',
      { 'aria-labelledby': 'cohort-trend-h' },
      h('h2', { id: 'cohort-trend-h' }, title),
      h('div', { class: 'chart' }, canvas),
      chartTable(chart, title),
    ),
    bySplit ? splitTable(bySplit.label, bySplit.rows, matrix) : null,
    h(
      'section',
      { 'aria-labelledby': 'cohort-matrix-h' },
      h('h2', { id: 'cohort-matrix-h' }, `Cohorts by install ${matrix.grain}`),
      matrixTable(matrix),
    ),
  );
  draw(canvas, chart);
}

/** The cohorts split by a dimension: each value's installs and weighted averages over its elapsed cohorts. */
function splitTable(label: string, rows: readonly SplitRow[], matrix: CohortMatrix): HTMLElement {
  const head = (column: MatrixColumn) => (column.kind === 'revenue' ? REVENUE_HEADS[matrix.revenueMode](column.label) : column.label);
  const caption = `By ${label.toLowerCase()}: installs and ${matrix.columns.map(head).join(', ')}, over the elapsed cohorts`;
  return h(
    'section',
    { 'aria-labelledby': 'cohort-split-h' },
    h('h2', { id: 'cohort-split-h' }, `By ${label.toLowerCase()} (elapsed cohorts only)`),
    h(
      'div',
      { class: 'table-wrap', role: 'region', 'aria-label': caption, tabindex: 0 },
      h(
        'table',
        { class: 'cohort-split cards', 'data-testid': 'cohort-split-table' },
        h('caption', { class: 'visually-hidden' }, caption),
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            h('th', { scope: 'col' }, label),
            h('th', { scope: 'col', class: 'num' }, 'Installs'),
            matrix.columns.map((column) => h('th', { scope: 'col', class: 'num' }, head(column))),
          ),
        ),
        h(
          'tbody',
          null,
          rows.map((row) =>
            h(
              'tr',
              { 'data-value': row.value },
              h('th', { scope: 'row' }, row.value),
              h('td', { class: 'num', 'data-col': 'installs', 'data-label': 'Installs' }, count(row.installs)),
              matrix.columns.map((column) => {
                const figure = row.cells[column.key];
                return h(
                  'td',
                  {
                    class: 'num',
                    'data-col': column.key,
                    'data-label': head(column),
                    'data-value': figure.value === undefined ? null : String(figure.value),
                    title: figure.mature ? null : 'no cohort’s window has elapsed yet',
                  },
                  figure.value === undefined ? BLANK : formatOf(column, matrix.revenueMode)(figure.value),
                );
              }),
            ),
          ),
        ),
      ),
    ),
  );
}

function explanation(matrix: CohortMatrix): HTMLElement {
  const revenue =
    matrix.revenueMode === 'roas'
      ? ' Revenue columns are ROAS: the cohort’s purchases within 1, 7 and 30 days of install over its cost; “+ ads” adds the ad revenue of those days (total ROAS).'
      : matrix.revenueMode === 'per_install'
        ? ' Revenue columns are the cohort’s purchases within 1, 7 and 30 days of install per install (the period has no cost); “+ ads” adds the ad revenue of those days.'
        : '';
  return h(
    'p',
    { class: 'cohort-legend' },
    'Retention: the share of a cohort’s installs seen again on day 1, 7 and 30.',
    revenue,
    ' A blank cell (',
    BLANK,
    ') is a figure whose window has not elapsed yet, not a 0. Darker is higher within its column. ',
    'The last row weighs each cohort by its installs',
    matrix.revenueMode === 'roas' ? ' (ROAS by its cost)' : '',
    ', over the cohorts whose window has elapsed only.',
  );
}

function formatOf(column: MatrixColumn, mode: RevenueMode): (value: number) => string {
  return column.kind === 'retention' || mode === 'roas' ? pct : usd;
}

function matrixTable(matrix: CohortMatrix): HTMLElement {
  const ranges = new Map(matrix.columns.map((column) => [column.key, columnRange(matrix, column.key)]));
  const head = (column: MatrixColumn) => (column.kind === 'revenue' ? REVENUE_HEADS[matrix.revenueMode](column.label) : column.label);

  const cell = (column: MatrixColumn, figure: MatrixCell, colour: boolean) => {
    const td = h(
      'td',
      {
        class: figure.mature ? 'num heat' : 'num heat immature',
        'data-col': column.key,
        'data-label': head(column),
        'data-value': figure.value === undefined ? null : String(figure.value),
        title: figure.finalFrom ? `not final until ${figure.finalFrom}` : figure.mature ? null : 'no cohort’s window has elapsed yet',
      },
      figure.value === undefined ? BLANK : formatOf(column, matrix.revenueMode)(figure.value),
    );
    const range = ranges.get(column.key);
    if (colour && figure.value !== undefined && range) {
      // Set through the CSSOM: the console's content security policy allows no style attribute.
      const heat = heatColour(figure.value, range);
      td.style.backgroundColor = heat.background;
      td.style.color = heat.text;
    }
    return td;
  };

  const caption = `Cohorts by install ${matrix.grain}: installs, ${matrix.columns.map(head).join(', ')}`;
  return h(
    'div',
    { class: 'table-wrap', role: 'region', 'aria-label': caption, tabindex: 0 },
    h(
      'table',
      { class: 'cohort-matrix cards', 'data-testid': 'cohort-matrix', 'data-grain': matrix.grain, 'data-revenue': matrix.revenueMode },
      h('caption', { class: 'visually-hidden' }, caption),
      h(
        'thead',
        null,
        h(
          'tr',
          null,
          h('th', { scope: 'col' }, matrix.grain === 'week' ? 'Week of' : 'Install day'),
          h('th', { scope: 'col', class: 'num' }, 'Installs'),
          matrix.columns.map((column) => h('th', { scope: 'col', class: 'num' }, head(column))),
        ),
      ),
      h(
        'tbody',
        null,
        matrix.rows.map((row) =>
          h(
            'tr',
            { 'data-cohort': row.cohort },
            h('th', { scope: 'row' }, row.cohort),
            h('td', { class: 'num', 'data-col': 'installs', 'data-label': 'Installs' }, count(row.installs)),
            matrix.columns.map((column) => cell(column, row.cells[column.key], true)),
          ),
        ),
      ),
      h(
        'tfoot',
        null,
        h(
          'tr',
          { 'data-cohort': 'average' },
          h('th', { scope: 'row' }, 'Weighted average (elapsed cohorts only)'),
          h('td', { class: 'num', 'data-col': 'installs', 'data-label': 'Installs' }, count(matrix.average.installs)),
          matrix.columns.map((column) => cell(column, matrix.average.cells[column.key], false)),
        ),
      ),
    ),
  );
}
