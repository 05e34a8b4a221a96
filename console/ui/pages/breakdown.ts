import './breakdown.css';
import type { TooltipItem } from 'chart.js';
import {
  type BreakdownColumn,
  type ChartData,
  type ChartSeries,
  cellValue,
  chartData,
  chartSummary,
  checkFilters,
  columnsFor,
  csvFilename,
  csvRows,
  DEFAULT_METRICS,
  formatSort,
  groupsOf,
  METRIC_COLUMNS,
  nextSort,
  OTHER,
  pageSizeOf,
  parseSort,
  SHOWN_ROWS,
  type SortOrder,
  sortRows,
  type Totals,
  totalsOf,
} from '../breakdown-data';
import { type ChartSpec, draw } from '../charts';
import { seriesFill } from '../colors';
import { type ChoiceStorage, choiceKey, chosenColumns, LOCAL_USER, storeChoice } from '../column-choice';
import { download, toCsv } from '../csv';
import { actionButton, h, notice, replace } from '../dom';
import { plainError } from '../errors';
import { BLANK, count, orBlank, pct, usd } from '../format';
import { describePeriod } from '../period';
import { FILTERS, type Filter, GROUP_COLUMNS, type GroupColumn, type ReadOptions, type ReportRow, readAll } from '../report-data';
import { selection } from '../state';
import { listParam, param, setView } from '../view';

/** The bars of every name past the top twelve (docs/console-analytics.md, "Breakdown"). */
const OTHER_FILL = '#9e9e9e';

const FILTER_LABELS: Readonly<Record<Filter, string>> = {
  partner: 'Partner',
  campaign: 'Campaign',
  country: 'Country',
  platform: 'Platform',
};
const FILTER_HINTS: Readonly<Record<Filter, string>> = {
  partner: 'e.g. meta,google',
  campaign: 'e.g. spring,(none)',
  country: 'two-letter codes: US,DE',
  platform: 'ios, android or web',
};

/**
 * The performance report grouped by any of day, partner, campaign, country and platform, filtered,
 * with a totals row, sorting on any column, a chart by the same grouping and a CSV of the whole
 * window. The view (grouping, filters, sort, period) is the URL's; a change of it is a setView
 * and the redraw that follows.
 */
