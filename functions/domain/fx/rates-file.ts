import { isCurrencyCode, isUsdRate, USD_RATE_RANGE, type UsdRates } from './rates';

/** A rates file `admin fx set` refuses, with the code at fault named. */
export class FxRatesFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'FxRatesFileError';
  }
}

/**
 * A day's rates as an operator writes them: a JSON object mapping ISO 4217 codes to the US
 * dollars one unit is worth that day ({"EUR": 1.08, "JPY": 0.0066}). Every code an active ISO 4217
 * code, every rate a number from 1e-12 to 1e6 (USD_RATE_RANGE), at least one; USD, when given, must be 1.
 */
export function parseRatesFile(text: string): UsdRates {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new FxRatesFileError(`the rates file is not JSON: ${(error as Error).message}`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new FxRatesFileError('the rates file must be a JSON object of currency codes to US dollars per unit, as {"EUR": 1.08}');
  }
  const rates: Record<string, number> = {};
  for (const [code, rate] of Object.entries(value)) {
    if (!isCurrencyCode(code)) throw new FxRatesFileError(`${code}: not an ISO 4217 currency code (three capital letters, as EUR)`);
    if (!isUsdRate(rate))
      throw new FxRatesFileError(
        `${code}: the rate must be a number from ${USD_RATE_RANGE.min} to ${USD_RATE_RANGE.max} (US dollars per unit), not ${JSON.stringify(rate)}`,
      );
    if (code === 'USD' && rate !== 1) throw new FxRatesFileError(`USD: one US dollar is worth 1 US dollar, not ${rate}`);
    rates[code] = rate;
  }
  if (Object.keys(rates).length === 0) throw new FxRatesFileError('the rates file names no currency');
  return rates;
}
