import fc from 'fast-check';
import { sha256Hex } from '../../../functions/domain/common/hashing';
import { APP, failingAfter, LEASE_MS, T0, world } from './world';

// With the app's MAX pull on, the pull is the source of truth for applovin_max impressions
// (docs/ad-revenue.md, "Source of truth"): those the app sends itself are taken, streamed and
// counted as events, but in no ad revenue; the pulled rows and other sources' impressions count.

const HOUR = 3_600_000;
const UUID = '00000000-0000-4000-8000-000000000001';
const install = { event_id: 'i-1', event_name: 'install', install_uuid: UUID, ts_ms: T0, platform: 'ios' };

interface Impression {
  readonly n: number;
  /** A row of the daily pull (its impression_id is the pull's), else sent by the SDK or server to server. */
  readonly pulled: boolean;
  readonly source: 'applovin_max' | 'admob';
  readonly cents: number;
}

const impressionEvent = ({ n, pulled, source, cents }: Impression) => ({
  event_id: `ad-${n}`,
  event_name: 'ad_revenue',
  install_uuid: UUID,
  ts_ms: T0 + (n + 1) * 60_000,
  ad_revenue: {
    source,
    network: 'AppLovin',
    format: 'rewarded',
    revenue: cents / 100,
    currency: 'USD',
    precision: pulled ? 'estimated' : 'exact',
    impression_id: pulled ? `max.${sha256Hex(`row ${n}`).slice(0, 40)}.1` : `imp-${n}`,
  },
});

/** The oracle: the dollars (in micros) that count, whether the pull is on or off. */
const counted = (impressions: readonly Impression[], pullOn: boolean) =>
  impressions.filter((i) => !pullOn || i.pulled || i.source !== 'applovin_max').reduce((sum, i) => sum + i.cents * 10_000, 0);

const impressionArb = fc.record({
  pulled: fc.boolean(),
  source: fc.constantFrom('applovin_max' as const, 'admob' as const),
  cents: fc.integer({ min: 1, max: 500 }),
});

function pullWorld(pullOn: boolean) {
  const options = { maxPull: pullOn };
  const w = world(options);
  w.clock.now = T0 + 4 * HOUR;
  const adRevenue = () => w.table().perf_partner['2026-06-01|organic']?.ad_revenue_micros ?? 0;
  const cohortAdRevenue = () => w.table().perf_partner['2026-06-01|organic']?.cohort_ad_d0_micros ?? 0;
  const events = () => w.table().events['2026-06-01|ad_revenue'];
  return { w, options, adRevenue, cohortAdRevenue, events };
}

describe('the MAX pull as the source of truth for applovin_max impressions', () => {
  it('counts only the pulled rows and other sources with the pull on, and every impression with it off, in any delivery order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(impressionArb, { minLength: 1, maxLength: 12 }),
        fc.boolean(),
        fc.constantFrom('install first', 'impressions first'),
        async (drawn, pullOn, order) => {
          const impressions = drawn.map((impression, n) => ({ ...impression, n }));
          const { w, adRevenue, cohortAdRevenue, events } = pullWorld(pullOn);
          const sdk = w.upload(impressions.filter((i) => !i.pulled).map(impressionEvent));
          const pulled = w.upload(impressions.filter((i) => i.pulled).map(impressionEvent));
          const installed = w.upload([install]);
          // Impressions before their install are held and applied when it is counted.
          for (const body of order === 'install first' ? [installed, sdk, pulled] : [sdk, pulled, installed]) await w.deliver([body]);
          const expected = counted(impressions, pullOn);
          expect(adRevenue()).toBe(expected);
          expect(cohortAdRevenue()).toBe(expected);
          // The events report counts each impression received, with the dollars that count.
          expect(events()).toEqual({
            events: impressions.length,
            unique_installs: 1,
            ...(expected > 0 ? { revenue_micros: expected } : {}),
          });
          // Never lost: every impression is on the stream.
          expect(new Set(w.streamEvents().map((line) => line.event_id))).toEqual(new Set(['i-1', ...impressions.map((i) => `ad-${i.n}`)]));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('decides when the claim item is written: a redelivery after the pull was switched off still leaves the SDK impression out', async () => {
    let checked = 0;
    for (let limit = 1; limit < 30; limit++) {
      const { w, options, adRevenue } = pullWorld(true);
      await w.deliver([w.upload([install])]);
      const sdkImpression = impressionEvent({ n: 1, pulled: false, source: 'applovin_max', cents: 7 });
      // Another install's event after it in the object: writes after its claim item, to fail.
      const other = { ...install, event_id: 'i-2', install_uuid: '00000000-0000-4000-8000-000000000002' };
      const message = w.upload([sdkImpression, other]);
      const [first] = await w.deliver([message], failingAfter(w.ports, limit).ports);
      const claims = [...(w.installs.items.get(`${APP}#${UUID}`)?.values() ?? [])];
      if (first?.kind === 'counted' || !claims.some((item) => (item.superseded as string[] | undefined)?.includes('ad#imp-1'))) continue;
      options.maxPull = false;
      w.clock.now += 2 * LEASE_MS;
      const [again] = await w.deliver([message]);
      expect(again?.kind).toBe('counted');
      expect(adRevenue()).toBe(0);
      expect(w.table().events['2026-06-01|ad_revenue']).toEqual({ events: 1, unique_installs: 1 });
      checked++;
    }
    expect(checked).toBeGreaterThan(0);
  });
});
