/**
 * Days. Storage keys that are not report days (audit object paths, export partitions, the
 * monthly cap) are UTC calendar days. Report days are the app's local calendar days in its IANA
 * time zone (docs/analytics.md, "Time zones"), daylight saving included: `localDayOf` and
 * `localDayStartMs`. With the default zone, UTC, the two agree.
 */
export const DAY_MS = 86_400_000;

export const UTC = 'UTC';

/** YYYY-MM-DD of an epoch-ms instant, in UTC. */
export function dayOf(ms: number): string {
  // The last days asked for are kept, each in the slot of its day number: the hot paths (a
  // batch's events, a month's cap keys, a click) ask for the same few days over and over, and
  // toISOString costs a Date and two strings each time. Around midnight a batch's events fall on
  // two days, and a device that was offline sends several: one kept day would be made anew for
  // every event that changes it.
  const number = Math.floor(ms / DAY_MS);
  const slot = number & (KEPT_DAYS - 1);
  if (keptDayNumbers[slot] !== number) {
    keptDayNumbers[slot] = number;
    keptDays[slot] = new Date(ms).toISOString().slice(0, 10);
  }
  return keptDays[slot] ?? '';
}
const KEPT_DAYS = 8;
const keptDayNumbers: number[] = new Array(KEPT_DAYS).fill(Number.NaN);
const keptDays: string[] = new Array(KEPT_DAYS).fill('');

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterOf(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      era: 'short',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

const IANA_NAME = /^[A-Za-z][A-Za-z0-9_+\-/]*$/;

/** Whether a name is an IANA time zone this runtime knows (Intl's database: "Europe/Berlin", "UTC", ...). */
export function isTimeZone(name: unknown): name is string {
  // A name, not an offset: Node 22's Intl also takes "+09:00" (ECMA-402's offset time zones),
  // which has no daylight saving and is no IANA name; Node 20's refuses it. IANA names are
  // letters, digits, '_', '-', '+' and '/', and never begin with a sign.
  if (typeof name !== 'string' || name.length > 64 || !IANA_NAME.test(name)) return false;
  try {
    formatterOf(name);
    return true;
  } catch {
    return false;
  }
}

/** The zone's offset from UTC at an instant, in ms (local wall time minus UTC). */
export function zoneOffsetMs(ms: number, timeZone: string): number {
  if (timeZone === UTC) return 0;
  const parts: Record<string, string> = {};
  for (const part of formatterOf(timeZone).formatToParts(new Date(ms))) parts[part.type] = part.value;
  const at = (type: string) => Number(parts[type] ?? 0);
  // Years before 1 CE are era years ("1 BC" is year 0), and Date.UTC would read 0..99 as 1900..1999.
  const year = parts.era === 'BC' ? 1 - at('year') : at('year');
  const wallDate = new Date(Date.UTC(2000, at('month') - 1, at('day'), at('hour'), at('minute'), at('second')));
  const wall = wallDate.setUTCFullYear(year);
  const whole = ms - (((ms % 1000) + 1000) % 1000);
  return wall - whole;
}

/** YYYY-MM-DD of an instant on the app's local calendar (its IANA zone, daylight saving included). */
export function localDayOf(ms: number, timeZone: string = UTC): string {
  if (timeZone === UTC) return dayOf(ms);
  return dayOf(ms + zoneOffsetMs(ms, timeZone));
}

/**
 * The first instant (epoch ms) of a local calendar day: local midnight, or the first instant after
 * it when a daylight-saving change skips midnight (a day a zone skipped whole starts where the
 * next one does).
 */
export function localDayStartMs(day: string, timeZone: string = UTC): number {
  const midnightUtc = Date.parse(`${day}T00:00:00Z`);
  if (timeZone === UTC) return midnightUtc;
  // Local days never start more than 26 hours from UTC midnight; the local day is non-decreasing
  // in time, so the first instant on or after the day is found by bisection.
  let low = midnightUtc - 26 * 3_600_000;
  let high = midnightUtc + 26 * 3_600_000;
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (localDayOf(middle, timeZone) >= day) high = middle;
    else low = middle;
  }
  return high;
}

