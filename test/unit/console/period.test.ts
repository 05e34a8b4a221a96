import fc from 'fast-check';
import { DEFAULT_PRESET, describePeriod, PRESETS, type Preset, previousPeriod, resolvePeriod } from '../../../console/ui/period';

// An independent oracle: the zone's wall clock read with Intl (not the days module), and calendar
// arithmetic on UTC dates.
const wall = (ms: number, timeZone: string) => {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
    })
      .formatToParts(new Date(ms))
      .map((part) => [part.type, part.value]),
  );
  return { day: `${parts.year}-${parts.month}-${parts.day}`, time: `${parts.hour}:${parts.minute}` };
};
const plus = (day: string, n: number) => {
  const date = new Date(`${day}T12:00:00Z`);
  date.setUTCDate(date.getUTCDate() + n);
  return date.toISOString().slice(0, 10);
};
const weekday = (day: string) => new Date(`${day}T12:00:00Z`).getUTCDay(); // 0 Sunday

function oracle(preset: Exclude<Preset, 'custom'>, today: string): { since: string; until: string } {
  switch (preset) {
    case 'yesterday':
      return { since: plus(today, -1), until: plus(today, -1) };
    case 'last7':
      return { since: plus(today, -7), until: plus(today, -1) };
    case 'last30':
      return { since: plus(today, -30), until: plus(today, -1) };
    case 'last_week': {
      // Back to this week's Monday, then a week further.
      let monday = today;
      while (weekday(monday) !== 1) monday = plus(monday, -1);
      return { since: plus(monday, -7), until: plus(monday, -1) };
    }
    case 'month_to_date':
      return { since: `${today.slice(0, 7)}-01`, until: today };
  }
}

// Zones with daylight saving on both hemispheres, a half-hour zone, a 30-minute DST (Lord Howe).
const ZONES = [
  'UTC',
  'America/New_York',
  'America/Los_Angeles',
  'Europe/Berlin',
  'Asia/Kolkata',
  'Pacific/Auckland',
  'Australia/Lord_Howe',
];
const NAMED = PRESETS.filter((p): p is Exclude<Preset, 'custom'> => p !== 'custom');
// Instants near DST changes and month starts, and anywhere in 2020..2030.
const SPECIAL = [
  Date.UTC(2026, 2, 8, 6, 59), // New York springs forward at 07:00 UTC
  Date.UTC(2026, 2, 8, 7, 1),
  Date.UTC(2026, 2, 9, 4, 30), // New York's Monday after the change, 00:30 local
  Date.UTC(2026, 2, 29, 0, 30), // Berlin's change day
  Date.UTC(2026, 10, 1, 5, 59), // New York falls back
  Date.UTC(2026, 10, 2, 4, 59), // 23:59 on Sunday in New York
  Date.UTC(2026, 10, 2, 5, 0), // 00:00 on Monday
  Date.UTC(2026, 3, 5, 13, 0), // Auckland's change
  Date.UTC(2026, 0, 1, 4, 59), // New Year: still 2025 in New York
  Date.UTC(2026, 2, 1, 0, 0), // a month start in UTC, still February to the west
  Date.UTC(2024, 1, 29, 12, 0), // a leap day
];
const instant = fc.oneof(fc.constantFrom(...SPECIAL), fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2030, 11, 31) }));

