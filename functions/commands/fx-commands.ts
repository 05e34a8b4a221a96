import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { FxStore } from '../adapters/fx-store';
import { FIRST_DAY, isAcceptedDay, LAST_DAY } from '../domain/common/days';
import { parseRatesFile } from '../domain/fx/rates-file';
import { resourceName } from '../shared/config';
import { defineCommand, UsageError } from './command';

const day = z.string().refine(isAcceptedDay, { message: `--date must be a calendar day from ${FIRST_DAY} to ${LAST_DAY}, as YYYY-MM-DD` });
const store = () => new FxStore(resourceName.table('fx_rates'));

/** Exchange rates (docs/ingestion.md, "Currencies"): what ingest and the cost upload convert with. */
export const fxCommands = [
  defineCommand({
    name: 'fx set',
    usage:
      "fx set --date YYYY-MM-DD --file rates.json   (the day's exchange rates: a JSON object of ISO 4217 codes\n" +
      '            to the US dollars one unit is worth, as {"EUR": 1.08, "JPY": 0.0066}; replaces the day\'s rates)',
    flags: z.object({ date: day, file: z.string().min(1) }),
    async execute(f) {
      let text: string;
      try {
        text = readFileSync(f.file, 'utf8');
      } catch (error) {
        throw new UsageError(`--file cannot be read: ${(error as Error).message}`, 'fx set');
      }
      const rates = parseRatesFile(text);
      await store().putRates(f.date, rates);
      return { day: f.date, rates };
    },
  }),
  defineCommand({
    name: 'fx show',
    usage: "fx show --date YYYY-MM-DD   (the day's exchange rates, US dollars per unit, and who set them)",
    flags: z.object({ date: day }),
    async execute(f) {
      const item = await store().day(f.date);
      return item === undefined
        ? { day: f.date, rates: null }
        : { day: f.date, rates: item.rates, source: item.source ?? null, updated_ms: item.updated_ms ?? null };
    },
  }),
];
