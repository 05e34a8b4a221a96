/**
 * How `admin sql` prints a value as JSON, the same from both engines (docs/raw-data.md, "SQL:
 * DuckDB locally, Athena in AWS"): integers as numbers while they are exact in a double (up to
 * 2^53 - 1), else as strings of their digits; doubles as numbers (NaN and the infinities, which
 * JSON has not, as strings); decimals as numbers up to 15 digits (a double holds 15 exactly),
 * else as strings; booleans as booleans; dates, times and timestamps as the engine writes them.
 */

export type SqlJson = null | boolean | number | string | SqlJson[] | { [key: string]: SqlJson };

/** What a query answers, from either engine: its column names and its rows as JSON. */
export interface SqlResult {
  readonly columns: readonly string[];
  readonly rows: readonly Record<string, SqlJson>[];
}

/** The widest decimal a double holds exactly, digit for digit. */
export const EXACT_DECIMAL_DIGITS = 15;

/** An integer as a number while exact, else as its digits. */
export const safeInteger = (value: bigint): number | string => (Number.isSafeInteger(Number(value)) ? Number(value) : value.toString());

/** A double as JSON: NaN and the infinities have no JSON number. */
export const safeDouble = (value: number): number | string => (Number.isFinite(value) ? value : String(value));

/** A decimal's text as a number when the column's precision is within a double's, else the text. */
export const safeDecimal = (text: string, precision: number | undefined): number | string =>
  precision !== undefined && precision <= EXACT_DECIMAL_DIGITS ? Number(text) : text;

const INTEGER_TYPES = new Set(['tinyint', 'smallint', 'integer', 'int', 'bigint']);
const FLOAT_TYPES = new Set(['double', 'real', 'float']);

/**
 * One Athena cell (GetQueryResults gives every value as text, VarCharValue, absent for NULL) by
 * its column's type (ResultSetMetadata.ColumnInfo.Type). Arrays, maps and rows come as Trino
 * prints them, a string.
 */
export function athenaValue(text: string | undefined, type: string, precision?: number): SqlJson {
  if (text === undefined) return null;
  const base = type.toLowerCase();
  if (INTEGER_TYPES.has(base)) return /^-?\d+$/.test(text) ? safeInteger(BigInt(text)) : text;
  if (FLOAT_TYPES.has(base)) return safeDouble(Number(text));
  if (base === 'decimal') return safeDecimal(text, precision);
  if (base === 'boolean') return text === 'true';
  return text;
}
