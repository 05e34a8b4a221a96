import { command } from '../api';
import { csvParts } from '../cost-csv';
import { code, h, notice, replace } from '../dom';
import type { AppSummary } from '../state';

/**
 * Ad spend: a CSV file (the columns of POST /api/v1/cost) uploaded with `cost import`, part by
 * part. A row sent again replaces the stored one, so uploading a file again is harmless.
 */
export function costUploadSection(app: AppSummary): HTMLElement {
  const result = h('div', { 'aria-live': 'polite', 'data-testid': 'cost-result' });
  const input = h('input', { type: 'file', id: 'cost-file', accept: '.csv,text/csv' });
  const button = h('button', { type: 'submit' }, 'Upload cost');
  const form = h('form', { class: 'cost-upload' }, h('label', { for: 'cost-file' }, 'Cost CSV'), input, button);
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const file = input.files?.[0];
    if (!file) return replace(result, notice('error', 'Choose a CSV file first.'));
    button.disabled = true;
    upload(file)
      .catch((error: Error) => replace(result, notice('error', error.message)))
      .finally(() => (button.disabled = false));
  });

  async function upload(file: File): Promise<void> {
    const parts = csvParts(await file.text());
    if (parts.length === 0) return replace(result, notice('error', 'The file has no rows under its header.'));
    let accepted = 0;
    for (const [i, part] of parts.entries()) {
      replace(result, notice('info', `Uploading part ${i + 1} of ${parts.length}…`));
      try {
        const answer = await command<{ accepted: number }>('cost import', {
          'app-key': app.app_key,
          csv: part.csv,
          'first-line': String(part.firstLine),
        });
        accepted += answer.accepted;
      } catch (error) {
        const stored =
          accepted > 0 ? ` The ${accepted} rows before it were stored; fix the file and upload it again (rows sent again replace).` : '';
        throw new Error(`${(error as Error).message}.${stored}`);
      }
    }
    replace(result, notice('success', `${accepted} cost rows stored for ${app.name}.`));
  }

  return h(
    'section',
    { 'aria-labelledby': 'cost-heading' },
    h('h2', { id: 'cost-heading' }, `Ad spend of ${app.name}`),
    h(
      'p',
      null,
      'A CSV with a header row of ',
      code('date,partner,campaign,country,platform,cost,currency,clicks,impressions'),
      ' (date, partner and cost required; date is the app’s local day). A row of the same date, partner, campaign, country and platform replaces the one stored. Servers upload with a key of the cost scope: ',
      code('POST /api/v1/cost'),
      '.',
    ),
    form,
    result,
  );
}
