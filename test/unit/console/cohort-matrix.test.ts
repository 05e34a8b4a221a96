import fc from 'fast-check';
import {
  cohortMatrix,
  columnRange,
  contrast,
  finalFrom,
  heatColour,
  isMature,
  luminance,
  MATURE_AFTER_DAYS,
  type MaturityFlag,
  type PerformanceRow,
} from '../../../console/ui/cohort-matrix';
import { maturityOf, MATURE_AFTER_DAYS as REPORT_MATURE_AFTER_DAYS } from '../../../functions/domain/analytics/performance-report';

const DAY = 86_400_000;
const ZONES = ['UTC', 'America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'Pacific/Chatham', 'Australia/Lord_Howe'] as const;
const FLAGS: MaturityFlag[] = ['d0_mature', 'd1_mature', 'd7_mature', 'd30_mature'];
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);
/** Monday of a day's week, by weekday arithmetic on epoch days (1970-01-01 was a Thursday). */
const oracleMonday = (day: string) => {
  const epochDay = Date.parse(`${day}T00:00:00Z`) / DAY;
  const sinceMonday = (epochDay + 3) % 7;
  return dayOf((epochDay - sinceMonday) * DAY);
};

const arbDay = fc.integer({ min: Date.UTC(2024, 0, 1) / DAY, max: Date.UTC(2027, 11, 31) / DAY }).map((d) => dayOf(d * DAY));

const arbRow = fc.record({
  present: fc.boolean(),
  installs: fc.integer({ min: 0, max: 50 }),
  retained: fc.tuple(fc.nat(50), fc.nat(50), fc.nat(50)),
  revenue: fc.tuple(fc.nat(5000), fc.nat(5000), fc.nat(5000)),
  ads: fc.tuple(fc.oneof(fc.constant(0), fc.nat(800)), fc.oneof(fc.constant(0), fc.nat(800))),
  cost: fc.oneof(fc.constant(0), fc.nat(10000)),
  flags: fc.tuple(fc.boolean(), fc.boolean(), fc.boolean(), fc.boolean()),
});

