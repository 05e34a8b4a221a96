import {
  addDays,
  dayNumber,
  daysFrom,
  isAcceptedDay,
  localDayOf,
  localDayStartMs,
  mondayOf,
  nextDay,
} from '../../functions/domain/common/days';

// The day arithmetic is the server's (one module for the service, the admin CLI and the console).
export { addDays, mondayOf };

/**
 * The console's report periods: whole local days of the app's time zone (docs/analytics.md, "Time
 * zones"), named by a preset or given as a custom range, and the window the Reporting API reads
 * for them (since_ms at the first day's local midnight, until_ms at the day after the last's).
 * DOM-free, so the unit tests run it in node.
 */
export const PRESETS = ['yesterday', 'last7', 'last30', 'last_week', 'month_to_date', 'custom'] as const;
export type Preset = (typeof PRESETS)[number];

export const PRESET_LABELS: Readonly<Record<Preset, string>> = {
  yesterday: 'Yesterday',
  last7: 'Last 7 days',
  last30: 'Last 30 days',
  last_week: 'Last week (Mon–Sun)',
  month_to_date: 'Month to date',
  custom: 'Custom',
};

/** What a view starts with when its URL names no period. */
export const DEFAULT_PRESET: Exclude<Preset, 'custom'> = 'last7';

export interface Period {
  readonly preset: Preset;
  /** First local day, YYYY-MM-DD. */
  readonly since: string;
  /** Last local day, included. */
  readonly until: string;
  /** The Reporting API's window for these days: [sinceMs, untilMs). */
  readonly sinceMs: number;
  readonly untilMs: number;
  /** Every day of the period, in order (a chart's continuous axis). */
  readonly days: readonly string[];
  readonly timeZone: string;
}

/** The longest custom period, in days: the Reporting API's window (365 days). */
export const MAX_PERIOD_DAYS = 365;

/** The days a preset names, seen from `today` (the app's local day now). */
export function presetDays(preset: Exclude<Preset, 'custom'>, today: string): { since: string; until: string } {
  const yesterday = addDays(today, -1);
  switch (preset) {
    case 'yesterday':
      return { since: yesterday, until: yesterday };
    case 'last7':
      return { since: addDays(today, -7), until: yesterday };
    case 'last30':
      return { since: addDays(today, -30), until: yesterday };
    case 'last_week': {
      const monday = addDays(mondayOf(today), -7);
      return { since: monday, until: addDays(monday, 6) };
    }
    case 'month_to_date':
      return { since: `${today.slice(0, 8)}01`, until: today };
  }
}

/** A period of whole local days in the zone. */
export function periodOf(preset: Preset, since: string, until: string, timeZone: string): Period {
  return {
    preset,
    since,
    until,
    sinceMs: localDayStartMs(since, timeZone),
    untilMs: localDayStartMs(nextDay(until), timeZone),
    days: daysFrom(since, until),
    timeZone,
  };
}

/**
 * The period a URL's parameters name (`period`, and `since`/`until` for custom), in the app's
 * zone at `nowMs`. Anything unreadable falls back to the default preset: a bad shared link still
 * opens a view. A custom range given backwards is put in order; one with a day outside
 * 2000-01-01..2099-12-31 or longer than MAX_PERIOD_DAYS is unreadable.
 */
export function resolvePeriod(
  params: { period?: string | null; since?: string | null; until?: string | null },
  timeZone: string,
  nowMs: number,
): Period {
  const today = localDayOf(nowMs, timeZone);
  const preset = (PRESETS as readonly string[]).includes(params.period ?? '') ? (params.period as Preset) : undefined;
  const { since: from, until: to } = params;
  if ((preset === 'custom' || preset === undefined) && isAcceptedDay(from) && isAcceptedDay(to)) {
    const [first, last] = from <= to ? [from, to] : [to, from];
    if (dayNumber(last) - dayNumber(first) < MAX_PERIOD_DAYS) return periodOf('custom', first, last, timeZone);
  }
  const named: Exclude<Preset, 'custom'> = preset && preset !== 'custom' ? preset : DEFAULT_PRESET;
  const { since, until } = presetDays(named, today);
  return periodOf(named, since, until, timeZone);
}

/** The period of the same number of days just before (the overview's comparison). */
export function previousPeriod(period: Period): Period {
  const length = period.days.length;
  return periodOf('custom', addDays(period.since, -length), addDays(period.since, -1), period.timeZone);
}

/** "2026-11-17 – 2026-11-23 (Europe/Berlin)", or one day alone. */
export function describePeriod(period: Period): string {
  const days = period.since === period.until ? period.since : `${period.since} – ${period.until}`;
  return `${days} (${period.timeZone})`;
}
