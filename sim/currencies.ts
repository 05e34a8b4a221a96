import { addDays, daysFrom, utcDay } from './local-days';

/**
 * Exchange rates the simulator sets (`admin fx set --date D --file rates.json`, US dollars per
 * unit) and its own conversion by the rule of docs/analytics.md, Currencies: the rate of the
 * amount's day, else the latest earlier one within 7 days, rounded to the micro-dollar.
 */

export const CURRENCIES = ['EUR', 'JPY'] as const;
export type Currency = (typeof CURRENCIES)[number];
/** A code no rate is ever set for: an event in it is rejected `bad_currency`. */
export const UNKNOWN_CURRENCY = 'QQQ';
export const RATE_LOOKBACK_DAYS = 7;
/** Rates are set every this many days, so most days take the latest earlier rate. */
export const RATE_EVERY_DAYS = 3;

export type RateTable = ReadonlyMap<string, Readonly<Record<string, number>>>;

/**
 * The rates of the days from `first` to `last` (UTC days), one day in RATE_EVERY_DAYS. Four
 * decimals at most, so an amount in cents converts to at most 6 decimals: exact in micro-dollars.
 */
export function planRates(first: string, last: string): RateTable {
  const table = new Map<string, Record<string, number>>();
  daysFrom(first, last).forEach((day, i) => {
    if (i % RATE_EVERY_DAYS !== 0 && day !== last) return;
    const k = (i * 7) % 13;
    table.set(day, { EUR: (10_780 + k * 9) / 10_000, JPY: (64 + (k % 5)) / 10_000 });
  });
  return table;
}

/** Micro-dollars of an amount at the rate of an instant's UTC day; undefined when no rate applies. */
export function toMicroUsd(table: RateTable, amount: number, currency: string, atMs: number): number | undefined {
  return toMicroUsdOnDay(table, amount, currency, utcDay(atMs));
}

export function toMicroUsdOnDay(table: RateTable, amount: number, currency: string, day: string): number | undefined {
  if (currency === 'USD') return Math.round(amount * 1e6);
  for (let back = 0; back <= RATE_LOOKBACK_DAYS; back++) {
    const rate = table.get(addDays(day, -back))?.[currency];
    if (rate !== undefined) return Math.round(amount * rate * 1e6);
  }
  return undefined;
}
