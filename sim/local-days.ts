/**
 * The simulator's own local calendar: the day of an instant on an app's wall clock in its IANA
 * time zone (daylight saving included), from Intl alone. It shares no code with the service's
 * days (functions/domain/common/days.ts), so the two can only agree by both being right.
 */

export const UTC = 'UTC';
const DAY_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let found = formatters.get(zone);
  if (!found) {
    found = new Intl.DateTimeFormat('en-GB', {
      timeZone: zone,
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
      hourCycle: 'h23',
    });
    formatters.set(zone, found);
  }
  return found;
}

/** The wall clock of an instant in a zone, as if it were UTC (epoch ms of the same Y-M-D h:m:s). */
function wallClockMs(ms: number, zone: string): number {
  const part: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(new Date(ms))) if (p.type !== 'literal') part[p.type] = Number(p.value);
  return (
    Date.UTC(part.year ?? 1970, (part.month ?? 1) - 1, part.day ?? 1, part.hour ?? 0, part.minute ?? 0, part.second ?? 0) +
    (((ms % 1000) + 1000) % 1000)
  );
}

/** YYYY-MM-DD of an instant on the zone's calendar. */
export function localDay(ms: number, zone: string = UTC): string {
  return new Date(zone === UTC ? ms : wallClockMs(ms, zone)).toISOString().slice(0, 10);
}

/** The UTC calendar day of an instant (what exchange rates are looked up by). */
export const utcDay = (ms: number): string => new Date(ms).toISOString().slice(0, 10);

/** The day `n` calendar days after a YYYY-MM-DD day. */
export const addDays = (day: string, n: number): string => utcDay(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS);

/** Every day from `first` to `last`, both included. */
export function daysFrom(first: string, last: string): string[] {
  const out: string[] = [];
  for (let day = first; day <= last; day = addDays(day, 1)) out.push(day);
  return out;
}

/**
 * Moves an instant `marginMs` clear of both the UTC midnight (the exchange rate's day) and the
 * zone's local midnight (the report day), so neither day depends on the service's skew correction.
 */
export function clearOfMidnights(ms: number, zone: string, marginMs: number): number {
  const clear = (at: number, wall: number) => {
    const into = ((wall % DAY_MS) + DAY_MS) % DAY_MS;
    return into < marginMs ? at + (marginMs - into) : into > DAY_MS - marginMs ? at - (into - (DAY_MS - marginMs)) : at;
  };
  // A zone's midnight is whole minutes away from UTC's, further than any margin used here.
  const utcClear = clear(ms, ms);
  return Math.round(zone === UTC ? utcClear : clear(utcClear, wallClockMs(utcClear, zone)));
}

/** The first instant after a local day (its next day's start), found by bisection on localDay. */
export function localDayEndMs(day: string, zone: string = UTC): number {
  const midnight = Date.parse(`${day}T00:00:00Z`) + DAY_MS;
  if (zone === UTC) return midnight;
  let [low, high] = [midnight - 30 * 3_600_000, midnight + 30 * 3_600_000];
  while (high - low > 1) {
    const middle = Math.floor((low + high) / 2);
    if (localDay(middle, zone) > day) high = middle;
    else low = middle;
  }
  return high;
}