export async function breakdownPage(root: HTMLElement): Promise<void> {
  const app = selection.app;
  const heading = h('h1', { tabindex: -1 }, app ? `Breakdown: ${app.name}` : 'Breakdown');
  if (!app) return replace(root, heading, notice('info', 'Select an app first (Companies and apps).'));

  const groups = groupsOf(listParam('group'));
  const storageKey = choiceKey('breakdown', selection.meta?.user ?? LOCAL_USER, app.app_key);
  const shownMetrics = () =>
    chosenColumns(
      storage(),
      storageKey,
      METRIC_COLUMNS.map((c) => c.key),
      DEFAULT_METRICS,
    );
  const order = parseSort(param('sort'), columnsFor(groups));
  const period = selection.period();
  const pageSize = pageSizeOf(param('page_size'));
  const given = Object.fromEntries(FILTERS.map((f) => [f, param(f)])) as Partial<Record<Filter, string>>;
  const checked = checkFilters(given);
  const filtered = Object.keys(checked.filters).length > 0;
  const options: ReadOptions = { appKey: app.app_key, period, groupBy: groups, filters: checked.filters };

  const data = h('div', { class: 'breakdown-data', 'data-testid': 'breakdown-data', 'aria-live': 'polite' }, notice('info', 'Loading…'));
  const csvButton = actionButton(
    'Download CSV (whole window)',
    async () => {
      // Read at click time, every page: the CSV is the window as the API has it now.
      const rows = await readAll('performance', options, pageSize);
      if (rows.length === 0) throw new Error('No rows in this period to download.');
      download(csvFilename(app.name, period.since, period.until, groups, filtered), toCsv(csvRows(rows)));
    },
    { 'data-testid': 'breakdown-csv', class: 'secondary', disabled: checked.error !== undefined },
  );
  replace(
    root,
    heading,
    h('p', { class: 'period', 'data-testid': 'breakdown-period' }, `Performance report, ${describePeriod(period)}`),
    h('div', { class: 'breakdown-controls' }, groupingControl(groups), filterForm(given, checked.error)),
    h('div', { class: 'breakdown-actions' }, csvButton),
    data,
  );

  restoreFocus(root);
  if (checked.error) return replace(data, notice('error', checked.error.message));
  let rows: ReportRow[];
  try {
    rows = await readRows(options, pageSize);
  } catch (error) {
    // The old figures are gone with the redraw: the error stands where they were.
    return replace(data, h('div', { 'data-testid': 'breakdown-error' }, notice('error', plainError(error))));
  }
  if (rows.length === 0) return replace(data, h('p', { class: 'empty' }, 'No rows in this period for this grouping and these filters.'));

  const chart = chartData(rows, groups, period.days);
  const canvas = h('canvas', { 'data-testid': 'breakdown-chart' });
  const sorted = sortRows(rows, order, columnsFor(groups));
  const totals = totalsOf(rows);
  const tableArea = h('div');
  const drawTable = () => {
    const columns = columnsFor(groups, shownMetrics());
    replace(tableArea, sortedTable(sorted, totals, columns, order, groups));
    pinGroupColumns(tableArea);
  };
  const chooser = columnChooser(shownMetrics, (shown) => {
    storeChoice(storage(), storageKey, shown);
    drawTable();
  });
  replace(
    data,
    h(
      'section',
      { 'aria-labelledby': 'breakdown-chart-h' },
      h('h2', { id: 'breakdown-chart-h' }, chartTitle(chart, groups)),
      h('div', { class: 'chart' }, canvas),
      chartTable(chart),
    ),
    h(
      'section',
      { 'aria-labelledby': 'breakdown-table-h' },
      h('h2', { id: 'breakdown-table-h' }, `By ${groups.join(', ')}: ${count(rows.length)} rows`),
      chooser,
      tableArea,
    ),
  );
  drawTable();
  draw(canvas, chartSpec(chart, groups));
  restoreFocus(root);
}

/** localStorage, when the browser gives it (a private window may refuse it: the defaults then). */
function storage(): ChoiceStorage | undefined {
  try {
    return localStorage;
  } catch {
    return undefined;
  }
}

/**
 * "Columns": a tick per figure, the user's choice remembered per user and app (column-choice.ts);
 * "Default columns" forgets it. A change redraws the table only (the window is not read again).
 */
function columnChooser(shown: () => string[], change: (shown: string[]) => void): HTMLElement {
  const summary = h('summary', null);
  const label = () => replace(summary, `Columns (${shown().length} of ${METRIC_COLUMNS.length} figures)`);
  const boxes = METRIC_COLUMNS.map((column) =>
    h('input', { type: 'checkbox', name: 'column', value: column.key, checked: shown().includes(column.key) }),
  );
  const changed = () => {
    change(boxes.filter((box) => box.checked).map((box) => box.value));
    label();
  };
  label();
  return h(
    'details',
    { class: 'column-chooser', 'data-testid': 'breakdown-columns', onchange: changed },
    summary,
    h(
      'fieldset',
      null,
      h('legend', { class: 'visually-hidden' }, 'Figures shown in the table'),
      METRIC_COLUMNS.map((column, i) => h('label', { class: 'check' }, boxes[i] ?? null, ` ${column.label}`)),
    ),
    h(
      'button',
      {
        type: 'button',
        class: 'secondary',
        'data-testid': 'breakdown-columns-default',
        onclick: () => {
          for (const box of boxes) box.checked = DEFAULT_METRICS.includes(box.value);
          changed();
        },
      },
      'Default columns',
    ),
  );
}

/**
 * The group columns stay in view while the figures scroll sideways (position: sticky): each one's
 * left edge is the widths of those before it, measured once the table is laid out and set as CSS
 * variables through the CSSOM (the content security policy allows no style attribute).
 */
