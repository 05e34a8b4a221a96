import fc from 'fast-check';
import { memoryRebuildStores } from '../../../functions/adapters/memory/rebuild-stores';
import { differences, rebuildRows, rowOf } from '../../../functions/domain/aggregation/rebuild';
import { ROW_FAMILIES } from '../../../functions/domain/aggregation/rows';
import type { AttributionDecision } from '../../../functions/domain/attribution/decision';
import { type OracleAttribution, type OracleEvent, oracleRows } from '../../support/aggregation-oracle';
import { APP, click, failingAfter, LEASE_MS, T0, world } from './world';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const install = (n: number, tsMs: number, extra: object = {}) => ({
  event_id: `i-${n}`,
  event_name: 'install',
  install_uuid: uuid(n),
  ts_ms: tsMs,
  platform: 'ios',
  ...extra,
});
/** An ad impression of 2 cents (in US dollars: no rate needed). */
const impression = (n: number, id: string, tsMs: number, impressionId: string) =>
  event(n, id, 'ad_revenue', tsMs, {
    ad_revenue: {
      source: 'applovin_max',
      network: 'AppLovin',
      format: 'interstitial',
      revenue: 0.02,
      currency: 'USD',
      precision: 'exact',
      impression_id: impressionId,
    },
  });
const event = (n: number, id: string, name: string, tsMs: number, extra: object = {}) => ({
  event_id: id,
  event_name: name,
  install_uuid: uuid(n),
  ts_ms: tsMs,
  ...extra,
});

