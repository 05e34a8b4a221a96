import fc from 'fast-check';
import { DAY_MS, dayOf, isTimeZone, localDayOf, localDayStartMs, nextDay } from '../../../functions/domain/common/days';

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