function pinGroupColumns(area: HTMLElement): void {
  const table = area.querySelector<HTMLTableElement>('table.breakdown');
  const heads = [...(table?.querySelectorAll<HTMLElement>('thead th.dim') ?? [])];
  let left = 0;
  for (const [i, head] of heads.entries()) {
    table?.style.setProperty(`--dim-left-${i}`, `${left}px`);
    left += head.getBoundingClientRect().width;
  }
}

/**
 * The control a change of view came from (a sort button, a grouping checkbox): the redraw replaces
 * it, so the new one takes focus, and a keyboard user stays where they were.
 */
let refocus: string | undefined;
function restoreFocus(root: HTMLElement): void {
  const control = refocus ? root.querySelector<HTMLElement>(refocus) : null;
  if (!control) return;
  control.focus();
  refocus = undefined;
}

/**
 * The last read, kept for a minute so a new sort order (a redraw of the same window) does not read
 * the window again. The CSV always reads anew.
 */
let lastRead: { key: string; atMs: number; rows: ReportRow[] } | undefined;
async function readRows(options: ReadOptions, pageSize: number | undefined): Promise<ReportRow[]> {
  const key = JSON.stringify([options, pageSize]);
  if (lastRead && lastRead.key === key && Date.now() - lastRead.atMs < 60_000) return lastRead.rows;
  const rows = await readAll('performance', options, pageSize);
  lastRead = { key, atMs: Date.now(), rows };
  return rows;
}

function groupingControl(groups: readonly GroupColumn[]): HTMLElement {
  return h(
    'fieldset',
    { class: 'grouping', 'data-testid': 'breakdown-grouping' },
    h('legend', null, 'Group by'),
    GROUP_COLUMNS.map((column) =>
      h(
        'label',
        { class: 'check' },
        h('input', {
          type: 'checkbox',
          name: 'group',
          value: column,
          checked: groups.includes(column),
          onchange: (event: Event) => {
            const box = event.target as HTMLInputElement;
            const chosen = GROUP_COLUMNS.filter((c) => (c === column ? box.checked : groups.includes(c)));
            refocus = `input[name="group"][value="${column}"]`;
            setView({ group: chosen.length ? chosen.join(',') : null });
          },
        }),
        ` ${column}`,
      ),
    ),
  );
}

function filterForm(given: Partial<Record<Filter, string>>, error: { filter: Filter; message: string } | undefined): HTMLElement {
  const form = h(
    'form',
    { class: 'filters', 'aria-label': 'Filters', 'data-testid': 'breakdown-filters' },
    FILTERS.map((filter) => {
      const id = `breakdown-filter-${filter}`;
      const wrong = error?.filter === filter;
      return h(
        'div',
        { class: 'field' },
        h('label', { for: id }, FILTER_LABELS[filter]),
        h('input', {
          id,
          name: filter,
          type: 'text',
          value: given[filter] ?? '',
          placeholder: FILTER_HINTS[filter],
          'aria-invalid': wrong ? 'true' : null,
          'aria-describedby': wrong ? `${id}-error` : null,
        }),
        wrong ? h('small', { id: `${id}-error`, class: 'field-error', role: 'alert' }, error.message) : null,
      );
    }),
    h('div', { class: 'actions' }, h('button', { type: 'submit' }, 'Apply filters')),
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const values = new FormData(form);
    setView(Object.fromEntries(FILTERS.map((f) => [f, String(values.get(f) ?? '').trim() || null])));
  });
  return form;
}

const ARIA_SORT = { asc: 'ascending', desc: 'descending' } as const;

function formatCell(value: string | number | undefined, column: BreakdownColumn): string {
  if (typeof value === 'string') return value;
  if (column.kind === 'usd') return orBlank(value, usd);
  if (column.kind === 'rate') return orBlank(value, pct);
  return orBlank(value, count);
}

/**
 * Where a cell sits: its column (`data-column`), its label (`data-label`: a card's caption on a
 * narrow screen, styles.css `table.cards`), and for a group column `dim` with its place among
 * the group columns (sticky, pinGroupColumns).
 */
function cellPlace(column: BreakdownColumn, columns: readonly BreakdownColumn[]): Record<string, string | null> {
  const text = column.kind === 'text';
  return {
    class: text ? 'dim' : 'num',
    'data-dim': text ? String(columns.indexOf(column)) : null,
    'data-column': column.key,
    'data-label': column.label,
  };
}

