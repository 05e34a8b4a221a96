import fc from 'fast-check';
import { BLANK, change } from '../../../console/ui/format';
import {
  type ApiRow,
  FIGURE_KEYS,
  FINAL_AFTER_DAYS,
  type FigureKey,
  finalDays,
  finalOn,
  installsByDay,
  lastFinalWeek,
  latestFinalPeriod,
  latestFinalWindow,
  overviewFigures,
  topRows,
} from '../../../console/ui/overview-figures';
import { addDays, periodOf } from '../../../console/ui/period';
import { MATURE_AFTER_DAYS, maturityOf } from '../../../functions/domain/analytics/performance-report';
import { localDayOf, localDayStartMs, nextDay } from '../../../functions/domain/common/days';

// Values as the API renders them: dollars to 6 decimals, from integer micro-dollars.
const dollars = fc.integer({ min: 0, max: 5_000_000_000 }).map((micros) => micros / 1_000_000);
const maybeZero = (arb: fc.Arbitrary<number>) => fc.oneof(fc.constant(0), arb);

const performanceRow = fc
  .record({
    partner: fc.constantFrom('organic', 'meta', 'google', 'tiktok', 'unity'),
    campaign: fc.constantFrom('(none)', 'spring', 'autumn', 'brand'),
    installs: fc.integer({ min: 0, max: 2000 }),
    organicShare: fc.double({ min: 0, max: 1, noNaN: true }),
    cost_usd: maybeZero(dollars),
    revenue_usd: maybeZero(dollars),
    cohort_revenue_d7_usd: maybeZero(dollars),
    ad_revenue_usd: maybeZero(dollars),
    cohort_ad_revenue_d7_usd: maybeZero(dollars),
    d1Share: fc.double({ min: 0, max: 1, noNaN: true }),
    d7Share: fc.double({ min: 0, max: 1, noNaN: true }),
    d1_mature: fc.boolean(),
    d7_mature: fc.boolean(),
  })
  .map(({ organicShare, d1Share, d7Share, ...row }) => ({
    ...row,
    organic: Math.floor(row.installs * organicShare),
    retained_d1: Math.floor(row.installs * d1Share),
    retained_d7: Math.floor(row.installs * d7Share),
  }));

/** A revenue row as the API renders it from its revenue and distinct payers (each paid at least $0.001). */
const revenueRow = fc
  .record({ payers: fc.integer({ min: 0, max: 50 }), perPayerMicros: fc.integer({ min: 1000, max: 500_000_000 }), extra: fc.nat(999) })
  .map(({ payers, perPayerMicros, extra }) => {
    const micros = payers === 0 ? 0 : payers * perPayerMicros + extra;
    return { payers, row: { revenue_usd: micros / 1_000_000, arppu_usd: payers === 0 ? 0 : Math.round(micros / payers) / 1_000_000 } };
  });

const dayRow = performanceRow.chain((row) => fc.integer({ min: 1, max: 7 }).map((day) => ({ ...row, day: `2026-11-0${day}` })));
const periodData = fc.record({
  performance: fc.array(performanceRow, { maxLength: 12 }),
  byDay: fc.array(dayRow, { maxLength: 20 }),
  revenue: fc.array(revenueRow, { maxLength: 12 }),
});