describe('aggregation on in-memory stores', () => {
  it('counts an attributed install, its events and a purchase into all four families', async () => {
    const w = world();
    w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 - HOUR, partner: 'meta', campaign: 'spring', sub1: 'creative_a' }));
    const body = w.upload([
      install(1, T0, { attribution: { click_id: 'c1' } }),
      event(1, 'e-1', 'purchase', T0 + 1000, { revenue_usd: 4.99 }),
    ]);
    const [outcome] = await w.deliver([body]);
    expect(outcome).toMatchObject({ kind: 'counted', events: 2, installs: { deterministic: 1 } });
    expect(w.table()).toEqual({
      attribution: { '2026-06-01|meta|deterministic': { installs: 1 } },
      revenue: { '2026-06-01|meta': { purchases: 1, revenue_micros: 4_990_000, payers: 1 } },
      cohorts: { '2026-06-01': { installs: 1 } },
      events: {
        '2026-06-01|install': { events: 1, unique_installs: 1 },
        '2026-06-01|purchase': { events: 1, unique_installs: 1, revenue_micros: 4_990_000 },
      },
      // The click named no country and the batch came with none; the install event's platform is ios.
      perf: {
        '2026-06-01|meta|spring|(none)|ios': {
          installs: 1,
          revenue_micros: 4_990_000,
          recent_revenue_micros: 4_990_000,
          cohort_d0_micros: 4_990_000,
          cohort_d7_micros: 4_990_000,
          cohort_d30_micros: 4_990_000,
        },
      },
      perf_partner: {
        '2026-06-01|meta': {
          installs: 1,
          revenue_micros: 4_990_000,
          recent_revenue_micros: 4_990_000,
          cohort_d0_micros: 4_990_000,
          cohort_d7_micros: 4_990_000,
          cohort_d30_micros: 4_990_000,
        },
      },
      perf_stamp: { '2026-06-01': { v: 1 } },
      // The install's winning click was on link-1 (docs/tracking-links.md, "Link stats").
      link: { '2026-06-01|link-1': { installs: 1 } },
    });
    const record = await w.installs.get<{ decision: Record<string, unknown> }>(`${APP}#${uuid(1)}`, 'e#i-1');
    expect(record?.decision).toMatchObject({
      partner: 'meta',
      rule: 'click_id',
      campaign: 'spring',
      sub1: 'creative_a',
      ctit_seconds: 3600,
      fraud_reasons: [],
    });
  });

  it('counts an event sent again in other bytes, and an object announced twice, once', async () => {
    const w = world();
    const first = w.upload([install(1, T0), event(1, 'e-1', 'level', T0 + 1)]);
    const again = w.upload([event(1, 'e-1', 'level', T0 + 1), install(1, T0)], { body: 'other bytes' });
    await w.deliver([first]);
    await w.deliver([again, first]);
    expect(w.table().events).toEqual({
      '2026-06-01|install': { events: 1, unique_installs: 1 },
      '2026-06-01|level': { events: 1, unique_installs: 1 },
    });
    expect(w.table().attribution).toEqual({ '2026-06-01|organic|organic': { installs: 1, organic: 1 } });
  });

  it('lets one of two concurrent deliveries of a message count and sends the other back until it is done', async () => {
    const w = world();
    const body = w.upload([install(1, T0), event(1, 'e-1', 'purchase', T0 + 1, { revenue_usd: 1 })]);
    const outcomes = await Promise.all([w.deliver([body]), w.deliver([body])]);
    expect(
      outcomes
        .flat()
        .map((o) => o.kind)
        .sort(),
    ).toEqual(['busy', 'counted']);
    const [retry] = await w.deliver([body]);
    expect(retry.kind).toBe('already_counted');
    // Twice in one batch: counted once, the twin acknowledged at once rather than sent back.
    const twin = w.upload([install(2, T0)]);
    expect((await w.deliver([twin, twin])).map((o) => o.kind)).toEqual(['counted', 'already_counted']);
    expect(w.table().revenue).toEqual({ '2026-06-01|organic': { purchases: 1, revenue_micros: 1_000_000, payers: 1 } });
    expect(w.table().cohorts).toEqual({ '2026-06-01': { installs: 2 } });
    // The delivery whose mark lost took its lines out of its stream object: each event is streamed once.
    expect(w.streamEvents().map((e) => `${e.install_uuid}|${e.event_id}`)).toEqual([`${uuid(1)}|i-1`, `${uuid(1)}|e-1`, `${uuid(2)}|i-2`]);
  });

  it('gives an apply up when its lane was taken too slowly for the stream readers, and counts its objects on the next delivery', async () => {
    const w = world();
    const body = w.upload([install(1, T0), event(1, 'e-1', 'level', T0 + 1)]);
    const take = w.ledger.take.bind(w.ledger);
    const slow = {
      ...w.ports,
      ledger: Object.assign(Object.create(w.ledger), {
        take: async (...args: Parameters<typeof take>) => {
          const taken = await take(...args);
          w.clock.now += 6_000;
          return taken;
        },
      }),
    };
    expect((await w.deliver([body], slow)).map((o) => o.kind)).toEqual(['busy']);
    expect(w.stream.objects.size).toBe(0);
    expect((await w.ledger.lanes([0])).get(0)).toMatchObject({ seq: 1, applied: 1 });
    expect((await w.deliver([body])).map((o) => o.kind)).toEqual(['counted']);
    expect(w.streamEvents().map((e) => e.event_id)).toEqual(['i-1', 'e-1']);
    expect(w.table().events['2026-06-01|level']).toEqual({ events: 1, unique_installs: 1 });
  });

  it('holds events that arrive before their install and applies them to its partner and cohort when it arrives', async () => {
    const w = world();
    w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 - HOUR, partner: 'tiktok' }));
    w.clock.now = T0 + 2 * DAY;
    await w.deliver([w.upload([event(1, 'e-1', 'purchase', T0 + DAY + 5, { revenue_usd: 2 })])]);
    expect(w.table().events['2026-06-02|purchase']).toEqual({ events: 1, unique_installs: 1, revenue_micros: 2_000_000 });
    expect(w.table().revenue).toEqual({});
    await w.deliver([w.upload([install(1, T0, { attribution: { referrer: 'click_id=c1&link_id=l&utm_source=tiktok' } })])]);
    expect(w.table().revenue).toEqual({ '2026-06-02|tiktok': { purchases: 1, revenue_micros: 2_000_000, payers: 1 } });
    expect(w.table().cohorts).toEqual({ '2026-06-01': { installs: 1, d1: 1 } });
    // The stream served the purchase when it was counted, before any install: no attribution. The
    // install's line says it was the first of its uuid, which is the one held events apply to.
    const [purchase, installed] = w.stream.lines();
    expect(purchase?.event).toMatchObject({ event_id: 'e-1', revenue_usd: 2, attribution: null, received_ms: T0 + 2 * DAY });
    expect(installed?.event.attribution).toMatchObject({ partner: 'tiktok', attribution_type: 'deterministic', install_event_id: 'i-1' });
    expect(installed?.install).toMatchObject({ first: true, previous_install_event_id: null, decision: { partner: 'tiktok' } });
  });

  it('counts retention in [t + N days, t + N + 1 days) only, each install at most once per N', async () => {
    const w = world();
    await w.deliver([w.upload([install(1, T0)])]);
    const offsets = [DAY - 1, DAY, DAY + 1, 2 * DAY - 1, 2 * DAY, 7 * DAY, 8 * DAY, 30 * DAY - 1, 30 * DAY, 31 * DAY - 1, 31 * DAY];
    for (const [i, offset] of offsets.entries()) {
      w.clock.now = T0 + offset;
      await w.deliver([w.upload([event(1, `r-${i}`, 'session', T0 + offset)])]);
    }
    expect(w.table().cohorts).toEqual({ '2026-06-01': { installs: 1, d1: 1, d7: 1, d30: 1 } });
  });

  it('flags fraud but still attributes: fast CTIT, click injection, honeypot address', async () => {
    const w = world();
    w.clicks.set('fast', click({ click_id: 'fast', ts_ms: T0 - 3000 }));
    w.clicks.set('late', click({ click_id: 'late', ts_ms: T0 - 60_000 }));
    w.block('203.0.113.9');
    await w.deliver([w.upload([install(1, T0, { attribution: { click_id: 'fast' } })])]);
    await w.deliver([w.upload([install(2, T0, { attribution: { click_id: 'late', install_begin_ms: T0 - 120_000 } })])]);
    await w.deliver([w.upload([install(3, T0)], { ip: '203.0.113.9' })]);
    expect(w.table().attribution).toEqual({
      '2026-06-01|meta|deterministic': { installs: 2, fraud_flagged: 2 },
      '2026-06-01|organic|organic': { installs: 1, organic: 1, fraud_flagged: 1 },
    });
    const reasons = async (n: number) =>
      (await w.installs.get<{ decision: { fraud_reasons: string[] } }>(`${APP}#${uuid(n)}`, `e#i-${n}`))?.decision.fraud_reasons;
    expect(await reasons(1)).toEqual(['ctit_under_10s']);
    expect(await reasons(2)).toEqual(['click_injection']);
    expect(await reasons(3)).toEqual(['honeypot_ip']);
  });

  it("flags honeypot_ip only for a block by a honeypot of the install's own company", async () => {
    const w = world();
    w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 - HOUR }));
    // Another tenant's honeypot blocked this address (a shared CGNAT address, say): not ours to act on.
    w.block('100.64.0.1', 'com_other_tenant');
    await w.deliver([w.upload([install(1, T0, { attribution: { click_id: 'c1' } })], { ip: '100.64.0.1' })]);
    await w.deliver([w.upload([install(2, T0)], { ip: '100.64.0.1' })]);
    const reasons = async (n: number) =>
      (await w.installs.get<{ decision: { fraud_reasons: string[] } }>(`${APP}#${uuid(n)}`, `e#i-${n}`))?.decision.fraud_reasons;
    expect(await reasons(1)).toEqual([]);
    expect(await reasons(2)).toEqual([]);
    w.block('100.64.0.1');
    await w.deliver([w.upload([install(3, T0)], { ip: '100.64.0.1' })]);
    expect(await reasons(3)).toEqual(['honeypot_ip']);
  });

  it('refuses a click of another app, one after the install and one outside the lookback, and says why', async () => {
    const w = world();
    w.clicks.set('other', click({ click_id: 'other', ts_ms: T0 - HOUR, app_id: 'app_other' }));
    w.clicks.set('after', click({ click_id: 'after', ts_ms: T0 + 1000 }));
    w.clicks.set('old', click({ click_id: 'old', ts_ms: T0 - 8 * DAY, lookback_days: 7, expires_at: Math.floor(T0 / 1000) + DAY / 1000 }));
    w.clock.now = T0 + 2000;
    for (const [n, id] of [
      [1, 'other'],
      [2, 'after'],
      [3, 'old'],
    ] as const)
      await w.deliver([w.upload([install(n, T0, { attribution: { click_id: id } })])]);
    const refused = async (n: number) =>
      (await w.installs.get<{ decision: { refused_click: unknown } }>(`${APP}#${uuid(n)}`, `e#i-${n}`))?.decision.refused_click;
    expect(await refused(1)).toEqual({ click_id: 'other', reason: 'other_app' });
    expect(await refused(2)).toEqual({ click_id: 'after', reason: 'after_install' });
    expect(await refused(3)).toEqual({ click_id: 'old', reason: 'outside_lookback' });
    expect(w.table().attribution).toEqual({ '2026-06-01|organic|organic': { installs: 3, organic: 3 } });
  });

  it('matches the latest click of the same address and platform within 24 hours only for probabilistic apps', async () => {
    for (const probabilistic of [false, true]) {
      const w = world({ probabilistic });
      w.clicks.set('a', click({ click_id: 'a', ts_ms: T0 - 2 * HOUR, partner: 'old' }));
      w.clicks.set('b', click({ click_id: 'b', ts_ms: T0 - HOUR, partner: 'google' }));
      w.clicks.set('c', click({ click_id: 'c', ts_ms: T0 - HOUR, partner: 'android', platform: 'android' }));
      await w.deliver([w.upload([install(1, T0)])]);
      expect(Object.keys(w.table().attribution)).toEqual([
        probabilistic ? '2026-06-01|google|probabilistic' : '2026-06-01|organic|organic',
      ]);
    }
  });

  it('counts a second install of a uuid, and an install of a known device under a new uuid, as reinstalls', async () => {
    const w = world();
    await w.deliver([w.upload([install(1, T0, { device_id: 'idfv-1' })])]);
    await w.deliver([w.upload([{ ...install(1, T0 + 10), event_id: 'i-1b' }])]);
    await w.deliver([w.upload([install(2, T0 + 20, { device_id: 'idfv-1' })])]);
    expect(w.table().attribution).toEqual({ '2026-06-01|organic|organic': { installs: 3, organic: 3, reinstalls: 2 } });
  });

  it('sends a poison message back (missing object, unknown version, not JSON) while the batch beside it counts', async () => {
    const w = world();
    const good = w.upload([install(1, T0)]);
    const missing = JSON.stringify({ ...JSON.parse(good), audit_key: 'audit/2026/06/01/x/y/gone.jsonl.gz' });
    const future = JSON.stringify({ ...JSON.parse(good), version: 2 });
    const outcomes = await w.deliver([missing, good, future, 'not json']);
    expect(outcomes.map((o) => (o.kind === 'poison' ? o.reason : o.kind))).toEqual([
      'missing_object',
      'counted',
      'unknown_version',
      'bad_message',
    ]);
    expect(outcomes[0]).toMatchObject({ auditKey: 'audit/2026/06/01/x/y/gone.jsonl.gz' });
    expect(w.table().cohorts).toEqual({ '2026-06-01': { installs: 1 } });
  });

  it("gives a failed delivery's lease back, so the next delivery need not wait for it to run out", async () => {
    const w = world();
    const body = w.upload([install(1, T0)]);
    let reads = 0;
    const flaky = {
      ...w.ports,
      readAudit: async (message: Parameters<typeof w.ports.readAudit>[0]) =>
        ++reads === 1 ? Promise.reject(new Error('timeout')) : w.ports.readAudit(message),
    };
    expect((await w.deliver([body], flaky)).map((o) => o.kind)).toEqual(['failed']);
    expect((await w.deliver([body], flaky)).map((o) => o.kind)).toEqual(['counted']);
    expect(w.table().cohorts).toEqual({ '2026-06-01': { installs: 1 } });
  });

  it('gives the totals of one clean delivery after the store fails following any single write', async () => {
    const scenario = (w: ReturnType<typeof world>) => {
      w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 - HOUR, partner: 'meta' }));
      w.clock.now = T0 + 2 * DAY;
      const early = w.upload([event(2, 'h-1', 'purchase', T0 + DAY, { revenue_usd: 3 }), event(2, 'h-2', 'session', T0 + DAY + 1)]);
      const a = w.upload([
        install(1, T0, { attribution: { click_id: 'c1' }, device_id: 'd1' }),
        event(1, 'e-1', 'session', T0 + DAY + 5),
        event(1, 'e-2', 'purchase', T0 + DAY + 6, { revenue_usd: 1.5 }),
        impression(1, 'ad-1', T0 + DAY + 7, 'imp-1'),
      ]);
      // The same impression of install 1 again, under another event id (the server-to-server route's, say).
      const b = w.upload(
        [
          install(2, T0 + 10),
          event(2, 'h-1', 'purchase', T0 + DAY, { revenue_usd: 3 }),
          event(1, 'e-1', 'session', T0 + DAY + 5),
          impression(1, 's2s-ad-1', T0 + DAY + 7, 'imp-1'),
        ],
        { body: 'b' },
      );
      const c = w.upload([install(3, T0 + 20, { device_id: 'd1' }), event(3, 'x-1', 'purchase', T0 + 30, { revenue_usd: 9 })], {
        body: 'c',
      });
      return { first: [early], rest: [a, b, c] };
    };
    const clean = world();
    const cleanBatches = scenario(clean);
    await clean.deliver(cleanBatches.first);
    const counting = failingAfter(clean.ports, Infinity);
    await clean.deliver(cleanBatches.rest, counting.ports);
    const expected = clean.table();
    // The impression counted once, as ad revenue and never as a purchase.
    expect(expected.perf_partner?.['2026-06-02|meta']).toMatchObject({ revenue_micros: 1_500_000, ad_revenue_micros: 20_000 });
    expect(expected.events['2026-06-02|ad_revenue']).toEqual({ events: 1, revenue_micros: 20_000, unique_installs: 1 });
    // The stream carries the impression once, under the event id that counted it, with its members.
    const streamedAds = clean.streamEvents().filter((e) => e.event_name === 'ad_revenue');
    expect(streamedAds).toHaveLength(1);
    expect(streamedAds[0]).toMatchObject({
      revenue_usd: 0.02,
      ad_revenue: { impression_id: 'imp-1', format: 'interstitial', revenue: 0.02 },
    });
    const total = counting.writes();
    // Nothing of the device or the address reaches the stream.
    const streamed = JSON.stringify(clean.stream.lines());
    expect(streamed).not.toContain('198.51.100.7');
    expect(streamed).not.toContain('"d1"');
    expect(streamed).not.toContain('device_id');
    expect(streamed).not.toContain('device_hash');
    expect(total).toBeGreaterThan(20);

    for (let k = 0; k <= total; k++) {
      const w = world();
      const batches = scenario(w);
      await w.deliver(batches.first);
      await w.deliver(batches.rest, failingAfter(w.ports, k).ports);
      // The function died; its leases run out and SQS delivers again, to a new container.
      for (let round = 0; round < 3; round++) {
        w.clock.now += LEASE_MS + 1;
        const outcomes = await w.deliver(batches.rest, w.ports);
        if (outcomes.every((o) => o.kind === 'counted' || o.kind === 'already_counted')) break;
      }
      expect({ k, rows: w.table() }).toEqual({ k, rows: expected });
      // The day pages the reports read hold the same rows: no fault leaves one behind.
      expect({ k, pages: w.attributionPages() }).toEqual({ k, pages: expected.attribution });
      // The stream holds each counted event once, as the clean delivery wrote it (its order may differ).
      expect({ k, stream: sortedStream(w.streamEvents()) }).toEqual({ k, stream: sortedStream(clean.streamEvents()) });
    }
  });

  it('counts the install that claimed the first mark as the first even when its delivery died and another batch installed the uuid before the redelivery', async () => {
    const crashed = (w: ReturnType<typeof world>) => w.upload([install(1, T0), event(1, 'e-1', 'session', T0 + 1)]);
    const other = (w: ReturnType<typeof world>) => w.upload([{ ...install(1, T0 + HOUR), event_id: 'i-1b' }], { body: 'other batch' });
    const clean = world();
    const counting = failingAfter(clean.ports, Infinity);
    await clean.deliver([crashed(clean)], counting.ports);
    const total = counting.writes();
    await clean.deliver([other(clean)]);
    const expected = clean.table().attribution;
    expect(expected).toEqual({ '2026-06-01|organic|organic': { installs: 2, organic: 2, reinstalls: 1 } });

    for (let k = 0; k < total; k++) {
      const w = world();
      const a = crashed(w);
      expect((await w.deliver([a], failingAfter(w.ports, k).ports)).map((o) => o.kind)).toEqual(['failed']);
      // Another batch of the same install_uuid is counted while the dead delivery's lease runs out.
      expect((await w.deliver([other(w)])).map((o) => o.kind)).toEqual(['counted']);
      w.clock.now += LEASE_MS + 1;
      expect((await w.deliver([a])).map((o) => o.kind)).toEqual(['counted']);
      expect({ k, rows: w.table().attribution }).toEqual({ k, rows: expected });
      // Whichever install claimed the mark is the one decided as not a reinstall.
      const pk = `${APP}#${uuid(1)}`;
      const mark = await w.installs.get<{ member: string }>(pk, 'first');
      const decisions = await w.installs.query<{ sk: string; decision?: AttributionDecision }>(pk, 'e#');
      const firsts = decisions.filter((claim) => claim.decision && !claim.decision.reinstall).map((claim) => claim.sk);
      expect({ k, firsts }).toEqual({ k, firsts: [`e#${mark?.member}`] });
    }
  });

  it('counts exactly one install of each install_uuid as its first whatever deliveries die and whatever comes before their redelivery', async () => {
    const objectArb = fc.array(
      fc.record({ install: fc.integer({ min: 1, max: 2 }), id: fc.integer({ min: 1, max: 3 }), install_event: fc.boolean() }),
      { minLength: 1, maxLength: 3 },
    );
    // Per object: no fault, or the store dying after that many writes (mostly among the claims, where
    // the window between the `first` mark and the install's own claim is) and the redelivery coming
    // after that many later objects.
    const afterWrites = fc.oneof(
      { arbitrary: fc.integer({ min: 2, max: 6 }), weight: 3 },
      { arbitrary: fc.integer({ min: 0, max: 24 }), weight: 1 },
    );
    const faultArb = fc.option(fc.record({ afterWrites, redeliverAfter: fc.integer({ min: 0, max: 4 }) }), { nil: undefined, freq: 2 });
    await fc.assert(
      // One time per event identity: a copy sent again is the same event (whichever copy counts first is counted).
      fc.asyncProperty(
        fc.array(fc.tuple(objectArb, faultArb), { minLength: 2, maxLength: 5 }),
        fc.array(fc.integer({ min: 0, max: 60 * 30 }), { minLength: 12, maxLength: 12 }),
        async (objects, minutes) => {
          const w = world();
          w.clock.now = T0 + 3 * DAY;
          const taken: OracleEvent[] = [];
          const bodies = objects.map(([events], n) => {
            const sent = events
              .map((e) => {
                const ts = T0 + minutes[(e.install - 1) * 6 + (e.install_event ? 0 : 3) + e.id - 1] * 60_000;
                return e.install_event
                  ? { ...install(e.install, ts), event_id: `i-${e.install}-${e.id}` }
                  : event(e.install, `e-${e.install}-${e.id}`, 'session', ts);
              })
              .filter((e, i, all) => all.findIndex((o) => o.event_id === e.event_id) === i); // unique within a batch, or rejected
            for (const e of sent) taken.push({ installUuid: e.install_uuid, eventId: e.event_id, name: e.event_name, tsMs: e.ts_ms });
            return w.upload(sent, { body: `object ${n}` });
          });
          const redeliveries = new Map<number, number[]>();
          for (const [n, [, fault]] of objects.entries()) {
            await w.deliver([bodies[n]], fault ? failingAfter(w.ports, fault.afterWrites).ports : w.ports);
            if (fault) redeliveries.set(n + fault.redeliverAfter, [...(redeliveries.get(n + fault.redeliverAfter) ?? []), n]);
            for (const dead of redeliveries.get(n) ?? []) {
              w.clock.now += LEASE_MS + 1;
              await w.deliver([bodies[dead]]);
            }
          }
          for (const [at, dead] of redeliveries) {
            if (at < objects.length) continue;
            w.clock.now += LEASE_MS + 1;
            for (const n of dead) await w.deliver([bodies[n]]);
          }

          // Independent of the order: every distinct install event is an install, all but one per install_uuid a reinstall.
          const installs = new Map<string, Set<string>>();
          for (const e of taken)
            if (e.name === 'install') installs.set(e.installUuid, (installs.get(e.installUuid) ?? new Set()).add(e.eventId));
          const distinct = [...installs.values()].reduce((sum, ids) => sum + ids.size, 0);
          const rows = Object.values(w.table().attribution);
          expect(rows.reduce((sum, row) => sum + (row.installs ?? 0), 0)).toBe(distinct);
          expect(rows.reduce((sum, row) => sum + (row.reinstalls ?? 0), 0)).toBe(distinct - installs.size);
          // The events family does not depend on the order the objects were counted in.
          expect(w.table().events).toEqual(
            dropZeros(oracleRows(taken, () => ({ partner: 'organic', type: 'organic', fraud: false }))).events,
          );
          for (const installUuid of installs.keys()) {
            const pk = `${APP}#${installUuid}`;
            const mark = await w.installs.get<{ member: string }>(pk, 'first');
            const claims = await w.installs.query<{ sk: string; decision?: AttributionDecision }>(pk, 'e#');
            expect(claims.filter((claim) => claim.decision && !claim.decision.reinstall).map((claim) => claim.sk)).toEqual([
              `e#${mark?.member}`,
            ]);
          }
        },
      ),
      { numRuns: 200 },
    );
  });

  it('agrees with the oracle on random traffic, duplicates and redeliveries included', async () => {
    const eventArb = fc.record({
      install: fc.integer({ min: 1, max: 5 }),
      kind: fc.constantFrom('install', 'session', 'purchase', 'level'),
      id: fc.integer({ min: 1, max: 12 }),
      offsetHours: fc.integer({ min: -30, max: 24 * 33 }),
      revenue: fc.option(
        fc.integer({ min: 0, max: 5_000_000 }).map((c) => c / 100),
        { nil: undefined },
      ),
      device: fc.option(fc.constantFrom('d1', 'd2'), { nil: undefined }),
      click: fc.option(fc.constantFrom('c-meta', 'c-google', 'c-fast', 'c-none'), { nil: undefined }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(eventArb, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 1, max: 4 }),
        async (batches, per) => {
          const w = world();
          w.clicks.set('c-meta', click({ click_id: 'c-meta', ts_ms: T0 - 4 * DAY, partner: 'meta' }));
          w.clicks.set('c-google', click({ click_id: 'c-google', ts_ms: T0 - 31 * HOUR, partner: 'google' }));
          w.clicks.set('c-fast', click({ click_id: 'c-fast', ts_ms: T0 - 30 * HOUR - 5000, partner: 'fast' }));
          w.clock.now = T0 + 34 * DAY;
          const sentClicks = new Map<string, string | undefined>();
          const taken: OracleEvent[] = [];
          const bodies: string[] = [];
          for (const batch of batches) {
            const ids = new Set<string>();
            const events = batch
              .map((e) => {
                const ts = T0 + e.offsetHours * HOUR;
                const eventId = e.kind === 'install' ? `i-${e.id}` : `e-${e.id}`;
                return {
                  event_id: eventId,
                  event_name: e.kind,
                  install_uuid: uuid(e.install),
                  ts_ms: ts,
                  ...(e.kind === 'install'
                    ? { platform: 'android', attribution: e.click ? { click_id: e.click } : undefined, device_id: e.device }
                    : {}),
                  ...(e.revenue !== undefined ? { revenue_usd: e.revenue } : {}),
                };
              })
              .filter((e) => !ids.has(e.event_id) && ids.add(e.event_id) !== undefined); // unique within a batch, or rejected
            const body = w.upload(events);
            bodies.push(body);
            for (const e of events) {
              taken.push({
                installUuid: e.install_uuid,
                eventId: e.event_id,
                name: e.event_name,
                tsMs: e.ts_ms,
                revenueUsd: e.revenue_usd,
                deviceHash: e.device_id,
              });
              // The click the install event as first sent names (a later copy counts nothing).
              const identity = `${e.install_uuid}|${e.event_id}`;
              if (e.event_name === 'install' && !sentClicks.has(identity)) sentClicks.set(identity, e.attribution?.click_id);
            }
          }
          // In order, `per` objects a delivery, each delivered twice.
          for (let i = 0; i < bodies.length; i += per) {
            const slice = bodies.slice(i, i + per);
            await w.deliver(slice);
            await w.deliver(slice);
          }
          const partners: Record<string, OracleAttribution> = {};
          const partnerOf = new Map<string, string>();
          const attribute = (e: OracleEvent): OracleAttribution => {
            const clickId = sentClicks.get(`${e.installUuid}|${e.eventId}`);
            const clickRecord = clickId ? w.clicks.get(clickId) : undefined;
            const ok = clickRecord && clickRecord.ts_ms <= e.tsMs && e.tsMs - clickRecord.ts_ms <= 7 * DAY;
            const result: OracleAttribution = ok
              ? { partner: clickRecord.partner, type: 'deterministic', fraud: e.tsMs - clickRecord.ts_ms < 10_000 }
              : { partner: 'organic', type: 'organic', fraud: false };
            partners[e.eventId] = result;
            partnerOf.set(`${e.installUuid}|${e.eventId}`, result.partner);
            return result;
          };
          const { attribution, revenue, cohorts, events } = w.table();
          expect({ attribution, revenue, cohorts, events }).toEqual(dropZeros(oracleRows(taken, attribute)));
          expect(w.attributionPages()).toEqual(w.table().attribution);
          // The stream: every distinct accepted event exactly once, each install line with the
          // partner the attribution rows counted it under, each other event with its install's
          // decision (or none when it came before any install of its uuid was counted).
          const streamed = w.streamEvents();
          const identities = streamed.map((e) => `${e.install_uuid}|${e.event_id}`);
          expect(new Set(identities).size).toBe(identities.length);
          expect(new Set(identities)).toEqual(new Set(taken.map((e) => `${e.installUuid}|${e.eventId}`)));
          const installLines = w.stream.lines().filter((line) => line.install);
          expect(installLines.length).toBe(Object.values(w.table().attribution).reduce((sum, row) => sum + (row.installs ?? 0), 0));
          const decided = new Map(
            installLines.map((line) => [`${line.event.install_uuid}|${line.event.event_id}`, line.event.attribution]),
          );
          for (const { event: e } of installLines) expect(e.attribution?.partner).toBe(partnerOf.get(`${e.install_uuid}|${e.event_id}`));
          for (const e of streamed) {
            if (e.attribution === null || e.event_name === 'install') continue;
            expect(e.attribution).toEqual(decided.get(`${e.install_uuid}|${e.attribution.install_event_id}`));
          }
        },
      ),
      { numRuns: 150 },
    );
  });
});