describe('the cohort matrix', () => {
  it('uses the performance report’s maturity rule, in every zone', () => {
    expect(MATURE_AFTER_DAYS).toEqual(REPORT_MATURE_AFTER_DAYS);
    fc.assert(
      fc.property(arbDay, fc.constantFrom(...ZONES), fc.integer({ min: -3 * DAY, max: 40 * DAY }), (day, zone, after) => {
        const nowMs = Date.parse(`${day}T00:00:00Z`) + after;
        const flags = maturityOf(day, zone, nowMs);
        for (const flag of FLAGS) expect(isMature(day, flag, zone, nowMs)).toBe(flags[flag]);
        // The day named as the one it becomes final on is the first whose end sees it final.
        for (const flag of FLAGS) {
          const from = finalFrom(day, flag, zone);
          const fromEnd = Date.parse(`${from}T00:00:00Z`) + 2 * DAY; // late enough in any zone
          expect(maturityOf(day, zone, fromEnd)[flag]).toBe(true);
        }
      }),
    );
  });

  it('sums days and weeks, is blank exactly where immature, and averages the mature rows weighted by installs', () => {
    fc.assert(
      fc.property(
        arbDay,
        fc.array(arbRow, { minLength: 1, maxLength: 45 }),
        fc.constantFrom('day' as const, 'week' as const),
        fc.constantFrom(...ZONES),
        fc.integer({ min: -5, max: 60 }),
        (since, specs, grain, zone, nowOffsetDays) => {
          const days = specs.map((_, i) => dayOf(Date.parse(`${since}T00:00:00Z`) + i * DAY));
          const nowMs = Date.parse(`${since}T12:00:00Z`) + nowOffsetDays * DAY;
          const rows: PerformanceRow[] = [];
          specs.forEach((spec, i) => {
            if (!spec.present) return;
            rows.push({
              day: days[i] as string,
              installs: spec.installs,
              cost_usd: spec.cost / 100,
              retained_d1: Math.min(spec.retained[0], spec.installs),
              retained_d7: Math.min(spec.retained[1], spec.installs),
              retained_d30: Math.min(spec.retained[2], spec.installs),
              cohort_revenue_d0_usd: spec.revenue[0] / 100,
              cohort_revenue_d7_usd: spec.revenue[1] / 100,
              cohort_revenue_d30_usd: spec.revenue[2] / 100,
              cohort_ad_revenue_d7_usd: spec.ads[0] / 100,
              cohort_ad_revenue_d30_usd: spec.ads[1] / 100,
              d0_mature: spec.flags[0],
              d1_mature: spec.flags[1],
              d7_mature: spec.flags[2],
              d30_mature: spec.flags[3],
            });
          });
          const matrix = cohortMatrix(rows, { days, grain, timeZone: zone, nowMs });

          // The oracle: group by hand, sum by hand.
          const rowOf = new Map(rows.map((r) => [r.day as string, r]));
          const key = (day: string) => (grain === 'week' ? oracleMonday(day) : day);
          const cohorts = [...new Set(days.map(key))];
          expect(matrix.rows.map((r) => r.cohort)).toEqual(cohorts);
          const hasCost = rows.some((r) => (r.cost_usd as number) > 0);
          const hasRevenue = rows.some((r) =>
            [
              'cohort_revenue_d0_usd',
              'cohort_revenue_d7_usd',
              'cohort_revenue_d30_usd',
              'cohort_ad_revenue_d7_usd',
              'cohort_ad_revenue_d30_usd',
            ].some((c) => (r[c] as number) > 0),
          );
          expect(matrix.revenueMode).toBe(hasCost ? 'roas' : hasRevenue ? 'per_install' : 'none');
          // A column's counters, summed: purchases, and for the "+ ads" columns the ad revenue too.
          const columns: [string, string[], MaturityFlag, boolean][] = [
            ['d1', ['retained_d1'], 'd1_mature', false],
            ['d7', ['retained_d7'], 'd7_mature', false],
            ['d30', ['retained_d30'], 'd30_mature', false],
            ...(hasCost || hasRevenue
              ? ([
                  ['rev_d0', ['cohort_revenue_d0_usd'], 'd0_mature', true],
                  ['rev_d7', ['cohort_revenue_d7_usd'], 'd7_mature', true],
                  ['rev_d30', ['cohort_revenue_d30_usd'], 'd30_mature', true],
                  ['total_d7', ['cohort_revenue_d7_usd', 'cohort_ad_revenue_d7_usd'], 'd7_mature', true],
                  ['total_d30', ['cohort_revenue_d30_usd', 'cohort_ad_revenue_d30_usd'], 'd30_mature', true],
                ] as [string, string[], MaturityFlag, boolean][])
              : []),
          ];
          expect(matrix.columns.map((c) => c.key)).toEqual(columns.map(([k]) => k));

          const totals = new Map<
            string,
            { installs: number; cost: number; sums: Record<string, number>; mature: Record<string, boolean> }
          >();
          for (const cohort of cohorts) totals.set(cohort, { installs: 0, cost: 0, sums: {}, mature: {} });
          for (const day of days) {
            const t = totals.get(key(day))!;
            const r = rowOf.get(day);
            t.installs += (r?.installs as number) ?? 0;
            t.cost += (r?.cost_usd as number) ?? 0;
            for (const [k, counters, flag] of columns) {
              for (const counter of counters) t.sums[k] = (t.sums[k] ?? 0) + ((r?.[counter] as number) ?? 0);
              const dayMature = r ? (r[flag] as boolean) : maturityOf(day, zone, nowMs)[flag];
              t.mature[k] = (t.mature[k] ?? true) && dayMature;
            }
          }
          const expectedValue = (sum: number, installs: number, cost: number, revenue: boolean) => {
            const whole = revenue && hasCost ? cost : installs;
            return whole > 0 ? sum / whole : undefined;
          };
          matrix.rows.forEach((row) => {
            const t = totals.get(row.cohort)!;
            expect(row.installs).toBe(t.installs);
            for (const [k, , , revenue] of columns) {
              const cell = row.cells[k as keyof typeof row.cells];
              expect(cell.mature).toBe(t.mature[k]);
              if (!t.mature[k]) expect(cell.value).toBeUndefined();
              else {
                const expected = expectedValue(t.sums[k] ?? 0, t.installs, t.cost, revenue);
                if (expected === undefined) expect(cell.value).toBeUndefined();
                else expect(cell.value).toBeCloseTo(expected, 9);
              }
            }
          });

          expect(matrix.average.installs).toBe([...totals.values()].reduce((s, t) => s + t.installs, 0));
          for (const [k, , , revenue] of columns) {
            const mature = [...totals.values()].filter((t) => t.mature[k]);
            const sum = mature.reduce((s, t) => s + (t.sums[k] ?? 0), 0);
            const installs = mature.reduce((s, t) => s + t.installs, 0);
            const cost = mature.reduce((s, t) => s + t.cost, 0);
            const expected = expectedValue(sum, installs, cost, revenue);
            const got = matrix.average.cells[k as keyof typeof matrix.average.cells].value;
            if (expected === undefined) expect(got).toBeUndefined();
            else expect(got).toBeCloseTo(expected, 9);
          }
        },
      ),
      { numRuns: 300 },
    );
  });

  it('colours a column from pale to the full hue by value, with readable text', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (a, b, v) => {
          const range = { min: Math.min(a, b), max: Math.max(a, b) };
          const value = range.min + (range.max - range.min) * v;
          const colour = heatColour(value, range);
          const rgb = colour.background.match(/\d+/g)!.map(Number);
          const text = colour.text === '#000000' ? 0 : 1;
          // WCAG AA for normal text.
          expect(contrast(luminance(rgb), text)).toBeGreaterThanOrEqual(4.5);
          if (range.max > range.min) {
            const higher = heatColour(range.max, range);
            expect(luminance(higher.background.match(/\d+/g)!.map(Number))).toBeLessThanOrEqual(luminance(rgb) + 1e-12);
          }
        },
      ),
    );
  });

  it('ranges a column over the values that exist only', () => {
    const rows: PerformanceRow[] = [
      { day: '2026-03-01', installs: 10, retained_d1: 5, d0_mature: true, d1_mature: true, d7_mature: false, d30_mature: false },
      { day: '2026-03-02', installs: 4, retained_d1: 1, d0_mature: true, d1_mature: true, d7_mature: false, d30_mature: false },
    ];
    const matrix = cohortMatrix(rows, { days: ['2026-03-01', '2026-03-02'], grain: 'day', timeZone: 'UTC', nowMs: Date.UTC(2026, 2, 5) });
    expect(columnRange(matrix, 'd1')).toEqual({ min: 0.25, max: 0.5 });
    expect(columnRange(matrix, 'd7')).toBeUndefined();
  });
});
