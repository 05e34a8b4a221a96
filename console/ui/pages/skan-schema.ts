import { command } from '../api';
import { code, dateTime, h, notice, replace, table } from '../dom';
import { usd } from '../format';
import type { AppSummary } from '../state';

type Range = readonly [number, number];
interface Schema {
  fine: { value: number; revenue_usd: Range; events: string[] }[];
  coarse: { window: number; value: string; revenue_usd: Range; events: string[] }[];
  lock: { window: number; events: string[] }[];
}
interface Shown {
  version: number | null;
  updated_ms?: number;
  schema: Schema | null;
}

/** What the editor starts from for an app without a schema: the example of docs/ios.md. */
const EXAMPLE: Schema = {
  fine: [{ value: 63, revenue_usd: [10, 20], events: ['purchase'] }],
  coarse: [{ window: 0, value: 'high', revenue_usd: [5, 15], events: ['purchase'] }],
  lock: [{ window: 0, events: ['purchase'] }],
};

/** A revenue range in dollars to 2 decimals (format.ts), as every figure of the console. */
const dollars = (r: Range) => `${usd(r[0])} to ${usd(r[1])}`;

/**
 * The app's SKAN conversion-value schema (docs/ios.md section 1): the active version as tables,
 * and an editor (pasted JSON or a file) that stores a new version with `skan schema set`. The
 * server checks it with the same validateSkanSchema as the CLI, so a refusal names the field.
 */
export async function skanSchemaSection(app: AppSummary): Promise<HTMLElement> {
  const current = h('div', { 'data-testid': 'skan-schema-current' });
  const result = h('div', { 'aria-live': 'polite', 'data-testid': 'skan-schema-result' });
  const text = h('textarea', { id: 'skan-schema-json', rows: 14, cols: 80, spellcheck: false }) as HTMLTextAreaElement;
  const file = h('input', { type: 'file', id: 'skan-schema-file', accept: '.json,application/json' }) as HTMLInputElement;
  const button = h('button', { type: 'submit' }, 'Save new version');
  file.addEventListener('change', () => {
    void file.files?.[0]?.text().then((loaded) => (text.value = loaded));
  });
  const form = h(
    'form',
    { class: 'skan-schema' },
    h('label', { for: 'skan-schema-file' }, 'Schema file (fills the text below)'),
    file,
    h('label', { for: 'skan-schema-json' }, 'Schema JSON'),
    text,
    button,
  );
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    button.disabled = true;
    command<{ version: number }>('skan schema set', { 'app-key': app.app_key, json: text.value })
      .then(async ({ version }) => {
        replace(result, notice('success', `Version ${version} of the schema stored and active for ${app.name}.`));
        await show();
      })
      .catch((error: Error) => replace(result, notice('error', error.message)))
      .finally(() => (button.disabled = false));
  });

  async function show(): Promise<void> {
    const shown = await command<Shown>('skan schema show', { 'app-key': app.app_key });
    text.value = JSON.stringify(shown.schema ?? EXAMPLE, null, 2);
    if (shown.schema === null) return replace(current, notice('info', 'No schema yet: SKAN postbacks of this app decode to no revenue.'));
    const { fine, coarse, lock } = shown.schema;
    replace(
      current,
      h('p', null, `Version ${shown.version}, set ${dateTime(shown.updated_ms)}.`),
      table(
        'Fine values',
        [
          { label: 'Fine value', cell: (e) => String(e.value), numeric: true },
          { label: 'Revenue', cell: (e) => dollars(e.revenue_usd) },
          { label: 'Events', cell: (e) => e.events.join(', ') },
        ],
        fine,
        'No fine value.',
      ),
      table(
        'Coarse values',
        [
          { label: 'Window', cell: (e) => String(e.window), numeric: true },
          { label: 'Coarse value', cell: (e) => e.value },
          { label: 'Revenue', cell: (e) => dollars(e.revenue_usd) },
          { label: 'Events', cell: (e) => e.events.join(', ') },
        ],
        coarse,
        'No coarse value.',
      ),
      table(
        'Lock rules',
        [
          { label: 'Window', cell: (r) => String(r.window), numeric: true },
          { label: 'Locked by', cell: (r) => r.events.join(', ') },
        ],
        lock,
        'No lock rule.',
      ),
    );
  }
  await show();

  return h(
    'section',
    { 'aria-labelledby': 'skan-schema-heading' },
    h('h2', { id: 'skan-schema-heading' }, `SKAN conversion values of ${app.name}`),
    h(
      'p',
      null,
      'What each SKAdNetwork / AdAttributionKit conversion value stands for: ',
      code('fine'),
      ' values 0 to 63, ',
      code('coarse'),
      ' low, medium or high per postback window (0, 1, 2), each with a revenue range in US dollars and its events; ',
      code('lock'),
      ' the events that lock a window. Each save is a new version; the app fetches the active one from ',
      code('GET /sdk/v1/skan-schema'),
      '.',
    ),
    current,
    form,
    result,
  );
}
