import fc from 'fast-check';
import {
  addDays,
  DAY_MS,
  dayNumber,
  dayOf,
  dayOfNumber,
  daysFrom,
  FIRST_DAY,
  isAcceptedDay,
  isDay,
  isTimeZone,
  LAST_DAY,
  localDayOf,
  localDayStartMs,
  MAX_WINDOW_DAYS,
  mondayOf,
  nextDay,
} from '../../../functions/domain/common/days';

const HOUR_MS = 3_600_000;
const iso = (ms: number) => new Date(ms).toISOString();
const dayLengthHours = (day: string, zone: string) => (localDayStartMs(nextDay(day), zone) - localDayStartMs(day, zone)) / HOUR_MS;

/** The oracle: Intl's own calendar date in the zone (en-CA writes YYYY-MM-DD), not days.ts's offset arithmetic. */
const intlDay = (ms: number, zone: string) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms);

const ZONES = [
  'UTC',
  'Europe/Berlin',
  'Asia/Tokyo',
  'America/New_York',
  'America/Santiago',
  'America/Havana',
  'Asia/Kolkata',
  'Asia/Kathmandu',
  'Australia/Lord_Howe',
  'Pacific/Kiritimati',
  'Pacific/Pago_Pago',
  'Pacific/Apia',
] as const;

describe('local days', () => {
  it("names each instant's UTC day, however the days asked for come and go (the kept days)", () => {
    // Instants over a few days to a few years, in any order: twelve days and more fill the kept
    // slots, a day eight apart takes another's slot, and the two days of a midnight alternate.
    const instant = fc.oneof(
      fc.integer({ min: -5 * DAY_MS, max: 5 * DAY_MS }).map((offset) => Date.UTC(2026, 10, 30) + offset),
      fc.integer({ min: 0, max: 40 }).map((days) => Date.UTC(2026, 0, 1) + 8 * days * DAY_MS - 1),
      fc.integer({ min: Date.UTC(-1000, 0, 1), max: Date.UTC(9999, 11, 31) }),
    );
    fc.assert(
      fc.property(fc.array(instant, { maxLength: 50 }), (instants) => {
        for (const ms of instants) expect(dayOf(ms)).toBe(iso(ms).slice(0, 10));
      }),
      { numRuns: 300 },
    );
  });

  it('puts 23:30 UTC on the next day in Tokyo and on the same day in UTC', () => {
    const ms = Date.parse('2026-05-10T23:30:00Z');
    expect(localDayOf(ms, 'Asia/Tokyo')).toBe('2026-05-11');
    expect(localDayOf(ms)).toBe('2026-05-10');
    expect(localDayOf(ms, 'UTC')).toBe(dayOf(ms));
    expect(iso(localDayStartMs('2026-05-11', 'Asia/Tokyo'))).toBe('2026-05-10T15:00:00.000Z');
  });

  it('gives Berlin a day of 23 hours in March and of 25 hours in October 2026', () => {
    expect(dayLengthHours('2026-03-28', 'Europe/Berlin')).toBe(24);
    expect(dayLengthHours('2026-03-29', 'Europe/Berlin')).toBe(23);
    expect(dayLengthHours('2026-10-25', 'Europe/Berlin')).toBe(25);
    expect(dayLengthHours('2026-10-26', 'Europe/Berlin')).toBe(24);
    expect(iso(localDayStartMs('2026-03-29', 'Europe/Berlin'))).toBe('2026-03-28T23:00:00.000Z');
    expect(iso(localDayStartMs('2026-03-30', 'Europe/Berlin'))).toBe('2026-03-29T22:00:00.000Z');
    expect(iso(localDayStartMs('2026-10-26', 'Europe/Berlin'))).toBe('2026-10-25T23:00:00.000Z');
    // The last instants of the long and short days, and the first of the days after.
    expect(localDayOf(Date.parse('2026-10-25T22:59:59.999Z'), 'Europe/Berlin')).toBe('2026-10-25');
    expect(localDayOf(Date.parse('2026-10-25T23:00:00Z'), 'Europe/Berlin')).toBe('2026-10-26');
    expect(localDayOf(Date.parse('2026-03-29T21:59:59.999Z'), 'Europe/Berlin')).toBe('2026-03-29');
    expect(localDayOf(Date.parse('2026-03-29T22:00:00Z'), 'Europe/Berlin')).toBe('2026-03-30');
  });

  it('starts a day whose midnight a zone skips at the first instant after it', () => {
    // Santiago moves from 00:00 to 01:00 on 2026-09-06: the day starts at 01:00 local (04:00 UTC) and lasts 23 hours.
    expect(iso(localDayStartMs('2026-09-06', 'America/Santiago'))).toBe('2026-09-06T04:00:00.000Z');
    expect(localDayOf(localDayStartMs('2026-09-06', 'America/Santiago') - 1, 'America/Santiago')).toBe('2026-09-05');
    expect(dayLengthHours('2026-09-06', 'America/Santiago')).toBe(23);
    // Samoa skipped 2011-12-30 whole: it starts where 2011-12-31 does, and no instant is on it.
    expect(localDayStartMs('2011-12-30', 'Pacific/Apia')).toBe(localDayStartMs('2011-12-31', 'Pacific/Apia'));
    expect(localDayOf(localDayStartMs('2011-12-31', 'Pacific/Apia') - 1, 'Pacific/Apia')).toBe('2011-12-29');
  });

  it("agrees with Intl's calendar date, and every instant lies within its day's bounds", () => {
    fc.assert(
      fc.property(fc.integer({ min: Date.UTC(1970, 0, 2), max: Date.UTC(2040, 0, 1) }), fc.constantFrom(...ZONES), (ms, zone) => {
        const day = localDayOf(ms, zone);
        expect(day).toBe(intlDay(ms, zone));
        expect(localDayStartMs(day, zone)).toBeLessThanOrEqual(ms);
        expect(localDayStartMs(nextDay(day), zone)).toBeGreaterThan(ms);
      }),
      { numRuns: 2000 },
    );
  });

  it('names days before the year 100 and before 1 CE as they are, not as 19xx', () => {
    expect(localDayOf(Date.parse('0050-06-01T12:00:00Z'), 'Asia/Tokyo')).toBe('0050-06-01');
    expect(localDayOf(Date.parse('0000-01-01T12:00:00Z'), 'Europe/Berlin')).toBe('0000-01-01');
  });

  it('knows IANA names and refuses anything else, offsets too (which Node 22 would take)', () => {
    for (const zone of ZONES) expect(isTimeZone(zone)).toBe(true);
    for (const zone of ['Etc/GMT+9', 'America/Port-au-Prince', 'America/Argentina/Buenos_Aires']) expect(isTimeZone(zone)).toBe(true);
    for (const bad of [
      '',
      'Mars/Olympus',
      'Europe/Berlinn',
      'europe berlin',
      '+25:00',
      '+09:00',
      '-05:00',
      'x'.repeat(65),
      42,
      null,
      undefined,
      {},
    ]) {
      expect(isTimeZone(bad)).toBe(false);
    }
    expect(() => localDayOf(0, 'Mars/Olympus')).toThrow(RangeError);
  });

  it('is calendar arithmetic for the next day', () => {
    expect(nextDay('2026-12-31')).toBe('2027-01-01');
    expect(nextDay('2028-02-28')).toBe('2028-02-29');
    expect(Date.parse(`${nextDay('2026-03-29')}T00:00:00Z`) - Date.parse('2026-03-29T00:00:00Z')).toBe(DAY_MS);
  });
});