/** The oracle: each figure written out from its definition (docs/console-analytics.md, "Overview"), plain floating point. */
type Row = typeof performanceRow extends fc.Arbitrary<infer R> ? R : never;
function expected(data: { performance: Row[]; byDay: Row[]; revenue: { payers: number; row: ApiRow }[] }) {
  const sumOf = (rows: Row[], column: string) => rows.reduce((total, row) => total + Number((row as unknown as ApiRow)[column]), 0);
  const sum = (column: string) => sumOf(data.performance, column);
  const [installs, organic, cost] = [sum('installs'), sum('organic'), sum('cost_usd')];
  // Cohort figures: over the rows by day whose cohort is final, paid ROAS without the organic rows.
  const d1Rows = data.byDay.filter((row) => row.d1_mature);
  const d7Rows = data.byDay.filter((row) => row.d7_mature);
  const paidD7Rows = d7Rows.filter((row) => row.partner !== 'organic');
  const ratio = (rows: Row[], over: string, under: string, anyFinal: boolean) =>
    !anyFinal || sumOf(rows, under) === 0 ? undefined : sumOf(rows, over) / sumOf(rows, under);
  const totalD7 = sumOf(paidD7Rows, 'cohort_revenue_d7_usd') + sumOf(paidD7Rows, 'cohort_ad_revenue_d7_usd');
  const paidCost = sumOf(paidD7Rows, 'cost_usd');
  const revenue = data.revenue.reduce((total, r) => total + Number(r.row.revenue_usd), 0);
  const payers = data.revenue.reduce((total, r) => total + r.payers, 0);
  const values: Record<FigureKey, number | undefined> = {
    installs,
    non_organic_share: installs === 0 ? undefined : 1 - organic / installs,
    cost,
    ecpi: installs - organic === 0 ? undefined : cost / (installs - organic),
    revenue: sum('revenue_usd'),
    ad_revenue: sum('ad_revenue_usd'),
    arppu: payers === 0 ? undefined : revenue / payers,
    roas_d7: ratio(paidD7Rows, 'cohort_revenue_d7_usd', 'cost_usd', d7Rows.length > 0),
    total_roas_d7: d7Rows.length === 0 || paidCost === 0 ? undefined : totalD7 / paidCost,
    roas_d7_blended: ratio(d7Rows, 'cohort_revenue_d7_usd', 'cost_usd', d7Rows.length > 0),
    retention_d1: ratio(d1Rows, 'retained_d1', 'installs', d1Rows.length > 0),
    retention_d7: ratio(d7Rows, 'retained_d7', 'installs', d7Rows.length > 0),
  };
  return { values };
}

const close = (actual: number | undefined, wanted: number | undefined): boolean =>
  actual === undefined || wanted === undefined ? actual === wanted : Math.abs(actual - wanted) <= 1e-9 * Math.max(1, Math.abs(wanted));

const NOW = Date.parse('2026-11-25T09:00:00Z');
const ZONES = ['UTC', 'America/New_York', 'Europe/Berlin', 'Asia/Kolkata', 'Pacific/Auckland'] as const;

