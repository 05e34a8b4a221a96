import fc from 'fast-check';
import { NONE, PERF_COUNTERS } from '../../../functions/domain/analytics/performance';
import { APP, click, T0, world } from './world';

/**
 * The perf rows the aggregator writes (docs/analytics.md, "Dimensions of an install" and "Rows"),
 * held to an oracle that knows nothing of claims, heads or lanes: it walks the deliveries in order
 * with the rules as the doc states them, and takes local days from Intl on its own.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const localDay = (ms: number, zone: string) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms);

type Counters = Record<string, number>;
type Rows = Record<string, Counters>;

interface ClickSpec {
  readonly partner: string;
  readonly campaign?: string;
  readonly country?: string;
  /** How long before the install the click was made: seconds (under 10: fraud) up to past the 7-day lookback. */
  readonly agoSeconds: number;
}

type Step =
  | {
      readonly kind: 'install';
      readonly install: number;
      readonly atHours: number;
      readonly platform: 'ios' | 'android';
      readonly click?: ClickSpec;
      /** The batch request's viewer country. */
      readonly country?: string;
      readonly revenue?: number;
    }
  | { readonly kind: 'events'; readonly install: number; readonly events: readonly StepEvent[] };

/** A purchase (revenue) or a session, or an ad impression (`impression`: its id, from a small pool so that duplicates come often). */
interface StepEvent {
  readonly atHours: number;
  readonly revenue?: number;
  readonly impression?: { readonly id: string; readonly usd: number };
}

const clickArb: fc.Arbitrary<ClickSpec> = fc.record(
  {
    partner: fc.constantFrom('meta', 'google'),
    campaign: fc.constantFrom('spring', 'summer'),
    country: fc.constantFrom('US', 'DE', 'JP'),
    agoSeconds: fc.oneof(fc.integer({ min: 1, max: 9 }), fc.integer({ min: 10, max: 6 * 86_400 }), fc.constant(8 * 86_400)),
  },
  { requiredKeys: ['partner', 'agoSeconds'] },
);
const revenueArb = fc.option(
  fc.integer({ min: 1, max: 2_000_000 }).map((cents) => cents / 100),
  { nil: undefined, freq: 2 },
);
const stepArb: fc.Arbitrary<Step> = fc.oneof(
  fc.record(
    {
      kind: fc.constant('install' as const),
      install: fc.integer({ min: 1, max: 4 }),
      atHours: fc.integer({ min: 0, max: 72 }),
      platform: fc.constantFrom('ios' as const, 'android' as const),
      click: clickArb,
      country: fc.constantFrom('FR', 'BR'),
      revenue: revenueArb,
    },
    { requiredKeys: ['kind', 'install', 'atHours', 'platform'] },
  ),
  fc.record({
    kind: fc.constant('events' as const),
    install: fc.integer({ min: 1, max: 4 }),
    events: fc.array(
      fc.oneof(
        fc.record({ atHours: fc.integer({ min: -30, max: 24 * 33 }), revenue: revenueArb }),
        // Many small impressions, each id from a pool of 5: the same impression sent again, with another amount even, counts once.
        fc.record({
          atHours: fc.integer({ min: -30, max: 24 * 33 }),
          impression: fc.record({
            id: fc.constantFrom('imp-a', 'imp-b', 'imp-c', 'imp-d', 'imp-e'),
            usd: fc.integer({ min: 0, max: 200_000 }).map((n) => n / 10_000_000),
          }),
        }),
      ),
      { minLength: 1, maxLength: 4 },
    ),
  }),
);

interface Member {
  readonly id: string;
  readonly ts: number;
  readonly day: string;
  readonly dims: readonly string[];
}

