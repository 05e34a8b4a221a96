import './raw-data.css';
import { command, exportStatus } from '../api';
import { download, toCsv } from '../csv';
import { actionButton, dateTime, field, formFlags, h, notice, replace, table } from '../dom';
import { type AppSummary, selection } from '../state';

/**
 * Raw data (docs/raw-data.md): the app's last export per table, a SQL box over the app's tables
 * and the four reports as SQL. The actions are admin commands (`export run`, `sql`), so they run
 * where the CLI would: DuckDB over the export files locally, Athena with `--stack NAME`. The
 * status is read from the export bucket (console/export-status.ts).
 */

type Cell = string | number | boolean | null | object;
type Row = Record<string, Cell>;

/** console/export-status.ts's answer: the app's export checkpoint, and each table's files and newest file. */
interface ExportStatus {
  app_id: string;
  last_run: { started_ms: number; final_up_to_ms: number } | null;
  tables: {
    table: string;
    files: number;
    bytes: number;
    newest: { key: string; dt: string; hour: string; written_ms: number; rows: number; bytes: number } | null;
  }[];
}

/** What `sql` prints: the rows, each an object of its columns in the query's order. */
interface SqlAnswer {
  rows: Row[];
}

const REPORTS = [
  { name: 'attribution', label: 'Attribution' },
  { name: 'revenue', label: 'Revenue' },
  { name: 'cohorts', label: 'Cohorts' },
  { name: 'events', label: 'Events' },
] as const;

const EXAMPLE = 'SELECT event_name, count(*) AS n FROM events GROUP BY 1 ORDER BY 2 DESC';
const DAY_MS = 86_400_000;
const dayString = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const dayStart = (day: string) => Date.parse(`${day}T00:00:00Z`);

export async function rawDataPage(root: HTMLElement): Promise<void> {
  const app = selection.app;
  if (!app) return replace(root, h('h1', { tabindex: -1 }, 'Raw data'), notice('info', 'Select an app first (Companies and apps).'));
  // The inner functions are hoisted, so they do not see the guard above: they use this one.
  const selected: AppSummary = app;
  const stack = selection.meta.target.stack;

  const statusArea = h('div', { 'data-testid': 'export-status', 'aria-live': 'polite' });
  const result = h('div', { class: 'sql-result', 'data-testid': 'sql-result', 'aria-live': 'polite' });
  const query = h('textarea', {
    id: 'sql-query',
    name: 'query',
    rows: 6,
    spellcheck: false,
    autocomplete: 'off',
    class: 'mono',
    'aria-describedby': 'sql-query-hint',
  });
  query.value = EXAMPLE;
  const runButton = h('button', { type: 'submit' }, 'Run query');
  const sqlForm = h(
    'form',
    { class: 'sql-form', 'aria-label': 'SQL query', 'data-testid': 'sql-form' },
    h('label', { for: 'sql-query' }, 'Query'),
    query,
    h(
      'small',
      { id: 'sql-query-hint' },
      'One SELECT (or WITH … SELECT) over the tables events, installs, clicks and skan_postbacks of this app only; ',
      'anything else is refused. Ctrl+Enter runs it.',
    ),
    h('div', { class: 'actions' }, runButton),
  );
  const reportForm = h(
    'form',
    { class: 'inline-form', 'aria-label': 'Report window', 'data-testid': 'report-queries' },
    field({ flag: 'since', label: 'From (UTC day)', type: 'date', value: dayString(Date.now() - 29 * DAY_MS), required: true }),
    field({ flag: 'until', label: 'To (UTC day, included)', type: 'date', value: dayString(Date.now()), required: true }),
    REPORTS.map((report) =>
      h(
        'button',
        { type: 'button', class: 'secondary', 'data-report': report.name, onclick: () => void runReport(report.name) },
        `${report.label} report`,
      ),
    ),
  );

  replace(
    root,
    h('h1', { tabindex: -1 }, `Raw data: ${app.name}`),
    h(
      'p',
      null,
      stack
        ? `Queries run on Athena (stack ${stack}) over the export bucket's Parquet files; each one is billed by the data it scans.`
        : 'Queries run on DuckDB on this machine, over the Parquet files the export wrote to the local export bucket.',
      ' The same as ',
      h('code', null, `npm run --silent admin -- sql --app-key ${app.app_key}${stack ? ` --stack ${stack}` : ''} "SELECT …"`),
      '.',
    ),
    h(
      'section',
      { 'aria-labelledby': 'exports-h' },
      h('h2', { id: 'exports-h' }, 'Last export per table'),
      h(
        'p',
        { class: 'small' },
        'The export writes each hour of each table as one Parquet file (by receive hour, UTC), every hour at minute 7. ',
        'Export now writes everything received up to now, the current hour included.',
      ),
      h(
        'div',
        { class: 'actions' },
        actionButton('Export now', async () => {
          await command('export run', { 'app-key': selected.app_key });
          await showStatus();
        }),
        actionButton('Refresh', () => showStatus(), { class: 'secondary' }),
      ),
      statusArea,
    ),
    h(
      'section',
      { 'aria-labelledby': 'sql-h' },
      h('h2', { id: 'sql-h' }, 'SQL over the app’s tables'),
      sqlForm,
      h('h3', null, 'The four reports as SQL'),
      h(
        'p',
        { class: 'small' },
        'Each runs the report’s SQL (in AWS, the workgroup’s saved query of the same name) over the window: the rows the Reporting API counts.',
      ),
      reportForm,
      result,
    ),
  );

  sqlForm.addEventListener('submit', (event) => {
    event.preventDefault();
    void run(`Query`, () => command<SqlAnswer>('sql', { 'app-key': selected.app_key, query: query.value }));
  });
  query.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && (event.ctrlKey || event.metaKey)) {
      event.preventDefault();
      sqlForm.requestSubmit();
    }
  });

  function runReport(report: string): Promise<void> {
    const flags = formFlags(reportForm);
    return run(`The ${report} report`, () =>
      command<SqlAnswer>('sql', {
        'app-key': selected.app_key,
        report,
        'since-ms': String(dayStart(String(flags.since))),
        'until-ms': String(dayStart(String(flags.until)) + DAY_MS),
      }),
    );
  }

  /** Runs a query (one at a time) and shows its rows, or its error as the command said it. */
  async function run(what: string, ask: () => Promise<SqlAnswer>): Promise<void> {
    const buttons = [runButton, ...Array.from(reportForm.querySelectorAll('button'))];
    for (const button of buttons) button.disabled = true;
    replace(result, notice('info', `${what}: running…`));
    const started = performance.now();
    try {
      const answer = await ask();
      replace(result, rowsOf(what, answer, performance.now() - started));
    } catch (error) {
      replace(result, notice('error', `${what} failed: ${(error as Error).message}`));
    } finally {
      for (const button of buttons) button.disabled = false;
    }
  }

  async function showStatus(): Promise<void> {
    try {
      const status = await exportStatus<ExportStatus>(selected.app_key);
      replace(statusArea, statusTable(status));
    } catch (error) {
      replace(statusArea, notice('error', (error as Error).message));
    }
  }

  await showStatus();
}

