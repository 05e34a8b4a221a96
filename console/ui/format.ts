/**
 * How the console writes numbers, on screen and in the CSV's display columns: dollars to 2
 * decimals, rates as percentages, counts with thousands separators. DOM-free (unit-tested in node).
 */

const usdFormat = new Intl.NumberFormat('en-US', {
  style: 'currency',
  currency: 'USD',
  minimumFractionDigits: 2,
  maximumFractionDigits: 2,
});
const countFormat = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
const pctFormat = new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 });

/** "$1,234.50" (negative "-$3.10"). */
export const usd = (dollars: number): string => usdFormat.format(dollars);

/** "1,234". */
export const count = (n: number): string => countFormat.format(n);

/** A rate (0.1234) as "12.3 %". */
export const pct = (rate: number): string => `${pctFormat.format(rate * 100)} %`;

/** What a cell shows when its value does not exist yet (a cohort whose window has not elapsed, a ratio over 0). */
export const BLANK = '–';

/** A ratio that is undefined when its denominator is 0 (eCPI without installs, ROAS without cost). */
export const ratio = (numerator: number, denominator: number): number | undefined =>
  denominator > 0 ? numerator / denominator : undefined;

/** A value or BLANK. */
export const orBlank = (value: number | undefined, format: (n: number) => string): string =>
  value === undefined || !Number.isFinite(value) ? BLANK : format(value);

/** The CSV's display form of dollars: "1234.50" (no symbol or separators, so a spreadsheet reads a number). */
export const csvUsd = (dollars: number): string => dollars.toFixed(2);

/** The CSV's display form of a rate: "12.34%". */
export const csvPct = (rate: number): string => `${(rate * 100).toFixed(2)}%`;

export interface Change {
  /** "+12.0 %", "-3.4 %", "new" (from 0), "no change", or BLANK when neither period has a value. */
  readonly text: string;
  readonly direction: 'up' | 'down' | 'flat' | 'none';
}

/** The change of a figure against the previous period's, relative. */
export function change(current: number | undefined, previous: number | undefined): Change {
  if (current === undefined || previous === undefined) return { text: BLANK, direction: 'none' };
  if (previous === 0)
    return current === 0 ? { text: 'no change', direction: 'flat' } : { text: 'new', direction: current > 0 ? 'up' : 'down' };
  const relative = (current - previous) / Math.abs(previous);
  if (Math.abs(relative) < 0.0005) return { text: 'no change', direction: 'flat' };
  return { text: `${relative > 0 ? '+' : ''}${pctFormat.format(relative * 100)} %`, direction: relative > 0 ? 'up' : 'down' };
}
