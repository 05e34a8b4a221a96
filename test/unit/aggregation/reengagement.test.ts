import fc from 'fast-check';
import { MemoryLedger, MemoryRowStore } from '../../../functions/adapters/memory/aggregate-store';
import { MemoryInstallStore } from '../../../functions/adapters/memory/install-store';
import { isRetried } from '../../../functions/domain/aggregation/aggregate';
import { rebuildRows } from '../../../functions/domain/aggregation/rebuild';
import { creditedOpen, type OpenRef, resolveOpen } from '../../../functions/domain/aggregation/reengagement';
import type { PostbackIntent } from '../../../functions/domain/partner-postbacks/trigger';
import { type OracleReengagementEvent, reengagementOracle } from '../../../sim/oracle';
import { APP, click, failingAfter, LEASE_MS, T0, world } from './world';

/**
 * Re-engagement (issue 37, item 6; docs/deep-links.md, "Re-engagement"): a deep_link_open by an
 * installed app counts one re-engagement per install, link and day, and moves the install's
 * revenue in the performance report's recent_revenue_micros to the link's partner for the window,
 * while the four interface reports and every other figure stay with the install's attribution.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const UUID = '00000000-0000-4000-8000-000000000001';
const OTHER_APP = 'app_ffffffffffffffffffff';

type World = ReturnType<typeof world>;

const install = (id = 'i-1', tsMs = T0) => ({ event_id: id, event_name: 'install', install_uuid: UUID, ts_ms: tsMs, platform: 'ios' });
const open = (id: string, tsMs: number, properties: Record<string, string>) => ({
  event_id: id,
  event_name: 'deep_link_open',
  install_uuid: UUID,
  ts_ms: tsMs,
  properties,
});
const purchase = (id: string, tsMs: number, revenueUsd: number) => ({
  event_id: id,
  event_name: 'purchase',
  install_uuid: UUID,
  ts_ms: tsMs,
  revenue_usd: revenueUsd,
});

/** An install of meta's `spring` campaign (click c-meta), links of google and tiktok, and one of another app. */
function setUp(options: { reengagementWindowDays?: number; clickOfInstall?: boolean } = {}): World {
  const w = world(options);
  if (options.clickOfInstall !== false) {
    w.clicks.set('c-meta', click({ click_id: 'c-meta', ts_ms: T0 - HOUR, partner: 'meta', campaign: 'spring' }));
  }
  w.links.set('l-google', { app_id: APP, partner: 'google', campaign: 'winback' });
  w.links.set('l-tiktok', { app_id: APP, partner: 'tiktok' });
  w.links.set('l-other', { app_id: OTHER_APP, partner: 'snap' });
  w.clicks.set('c-google', click({ click_id: 'c-google', link_id: 'l-google', ts_ms: T0 + DAY, partner: 'google' }));
  return w;
}

/** An object of these events, received just after the latest of them (so none is too old or in the future). */
const upload = (w: World, events: readonly { ts_ms: number }[]) =>
  w.upload(events, { receivedMs: Math.max(...events.map((e) => e.ts_ms)) + HOUR });

const withClick = (event: ReturnType<typeof install>) => ({ ...event, attribution: { click_id: 'c-meta' } });

/** The perf rows' re-engagement counters by "day|partner|campaign", zeros left out. */
function reengagementCells(w: World): Record<string, Record<string, number>> {
  const cells: Record<string, Record<string, number>> = {};
  for (const [key, counters] of Object.entries(w.table().perf)) {
    const [day, partner, campaign] = key.split('|');
    for (const name of ['reengagements', 'recent_revenue_micros'] as const) {
      const value = counters[name];
      if (!value) continue;
      const key = [day, partner, campaign].join('|');
      const cell = cells[key] ?? {};
      cell[name] = (cell[name] ?? 0) + value;
      cells[key] = cell;
    }
  }
  return cells;
}

const interfaceRows = (w: World) => {
  const { attribution, revenue, cohorts, events } = w.table();
  return { attribution, revenue, cohorts, events };
};

