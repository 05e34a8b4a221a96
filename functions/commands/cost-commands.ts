import { readFileSync } from 'node:fs';
import { parse } from 'csv-parse/sync';
import { z } from 'zod';
import { CostStore } from '../adapters/cost-store';
import { FxStore } from '../adapters/fx-store';
import { NotFoundError, TenantStore } from '../adapters/tenant-store';
import { COST_FIELDS, CostUploadError, convertCostRows, MAX_COST_ROWS, uploadCost } from '../domain/analytics/cost';
import { resourceName } from '../shared/config';
import { defineCommand, UsageError } from './command';
import { intFlag, key } from './flags';

/** A CSV the import refuses: the line at fault and what is wrong, in the endpoint's words. */
export class CostImportError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CostImportError';
  }
}

/** Numbers as a spreadsheet writes them; anything else stays text, for the row check to refuse. */
const DECIMAL = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;
const NUMERIC: readonly string[] = ['cost', 'clicks', 'impressions'];

/** A CSV record as the body's row: empty cells left out (as a missing member), numbers as numbers. */
function rowOf(record: Record<string, string>): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (const [column, text] of Object.entries(record)) {
    if (text === '') continue;
    row[column] = NUMERIC.includes(column) && DECIMAL.test(text) ? Number(text) : text;
  }
  return row;
}

/**
 * The CSV's rows and the line each ends on. The header row names the columns with the body's
 * member names (COST_FIELDS, any order, the optional ones may be left out).
 */
function readCsv(text: string, firstLine: number): { rows: Record<string, unknown>[]; lines: number[] } {
  let records: { record: Record<string, string>; info: { lines: number } }[];
  try {
    records = parse(text, { columns: true, info: true, bom: true, trim: true, skip_empty_lines: true });
  } catch (error) {
    throw new CostImportError(`the CSV cannot be read: ${(error as Error).message}`);
  }
  const offset = firstLine - 1;
  return { rows: records.map(({ record }) => rowOf(record)), lines: records.map(({ info }) => info.lines + offset) };
}

export const costCommands = [
  defineCommand({
    name: 'cost import',
    usage:
      'cost import --app-key K --file cost.csv   (ad spend, as POST /api/v1/cost takes it: a header row of\n' +
      `            ${COST_FIELDS.join(',')}; a row sent again replaces it)\n` +
      '            [--csv TEXT --first-line N]   (the CSV itself instead of a file, its lines numbered from N: the console)',
    flags: z
      .object({ 'app-key': key, file: z.string().min(1).optional(), csv: z.string().min(1).optional(), 'first-line': intFlag.optional() })
      .refine((f) => (f.file === undefined) !== (f.csv === undefined), { message: 'give exactly one of --file and --csv', path: ['file'] }),
    async execute(f) {
      const app = await new TenantStore(resourceName.table('tenants')).appByKey(f['app-key']);
      if (!app) throw new NotFoundError('app');
      const text = f.csv ?? readFile(f.file ?? '');
      const { rows, lines } = readCsv(text, f['first-line'] ?? 1);
      if (rows.length === 0) throw new CostImportError('the CSV has no rows under its header');
      const ports = { days: new CostStore(resourceName.table('aggregates')), rates: new FxStore(resourceName.table('fx_rates')) };
      // Every row checked (and converted) before the first chunk is stored: a bad line stores nothing.
      await atLines(lines, 0, () => convertCostRows(ports.rates, rows));
      let accepted = 0;
      for (let from = 0; from < rows.length; from += MAX_COST_ROWS) {
        const chunk = rows.slice(from, from + MAX_COST_ROWS);
        accepted += (await atLines(lines, from, () => uploadCost(ports, app.app_id, chunk))).accepted;
      }
      return { app_id: app.app_id, accepted, requests: Math.ceil(rows.length / MAX_COST_ROWS) };
    },
  }),
];

function readFile(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    throw new UsageError(`--file cannot be read: ${(error as Error).message}`, 'cost import');
  }
}

/** A refusal of the rows as the endpoint says it, with the row's index turned into its CSV line. */
async function atLines<T>(lines: readonly number[], from: number, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (!(error instanceof CostUploadError) || error.detail.index === undefined) throw error;
    const { index, field, message } = error.detail;
    const line = lines[from + index];
    throw new CostImportError(`line ${line}: ${error.code}${field ? ` (${field})` : ''}: ${message ?? ''}`);
  }
}