/** The perf rows of the steps delivered in order, by the doc's rules. */
function oracle(steps: readonly Step[], zone: string): Rows {
  const rows: Rows = {};
  const add = (day: string, dims: readonly string[], counters: Counters) => {
    const key = [day, ...dims].join('|');
    const row = rows[key] ?? {};
    for (const [name, value] of Object.entries(counters)) if (value !== 0) row[name] = (row[name] ?? 0) + value;
    if (Object.keys(row).length > 0) rows[key] = row;
  };
  const retained = new Map<string, { member: Member; days: Set<number> }>();
  const apply = (tsMs: number, revenue: number | undefined, member: Member, ad = false) => {
    if (revenue) {
      const micros = Math.round(revenue * 1_000_000);
      // No deep_link_open here: revenue by most recent attribution is the install's own (reengagement.test.ts has the opens).
      add(
        localDay(tsMs, zone),
        member.dims,
        ad ? { ad_revenue_micros: micros } : { revenue_micros: micros, recent_revenue_micros: micros },
      );
      for (const [days, counter, adCounter] of [
        [1, 'cohort_d0_micros', 'cohort_ad_d0_micros'],
        [7, 'cohort_d7_micros', 'cohort_ad_d7_micros'],
        [30, 'cohort_d30_micros', 'cohort_ad_d30_micros'],
      ] as const) {
        if (tsMs < member.ts + days * DAY) add(member.day, member.dims, { [ad ? adCounter : counter]: micros });
      }
    }
    for (const n of [1, 7, 30]) {
      const offset = tsMs - member.ts;
      if (offset >= n * DAY && offset < (n + 1) * DAY) {
        const entry = retained.get(member.id) ?? { member, days: new Set<number>() };
        entry.days.add(n);
        retained.set(member.id, entry);
      }
    }
  };
  const installs = new Map<number, { head?: Member; first?: Member; held: { ts: number; revenue?: number; ad: boolean }[] }>();
  /** An install's impressions counted: the first event of an impression_id counts, any later one of the install is nothing. */
  const impressions = new Set<string>();
  steps.forEach((step, s) => {
    const state = installs.get(step.install) ?? { held: [] };
    installs.set(step.install, state);
    if (step.kind === 'events') {
      for (const e of step.events) {
        const ts = T0 + e.atHours * HOUR;
        if (e.impression) {
          const key = `${step.install}|${e.impression.id}`;
          if (impressions.has(key)) continue;
          impressions.add(key);
        }
        const revenue = e.impression ? e.impression.usd : e.revenue;
        if (state.head) apply(ts, revenue, state.head, e.impression !== undefined);
        else state.held.push({ ts, revenue, ad: e.impression !== undefined });
      }
      return;
    }
    const ts = T0 + step.atHours * HOUR;
    const matched = step.click && step.click.agoSeconds <= 7 * 86_400 ? step.click : undefined;
    const dims = [matched?.partner ?? 'organic', matched?.campaign ?? NONE, matched?.country ?? step.country ?? NONE, step.platform];
    const member: Member = { id: `i-${s}`, ts, day: localDay(ts, zone), dims };
    add(member.day, dims, {
      installs: 1,
      organic: matched ? 0 : 1,
      reinstalls: state.first ? 1 : 0,
      fraud_flagged: matched && matched.agoSeconds < 10 ? 1 : 0,
    });
    apply(ts, step.revenue, member);
    if (!state.first) {
      state.first = member;
      for (const e of state.held) apply(e.ts, e.revenue, member, e.ad);
      state.held = [];
    }
    // The current install is the latest in time (a tie: the one counted last), issue 35.
    if (!state.head || member.ts >= state.head.ts) state.head = member;
  });
  for (const { member, days } of retained.values()) for (const n of days) add(member.day, member.dims, { [`retained_d${n}`]: 1 });
  return rows;
}

/** The rows of one family, "day|group..." to non-zero counters. */
function family(w: ReturnType<typeof world>, name: 'perf' | 'perf_partner' | 'perf_stamp'): Rows {
  const out: Rows = {};
  for (const row of w.rows.rowsOf(APP, name)) {
    const counters = Object.fromEntries(Object.entries(row.counters).filter(([, v]) => v !== 0));
    if (Object.keys(counters).length > 0) out[[row.key.day, ...row.key.group].join('|')] = counters;
  }
  return out;
}