describe('resolveOpen', () => {
  const lookups = (w: World) => ({
    link: async (id: string) => w.links.get(id),
    click: async (_appId: string, id: string) => w.clicks.get(id),
  });

  it('counts an open by a link of the app, keeping a click of that link', async () => {
    const w = setUp();
    await expect(resolveOpen(lookups(w), APP, { linkId: 'l-google', clickId: 'c-google' })).resolves.toEqual({
      linkId: 'l-google',
      partner: 'google',
      campaign: 'winback',
      clickId: 'c-google',
    });
  });

  it('drops a click that is unknown or of another link, and lets the link decide', async () => {
    const w = setUp();
    for (const clickId of ['c-gone', 'c-meta']) {
      await expect(resolveOpen(lookups(w), APP, { linkId: 'l-tiktok', clickId })).resolves.toEqual({
        linkId: 'l-tiktok',
        partner: 'tiktok',
        clickId: null,
      });
    }
  });

  it("takes the link from the click when the open names only a click of the app's", async () => {
    const w = setUp();
    await expect(resolveOpen(lookups(w), APP, { clickId: 'c-google' })).resolves.toMatchObject({ linkId: 'l-google', partner: 'google' });
  });

  it('counts no open by an unknown link, a link of another app or a click it cannot find', async () => {
    const w = setUp();
    await expect(resolveOpen(lookups(w), APP, { linkId: 'l-none' })).resolves.toBeUndefined();
    await expect(resolveOpen(lookups(w), APP, { linkId: 'l-other' })).resolves.toBeUndefined();
    await expect(resolveOpen(lookups(w), APP, { clickId: 'c-gone' })).resolves.toBeUndefined();
  });
});

describe('creditedOpen', () => {
  const ref = (id: string, tsMs: number): OpenRef => [id, tsMs, 'l', 'p', '', null];

  it('credits the latest open whose window holds the event, and none after the window or with a window of 0', () => {
    const opens = [ref('a', T0 + DAY), ref('b', T0 + 2 * DAY)];
    expect(creditedOpen(opens, T0, T0 + 3 * DAY, 30 * DAY)?.[0]).toBe('b');
    expect(creditedOpen(opens, T0, T0 + DAY + HOUR, 30 * DAY)?.[0]).toBe('a');
    expect(creditedOpen(opens, T0, T0 + 32 * DAY, 30 * DAY)).toBeUndefined();
    expect(creditedOpen(opens, T0, T0 + 3 * DAY, 0)).toBeUndefined();
    // An open before the install (a reinstall came since) re-engages nothing.
    expect(creditedOpen(opens, T0 + 2 * DAY + 1, T0 + 3 * DAY, 30 * DAY)).toBeUndefined();
  });
});

