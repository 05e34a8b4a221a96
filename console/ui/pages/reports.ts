import { command } from '../api';
import { type ChartSpec, draw, eventsChart, installsChart, retentionChart, revenueChart } from '../charts';
import { download, toCsv } from '../csv';
import { field, formFlags, h, notice, replace, table } from '../dom';
import { type AppSummary, selection } from '../state';

type Row = Record<string, string | number>;
interface Page {
  rows: Row[];
  meta: { since_ms: number; until_ms: number; limit: number; offset: number };
}

const DAY_MS = 86_400_000;
/** The API's largest page: the charts read the whole window in pages of this size. */
const MAX_LIMIT = 1000;
/** A chart stops reading after this many pages (a year of a very busy app); the table still pages on. */
const MAX_CHART_PAGES = 20;

const REPORTS: { name: string; title: string; chart: (rows: Row[]) => ChartSpec }[] = [
  { name: 'attribution', title: 'Installs per day by partner', chart: installsChart },
  { name: 'cohorts', title: 'Retention (D1, D7, D30) by install day', chart: retentionChart },
  { name: 'revenue', title: 'Revenue and ARPPU by partner', chart: revenueChart },
  { name: 'events', title: 'Events per day by name', chart: eventsChart },
];

const dayString = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const dayStart = (day: string) => Date.parse(`${day}T00:00:00Z`);

/** The four reports of one app and window: each as a chart of the whole window and a table paged as the API pages. */
export async function reportsPage(root: HTMLElement): Promise<void> {
  const app = selection.app;
  if (!app) return replace(root, h('h1', { tabindex: -1 }, 'Reports'), notice('info', 'Select an app first (Companies and apps).'));
  // The inner functions are hoisted, so they do not see the guard above: they use this one.
  const selected: AppSummary = app;

  const today = dayString(Date.now());
  const status = h('div', { 'aria-live': 'polite' });
  const windowForm = h(
    'form',
    { class: 'inline-form', 'aria-label': 'Report window', 'data-testid': 'report-window' },
    field({ flag: 'since', label: 'From (UTC day)', type: 'date', value: dayString(Date.now() - 29 * DAY_MS), required: true }),
    field({ flag: 'until', label: 'To (UTC day, included)', type: 'date', value: today, required: true }),
    field({ flag: 'limit', label: 'Rows per page', type: 'select', options: ['10', '25', '100', '1000'], value: '25' }),
    h('button', { type: 'submit' }, 'Show reports'),
  );
  const sections = REPORTS.map((report) => reportSection(report));
  replace(
    root,
    h('h1', { tabindex: -1 }, `Reports: ${app.name}`),
    windowForm,
    status,
    sections.map((s) => s.element),
  );

  windowForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void showAll();
  });

  async function showAll(): Promise<void> {
    const flags = formFlags(windowForm);
    const span = { 'since-ms': String(dayStart(String(flags.since))), 'until-ms': String(dayStart(String(flags.until)) + DAY_MS) };
    replace(status, notice('info', 'Loading…'));
    const results = await Promise.allSettled(sections.map((s) => s.show(span, Number(flags.limit))));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    replace(status, failed ? notice('error', (failed.reason as Error).message) : null);
  }

  function reportSection(report: (typeof REPORTS)[number]) {
    const canvas = h('canvas', { 'data-testid': `chart-${report.name}` });
    const tableArea = h('div', { 'data-testid': `table-${report.name}` });
    const pager = h('div', { class: 'pager' });
    const element = h(
      'section',
      { 'aria-labelledby': `${report.name}-h`, class: 'report', 'data-report': report.name },
      h('h2', { id: `${report.name}-h` }, report.title, h('small', null, ` (${report.name} report)`)),
      h('div', { class: 'chart' }, canvas),
      tableArea,
      pager,
    );
    let span: { 'since-ms': string; 'until-ms': string } = { 'since-ms': '', 'until-ms': '' };
    let limit = 25;

    const read = (offset: number, pageLimit: number) =>
      command<Page>('report show', {
        'app-key': selected.app_key,
        report: report.name,
        ...span,
        limit: String(pageLimit),
        offset: String(offset),
      });

    /** A pager button's page: its failure is shown where the table was. */
    const turnTo = (offset: number) => () =>
      void showPage(offset).catch((error: Error) => replace(tableArea, notice('error', error.message)));

    async function showPage(offset: number): Promise<void> {
      const page = await read(offset, limit);
      const rows = page.rows;
      replace(tableArea, table(`${report.name} report`, columnsOf(rows), rows, 'No rows in this window.'));
      const first = rows.length ? offset + 1 : offset;
      replace(
        pager,
        h(
          'button',
          { type: 'button', class: 'secondary', disabled: offset === 0, onclick: turnTo(Math.max(0, offset - limit)) },
          'Previous page',
        ),
        h('span', { class: 'range' }, rows.length ? `Rows ${first}–${offset + rows.length}` : `No rows from ${offset + 1}`),
        // The API gives no total: a full page may have more after it.
        h('button', { type: 'button', class: 'secondary', disabled: rows.length < limit, onclick: turnTo(offset + limit) }, 'Next page'),
        h(
          'button',
          {
            type: 'button',
            class: 'secondary',
            disabled: rows.length === 0,
            onclick: () =>
              download(
                `${report.name}_${dayString(Number(span['since-ms']))}_${dayString(Number(span['until-ms']) - 1)}_rows-${first}-${offset + rows.length}.csv`,
                toCsv(rows),
              ),
          },
          'Download CSV',
        ),
      );
    }

    async function showChart(): Promise<void> {
      const rows: Row[] = [];
      for (let pageIndex = 0; pageIndex < MAX_CHART_PAGES; pageIndex += 1) {
        const page = await read(pageIndex * MAX_LIMIT, MAX_LIMIT);
        rows.push(...page.rows);
        if (page.rows.length < MAX_LIMIT) break;
      }
      draw(canvas, report.chart(rows));
      canvas.dataset.rows = String(rows.length);
    }

    return {
      element,
      async show(next: typeof span, nextLimit: number): Promise<void> {
        span = next;
        limit = nextLimit;
        await Promise.all([showPage(0), showChart()]);
      },
    };
  }

  await showAll();
}

function columnsOf(rows: readonly Row[]) {
  const [first] = rows;
  if (first === undefined) return [];
  return Object.keys(first).map((name) => ({
    label: name,
    numeric: typeof first[name] === 'number',
    cell: (row: Row) => String(row[name]),
  }));
}