const blankTitle = (column: BreakdownColumn) =>
  column.cohort
    ? 'Not final yet, or nothing to divide by'
    : column.kind === 'usd' || column.kind === 'rate'
      ? 'Nothing to divide by'
      : null;

/** The table: sortable headers, the totals row first, then the rows SHOWN_ROWS at a time ("Show more"). */
function sortedTable(
  rows: readonly ReportRow[],
  totals: Totals,
  columns: readonly BreakdownColumn[],
  order: SortOrder,
  groups: readonly GroupColumn[],
): HTMLElement {
  const sortedBy = columns.find((c) => c.key === order.key);
  const body = h('tbody', { 'data-testid': 'breakdown-rows' });
  const more = h('div', { class: 'pager' });
  let shown = 0;
  const showMore = () => {
    const next = rows.slice(shown, shown + SHOWN_ROWS);
    body.append(
      ...next.map((row) =>
        h(
          'tr',
          null,
          columns.map((column) => {
            const value = cellValue(row, column);
            // The first group column names the row.
            const first = column === columns[0];
            return h(
              first ? 'th' : 'td',
              {
                ...cellPlace(column, columns),
                scope: first ? 'row' : null,
                title: value === undefined ? blankTitle(column) : null,
              },
              formatCell(value, column),
            );
          }),
        ),
      ),
    );
    shown += next.length;
    replace(
      more,
      h('span', { class: 'range', 'data-testid': 'breakdown-shown' }, `${count(shown)} of ${count(rows.length)} rows shown`),
      shown < rows.length
        ? h(
            'button',
            { type: 'button', class: 'secondary', 'data-testid': 'breakdown-more', onclick: showMore },
            `Show ${count(Math.min(SHOWN_ROWS, rows.length - shown))} more`,
          )
        : null,
    );
  };
  showMore();
  const totalCells = columns.map((column, i) => {
    if (column.kind !== 'text') {
      const value = totals.values[column.key];
      return h('td', { ...cellPlace(column, columns), title: value === undefined ? blankTitle(column) : null }, formatCell(value, column));
    }
    return i === 0
      ? h('th', { scope: 'row', ...cellPlace(column, columns) }, `Total (${count(totals.rows)} rows)`)
      : h('td', { ...cellPlace(column, columns), 'data-label': null });
  });
  return h(
    'div',
    null,
    h(
      'div',
      {
        class: 'table-wrap',
        role: 'region',
        'aria-label': `Breakdown by ${groups.join(', ')}`,
        tabindex: 0,
        'data-testid': 'breakdown-table',
      },
      h(
        'table',
        { class: 'breakdown cards' },
        h(
          'caption',
          { class: 'visually-hidden' },
          `Performance by ${groups.join(', ')}, sorted by ${sortedBy?.label ?? order.key}, ${ARIA_SORT[order.direction]}`,
        ),
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            columns.map((column) => {
              const active = column.key === order.key;
              return h(
                'th',
                {
                  scope: 'col',
                  ...cellPlace(column, columns),
                  'data-column': null,
                  'aria-sort': active ? ARIA_SORT[order.direction] : 'none',
                },
                h(
                  'button',
                  {
                    type: 'button',
                    class: 'sort',
                    'data-column': column.key,
                    onclick: () => {
                      refocus = `button.sort[data-column="${column.key}"]`;
                      setView({ sort: formatSort(nextSort(order, column)) });
                    },
                  },
                  column.label,
                  h('span', { class: 'sort-mark', 'aria-hidden': 'true' }, active ? (order.direction === 'asc' ? ' ▲' : ' ▼') : ' ↕'),
                ),
              );
            }),
          ),
        ),
        h('tbody', { class: 'totals', 'data-testid': 'breakdown-totals' }, h('tr', null, totalCells)),
        body,
      ),
    ),
    more,
  );
}

function chartTitle(chart: ChartData, groups: readonly GroupColumn[]): string {
  if (chart.mode === 'days') return chart.dimension ? `Installs per day by ${chart.dimension}` : 'Installs per day';
  return `Installs by ${groups.join(', ')}`;
}