/** perf summed over campaign, country and platform: what perf_partner must hold. */
function byPartner(perf: Rows): Rows {
  const out: Rows = {};
  for (const [key, counters] of Object.entries(perf)) {
    const [day, partner] = key.split('|');
    const sum = out[`${day}|${partner}`] ?? {};
    for (const [name, value] of Object.entries(counters)) sum[name] = (sum[name] ?? 0) + value;
    out[`${day}|${partner}`] = sum;
  }
  return out;
}

const impression = (id: string, usd: number) => ({
  source: 'applovin_max',
  network: 'AppLovin',
  format: 'banner',
  revenue: usd,
  currency: 'USD',
  precision: 'exact',
  impression_id: id,
});

function upload(w: ReturnType<typeof world>, step: Step, s: number): string {
  if (step.kind === 'events') {
    return w.upload(
      step.events.map((e, j) => ({
        event_id: `e-${s}-${j}`,
        event_name: e.impression ? 'ad_revenue' : e.revenue ? 'purchase' : 'session',
        install_uuid: uuid(step.install),
        ts_ms: T0 + e.atHours * HOUR,
        ...(e.revenue ? { revenue_usd: e.revenue } : {}),
        ...(e.impression ? { ad_revenue: impression(e.impression.id, e.impression.usd) } : {}),
      })),
    );
  }
  const ts = T0 + step.atHours * HOUR;
  if (step.click) {
    w.clicks.set(
      `c-${s}`,
      click({
        click_id: `c-${s}`,
        ts_ms: ts - step.click.agoSeconds * 1000,
        partner: step.click.partner,
        ...(step.click.campaign ? { campaign: step.click.campaign } : {}),
        ...(step.click.country ? { country: step.click.country } : {}),
      }),
    );
  }
  return w.upload(
    [
      {
        event_id: `i-${s}`,
        event_name: 'install',
        install_uuid: uuid(step.install),
        ts_ms: ts,
        platform: step.platform,
        ...(step.click ? { attribution: { click_id: `c-${s}` } } : {}),
        ...(step.revenue ? { revenue_usd: step.revenue } : {}),
      },
    ],
    step.country ? { country: step.country } : {},
  );
}

describe('performance rows', () => {
  it('equal the oracle on random installs, clicks, reinstalls, revenue and ad impressions (duplicates too) before and after installs and retention; perf_partner is perf summed', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(stepArb, { minLength: 1, maxLength: 14 }),
        fc.constantFrom('UTC', 'America/New_York', 'Asia/Tokyo'),
        fc.integer({ min: 1, max: 3 }),
        async (steps, zone, per) => {
          const w = world({ timeZone: zone });
          w.clock.now = T0 + 34 * DAY;
          const bodies = steps.map((step, s) => upload(w, step, s));
          // In order, `per` objects a delivery, each delivered twice (the second finds them counted).
          for (let i = 0; i < bodies.length; i += per) {
            const slice = bodies.slice(i, i + per);
            expect((await w.deliver(slice)).every((o) => o.kind === 'counted')).toBe(true);
            await w.deliver(slice);
          }
          const perf = family(w, 'perf');
          expect(perf).toEqual(oracle(steps, zone));
          expect(family(w, 'perf_partner')).toEqual(byPartner(perf));
          // Every counter is one of the report's; every day with perf rows has its stamp moved, and only those.
          for (const counters of Object.values(perf)) for (const name of Object.keys(counters)) expect(PERF_COUNTERS).toContain(name);
          const stamps = family(w, 'perf_stamp');
          expect(Object.keys(stamps).sort()).toEqual([...new Set(Object.keys(perf).map((key) => key.split('|')[0]))].sort());
        },
      ),
      { numRuns: 150 },
    );
  });
});
