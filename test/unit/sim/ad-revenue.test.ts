import fc from 'fast-check';
import { localDay } from '../../../sim/local-days';
import { type OracleEvent, oracleRows, type PerfCells } from '../../../sim/oracle';
import { type AdImpression, DAY, planTraffic } from '../../../sim/traffic';

const NOW = Date.UTC(2026, 10, 21, 15, 30);
const NY = 'America/New_York';

describe('the ad revenue the simulator plans', () => {
  const plan = planTraffic({ seed: 'ads', apps: 2, days: 45, installs: 30, nowMs: NOW, addressing: 'many' });

  it('gives every app many small impressions of three formats and sources, by the SDK and the server, some reported twice', () => {
    for (const app of plan.apps) {
      const ads = app.people.flatMap((p) => p.batches.flatMap((b) => b.events)).filter((e) => e.event_name === 'ad_revenue');
      const impressions = ads.map((e) => e.ad_revenue as AdImpression);
      expect(new Set(impressions.map((i) => i.format))).toEqual(new Set(['banner', 'interstitial', 'rewarded']));
      expect(new Set(impressions.map((i) => i.source))).toEqual(new Set(['applovin_max', 'admob', 'ironsource_levelplay']));
      expect(new Set(impressions.map((i) => i.precision))).toEqual(new Set(['exact', 'estimated']));
      expect(new Set(impressions.map((i) => i.currency))).toEqual(new Set(['USD', 'EUR']));
      for (const i of impressions) {
        expect(i.revenue).toBeGreaterThanOrEqual(0.0004);
        expect(i.revenue).toBeLessThanOrEqual(0.05);
        expect(Math.round(i.revenue * 1e6) / 1e6).toBe(i.revenue);
      }
      expect(ads.some((e) => e.via === 's2s')).toBe(true);
      expect(ads.some((e) => e.via === undefined)).toBe(true);
      // A duplicate is the same impression at the same moment under another event id.
      const byId = new Map<string, typeof ads>();
      for (const e of ads) byId.set(e.ad_revenue?.impression_id ?? '', [...(byId.get(e.ad_revenue?.impression_id ?? '') ?? []), e]);
      const twice = [...byId.values()].filter((copies) => copies.length > 1);
      expect(twice.some((copies) => copies.every((e) => e.via === undefined))).toBe(true);
      expect(twice.some((copies) => copies.some((e) => e.via === 's2s') && copies.some((e) => e.via === undefined))).toBe(true);
      for (const [first, second] of twice) {
        expect(second?.ad_revenue).toEqual(first?.ad_revenue);
        expect(second?.time).toEqual(first?.time);
        expect(second?.event_id).not.toBe(first?.event_id);
      }
      // Many per day for the people who see ads.
      expect(ads.length).toBeGreaterThan(100);
    }
  });

  it('leaves every batch with an event for the SDK or the server, and every malformed event out of the server route', () => {
    for (const batch of plan.apps.flatMap((a) => a.people.flatMap((p) => p.batches))) {
      expect(batch.events.length).toBeGreaterThan(0);
      for (const e of batch.events) if (e.malformed) expect(e.via).toBeUndefined();
    }
  });
});

describe("the oracle's ad revenue", () => {
  const install = (n: number, tsMs: number): OracleEvent => ({
    installUuid: `u${n}`,
    eventId: `i${n}`,
    name: 'install',
    tsMs,
    platform: 'ios',
  });
  const impressionArb = fc.record({
    install: fc.integer({ min: 0, max: 3 }),
    impression: fc.integer({ min: 0, max: 12 }),
    offsetMs: fc.integer({ min: -DAY, max: 40 * DAY }),
    micros: fc.integer({ min: 1, max: 50_000 }),
    copy: fc.nat(3),
  });

  it('counts each impression of an install once, on its day and in the cohort windows of its install, never as purchases', () => {
    fc.assert(
      fc.property(fc.array(impressionArb, { maxLength: 40 }), fc.boolean(), (drawn, purchase) => {
        const T = Date.UTC(2026, 9, 1, 12);
        const installs = [0, 1, 2, 3].map((n) => install(n, T + n * 3_600_000));
        // The same impression always carries the same time and amount (a mediation SDK's report of it).
        const fact = new Map(drawn.map((d) => [`${d.install}|${d.impression}`, d]));
        const events: OracleEvent[] = [...installs];
        drawn.forEach((d, i) => {
          const same = fact.get(`${d.install}|${d.impression}`) ?? d;
          events.push({
            installUuid: `u${d.install}`,
            eventId: `e${i}`,
            name: 'ad_revenue',
            tsMs: installs[d.install]!.tsMs + Math.max(0, same.offsetMs),
            revenueUsd: same.micros / 1e6,
            impressionId: `imp-${d.impression}`,
          });
        });
        if (purchase) events.push({ installUuid: 'u0', eventId: 'p', name: 'purchase', tsMs: T + 60_000, revenueUsd: 2 });
        const cells: PerfCells = new Map();
        const rows = oracleRows(events, () => ({ partner: 'organic', type: 'organic', fraud: false }), {
          timeZone: NY,
          performance: cells,
        });

        // The independent count: the distinct (install, impression) pairs, summed by day and by window.
        const expected = { day: new Map<string, number>(), d0: 0, d7: 0, d30: 0, events: new Map<string, number>() };
        for (const [key, d] of fact) {
          const start = installs[Number(key.split('|')[0])]!.tsMs;
          const ts = start + Math.max(0, d.offsetMs);
          const day = localDay(ts, NY);
          expected.day.set(day, (expected.day.get(day) ?? 0) + d.micros);
          expected.events.set(day, (expected.events.get(day) ?? 0) + 1);
          if (ts < start + DAY) expected.d0 += d.micros;
          if (ts < start + 7 * DAY) expected.d7 += d.micros;
          if (ts < start + 30 * DAY) expected.d30 += d.micros;
        }
        const byDay = new Map<string, number>();
        let [d0, d7, d30] = [0, 0, 0];
        for (const [key, cell] of cells) {
          const day = key.split('|')[0] ?? '';
          if (cell.ad_revenue_micros) byDay.set(day, (byDay.get(day) ?? 0) + cell.ad_revenue_micros);
          d0 += cell.cohort_ad_d0_micros ?? 0;
          d7 += cell.cohort_ad_d7_micros ?? 0;
          d30 += cell.cohort_ad_d30_micros ?? 0;
        }
        expect(byDay).toEqual(expected.day);
        expect({ d0, d7, d30 }).toEqual({ d0: expected.d0, d7: expected.d7, d30: expected.d30 });
        const purchases = [...cells.values()].reduce((n, c) => n + (c.revenue_micros ?? 0), 0);
        expect(purchases).toBe(purchase ? 2_000_000 : 0);
        // The revenue family is purchases alone; the events family counts each impression once, with its dollars.
        expect(Object.values(rows.revenue).reduce((n, r) => n + (r.revenue_micros ?? 0), 0)).toBe(purchase ? 2_000_000 : 0);
        const adRows = Object.entries(rows.events).filter(([key]) => key.endsWith('|ad_revenue'));
        expect(new Map(adRows.map(([key, r]) => [key.split('|')[0], r.events]))).toEqual(expected.events);
        expect(adRows.reduce((n, [, r]) => n + (r.revenue_micros ?? 0), 0)).toBe([...expected.day.values()].reduce((a, b) => a + b, 0));
      }),
      { numRuns: 150 },
    );
  });
});