describe('a deep_link_open by an existing install', () => {
  it('counts one re-engagement and moves the revenue within the window, then back; the interface reports do not move', async () => {
    const w = setUp();
    const twin = setUp();
    twin.links.clear();
    const objects = [
      [withClick(install())],
      // Opened five times by the same link on one day: one re-engagement.
      [1, 2, 3, 4, 5].map((n) => open(`o-${n}`, T0 + 2 * DAY + n * HOUR, { link_id: 'l-google', click_id: 'c-google' })),
      [purchase('p-in', T0 + 10 * DAY, 5)],
      [purchase('p-out', T0 + 40 * DAY, 7)],
    ];
    for (const events of objects) {
      await w.deliver([upload(w, events)]);
      await twin.deliver([upload(twin, events)]);
    }
    expect(reengagementCells(w)).toEqual({
      '2026-06-03|google|winback': { reengagements: 1 },
      '2026-06-11|google|winback': { recent_revenue_micros: 5_000_000 },
      '2026-07-11|meta|spring': { recent_revenue_micros: 7_000_000 },
    });
    // revenue_usd and the interface's revenue report stay with the install's partner.
    expect(w.table().revenue).toEqual({
      '2026-06-11|meta': { purchases: 1, revenue_micros: 5_000_000, payers: 1 },
      '2026-07-11|meta': { purchases: 1, revenue_micros: 7_000_000, payers: 1 },
    });
    expect(interfaceRows(w)).toEqual(interfaceRows(twin));
    expect(w.table().link).toMatchObject({ '2026-06-03|l-google': { reengagements: 1 } });
  });

  it('counts an organic install re-engaged by a paid link for that link, and its revenue within the window too', async () => {
    const w = setUp({ clickOfInstall: false });
    await w.deliver([upload(w, [install()])]);
    const intents: PostbackIntent[] = [];
    const body = upload(w, [open('o-1', T0 + DAY, { link_id: 'l-tiktok' }), purchase('p-1', T0 + 2 * DAY, 3)]);
    await w.deliver([body], { ...w.ports, postbacks: async (_app, made) => void intents.push(...made) });
    // The re-engagement's postback intent, for the link's partner (the organic install's purchase sends none).
    expect(intents.filter((intent) => intent.kind === 'reengagement')).toEqual([
      {
        kind: 'reengagement',
        installUuid: UUID,
        eventId: 'o-1',
        tsMs: T0 + DAY,
        link: { linkId: 'l-tiktok', partner: 'tiktok', campaign: '', clickId: null },
        member: { id: 'i-1', ts_ms: T0, partner: 'organic' },
      },
    ]);
    expect(reengagementCells(w)).toEqual({
      '2026-06-02|tiktok|(none)': { reengagements: 1 },
      '2026-06-03|tiktok|(none)': { recent_revenue_micros: 3_000_000 },
    });
    expect(Object.keys(w.table().revenue)).toEqual(['2026-06-03|organic']);
  });

  it('counts the re-engagement but moves no revenue with a window of 0', async () => {
    const w = setUp({ reengagementWindowDays: 0 });
    await w.deliver([upload(w, [withClick(install())])]);
    await w.deliver([upload(w, [open('o-1', T0 + DAY, { link_id: 'l-google' }), purchase('p-1', T0 + 2 * DAY, 3)])]);
    expect(reengagementCells(w)).toEqual({
      '2026-06-02|google|winback': { reengagements: 1 },
      '2026-06-03|meta|spring': { recent_revenue_micros: 3_000_000 },
    });
  });

  it('counts nothing for an open of a link of another app, or one the install made before it was installed', async () => {
    const w = setUp();
    await w.deliver([upload(w, [withClick(install())])]);
    await w.deliver([upload(w, [open('o-1', T0 + DAY, { link_id: 'l-other' }), open('o-2', T0 - HOUR, { link_id: 'l-google' })])]);
    await w.deliver([upload(w, [purchase('p-1', T0 + 2 * DAY, 3)])]);
    expect(reengagementCells(w)).toEqual({ '2026-06-03|meta|spring': { recent_revenue_micros: 3_000_000 } });
    expect(w.table().events).toMatchObject({ '2026-06-02|deep_link_open': { events: 1 } });
  });

  it('holds an open and a purchase that arrive before their install, and counts them when it comes', async () => {
    const w = setUp();
    await w.deliver([upload(w, [open('o-1', T0 + DAY, { link_id: 'l-google' }), purchase('p-1', T0 + 2 * DAY, 3)])]);
    expect(reengagementCells(w)).toEqual({});
    await w.deliver([upload(w, [withClick(install())])]);
    expect(reengagementCells(w)).toEqual({
      '2026-06-02|google|winback': { reengagements: 1 },
      '2026-06-03|google|winback': { recent_revenue_micros: 3_000_000 },
    });
  });

  it('counts each figure once whatever write a delivery dies at, and delivered twice at once', async () => {
    const objectsOf = (w: World) => [
      upload(w, [open('o-0', T0 + HOUR, { link_id: 'l-tiktok' })]),
      upload(w, [withClick(install())]),
      upload(w, [open('o-1', T0 + DAY, { link_id: 'l-google' }), open('o-2', T0 + DAY + HOUR, { link_id: 'l-google' })]),
      upload(w, [purchase('p-1', T0 + 2 * DAY, 3), open('o-3', T0 + 3 * DAY, { link_id: 'l-tiktok' }), purchase('p-2', T0 + 4 * DAY, 4)]),
    ];
    const clean = setUp();
    await clean.deliver(objectsOf(clean));
    const expected = clean.table();
    expect(reengagementCells(clean)).toEqual({
      '2026-06-01|tiktok|(none)': { reengagements: 1 },
      '2026-06-02|google|winback': { reengagements: 1 },
      '2026-06-03|google|winback': { recent_revenue_micros: 3_000_000 },
      '2026-06-04|tiktok|(none)': { reengagements: 1 },
      '2026-06-05|tiktok|(none)': { recent_revenue_micros: 4_000_000 },
    });
    for (let limit = 0; limit < 80; limit++) {
      const w = setUp();
      const bodies = objectsOf(w);
      const failing = failingAfter(w.ports, limit);
      const first = await w.deliver(bodies, failing.ports);
      let pending = bodies.filter((_, i) => first[i] && isRetried(first[i]));
      for (let round = 0; round < 5 && pending.length > 0; round++) {
        w.clock.now += LEASE_MS + 1;
        // The same messages twice in one batch, as a redelivery racing the first.
        const again = await w.deliver([...pending, ...pending]);
        pending = pending.filter((_, i) => again[i] && isRetried(again[i]));
      }
      expect(pending).toEqual([]);
      expect(w.table()).toEqual(expected);
    }
  });

  it('is rebuilt to the same rows from the audit objects', async () => {
    const w = setUp();
    const bodies = [
      upload(w, [withClick(install())]),
      upload(w, [open('o-1', T0 + DAY, { link_id: 'l-google' }), purchase('p-1', T0 + 2 * DAY, 3)]),
      upload(w, [purchase('p-2', T0 + 40 * DAY, 2)]),
    ];
    for (const body of bodies) await w.deliver([body]);
    const rows = new MemoryRowStore();
    const keys = [...w.objects.keys()];
    const rebuilt = await rebuildRows(
      {
        appId: APP,
        companyId: 'com_0123456789abcdef0123',
        probabilistic: false,
        keysOfDay: async (day) => (day === '2026-06-03' ? keys : []),
        lines: async (key) => w.objects.get(key) ?? [],
        recordedDecision: async () => undefined,
        decideAfresh: w.ports.decide,
        reengagementLink: w.ports.reengagementLink,
      },
      '2026-06-03',
      '2026-06-03',
      { installs: new MemoryInstallStore(), rows, ledger: new MemoryLedger() },
    );
    const perf = (list: typeof rebuilt.rows) =>
      list
        .filter((row) => row.family === 'perf' && (row.counters.reengagements || row.counters.recent_revenue_micros))
        .map((row) => [row.day, row.group.partner, row.counters.reengagements, row.counters.recent_revenue_micros]);
    expect(perf(rebuilt.rows)).toEqual([
      ['2026-06-02', 'google', 1, 0],
      ['2026-06-03', 'google', 0, 3_000_000],
      ['2026-07-11', 'meta', 0, 2_000_000],
    ]);
  });
});