describe('period presets', () => {
  it("name the oracle's days of the app's zone, whole local days from midnight to midnight", () => {
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), instant, fc.constantFrom(...NAMED), (zone, now, preset) => {
        const today = wall(now, zone).day;
        const period = resolvePeriod({ period: preset }, zone, now);
        const expected = oracle(preset, today);
        expect(period).toMatchObject({ preset, since: expected.since, until: expected.until, timeZone: zone });
        // Every day listed, in order, consecutive.
        expect(period.days[0]).toBe(expected.since);
        expect(period.days.at(-1)).toBe(expected.until);
        expect(period.days).toEqual(Array.from({ length: period.days.length }, (_, i) => plus(expected.since, i)));
        // The window starts at the first day's local midnight and ends at the midnight after the last.
        expect(wall(period.sinceMs, zone)).toEqual({ day: expected.since, time: '00:00' });
        expect(wall(period.sinceMs - 1, zone).day).toBe(plus(expected.since, -1));
        expect(wall(period.untilMs, zone)).toEqual({ day: plus(expected.until, 1), time: '00:00' });
        expect(wall(period.untilMs - 1, zone).day).toBe(expected.until);
        // A local day is 23 to 25 hours (Lord Howe: 23.5 to 24.5).
        const hours = (period.untilMs - period.sinceMs) / 3_600_000;
        expect(Math.abs(hours - period.days.length * 24)).toBeLessThanOrEqual(2);
        // Lengths: 1, 7, 30, 7, and month to date is the day of the month.
        const length = { yesterday: 1, last7: 7, last30: 30, last_week: 7, month_to_date: Number(today.slice(8)) }[preset];
        expect(period.days).toHaveLength(length);
        if (preset === 'last_week') {
          expect(weekday(period.since)).toBe(1);
          expect(weekday(period.until)).toBe(0);
          // Before the current week: its Sunday is at most 7 days ago and before today.
          expect(period.until < today).toBe(true);
          expect(plus(period.until, 7) >= today).toBe(true);
        }
        // The window is in the past, or (month to date) ends with today.
        expect(period.sinceMs).toBeLessThanOrEqual(now);
        if (preset === 'month_to_date') expect(period.untilMs).toBeGreaterThan(now);
        else expect(period.untilMs).toBeLessThanOrEqual(now);
      }),
      { numRuns: 600 },
    );
  });

  it('count a DST day as its local length: the last 7 days across New York spring forward are 167 hours', () => {
    // Tuesday 2026-03-10 in New York: the days 03-03..03-09 include the 23-hour 03-08.
    const period = resolvePeriod({ period: 'last7' }, 'America/New_York', Date.UTC(2026, 2, 10, 15));
    expect([period.since, period.until]).toEqual(['2026-03-03', '2026-03-09']);
    expect((period.untilMs - period.sinceMs) / 3_600_000).toBe(7 * 24 - 1);
  });

  it('take a custom range as given, in order, and read a bad one as the default preset', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        instant,
        fc.integer({ min: 0, max: 364 }),
        fc.integer({ min: 0, max: 364 }),
        (zone, now, a, b) => {
          const [x, y] = [plus('2025-01-01', a), plus('2025-01-01', b)];
          const period = resolvePeriod({ period: 'custom', since: x, until: y }, zone, now);
          const [since, until] = x <= y ? [x, y] : [y, x];
          expect(period).toMatchObject({ preset: 'custom', since, until });
          expect(period.days).toHaveLength(Math.abs(a - b) + 1);
          expect(wall(period.sinceMs, zone)).toEqual({ day: since, time: '00:00' });
          expect(wall(period.untilMs, zone)).toEqual({ day: plus(until, 1), time: '00:00' });
        },
      ),
    );
    const now = Date.UTC(2026, 5, 15, 12);
    for (const params of [
      {},
      { period: 'fortnight' },
      { period: 'custom', since: '2026-02-30', until: '2026-03-01' },
      { period: 'custom' },
      // Outside 2000-01-01..2099-12-31, or longer than the Reporting API's 365 days (issue 36: 9999-12-31 froze the tab).
      { period: 'custom', since: '2026-01-01', until: '9999-12-31' },
      { period: 'custom', since: '9999-12-30', until: '9999-12-31' },
      { since: '1999-12-31', until: '2000-01-02' },
      { period: 'custom', since: '2099-12-31', until: '2100-01-01' },
      { period: 'custom', since: '2025-01-01', until: '2026-01-01' },
    ]) {
      expect(resolvePeriod(params, 'UTC', now).preset).toBe(DEFAULT_PRESET);
    }
    // The edges of the range, and 365 days, are a custom range.
    expect(resolvePeriod({ period: 'custom', since: '2000-01-01', until: '2000-12-30' }, 'UTC', now).days).toHaveLength(365);
    expect(resolvePeriod({ period: 'custom', since: '2099-12-31', until: '2099-12-31' }, 'Pacific/Kiritimati', now)).toMatchObject({
      preset: 'custom',
      days: ['2099-12-31'],
    });
    // since and until without a preset name are a custom range.
    expect(resolvePeriod({ since: '2026-01-05', until: '2026-01-01' }, 'UTC', now)).toMatchObject({
      preset: 'custom',
      since: '2026-01-01',
      until: '2026-01-05',
    });
  });

  it('compare with the same number of days just before', () => {
    fc.assert(
      fc.property(fc.constantFrom(...ZONES), instant, fc.constantFrom(...NAMED), (zone, now, preset) => {
        const period = resolvePeriod({ period: preset }, zone, now);
        const before = previousPeriod(period);
        expect(before.days).toHaveLength(period.days.length);
        expect(before.until).toBe(plus(period.since, -1));
        expect(before.untilMs).toBe(period.sinceMs);
        expect(wall(before.sinceMs, zone)).toEqual({ day: before.since, time: '00:00' });
        expect(before.timeZone).toBe(zone);
      }),
    );
  });

  it('describe a period by its days and zone', () => {
    const now = Date.UTC(2026, 10, 25, 12);
    expect(describePeriod(resolvePeriod({ period: 'last_week' }, 'Europe/Berlin', now))).toBe('2026-11-16 – 2026-11-22 (Europe/Berlin)');
    expect(describePeriod(resolvePeriod({ period: 'yesterday' }, 'UTC', now))).toBe('2026-11-24 (UTC)');
  });
});
