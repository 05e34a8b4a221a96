import fc from 'fast-check';
import { DAY_MS, daysFrom, MAX_WINDOW_DAYS } from '../../../functions/domain/common/days';
import { ServiceError } from '../../../functions/domain/common/errors';
import { bearerKey, parseReportQuery, REPORT_ERRORS, windowDays } from '../../../functions/domain/reports/report-query';

const NOW = Date.UTC(2026, 10, 21, 10, 30);
const KEY = `srv_${'a1'.repeat(24)}`;
const codeOf = (work: () => unknown): string | undefined => {
  try {
    work();
    return undefined;
  } catch (error) {
    if (!(error instanceof ServiceError)) throw error;
    expect(error.statusCode).toBe(REPORT_ERRORS[error.code as keyof typeof REPORT_ERRORS]);
    return error.code;
  }
};

describe('the bearer key', () => {
  it('takes srv_ + 48 lowercase hex from an Authorization: Bearer header, the scheme in any case', () => {
    expect(bearerKey(`Bearer ${KEY}`)).toBe(KEY);
    expect(bearerKey(`bearer ${KEY}`)).toBe(KEY);
    expect(bearerKey(`BEARER  ${KEY} `)).toBe(KEY);
  });

  it.each([undefined, '', 'Bearer', 'Bearer ', `Basic ${KEY}`, KEY, `Token ${KEY}`])('is missing_bearer_token for %p', (header) => {
    expect(codeOf(() => bearerKey(header))).toBe('missing_bearer_token');
  });

  it.each([
    `Bearer srv_${'A1'.repeat(24)}`,
    `Bearer srv_${'a'.repeat(47)}`,
    `Bearer srv_${'a'.repeat(49)}`,
    'Bearer co_live_0123',
    `Bearer ${KEY}x`,
    `Bearer sk_${'a'.repeat(48)}`,
  ])('refuses the malformed token of %p as invalid_or_revoked_key, before any read', (header) => {
    expect(codeOf(() => bearerKey(header))).toBe('invalid_or_revoked_key');
  });
});