describe('revenue by most recent attribution, against the oracle', () => {
  const links = {
    'l-google': { id: 'l-google', partner: 'google', campaign: 'winback' },
    'l-tiktok': { id: 'l-tiktok', partner: 'tiktok' },
  } as const;
  type Spec =
    | { kind: 'open'; hours: number; link: 'l-google' | 'l-tiktok' | 'l-other' }
    | { kind: 'purchase'; hours: number; cents: number };
  const specArb: fc.Arbitrary<Spec> = fc.oneof(
    fc.record({
      kind: fc.constant('open' as const),
      hours: fc.integer({ min: -24, max: 24 * 60 }),
      link: fc.constantFrom('l-google' as const, 'l-tiktok' as const, 'l-other' as const),
    }),
    fc.record({
      kind: fc.constant('purchase' as const),
      hours: fc.integer({ min: 0, max: 24 * 80 }),
      cents: fc.integer({ min: 1, max: 100_000 }),
    }),
  );

  it('credits each purchase as the oracle does, for any opens, purchases, objects and window', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(specArb, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 5 }),
        fc.constantFrom(0, 1, 7, 30),
        async (groups, windowDays) => {
          const w = setUp({ reengagementWindowDays: windowDays });
          await w.deliver([upload(w, [withClick(install())])]);
          let n = 0;
          const objects: OracleReengagementEvent[][] = [];
          for (const group of groups) {
            const events = group.map((spec) => ({ spec, id: `e-${String(n++).padStart(3, '0')}`, tsMs: T0 + spec.hours * HOUR + n }));
            await w.deliver([
              upload(
                w,
                events.map(({ spec, id, tsMs }) =>
                  spec.kind === 'open' ? open(id, tsMs, { link_id: spec.link }) : purchase(id, tsMs, spec.cents / 100),
                ),
              ),
            ]);
            objects.push(
              events.map(
                ({ spec, id, tsMs }): OracleReengagementEvent =>
                  spec.kind === 'open'
                    ? { kind: 'open', eventId: id, tsMs, ...(spec.link === 'l-other' ? {} : { link: links[spec.link] }) }
                    : { kind: 'purchase', eventId: id, tsMs, revenueUsd: spec.cents / 100 },
              ),
            );
          }
          expect(reengagementCells(w)).toEqual(reengagementOracle({ tsMs: T0, partner: 'meta', campaign: 'spring' }, objects, windowDays));
        },
      ),
      { numRuns: 60 },
    );
  });
});
