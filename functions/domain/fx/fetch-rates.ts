import { usdRatesOfEcb } from './ecb';
import type { FxRateWriter } from './rates';

export interface FetchRatesPorts {
  /** The source document's text; throws when it cannot be fetched. */
  readonly source: () => Promise<string>;
  readonly rates: FxRateWriter;
}

export interface FetchedRates {
  readonly days: readonly string[];
  readonly currencies: number;
}

/**
 * The daily fetch (functions/fx-fetch.ts): the source's reference rates, every day it holds
 * (the daily file holds one), each stored as US dollars per unit. A day stored again is replaced
 * with the same rates, so a retried or repeated run is harmless.
 */
export async function fetchRates(ports: FetchRatesPorts): Promise<FetchedRates> {
  const days = usdRatesOfEcb(await ports.source());
  for (const { day, rates } of days) await ports.rates.putRates(day, rates);
  return { days: days.map(({ day }) => day), currencies: Math.max(0, ...days.map(({ rates }) => Object.keys(rates).length)) };
}
