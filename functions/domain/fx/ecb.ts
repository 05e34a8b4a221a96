import { XMLParser } from 'fast-xml-parser';
import { isDay } from '../common/days';
import { isCurrencyCode, USD, type UsdRates } from './rates';

/**
 * The European Central Bank's euro foreign exchange reference rates (eurofxref-daily.xml, and
 * the 90-day and historical files of the same form): an envelope whose Cube holds one Cube per
 * day (`time`), each holding one Cube per currency (`currency`, `rate` in units per euro).
 *
 * The ECB gives no USD-per-unit rate: with r(C) the units of C one euro buys, one euro is r(USD)
 * dollars, so usd_per_unit(EUR) = r(USD) and usd_per_unit(C) = r(USD) / r(C).
 */
export interface DayRates {
  readonly day: string;
  readonly rates: UsdRates;
}

/** A document that is not the ECB's rates, or a day of it without a usable USD rate. */
export class FxSourceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FxSourceError';
  }
}

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  removeNSPrefix: true,
  parseAttributeValue: false,
  isArray: (name) => name === 'Cube',
});

/** Ten significant digits: more than the ECB's five, without the division's binary noise. */
const SIGNIFICANT_DIGITS = 10;

/** Each day of an ECB reference-rates document, as US dollars per unit, oldest first. */
export function usdRatesOfEcb(xml: string): DayRates[] {
  let document: unknown;
  try {
    document = parser.parse(xml);
  } catch (error) {
    throw new FxSourceError(`not XML: ${(error as Error).message}`);
  }
  const days = cubes(cubes(member(document, 'Envelope'))[0]);
  if (days.length === 0) throw new FxSourceError('no Cube of days in the document');
  const parsed = days.map(dayRates);
  return parsed.sort((a, b) => (a.day < b.day ? -1 : a.day > b.day ? 1 : 0));
}

function dayRates(cube: unknown): DayRates {
  const day = member(cube, 'time');
  if (!isDay(day)) throw new FxSourceError(`a day Cube without a YYYY-MM-DD time: ${JSON.stringify(day)}`);
  const perEuro = new Map<string, number>();
  for (const entry of cubes(cube)) {
    const currency = member(entry, 'currency');
    const rate = Number(member(entry, 'rate'));
    if (isCurrencyCode(currency) && Number.isFinite(rate) && rate > 0) perEuro.set(currency, rate);
  }
  const usdPerEuro = perEuro.get(USD);
  if (usdPerEuro === undefined) throw new FxSourceError(`${day}: no USD rate, so no rate can be given in dollars`);
  const rates: Record<string, number> = { EUR: usdPerEuro, USD: 1 };
  for (const [currency, rate] of perEuro) {
    if (currency !== USD) rates[currency] = Number((usdPerEuro / rate).toPrecision(SIGNIFICANT_DIGITS));
  }
  return { day, rates };
}

const member = (value: unknown, name: string): unknown =>
  typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[name] : undefined;

const cubes = (value: unknown): unknown[] => {
  const found = member(value, 'Cube');
  return Array.isArray(found) ? found : [];
};