function statusTable(status: ExportStatus): HTMLElement {
  type TableStatus = ExportStatus['tables'][number];
  const lastRun = status.last_run
    ? h(
        'p',
        { 'data-testid': 'last-run' },
        `The export last ran for this app at ${dateTime(status.last_run.started_ms)}, with the event stream final up to ${dateTime(status.last_run.final_up_to_ms)}.`,
      )
    : h('p', { 'data-testid': 'last-run' }, 'The export has not run for this app yet: Export now, or wait for minute 7 of the hour.');
  return h(
    'div',
    null,
    lastRun,
    table<TableStatus>(
      'Last export per table',
      [
        { label: 'Table', cell: (t) => h('code', null, t.table) },
        { label: 'Newest file written', cell: (t) => (t.newest ? dateTime(t.newest.written_ms) : 'none yet') },
        { label: 'Its partition', cell: (t) => (t.newest ? `dt=${t.newest.dt} hour=${t.newest.hour}` : '') },
        { label: 'Rows in it', numeric: true, cell: (t) => (t.newest ? t.newest.rows : '') },
        { label: 'Files', numeric: true, cell: (t) => t.files },
        { label: 'Size', numeric: true, cell: (t) => size(t.bytes) },
      ],
      status.tables,
    ),
    h(
      'p',
      { class: 'small' },
      'One file per table and UTC receive hour. SKAN postbacks are not matched to apps yet: the export writes them under app_id=_unmatched, ',
      'so skan_postbacks holds no rows of this app.',
    ),
  );
}

const size = (bytes: number): string =>
  bytes < 1024 ? `${bytes} B` : bytes < 1024 ** 2 ? `${(bytes / 1024).toFixed(1)} KiB` : `${(bytes / 1024 ** 2).toFixed(1)} MiB`;

/** A page stays quick with this many table rows; `SELECT *` of a busy app has far more, which the CSV holds. */
const SHOWN_ROWS = 1000;

/** The answer's rows as a table, in the answer's column order, with a CSV of them. */
function rowsOf(what: string, answer: SqlAnswer, elapsedMs: number): HTMLElement {
  const columns = Object.keys(answer.rows[0] ?? {});
  const numeric = new Set(
    columns.filter((c) => answer.rows.length > 0 && answer.rows.every((r) => typeof r[c] === 'number' || r[c] === null)),
  );
  const count = `${answer.rows.length} ${answer.rows.length === 1 ? 'row' : 'rows'} in ${(elapsedMs / 1000).toFixed(1)} s`;
  const shown = answer.rows.slice(0, SHOWN_ROWS);
  return h(
    'div',
    null,
    h(
      'p',
      { class: 'small', 'data-testid': 'sql-summary' },
      `${what}: ${count}.`,
      shown.length < answer.rows.length ? ` The first ${SHOWN_ROWS} are shown; the CSV has them all.` : '',
      ' ',
      answer.rows.length
        ? h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              onclick: () => download('query.csv', toCsv(answer.rows.map((row) => textRow(columns, row)))),
            },
            'Download CSV',
          )
        : null,
    ),
    table<Row>(
      `${what}: rows`,
      columns.map((name) => ({ label: name, numeric: numeric.has(name), cell: (row: Row) => cellText(row[name]) })),
      shown,
      'The query returned no rows.',
    ),
  );
}

const cellText = (value: Cell | undefined): string =>
  value === null || value === undefined ? 'NULL' : typeof value === 'object' ? JSON.stringify(value) : String(value);

/** A CSV row: NULL as an empty field. */
const textRow = (columns: readonly string[], row: Row): Record<string, string> =>
  Object.fromEntries(columns.map((name) => [name, row[name] === null ? '' : cellText(row[name])]));