/*
 * Calendar arithmetic on YYYY-MM-DD days (no zone), for the server, the admin CLI and the console
 * alike. It is total on the days a key can name, 0000-01-01 to 9999-12-31: every day it gives is
 * one of them, so day strings always sort as the days do. A step past either end throws a
 * RangeError instead of giving "+010000-01-01" (which sorts before "9999" and is its own next day
 * when cut to 10 characters). Callers never get that far: the days users send are within
 * FIRST_DAY..LAST_DAY, and report windows are clipped to the day just outside them (windowDays).
 */

/** The first and last days a user may name (cost rows, exchange rates, console periods; docs/reports.md, "Days"). */
export const FIRST_DAY = '2000-01-01';
export const LAST_DAY = '2099-12-31';

/**
 * The most days one loop over a window's days may cover. A window is at most 365 days of 24 hours;
 * on a zone's calendar it touches at most 366 days, or 368 across a day a zone skipped crossing the
 * date line (Samoa's 2011-12-30, a change of offset of 24 hours, 25 with daylight saving).
 */
export const MAX_WINDOW_DAYS = 368;

const DAY_FORMAT = /^\d{4}-\d{2}-\d{2}$/;
/** Days since 1970-01-01 of the first and last days a key can name. */
const FIRST_KEY_DAY_NUMBER = Date.parse('0000-01-01T00:00:00Z') / DAY_MS;
const LAST_KEY_DAY_NUMBER = Date.parse('9999-12-31T00:00:00Z') / DAY_MS;

/** A YYYY-MM-DD that is a real calendar day (0000-01-01 to 9999-12-31). */
export function isDay(text: unknown): text is string {
  if (typeof text !== 'string' || !DAY_FORMAT.test(text)) return false;
  const ms = Date.parse(`${text}T00:00:00Z`);
  return Number.isFinite(ms) && dayOf(ms) === text;
}

/** A real calendar day from FIRST_DAY to LAST_DAY: what a user may name. */
export const isAcceptedDay = (text: unknown): text is string => isDay(text) && text >= FIRST_DAY && text <= LAST_DAY;

/** Days since 1970-01-01 (negative before); NaN for anything but a day. */
export const dayNumber = (day: string): number => (isDay(day) ? Date.parse(`${day}T00:00:00Z`) / DAY_MS : Number.NaN);

/** The day of a day number; a RangeError outside 0000-01-01..9999-12-31. */
export function dayOfNumber(n: number): string {
  if (!Number.isSafeInteger(n) || n < FIRST_KEY_DAY_NUMBER || n > LAST_KEY_DAY_NUMBER)
    throw new RangeError(`day number ${n} is outside 0000-01-01..9999-12-31`);
  return dayOf(n * DAY_MS);
}

/** The day `n` days after (before, when negative) a day. */
export const addDays = (day: string, n: number): string => dayOfNumber(dayNumber(day) + n);

/** The day after a day. */
export const nextDay = (day: string): string => addDays(day, 1);

/**
 * The days from `first` to `last`, both included (none when `last` is before `first`). The count
 * is checked before the loop starts: more than MAX_WINDOW_DAYS is a RangeError, never a long loop.
 */
export function daysFrom(first: string, last: string): string[] {
  const start = dayNumber(first);
  const count = dayNumber(last) - start + 1;
  if (!(count <= MAX_WINDOW_DAYS)) throw new RangeError(`${first}..${last} is more than ${MAX_WINDOW_DAYS} days`);
  return Array.from({ length: Math.max(0, count) }, (_, i) => dayOfNumber(start + i));
}

/** The Monday of a day's ISO week (Monday to Sunday). */
export function mondayOf(day: string): string {
  const n = dayNumber(day);
  // 1970-01-01 was a Thursday: (n + 3) mod 7 is 0 on Mondays.
  return dayOfNumber(n - ((((n + 3) % 7) + 7) % 7));
}