describe('overview figures', () => {
  it('equal their definitions: ratios of the summed counters, cohort figures over the final days, blank over 0', () => {
    fc.assert(
      fc.property(periodData, periodData, (current, previous) => {
        const period = periodOf('custom', '2026-11-01', '2026-11-07', 'UTC');
        const asRows = (data: typeof current) => ({
          performance: data.performance as ApiRow[],
          byDay: data.byDay as ApiRow[],
          revenue: data.revenue.map((r) => r.row),
        });
        const figures = overviewFigures(asRows(current), asRows(previous), period, NOW);
        const now = expected(current);
        const before = expected(previous);
        expect(figures.map((f) => f.key)).toEqual([...FIGURE_KEYS]);
        for (const figure of figures) {
          const wanted = now.values[figure.key];
          if (!close(figure.value, wanted)) throw new Error(`${figure.key}: ${figure.value} != ${wanted}`);
          expect(figure.value === undefined).toBe(figure.text === BLANK);
          // The change compares with the previous period's own figure (blank when either is).
          const changed = change(wanted, before.values[figure.key]);
          if (wanted !== undefined && before.values[figure.key] !== undefined) expect(figure.change.direction).toBe(changed.direction);
          else expect(figure.change.text).toBe(BLANK);
          // Every day of this period is final on NOW: no figure waits, none is partial.
          expect([figure.latestFinal, figure.finalDays]).toEqual([undefined, undefined]);
        }
      }),
    );
  });

  it('say over how many of the period’s days a cohort figure is computed, and when a blank one gets its first', () => {
    const day = (n: number) => addDays('2026-11-25', n);
    // Last 7 days ending yesterday, on 2026-11-25: D1 final for days up to the 22nd, D7 for none.
    const lastWeek = periodOf('custom', day(-7), day(-1), 'UTC');
    expect(finalDays(lastWeek, 'd1', NOW)).toEqual({ final: 5, of: 7, firstFinalOn: day(-4) });
    expect(finalDays(lastWeek, 'd7', NOW)).toEqual({ final: 0, of: 7, firstFinalOn: day(2) });
    const rows = (final: boolean) =>
      [-7, -6, -5].map((n) => ({
        day: day(n),
        partner: 'meta',
        installs: 10,
        organic: 0,
        retained_d1: 5,
        retained_d7: 2,
        cost_usd: 10,
        cohort_revenue_d7_usd: 20,
        d1_mature: true,
        d7_mature: final,
      }));
    const data = { performance: [], byDay: rows(false), revenue: [] };
    const figures = Object.fromEntries(overviewFigures(data, data, lastWeek, NOW).map((figure) => [figure.key, figure]));
    expect(figures.retention_d1).toMatchObject({ value: 0.5, finalDays: { final: 5, of: 7, allFinalOn: day(2) } });
    // No day of it has D7 final: D7 stands on the latest final week (the 10th to the 16th), named,
    // against the week before it; a row of the period itself is not read for it.
    const latestFinal = { since: '2026-11-10', until: '2026-11-16', firstFinalOn: day(2) };
    expect(figures.retention_d7).toMatchObject({ value: undefined, text: BLANK, latestFinal });
    const latestRow = (d: string, retained: number, cohortRevenue: number) => ({
      ...rows(true)[0],
      day: d,
      retained_d7: retained,
      cohort_revenue_d7_usd: cohortRevenue,
      cohort_ad_revenue_d7_usd: 5,
    });
    const latestRows = [latestRow('2026-11-12', 4, 30), latestRow('2026-11-05', 2, 10), ...rows(true)];
    const withLatest = Object.fromEntries(overviewFigures(data, data, lastWeek, NOW, latestRows).map((figure) => [figure.key, figure]));
    expect(withLatest.retention_d7).toMatchObject({ value: 0.4, latestFinal, change: { direction: 'up' } });
    expect(withLatest.roas_d7).toMatchObject({ value: 3, latestFinal });
    expect(withLatest.total_roas_d7).toMatchObject({ value: 3.5, latestFinal });
    expect(withLatest.retention_d1).toMatchObject({ value: 0.5, finalDays: { final: 5, of: 7 } });
    expect(latestFinalWindow(lastWeek, NOW)).toMatchObject({ since: '2026-11-03', until: '2026-11-16' });
    expect(latestFinalWindow(periodOf('custom', day(-20), day(-1), 'UTC'), NOW)).toBeUndefined();
  });

  it('puts the latest final days and the last final week on days whose cohort the report flags final, the day after on none', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.integer({ min: 1, max: 31 }),
        fc.constantFrom<'d1' | 'd7'>('d1', 'd7'),
        fc.integer({ min: 0, max: 30 * 86_400_000 }),
        (zone, length, cohort, later) => {
          const now = NOW + later;
          const today = localDayOf(now, zone);
          const latest = latestFinalPeriod(periodOf('custom', addDays(today, -length), today, zone), cohort, now);
          const flag = (day: string) => maturityOf(day, zone, now)[`${cohort}_mature`];
          expect(latest.days.length).toBe(Math.max(length + 1, 7));
          expect([flag(latest.until), flag(nextDay(latest.until))]).toEqual([true, false]);
          const week = lastFinalWeek(zone, now);
          expect(new Date(`${week.since}T00:00:00Z`).getUTCDay()).toBe(1);
          expect(week.days.length).toBe(7);
          expect(maturityOf(week.until, zone, now).d7_mature).toBe(true);
          expect(maturityOf(addDays(week.until, 7), zone, now).d7_mature).toBe(false);
        },
      ),
    );
  });

  it('keeps the performance report’s maturity delays', () => {
    expect(FINAL_AFTER_DAYS).toEqual({ d1: MATURE_AFTER_DAYS.d1_mature, d7: MATURE_AFTER_DAYS.d7_mature });
  });

  it('names the local day on which the report first flags the period’s cohort final', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...ZONES),
        fc.integer({ min: -400, max: 5 }),
        fc.integer({ min: 0, max: 40 }),
        fc.constantFrom<'d1' | 'd7'>('d1', 'd7'),
        (zone, endOffset, length, cohort) => {
          const today = localDayOf(NOW, zone);
          const until = addDays(today, endOffset);
          const period = periodOf('custom', addDays(until, -length), until, zone);
          const day = finalOn(period, cohort, NOW);
          // The API's own flag, of the period's last install day (today at the latest): false before the day, true after it.
          const lastDay = [until, today].sort()[0] as string;
          const flag = (ms: number) => maturityOf(lastDay, zone, ms)[`${cohort}_mature`];
          expect(flag(localDayStartMs(day, zone) - 1)).toBe(false);
          expect(flag(localDayStartMs(nextDay(day), zone))).toBe(true);
        },
      ),
    );
  });
});