const fillOf = (dimension: string | undefined, key: string) => (key === OTHER ? OTHER_FILL : seriesFill(dimension ?? 'installs', key));

/** A tooltip's money and rates for the rows behind a bar. */
function tooltipFigures(totals: Totals | undefined): string[] {
  if (!totals || totals.rows === 0) return [];
  const v = totals.values;
  return [
    `Cost ${usd(totals.sums.cost_usd)} · eCPI ${orBlank(v.ecpi_usd, usd)}`,
    `Revenue ${usd(totals.sums.revenue_usd)} · ROAS D7 ${orBlank(v.roas_d7, pct)}`,
    `Retention D1 ${orBlank(v.d1_rate, pct)} · D7 ${orBlank(v.d7_rate, pct)}`,
  ];
}

function chartSpec(chart: ChartData, groups: readonly GroupColumn[]): ChartSpec {
  const seriesAt = (item: TooltipItem<'bar'>): ChartSeries | undefined => chart.series[item.datasetIndex];
  const base = { animation: false, responsive: true, maintainAspectRatio: false } as const;
  if (chart.mode === 'days') {
    return {
      summary: chartSummary(chart, groups),
      config: {
        type: 'bar',
        data: {
          labels: [...chart.labels],
          datasets: chart.series.map((series) => ({
            label: series.name,
            data: [...series.values],
            backgroundColor: fillOf(chart.dimension, series.name),
          })),
        },
        options: {
          ...base,
          interaction: { mode: 'index', intersect: false },
          scales: {
            x: { stacked: true },
            y: { stacked: true, beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: 'installs' } },
          },
          plugins: {
            tooltip: {
              callbacks: {
                label: (item) => `${item.dataset.label}: ${count(Number(item.raw))} installs`,
                afterLabel: (item) => tooltipFigures(seriesAt(item)?.totals[item.dataIndex]).map((line) => `  ${line}`),
                footer: (items) => `Total: ${count(items.reduce((sum, item) => sum + Number(item.raw), 0))} installs`,
              },
            },
          },
        },
      },
    };
  }
  const [series] = chart.series;
  return {
    summary: chartSummary(chart, groups),
    config: {
      type: 'bar',
      data: {
        labels: [...chart.labels],
        datasets: [
          {
            label: 'installs',
            data: [...(series?.values ?? [])],
            backgroundColor: chart.colorKeys.map((key) => fillOf(chart.dimension, key)),
          },
        ],
      },
      options: {
        ...base,
        plugins: {
          legend: { display: false },
          tooltip: {
            callbacks: {
              label: (item) => `${count(Number(item.raw))} installs`,
              afterLabel: (item) => tooltipFigures(seriesAt(item)?.totals[item.dataIndex]),
            },
          },
        },
        scales: { y: { beginAtZero: true, ticks: { precision: 0 }, title: { display: true, text: 'installs' } } },
      },
    },
  };
}

/** The chart's numbers as a table (folded away: the breakdown table below has every row). */
function chartTable(chart: ChartData): HTMLElement {
  return h(
    'details',
    { class: 'chart-numbers' },
    h('summary', null, 'The chart’s numbers'),
    h(
      'div',
      { class: 'table-wrap', role: 'region', 'aria-label': 'The chart’s numbers', tabindex: 0 },
      h(
        'table',
        null,
        h(
          'thead',
          null,
          h(
            'tr',
            null,
            h('th', { scope: 'col' }, chart.mode === 'days' ? 'Day' : 'Group'),
            chart.series.map((s) => h('th', { scope: 'col', class: 'num' }, chart.mode === 'days' ? s.name : 'Installs')),
          ),
        ),
        h(
          'tbody',
          null,
          chart.labels.map((label, i) =>
            h(
              'tr',
              null,
              h('th', { scope: 'row' }, label || BLANK),
              chart.series.map((s) => h('td', { class: 'num' }, count(s.values[i] ?? 0))),
            ),
          ),
        ),
      ),
    ),
  );
}
