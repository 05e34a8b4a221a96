import { addDays, DAY_MS, FIRST_DAY, LAST_DAY, localDayOf, UTC } from '../common/days';
import { ServiceError } from '../common/errors';
import { SERVER_KEY_PATTERN } from '../tenants/keys';

/**
 * The Reporting API's refusals (interface "Errors", docs/architecture.md section 7) and their statuses, plus the
 * 503 a failing store gets (never a 500). One table, so the handlers, the tests and
 * docs/openapi.yaml cannot disagree.
 */
export const REPORT_ERRORS = {
  invalid_since_until: 400,
  since_ms_must_be_less_than_until_ms: 400,
  window_too_large: 400,
  invalid_limit: 400,
  invalid_offset: 400,
  missing_bearer_token: 401,
  invalid_or_revoked_key: 401,
  /** A server key without the `read` scope (a cost-only key, docs/analytics.md "Cost"). */
  insufficient_scope: 403,
  unknown_report: 404,
  method_not_allowed: 405,
  store_unavailable: 503,
} as const;

export type ReportErrorCode = keyof typeof REPORT_ERRORS;

export const reportError = (code: ReportErrorCode, headers: Record<string, string> = {}) =>
  new ServiceError(REPORT_ERRORS[code], code, headers);

export const DEFAULT_WINDOW_MS = 30 * DAY_MS;
export const MAX_WINDOW_MS = 365 * DAY_MS;
export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 1000;

/**
 * The server key of an `Authorization: Bearer <key>` header. No header, or another scheme, is
 * missing_bearer_token; a token that is not srv_ + 48 lowercase hex is refused here, without a read.
 */
export function bearerKey(authorization: string | undefined): string {
  const key = /^\s*bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  if (key === undefined) throw reportError('missing_bearer_token');
  if (!SERVER_KEY_PATTERN.test(key)) throw reportError('invalid_or_revoked_key');
  return key;
}

export interface ReportQuery {
  /** Inclusive, epoch ms. */
  readonly sinceMs: number;
  /** Exclusive, epoch ms. */
  readonly untilMs: number;
  readonly limit: number;
  readonly offset: number;
}

/** Base-10 integers only: no sign but minus, no exponent, no fraction, no blanks, within 2^53. */
const INTEGER = /^-?\d{1,16}$/;
const COUNT = /^\d{1,16}$/;

/**
 * The query parameters, checked in this order (each check only once the ones before it pass):
 *   1. since_ms and until_ms, when given, are base-10 integers within    invalid_since_until
 *      JavaScript's time range (±8.64e15 ms)
 *   2. since_ms < until_ms (an empty window is refused too)             since_ms_must_be_less_than_until_ms
 *   3. until_ms - since_ms is at most 365 days (exactly 365 is fine)    window_too_large
 *   4. limit, when given, is an integer from 1 to 1000                  invalid_limit
 *   5. offset, when given, is an integer of 0 or more                   invalid_offset
 * Defaults: since_ms now - 30 days, until_ms now, limit 100, offset 0. A parameter given twice
 * arrives comma-joined from API Gateway and is therefore not an integer.
 */
export function parseReportQuery(params: Readonly<Record<string, string | undefined>>, nowMs: number): ReportQuery {
  const since = params.since_ms;
  const until = params.until_ms;
  if ((since !== undefined && !isTimeBound(since)) || (until !== undefined && !isTimeBound(until)))
    throw reportError('invalid_since_until');
  const sinceMs = since === undefined ? nowMs - DEFAULT_WINDOW_MS : Number(since);
  const untilMs = until === undefined ? nowMs : Number(until);
  if (sinceMs >= untilMs) throw reportError('since_ms_must_be_less_than_until_ms');
  if (untilMs - sinceMs > MAX_WINDOW_MS) throw reportError('window_too_large');
  const limit = limitOf(params.limit);
  const offset = params.offset === undefined ? 0 : isSafe(params.offset, COUNT) ? Number(params.offset) : NaN;
  if (!(offset >= 0)) throw reportError('invalid_offset');
  return { sinceMs, untilMs, limit, offset };
}

function isSafe(value: string, pattern: RegExp): boolean {
  return pattern.test(value) && Number.isSafeInteger(Number(value));
}

/** The instants a JavaScript Date holds: ±100,000,000 days around 1970 (ECMA-262, "Time Values"). */
const TIME_VALUE_LIMIT_MS = 8.64e15;

/** An instant in milliseconds a Date holds: a safe integer within ±8.64e15. */
export const isTimeMs = (value: unknown): value is number =>
  typeof value === 'number' && Number.isSafeInteger(value) && Math.abs(value) <= TIME_VALUE_LIMIT_MS;

/** A bound is an integer that is a time: beyond ±8.64e15 ms there is no date, so it is not numeric as a time (the reports' and the stream's since_ms). */
export function isTimeBound(value: string): boolean {
  return INTEGER.test(value) && isTimeMs(Number(value));
}

/** A page's limit parameter: an integer from 1 to 1000, default 100 (the reports' and the stream's); invalid_limit otherwise. */
export function limitOf(value: string | undefined): number {
  const limit = value === undefined ? DEFAULT_LIMIT : isSafe(value, COUNT) ? Number(value) : NaN;
  if (!(limit >= 1 && limit <= MAX_LIMIT)) throw reportError('invalid_limit');
  return limit;
}

/**
 * The days a report reads are FIRST_DAY..LAST_DAY (docs/reports.md, "Days"). Rows exist only for
 * days in that range (events are taken near the time they are received, cost rows and exchange
 * rates outside it are refused), so a window reaching beyond it reads the days within it, and the
 * part beyond reads only the day just past the range's edge, which holds nothing. A window in the
 * year 9999 is therefore a one-day read answered at once (200, no rows), and no day string past
 * the range is ever made from a bound.
 */
const BEFORE_RANGE = addDays(FIRST_DAY, -1);
const AFTER_RANGE = addDays(LAST_DAY, 1);
// Instants a day clear of the range's edge days, so that no zone's offset (at most 26 hours) can
// carry them to a day that is not YYYY-MM-DD before the day is clipped.
const EARLIEST_MS = Date.parse(`${BEFORE_RANGE}T00:00:00Z`) - DAY_MS;
const LATEST_MS = Date.parse(`${AFTER_RANGE}T00:00:00Z`) + 2 * DAY_MS;
const keyedDay = (ms: number, timeZone: string): string => {
  const day = localDayOf(Math.min(LATEST_MS, Math.max(EARLIEST_MS, ms)), timeZone);
  if (day < BEFORE_RANGE) return BEFORE_RANGE;
  if (day > AFTER_RANGE) return AFTER_RANGE;
  return day;
};

/**
 * The days a window overlaps, on the app's local calendar (docs/reports.md, "Time zones"): the
 * local day of since_ms through the local day of its last millisecond. A day is in the window
 * when [its local start, the next day's) meets [since_ms, until_ms).
 */
export function windowDays(query: Pick<ReportQuery, 'sinceMs' | 'untilMs'>, timeZone: string = UTC): { firstDay: string; lastDay: string } {
  return { firstDay: keyedDay(query.sinceMs, timeZone), lastDay: keyedDay(query.untilMs - 1, timeZone) };
}