describe('installs per day by partner', () => {
  const dayRow = fc.record({
    day: fc.integer({ min: -3, max: 12 }).map((n) => addDays('2026-10-28', n)),
    partner: fc.constantFrom('organic', 'meta', 'google', 'tiktok'),
    installs: fc.nat(500),
  });

  it('covers every day of the period, 0 where the report has no row, and sums only the period’s days', () => {
    fc.assert(
      fc.property(fc.array(dayRow, { maxLength: 40 }), (rows) => {
        const days = periodOf('custom', '2026-10-28', '2026-11-06', 'UTC').days;
        const chart = installsByDay(rows, days);
        expect(chart.days).toEqual(days);
        const inside = rows.filter((row) => days.includes(row.day));
        expect([...chart.partners].sort()).toEqual([...new Set(inside.map((row) => row.partner))].sort());
        for (const partner of ['organic', 'meta', 'google', 'tiktok']) {
          let partnerTotal = 0;
          for (const day of days) {
            const wanted = inside.filter((row) => row.day === day && row.partner === partner).reduce((sum, row) => sum + row.installs, 0);
            expect(chart.installs(partner, day)).toBe(wanted);
            partnerTotal += wanted;
          }
          expect(chart.totalOf(partner)).toBe(partnerTotal);
        }
        for (const day of days)
          expect(chart.dayTotal(day)).toBe(inside.filter((row) => row.day === day).reduce((s, r) => s + r.installs, 0));
        expect(chart.total).toBe(inside.reduce((sum, row) => sum + row.installs, 0));
        // Stacked largest first.
        const totals = chart.partners.map((p) => chart.totalOf(p));
        expect(totals).toEqual([...totals].sort((a, b) => b - a));
      }),
    );
  });
});

describe('top rows', () => {
  const groupedRow = fc.record({
    partner: fc.constantFrom('organic', 'meta', 'google', 'tiktok', 'unity', 'applovin', 'snap'),
    installs: fc.nat(300),
    cost_usd: maybeZero(dollars),
    cohort_revenue_d7_usd: maybeZero(dollars),
    d7_mature: fc.boolean(),
  });
  // One row per partner, as the API groups them.
  const partnerRows = fc.uniqueArray(groupedRow, { selector: (row) => row.partner, maxLength: 7 });

  /** The oracle: repeatedly the best remaining row, by an explicit comparison. */
  function best(rows: { partner: string; installs: number; roas?: number }[], ranking: 'installs' | 'roas_d7', limit: number): string[] {
    const left = [...rows];
    const out: string[] = [];
    const better = (a: (typeof rows)[number], b: (typeof rows)[number]) => {
      if (ranking === 'roas_d7' && a.roas !== b.roas) return (a.roas ?? 0) > (b.roas ?? 0);
      if (a.installs !== b.installs) return a.installs > b.installs;
      return a.partner < b.partner;
    };
    while (out.length < limit && left.length > 0) {
      let top = 0;
      for (let i = 1; i < left.length; i++) if (better(left[i] as (typeof rows)[number], left[top] as (typeof rows)[number])) top = i;
      out.push((left.splice(top, 1)[0] as (typeof rows)[number]).partner);
    }
    return out;
  }

  it('ranks by installs and by ROAS D7 (only final, with cost), leaving organic out', () => {
    fc.assert(
      fc.property(partnerRows, fc.integer({ min: 1, max: 6 }), (rows, limit) => {
        const candidates = rows
          .filter((row) => row.partner !== 'organic')
          .map((row) => ({
            partner: row.partner,
            installs: row.installs,
            roas: row.d7_mature && row.cost_usd > 0 ? row.cohort_revenue_d7_usd / row.cost_usd : undefined,
          }));
        const byInstalls = topRows(rows, ['partner'], 'installs', limit);
        expect(byInstalls.map((row) => row.group.partner)).toEqual(best(candidates, 'installs', limit));
        const byRoas = topRows(rows, ['partner'], 'roas_d7', limit);
        expect(byRoas.map((row) => row.group.partner)).toEqual(
          best(
            candidates.filter((row) => row.roas !== undefined),
            'roas_d7',
            limit,
          ),
        );
        for (const row of byRoas) {
          const wanted = candidates.find((c) => c.partner === row.group.partner)?.roas;
          expect(close(row.roasD7, wanted)).toBe(true);
        }
      }),
    );
  });
});