describe('the report parameters', () => {
  it('defaults to the last 30 days, 100 rows from the first', () => {
    expect(parseReportQuery({}, NOW)).toEqual({ sinceMs: NOW - 30 * DAY_MS, untilMs: NOW, limit: 100, offset: 0 });
  });

  it('takes base-10 integers, a window of exactly 365 days, limits 1 and 1000 and any offset', () => {
    expect(parseReportQuery({ since_ms: '0', until_ms: String(365 * DAY_MS), limit: '1000', offset: '12345' }, NOW)).toEqual({
      sinceMs: 0,
      untilMs: 365 * DAY_MS,
      limit: 1000,
      offset: 12345,
    });
    expect(parseReportQuery({ since_ms: '-5', until_ms: '5', limit: '1' }, NOW)).toMatchObject({ sinceMs: -5, untilMs: 5, limit: 1 });
    expect(parseReportQuery({ limit: '007' }, NOW).limit).toBe(7);
  });

  it.each(['', ' ', 'abc', 'NaN', '1e3', '1E3', '1.5', '1.0', '+5', '0x10', '1,2', 'Infinity', '99999999999999999', ' 5', '5 '])(
    'refuses since_ms or until_ms %p as invalid_since_until',
    (value) => {
      expect(codeOf(() => parseReportQuery({ since_ms: value }, NOW))).toBe('invalid_since_until');
      expect(codeOf(() => parseReportQuery({ until_ms: value }, NOW))).toBe('invalid_since_until');
    },
  );

  it('refuses a reversed or empty window, and one longer than 365 days', () => {
    expect(codeOf(() => parseReportQuery({ since_ms: '10', until_ms: '5' }, NOW))).toBe('since_ms_must_be_less_than_until_ms');
    expect(codeOf(() => parseReportQuery({ since_ms: '5', until_ms: '5' }, NOW))).toBe('since_ms_must_be_less_than_until_ms');
    // until_ms alone far in the past is before the default since_ms.
    expect(codeOf(() => parseReportQuery({ until_ms: String(NOW - 40 * DAY_MS) }, NOW))).toBe('since_ms_must_be_less_than_until_ms');
    expect(codeOf(() => parseReportQuery({ since_ms: '0', until_ms: String(365 * DAY_MS + 1) }, NOW))).toBe('window_too_large');
  });

  it.each(['0', '1001', '-1', '', '1.5', '1e2', 'ten', '100,100'])('refuses limit %p as invalid_limit', (limit) => {
    expect(codeOf(() => parseReportQuery({ limit }, NOW))).toBe('invalid_limit');
  });

  it.each(['-1', '', '1.5', '1e2', 'x', '0,0', '99999999999999999'])('refuses offset %p as invalid_offset', (offset) => {
    expect(codeOf(() => parseReportQuery({ offset }, NOW))).toBe('invalid_offset');
  });

  it('checks in the documented order: bounds, their order, the window, limit, offset', () => {
    const all = { since_ms: 'x', until_ms: '1', limit: '0', offset: '-1' };
    expect(codeOf(() => parseReportQuery(all, NOW))).toBe('invalid_since_until');
    expect(codeOf(() => parseReportQuery({ ...all, since_ms: '5', until_ms: '1' }, NOW))).toBe('since_ms_must_be_less_than_until_ms');
    expect(codeOf(() => parseReportQuery({ ...all, since_ms: '0', until_ms: String(400 * DAY_MS) }, NOW))).toBe('window_too_large');
    expect(codeOf(() => parseReportQuery({ ...all, since_ms: '0', until_ms: '1' }, NOW))).toBe('invalid_limit');
    expect(codeOf(() => parseReportQuery({ ...all, since_ms: '0', until_ms: '1', limit: '5' }, NOW))).toBe('invalid_offset');
  });

  it('answers any parameters with a query or a documented 400, never anything else', () => {
    const value = fc.oneof(fc.string(), fc.integer().map(String), fc.constantFrom('', '1e3', '-0', '0'));
    fc.assert(
      fc.property(
        fc.record({
          since_ms: fc.option(value, { nil: undefined }),
          until_ms: fc.option(value, { nil: undefined }),
          limit: fc.option(value, { nil: undefined }),
          offset: fc.option(value, { nil: undefined }),
        }),
        (params) => {
          const code = codeOf(() => parseReportQuery(params, NOW));
          if (code) expect(REPORT_ERRORS[code as keyof typeof REPORT_ERRORS]).toBe(400);
        },
      ),
    );
  });

  it('covers the UTC days that overlap [since_ms, until_ms)', () => {
    const midnight = Date.UTC(2026, 10, 21);
    expect(windowDays({ sinceMs: midnight, untilMs: midnight + DAY_MS })).toEqual({ firstDay: '2026-11-21', lastDay: '2026-11-21' });
    expect(windowDays({ sinceMs: midnight - 1, untilMs: midnight + 1 })).toEqual({ firstDay: '2026-11-20', lastDay: '2026-11-21' });
    expect(windowDays({ sinceMs: midnight + 5, untilMs: midnight + 6 })).toEqual({ firstDay: '2026-11-21', lastDay: '2026-11-21' });
  });

  it('takes bounds to the ends of JavaScript time (±8.64e15 ms) and refuses one beyond as invalid_since_until', () => {
    expect(parseReportQuery({ since_ms: String(8.64e15 - DAY_MS), until_ms: String(8.64e15) }, NOW)).toMatchObject({
      sinceMs: 8.64e15 - DAY_MS,
      untilMs: 8.64e15,
    });
    expect(parseReportQuery({ since_ms: String(-8.64e15), until_ms: String(-8.64e15 + 1) }, NOW)).toMatchObject({ sinceMs: -8.64e15 });
    for (const value of ['8640000000000001', '-8640000000000001', '9007199254740991', '-9007199254740991']) {
      expect(codeOf(() => parseReportQuery({ since_ms: value }, NOW))).toBe('invalid_since_until');
      expect(codeOf(() => parseReportQuery({ since_ms: '0', until_ms: value }, NOW))).toBe('invalid_since_until');
    }
  });

  it('names the days of any window JavaScript time holds, in order, clipped to the day just outside 2000-01-01..2099-12-31', () => {
    const first = Date.parse('2000-01-01T00:00:00Z');
    const end = Date.parse('2100-01-01T00:00:00Z');
    const zones = ['UTC', 'Pacific/Kiritimati', 'Pacific/Pago_Pago', 'Europe/Berlin', 'Pacific/Apia'];
    const instant = fc.oneof(
      fc.integer({ min: -8.64e15, max: 8.64e15 - 1 }),
      fc.integer({ min: first - 400 * DAY_MS, max: first + 400 * DAY_MS }),
      fc.integer({ min: end - 400 * DAY_MS, max: end + 400 * DAY_MS }),
    );
    fc.assert(
      fc.property(instant, fc.integer({ min: 1, max: 365 * DAY_MS }), fc.constantFrom(...zones), (sinceMs, length, zone) => {
        const untilMs = Math.min(8.64e15, sinceMs + length);
        const window = windowDays({ sinceMs, untilMs }, zone);
        const days = daysFrom(window.firstDay, window.lastDay);
        // Days the same validator takes, in order, never past the edges, and few enough to loop over.
        expect(days.length).toBeGreaterThanOrEqual(1);
        expect(days.length).toBeLessThanOrEqual(MAX_WINDOW_DAYS);
        expect(window.firstDay >= '1999-12-31' && window.lastDay <= '2100-01-01').toBe(true);
        // Within the range, the days are the window's own (UTC: the instants' dates).
        if (zone === 'UTC' && sinceMs >= first && untilMs <= end)
          expect(window).toEqual({
            firstDay: new Date(sinceMs).toISOString().slice(0, 10),
            lastDay: new Date(untilMs - 1).toISOString().slice(0, 10),
          });
      }),
      { numRuns: 400 },
    );
    // The reproduction of issue 36: two days from 9999-12-31 read only the day after the range.
    expect(windowDays({ sinceMs: 253_402_214_400_000, untilMs: 253_402_214_400_000 + 2 * DAY_MS })).toEqual({
      firstDay: '2100-01-01',
      lastDay: '2100-01-01',
    });
    expect(windowDays({ sinceMs: Date.parse('2099-12-30T00:00:00Z'), untilMs: Date.parse('2100-12-30T00:00:00Z') })).toEqual({
      firstDay: '2099-12-30',
      lastDay: '2100-01-01',
    });
  });
});