/**
 * The oracle for calendar arithmetic: integers only (H. Hinnant's days-from-civil and
 * civil-from-days), with no Date and nothing of days.ts.
 */
const div = (a: number, b: number) => Math.floor(a / b);
function civilOf(n: number): string {
  const z = n + 719_468;
  const era = div(z, 146_097);
  const doe = z - era * 146_097;
  const yoe = div(doe - div(doe, 1460) + div(doe, 36_524) - div(doe, 146_096), 365);
  const doy = doe - (365 * yoe + div(yoe, 4) - div(yoe, 100));
  const mp = div(5 * doy + 2, 153);
  const d = doy - div(153 * mp + 2, 5) + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}`;
}
const numberOf = (year: number, month: number, day: number) => {
  const y = month <= 2 ? year - 1 : year;
  const era = div(y, 400);
  const yoe = y - era * 400;
  const doy = div(153 * (month > 2 ? month - 3 : month + 9) + 2, 5) + day - 1;
  return era * 146_097 + yoe * 365 + div(yoe, 4) - div(yoe, 100) + doy - 719_468;
};
const FIRST_KEY = numberOf(0, 1, 1);
const LAST_KEY = numberOf(9999, 12, 31);
const keyNumber = fc.oneof(
  fc.integer({ min: FIRST_KEY, max: LAST_KEY }),
  fc.integer({ min: FIRST_KEY, max: FIRST_KEY + 400 }),
  fc.integer({ min: LAST_KEY - 400, max: LAST_KEY }),
  fc.integer({ min: numberOf(1999, 12, 1), max: numberOf(2100, 1, 31) }),
);

describe('day arithmetic', () => {
  it('steps over every day a key can name as the integer calendar does, and never past 0000-01-01..9999-12-31', () => {
    fc.assert(
      fc.property(keyNumber, fc.integer({ min: -800, max: 800 }), (n, k) => {
        const day = civilOf(n);
        expect(isDay(day)).toBe(true);
        expect(dayNumber(day)).toBe(n);
        expect(dayOfNumber(n)).toBe(day);
        if (n + k < FIRST_KEY || n + k > LAST_KEY) {
          expect(() => addDays(day, k)).toThrow(RangeError);
          return;
        }
        const later = addDays(day, k);
        expect(later).toBe(civilOf(n + k));
        // What it makes is a day the same validator takes, and string order is day order.
        expect(isDay(later)).toBe(true);
        expect(Math.sign(later.localeCompare(day))).toBe(Math.sign(k));
      }),
      { numRuns: 1000 },
    );
  });

  it('gives the next day of every day but the last, and a RangeError after 9999-12-31', () => {
    fc.assert(
      fc.property(keyNumber, (n) => {
        const day = civilOf(n);
        if (n === LAST_KEY) expect(() => nextDay(day)).toThrow(RangeError);
        else expect(nextDay(day) > day && nextDay(day) === civilOf(n + 1)).toBe(true);
      }),
      { numRuns: 1000 },
    );
    expect(() => nextDay('9999-12-31')).toThrow(RangeError);
    expect(() => addDays('0000-01-01', -1)).toThrow(RangeError);
    expect(() => nextDay('+010000-01-01')).toThrow(RangeError);
    expect(() => nextDay('2026-02-30')).toThrow(RangeError);
  });

  it('lists the days of a range as the oracle does, and refuses more than MAX_WINDOW_DAYS before looping', () => {
    fc.assert(
      fc.property(keyNumber, fc.integer({ min: -3, max: 2 * MAX_WINDOW_DAYS }), (n, length) => {
        const last = Math.min(LAST_KEY, n + length - 1);
        const first = civilOf(n);
        if (last - n + 1 > MAX_WINDOW_DAYS) {
          expect(() => daysFrom(first, civilOf(last))).toThrow(RangeError);
          return;
        }
        const expected = Array.from({ length: Math.max(0, last - n + 1) }, (_, i) => civilOf(n + i));
        expect(daysFrom(first, last >= FIRST_KEY ? civilOf(last) : first).length).toBe(last >= FIRST_KEY ? expected.length : 1);
        if (last >= FIRST_KEY) expect(daysFrom(first, civilOf(last))).toEqual(expected);
      }),
      { numRuns: 300 },
    );
    const startedMs = Date.now();
    expect(() => daysFrom('0000-01-01', '9999-12-31')).toThrow(RangeError);
    expect(() => daysFrom('2026-01-01', 'not a day')).toThrow(RangeError);
    expect(daysFrom('9999-12-29', '9999-12-31')).toEqual(['9999-12-29', '9999-12-30', '9999-12-31']);
    expect(Date.now() - startedMs).toBeLessThan(100);
  });

  it("names each day's ISO week by its Monday, within the key range", () => {
    const MONDAY = numberOf(2026, 11, 23);
    fc.assert(
      fc.property(keyNumber, (n) => {
        const m = n - ((((n - MONDAY) % 7) + 7) % 7);
        // The week of 0000-01-01, a Saturday, began in the year -1: no key names its Monday.
        if (m < FIRST_KEY) return expect(() => mondayOf(civilOf(n))).toThrow(RangeError);
        const monday = mondayOf(civilOf(n));
        expect(monday).toBe(civilOf(m));
      }),
      { numRuns: 1000 },
    );
  });

  it('takes from users only real days from 2000-01-01 to 2099-12-31', () => {
    const dayText = fc
      .tuple(fc.integer({ min: 0, max: 9999 }), fc.integer({ min: 0, max: 13 }), fc.integer({ min: 0, max: 32 }))
      .map(([y, m, d]) => ({ y, m, d, text: `${String(y).padStart(4, '0')}-${String(m).padStart(2, '0')}-${String(d).padStart(2, '0')}` }));
    const leap = (y: number) => (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
    const length = (y: number, m: number) => [31, leap(y) ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][m - 1] ?? 0;
    fc.assert(
      fc.property(dayText, ({ y, m, d, text }) => {
        const real = m >= 1 && m <= 12 && d >= 1 && d <= length(y, m);
        expect(isDay(text)).toBe(real);
        expect(isAcceptedDay(text)).toBe(real && y >= 2000 && y <= 2099);
      }),
      { numRuns: 2000 },
    );
    for (const day of [FIRST_DAY, LAST_DAY, '2024-02-29']) expect(isAcceptedDay(day)).toBe(true);
    for (const bad of ['1999-12-31', '2100-01-01', '9999-12-31', '0000-01-01', '2026-1-01', ' 2026-01-01', '+002026-01-01', 20260101, null])
      expect(isAcceptedDay(bad)).toBe(false);
  });
});
