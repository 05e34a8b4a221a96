/**
 * Exchange rates and the one conversion rule (docs/analytics.md, "Currencies"; docs/ingestion.md,
 * "Currencies"). Ingest converts an event's `revenue` in `currency`, the cost upload a cost row's
 * `cost`, both with `convertToUsd`:
 *
 *   convertToUsd(rates, amount, currency, day) -> { usd, rate, rate_day } | undefined
 *
 * - `rates`: an FxTable, day (YYYY-MM-DD) -> { CODE: US dollars one unit is worth that day }, as
 *   read from an FxRateStore (functions/adapters/fx-store.ts) with `readRatesFor`;
 * - the rate is that of `day`, else of the latest earlier day within FX_LOOKBACK_DAYS (7) days;
 *   none older, none later;
 * - `usd` is amount x rate rounded to the micro-dollar; undefined when the code is not an ISO 4217
 *   code or no day of the window has a rate for it. USD itself is always 1.
 */
import { addDays } from '../common/days';

/** US dollars per unit of each currency of one day: { EUR: 1.08, JPY: 0.0066 }. */
export type UsdRates = Readonly<Record<string, number>>;

/** The rates of some days, by YYYY-MM-DD; a day without rates is absent. */
export type FxTable = ReadonlyMap<string, UsdRates>;

/** The port the domain reads rates through (functions/adapters/fx-store.ts, in memory in tests). */
export interface FxRateStore {
  /** The rates of exactly these days (YYYY-MM-DD); days without rates are left out. Throws when the store fails. */
  ratesOf(days: readonly string[]): Promise<FxTable>;
}

/** The port the daily fetch and `admin fx set` write through. */
export interface FxRateWriter {
  /** Replaces the day's rates. */
  putRates(day: string, rates: UsdRates): Promise<void>;
}

/** A conversion: the dollars, the rate used and the day it is of. */
export interface Conversion {
  readonly usd: number;
  readonly rate: number;
  readonly rate_day: string;
}

/** A rate older than this many days before the converted day is never used. */
export const FX_LOOKBACK_DAYS = 7;

export const USD = 'USD';

/** The day `days` days before YYYY-MM-DD `day`. */
export const dayBefore = (day: string, days: number): string => addDays(day, -days);

/** The days whose rates can convert an amount of `day`: day-7 .. day, latest first. */
export function rateWindow(day: string): string[] {
  const window: string[] = [];
  for (let back = 0; back <= FX_LOOKBACK_DAYS; back++) window.push(dayBefore(day, back));
  return window;
}

/** The rule: the rate of `day`, else of the latest earlier day within 7 days; undefined when none. */
export function convertToUsd(rates: FxTable, amount: number, currency: string, day: string): Conversion | undefined {
  if (!isCurrencyCode(currency)) return undefined;
  if (currency === USD) return { usd: toMicroDollars(amount), rate: 1, rate_day: day };
  for (const rateDay of rateWindow(day)) {
    const rate = rates.get(rateDay)?.[currency];
    if (rate !== undefined && isUsdRate(rate)) return { usd: toMicroDollars(amount * rate), rate, rate_day: rateDay };
  }
  return undefined;
}

/** The rates `convertToUsd` needs for amounts of these days (each day's window), in one read. */
export function readRatesFor(store: FxRateStore, days: Iterable<string>): Promise<FxTable> {
  const needed = new Set<string>();
  // Each distinct day's window once: a batch's events share a day or two.
  for (const day of new Set(days)) for (const rateDay of rateWindow(day)) needed.add(rateDay);
  return store.ratesOf([...needed].sort());
}

const toMicroDollars = (usd: number) => Math.round(usd * 1e6) / 1e6;

/**
 * The range of a usable rate, US dollars per unit: no currency is worth a millionth of a
 * millionth of a dollar or a million dollars, and DynamoDB's SDK cannot write a number above 2^53
 * nor DynamoDB one below 1e-130 (issue 36: `admin fx set` with a rate above 2^53 failed with the
 * SDK's marshalling error instead of naming the code at fault).
 */
export const USD_RATE_RANGE = { min: 1e-12, max: 1e6 } as const;

/** A usable rate: a number within USD_RATE_RANGE. */
export const isUsdRate = (rate: unknown): rate is number =>
  typeof rate === 'number' && rate >= USD_RATE_RANGE.min && rate <= USD_RATE_RANGE.max;

/**
 * The active ISO 4217 codes (the list of the ISO 4217 maintenance agency, funds and metals left
 * out: nobody sells in XAU). A three-letter string outside it is no currency.
 */
const ISO_4217 = new Set(
  (
    'AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BHD BIF BMD BND BOB BRL BSD BTN BWP BYN BZD ' +
    'CAD CDF CHF CLP CNY COP CRC CUP CVE CZK DJF DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS GIP GMD ' +
    'GNF GTQ GYD HKD HNL HTG HUF IDR ILS INR IQD IRR ISK JMD JOD JPY KES KGS KHR KMF KPW KRW KWD KYD KZT ' +
    'LAK LBP LKR LRD LSL LYD MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR ' +
    'NZD OMR PAB PEN PGK PHP PKR PLN PYG QAR RON RSD RUB RWF SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP ' +
    'STN SVC SYP SZL THB TJS TMT TND TOP TRY TTD TWD TZS UAH UGX USD UYU UZS VED VES VND VUV WST XAF XCD ' +
    'XCG XOF XPF YER ZAR ZMW ZWG'
  ).split(' '),
);

/** An ISO 4217 currency code: three capital letters of an active currency ("EUR", not "eur" nor "XYZ"). */
export const isCurrencyCode = (code: unknown): code is string => typeof code === 'string' && ISO_4217.has(code);