/** Stream events in a set order, to compare runs whose objects were applied in other groupings. */
function sortedStream(events: readonly { readonly install_uuid: string; readonly event_id: string }[]) {
  return [...events].sort((a, b) => (`${a.install_uuid}|${a.event_id}` < `${b.install_uuid}|${b.event_id}` ? -1 : 1));
}

function dropZeros<T extends Record<string, Record<string, Record<string, number>>>>(rows: T): T {
  for (const family of Object.values(rows)) {
    for (const [key, counters] of Object.entries(family)) {
      for (const [name, value] of Object.entries(counters)) if (value === 0) delete counters[name];
      if (Object.keys(counters).length === 0) delete family[key];
    }
  }
  return rows;
}

describe('rebuild from the audit store', () => {
  it("keeps the live perf rows' clicks (no audit object has them) and never compares the stamps", () => {
    const perf = (counters: Record<string, number>) => rowOf('perf', '2026-06-01', ['meta', 'spring', 'US', 'ios'], counters);
    const partner = (counters: Record<string, number>) => rowOf('perf_partner', '2026-06-01', ['meta'], counters);
    const stamp = (v: number) => rowOf('perf_stamp', '2026-06-01', [], { v });
    const live = [perf({ clicks: 5, installs: 2 }), partner({ clicks: 5, installs: 2 }), stamp(9)];
    // Rebuilt from the audit store: the installs, no clicks, a stamp of its own.
    expect(differences(live, [perf({ installs: 2 }), partner({ installs: 2 }), stamp(1)])).toEqual([]);
    // A row with clicks only is no difference; a wrong install count is one, and --apply keeps the clicks.
    expect(differences([perf({ clicks: 3 })], [])).toEqual([]);
    expect(differences(live, [perf({ installs: 1 }), partner({ installs: 2 })])).toEqual([
      expect.objectContaining({
        family: 'perf',
        live: expect.objectContaining({ clicks: 5, installs: 2 }),
        rebuilt: expect.objectContaining({ clicks: 5, installs: 1 }),
      }),
    ]);
  });

  it('replays the audit objects into the same rows the live path made, using the recorded decisions', async () => {
    const w = world();
    w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 - HOUR, partner: 'meta' }));
    w.clock.now = T0 + 2 * DAY;
    const bodies = [
      w.upload([event(1, 'e-0', 'purchase', T0 + DAY, { revenue_usd: 7 })], { receivedMs: T0 + DAY + 10 }),
      w.upload([install(1, T0, { attribution: { click_id: 'c1' } }), event(1, 'e-1', 'session', T0 + DAY + 1)], {
        receivedMs: T0 + DAY + 20,
      }),
      w.upload([install(2, T0 + 5), event(2, 'e-1', 'purchase', T0 + 6, { revenue_usd: 1.25 })], { receivedMs: T0 + DAY + 30 }),
    ];
    for (const body of bodies) await w.deliver([body]);
    // The click is gone by the time anyone rebuilds: the recorded decision must carry the partner.
    w.clicks.clear();
    const keys = [...w.objects.keys()];
    const rebuilt = await rebuildRows(
      {
        appId: APP,
        companyId: 'com_x',
        probabilistic: false,
        keysOfDay: async (day) => keys.filter((key) => key.startsWith(`audit/${day.split('-').join('/')}/`)),
        lines: async (key) => w.objects.get(key) ?? [],
        recordedDecision: async (installUuid, eventId) =>
          (await w.installs.get<{ decision?: AttributionDecision }>(`${APP}#${installUuid}`, `e#${eventId}`))?.decision,
        decideAfresh: (facts) => w.ports.decide(facts),
      },
      '2026-06-01',
      '2026-06-03',
      memoryRebuildStores(),
    );
    const live = ROW_FAMILIES.flatMap((family) =>
      w.rows.rowsOf(APP, family).map((row) => rowOf(family, row.key.day, row.key.group, row.counters)),
    );
    expect(rebuilt.objects).toBe(3);
    expect(rebuilt.rows.length).toBeGreaterThan(5);
    expect(differences(live, rebuilt.rows)).toEqual([]);
    expect(rebuilt.rows).toContainEqual({
      family: 'revenue',
      day: '2026-06-02',
      group: { partner: 'meta' },
      counters: { purchases: 1, revenue_micros: 7_000_000, payers: 1 },
    });

    // A row the live path lost shows as a difference.
    const lost = live.filter((row) => !(row.family === 'revenue' && row.group.partner === 'meta'));
    expect(differences(lost, rebuilt.rows)).toEqual([
      {
        family: 'revenue',
        day: '2026-06-02',
        group: { partner: 'meta' },
        live: null,
        rebuilt: { purchases: 1, revenue_micros: 7_000_000, payers: 1 },
      },
    ]);
  });
});
