/**
 * Days. Storage keys that are not report days (audit object paths, export partitions, the
 * monthly cap) are UTC calendar days. Report days are the app's local calendar days in its IANA
 * time zone (docs/analytics.md, "Time zones"), daylight saving included: `localDayOf` and
 * `localDayStartMs`. With the default zone, UTC, the two agree.
 */
export const DAY_MS = 86_400_000;

export const UTC = 'UTC';

/** YYYY-MM-DD of an epoch-ms instant, in UTC. */
export const dayOf = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

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

/** The day after a YYYY-MM-DD day (calendar arithmetic, no zone). */
export const nextDay = (day: string): string => dayOf(Date.parse(`${day}T00:00:00Z`) + DAY_MS);
