// Issue 35: the faults an auditor found the ledger-lane design (docs/aggregation.md, "Exactly once")
// still loses counts under. Each test reproduces one on the in-memory ports of world.ts with a
// fault of the kind it names: a write that lands and then answers an error, a delivery that dies
// at a chosen step, two invocations in a chosen interleaving.

import fc from 'fast-check';
import type { AggregationPorts } from '../../../functions/domain/aggregation/aggregate';
import { aggregateDeliveries, type DeliveryOutcome, isRetried, settleStaleLanes } from '../../../functions/domain/aggregation/aggregate';
import { LanePicker } from '../../../functions/domain/aggregation/lanes';
import { LANES, tokenOf } from '../../../functions/domain/aggregation/lease';
import { STREAM_SETTLE_MS, watermarkOf } from '../../../functions/domain/raw-data/watermark';
import { LANE_LEASE_MS } from '../../../functions/shared/lane-ports';
import { schedules } from '../../../lib/manifest';
import { nextFireTime } from '../../../local/scheduler';
import { attributeByClicks, dropZeros, type OracleEvent, oracleRows } from '../../../sim/oracle';
import { APP, click, failingAfter, LEASE_MS, redeliverUntilDone, T0, world } from './world';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const event = (n: number, id: string, name: string, tsMs: number, extra: object = {}) => ({
  event_id: id,
  event_name: name,
  install_uuid: uuid(n),
  ts_ms: tsMs,
  ...extra,
});
const tokenOfBody = (body: string) => tokenOf((JSON.parse(body) as { audit_key: string }).audit_key);

type World = ReturnType<typeof world>;

describe('a mark that landed but whose answer was lost (issue 35, item 1)', () => {
  it('leaves the row counting all three objects of the invocation once their deliveries come back', async () => {
    const w = world();
    // Three objects, each an event of its own install, all on one events row.
    const bodies = [1, 2, 3].map((n) => w.upload([event(n, `e-${n}`, 'level', T0 + n)]));
    const lost = tokenOfBody(bodies[2] as string);
    const include = w.ledger.include.bind(w.ledger);
    const lossy = {
      ...w.ports,
      ledger: Object.assign(Object.create(w.ledger), {
        // C's mark is written, then the answer is lost (a timeout, the SDK's retries used up).
        include: async (...args: Parameters<typeof include>) => {
          const mark = await include(...args);
          if (args[0] === lost) throw Object.assign(new Error('socket hang up (injected, after the write)'), { name: 'TimeoutError' });
          return mark;
        },
      }),
    };
    const outcomes = await w.deliver(bodies, lossy);
    expect(outcomes[2]?.kind).toBe('failed');
    await redeliverUntilDone(w, bodies, outcomes);
    expect(w.table().events).toEqual({ '2026-06-01|level': { events: 3, unique_installs: 3 } });
    // Each event once in the stream too.
    expect(w.streamEvents().map((e) => e.event_id)).toEqual(['e-1', 'e-2', 'e-3']);
  });
});

describe('held events under two installs of one install_uuid (issue 35, item 2)', () => {
  // A purchase of uuid 1 arrives before any install and is held. Then two installs of the uuid:
  // i (organic, at T0), whose object claims the `first` mark, and j (a click's, an hour later).
  // Whatever the interleaving, i is the first install: the purchase counts under i's partner,
  // retains i's cohort on day 1, and the stream marks i alone as the first.
  const setUp = () => {
    const w = world();
    w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 - HOUR, partner: 'meta' }));
    w.clock.now = T0 + 2 * DAY;
    const purchase = w.upload([event(1, 'e-1', 'purchase', T0 + DAY + 5, { revenue_usd: 2 })]);
    const i = w.upload([{ ...event(1, 'i-1', 'install', T0), platform: 'ios' }]);
    const j = w.upload([{ ...event(1, 'i-1b', 'install', T0 + HOUR), platform: 'ios', attribution: { click_id: 'c1' } }]);
    return { w, purchase, i, j };
  };

  /** The ports with i's object stopped right after its `first` mark is written, until `resume()` settles. */
  const stoppedAfterFirstMark = (w: World, i: string, resume: () => Promise<void>) => {
    const token = tokenOfBody(i);
    const claimItem = w.installs.claimItem.bind(w.installs);
    let marked!: () => void;
    const firstMarked = new Promise<void>((resolve) => {
      marked = resolve;
    });
    const ports = {
      ...w.ports,
      installs: Object.assign(Object.create(w.installs), {
        claimItem: async <T extends { pk: string; sk: string }>(item: T): Promise<T> => {
          const stored = await claimItem(item);
          if (item.sk === 'first' && (item as unknown as { owner: string }).owner === token) {
            marked();
            await resume();
          }
          return stored;
        },
      }),
    };
    return { ports, firstMarked };
  };

  const expectHeldPurchaseOnTheFirstInstall = (w: World) => {
    expect(w.table().revenue).toEqual({ '2026-06-02|organic': { purchases: 1, revenue_micros: 2_000_000, payers: 1 } });
    expect(w.table().cohorts).toEqual({ '2026-06-01': { installs: 2, d1: 1 } });
    const installs = w.stream.lines().filter((line) => line.install !== undefined);
    expect(installs.filter((line) => line.install?.first).map((line) => line.event.event_id)).toEqual(['i-1']);
  };

  it('applies them to the install the first mark names when its delivery died after the mark and the other install came first', async () => {
    const { w, purchase, i, j } = setUp();
    expect((await w.deliver([purchase])).map((o) => o.kind)).toEqual(['counted']);
    const dead = stoppedAfterFirstMark(w, i, () => Promise.reject(new Error('killed after the first mark (injected)')));
    expect((await w.deliver([i], dead.ports)).map((o) => o.kind)).toEqual(['failed']);
    expect((await w.deliver([j])).map((o) => o.kind)).toEqual(['counted']);
    w.clock.now += LEASE_MS + 1;
    expect((await w.deliver([i])).map((o) => o.kind)).toEqual(['counted']);
    expectHeldPurchaseOnTheFirstInstall(w);
  });

  it('applies them to the install the first mark names when it is slow and the other install is counted meanwhile', async () => {
    const { w, purchase, i, j } = setUp();
    expect((await w.deliver([purchase])).map((o) => o.kind)).toEqual(['counted']);
    let resume!: () => void;
    const resumed = new Promise<void>((resolve) => {
      resume = resolve;
    });
    const slow = stoppedAfterFirstMark(w, i, () => resumed);
    const first = w.deliver([i], slow.ports);
    await slow.firstMarked;
    expect((await w.deliver([j])).map((o) => o.kind)).toEqual(['counted']);
    resume();
    expect((await first).map((o) => o.kind)).toEqual(['counted']);
    expectHeldPurchaseOnTheFirstInstall(w);
  });
});

describe('an apply whose invocation died before its first mark (issue 35, item 4)', () => {
  /** An invocation that takes lane 0 and dies writing its stream object: nothing else is written. Returns when the apply opened. */
  async function dieAfterLaneTake(w: World, body: string): Promise<number> {
    const opened = w.clock.now;
    const killed = () => Promise.reject(new Error('killed (injected)'));
    const dying = {
      ...w.ports,
      stream: Object.assign(Object.create(w.stream), { put: killed }),
      ledger: Object.assign(Object.create(w.ledger), { release: killed }),
    };
    const options = { nowMs: () => w.clock.now, leaseMs: LANE_LEASE_MS, lanes: new LanePicker(0) };
    expect((await aggregateDeliveries(dying, [{ id: 'm0', body }], options)).map((o) => o.kind)).toEqual(['failed']);
    return opened;
  }
  const watermark = async (w: World) =>
    watermarkOf((await w.ledger.lanes(Array.from({ length: LANES }, (_, n) => n))).values(), w.clock.now, APP);
  const sweep = (w: World) => settleStaleLanes(w.ports, { nowMs: () => w.clock.now, leaseMs: LANE_LEASE_MS });

  it("is taken over once its lease has run out, so the app's stream is held back no longer than the lease", async () => {
    const w = world();
    const body = w.upload([event(1, 'e-1', 'level', T0 + 1)]);
    const opened = await dieAfterLaneTake(w, body);
    // Its object comes back and is counted on another lane; nothing takes lane 0 meanwhile.
    w.clock.now += 30_000;
    const elsewhere = { nowMs: () => w.clock.now, leaseMs: LANE_LEASE_MS, lanes: new LanePicker(5) };
    expect((await aggregateDeliveries(w.ports, [{ id: 'm0', body }], elsewhere)).map((o) => o.kind)).toEqual(['counted']);
    expect(await watermark(w)).toBe(opened);

    // While the dead apply's lease holds, it is left alone; once it has run out it is replayed and closed.
    expect(await sweep(w)).toEqual({ settled: [], failed: [] });
    w.clock.now = opened + LANE_LEASE_MS + 1;
    expect(await sweep(w)).toEqual({ settled: [0], failed: [] });
    expect(await watermark(w)).toBe(w.clock.now - STREAM_SETTLE_MS);
    expect(w.table().events).toEqual({ '2026-06-01|level': { events: 1, unique_installs: 1 } });
    expect(w.streamEvents().map((e) => e.event_id)).toEqual(['e-1']);
  });

  it('holds the stream back at most the lease plus the period of the lane-sweep schedule, whenever the invocation dies', async () => {
    const schedule = schedules['lane-sweep'];
    const bound = LANE_LEASE_MS + schedule.minutes * 60_000;
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 3 * 60_000 }), async (deathOffsetMs) => {
        const w = world();
        w.clock.now = T0 + deathOffsetMs;
        const opened = await dieAfterLaneTake(w, w.upload([event(1, 'e-1', 'level', T0 + 1)]));
        // The sweep runs at each time the local scheduler (as EventBridge) fires it, nothing else.
        while ((await watermark(w)) <= opened && w.clock.now - opened <= bound) {
          w.clock.now = nextFireTime(schedule, w.clock.now);
          await sweep(w);
        }
        expect(await watermark(w)).toBeGreaterThan(opened);
        expect(w.clock.now - opened).toBeLessThanOrEqual(bound);
      }),
      { numRuns: 25 },
    );
  });
});

/**
 * The ports with `after` run once the `at`-th write (from 1) has been made, before its answer: it
 * can lose the answer (throw: a timeout, or a 5xx after the write applied, with the SDK's retries
 * used up) or hold it (a slow writer). Every other call goes through.
 */
function afterWrite(ports: AggregationPorts, at: number, after: () => Promise<void>): AggregationPorts {
  let writes = 0;
  const counted = failingAfter(ports, Number.POSITIVE_INFINITY).ports;
  const wrap =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      const result = await fn(...args);
      if (++writes === at) await after();
      return result;
    };
  const { installs, ledger, rows } = ports;
  return {
    ...counted,
    installs: {
      ...counted.installs,
      claimItem: wrap(installs.claimItem.bind(installs)),
      claimAttributes: wrap(installs.claimAttributes.bind(installs)),
      replaceHead: wrap(installs.replaceHead.bind(installs)),
    } as AggregationPorts['installs'],
    ledger: {
      ...counted.ledger,
      include: wrap(ledger.include.bind(ledger)),
      void: wrap(ledger.void.bind(ledger)),
      take: wrap(ledger.take.bind(ledger)),
      reserveAfter: wrap(ledger.reserveAfter.bind(ledger)),
      settle: wrap(ledger.settle.bind(ledger)),
      release: wrap(ledger.release.bind(ledger)),
    },
    rows: { add: wrap(rows.add.bind(rows)), refreshPages: wrap(rows.refreshPages.bind(rows)) },
  };
}

const losingAnswer = (ports: AggregationPorts, at: number) =>
  afterWrite(ports, at, () => Promise.reject(Object.assign(new Error('answer lost after the write (injected)'), { name: 'TimeoutError' })));

/** The ports holding the answer of their `at`-th write until `resume()`; `reached` settles when it is held. */
function slowAt(ports: AggregationPorts, at: number) {
  let resume!: () => void;
  const resumed = new Promise<void>((resolve) => {
    resume = resolve;
  });
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => {
    reach = resolve;
  });
  return {
    ports: afterWrite(ports, at, () => {
      reach();
      return resumed;
    }),
    reached,
    resume,
  };
}

/**
 * The clicks the installs of the property test name. Installs fall on the half hours from T0 to
 * T0 + 5.5 h, so `c-late` is after some of them and 0 s before one (a CTIT under 10 s). `c-stale`
 * and `c-short` are out of their lookback, `c-other-app` another app's, and `c-unknown` is not stored.
 */
const CLICKS = [
  click({ click_id: 'c-meta', ts_ms: T0 - 2 * HOUR, partner: 'meta', lookback_days: 7 }),
  click({ click_id: 'c-google', ts_ms: T0 - 3 * DAY, partner: 'google', lookback_days: 7 }),
  click({ click_id: 'c-stale', ts_ms: T0 - 9 * DAY, partner: 'tiktok' }),
  click({ click_id: 'c-short', ts_ms: T0 - 2 * DAY, partner: 'snap', lookback_days: 1 }),
  click({ click_id: 'c-other-app', ts_ms: T0 - HOUR, partner: 'unity', app_id: 'app_fedcba9876543210fedc' }),
  click({ click_id: 'c-late', ts_ms: T0 + 3 * HOUR, partner: 'applovin', lookback_days: 7 }),
];
const CLICK_NAMES = [...CLICKS.map((c) => c.click_id), 'c-unknown'];

describe('the aggregation under the faults of issue 35', () => {
  it('counts every event once under the partner the rules give, and each install_uuid one first install that alone takes its held events, whatever dies, loses its answer, is slow or is delivered twice at once', async () => {
    // Three or four installs of install_uuid 1 and one to four of 2 (3 has events only), at
    // distinct half hours in random order (an install's id says when it was drawn, not its time),
    // each naming a click or none and a Play referrer's click or none, and each sent at a random
    // place of the objects after the first (and perhaps again, by the install events drawn there).
    const installArb = fc.record({
      slot: fc.integer({ min: 0, max: 11 }),
      clickId: fc.option(fc.constantFrom(...CLICK_NAMES), { nil: undefined }),
      referrer: fc.option(fc.constantFrom(...CLICK_NAMES), { nil: undefined, freq: 3 }),
      object: fc.nat({ max: 99 }),
      at: fc.nat({ max: 9 }),
    });
    const installsArb = (minLength: number) => fc.uniqueArray(installArb, { minLength, maxLength: 4, selector: (spec) => spec.slot });
    const laterArb = fc.record({
      install: fc.integer({ min: 1, max: 3 }),
      id: fc.integer({ min: 1, max: 3 }),
      kind: fc.constantFrom('purchase' as const, 'session' as const),
    });
    const eventArb = fc.oneof(
      laterArb,
      fc.record({ install: fc.integer({ min: 1, max: 2 }), id: fc.integer({ min: 1, max: 4 }), kind: fc.constant('install' as const) }),
    );
    // Per delivery: none, the store dying after some writes (between the lane's take and the first
    // mark among them), the answer of one write lost, or one write's answer held while the next
    // delivery runs whole (a slow writer).
    const faultArb = fc.option(
      fc.oneof(
        fc.record({ kind: fc.constant('dies' as const), at: fc.integer({ min: 0, max: 30 }) }),
        fc.record({ kind: fc.constant('loses' as const), at: fc.integer({ min: 1, max: 30 }) }),
        fc.record({ kind: fc.constant('slow' as const), at: fc.integer({ min: 1, max: 30 }) }),
      ),
      { nil: undefined, freq: 2 },
    );
    // Per delivery, its message delivered to a second invocation at once (SQS's at-least-once),
    // which starts after this many turns of the first one (a slow delivery's twin runs while its
    // write is held), or not.
    const twinArb = fc.option(fc.integer({ min: 0, max: 40 }), { nil: undefined, freq: 2 });
    const DELIVERIES = 6;
    await fc.assert(
      fc.asyncProperty(
        fc.tuple(installsArb(3), installsArb(1)),
        fc.array(laterArb, { minLength: 1, maxLength: 3 }),
        fc.array(fc.array(eventArb, { minLength: 1, maxLength: 3 }), { minLength: 2, maxLength: DELIVERIES - 1 }),
        fc.array(faultArb, { minLength: DELIVERIES, maxLength: DELIVERIES }),
        fc.array(twinArb, { minLength: DELIVERIES, maxLength: DELIVERIES }),
        fc.integer({ min: 1, max: 3 }),
        async (installSpecs, held, later, faults, twins, per) => {
          const w = world();
          w.clock.now = T0 + 3 * DAY;
          for (const c of CLICKS) w.clicks.set(c.click_id, c);
          type Spec = typeof installArb extends fc.Arbitrary<infer T> ? T : never;
          type Sent = { install_uuid: string; event_id: string; event_name: string; ts_ms: number; revenue_usd?: number; object: number };
          const specOf = new Map<string, Spec>();
          const sent: Sent[] = [];
          const placed = later.map((events) => [...events]);
          installSpecs.forEach((specs, u) => {
            for (const [n, spec] of specs.entries()) {
              const events = placed[spec.object % placed.length] as (typeof placed)[number];
              events.splice(spec.at % (events.length + 1), 0, { install: u + 1, id: n + 1, kind: 'install' });
            }
          });
          // The first object holds events of the uuids only: counted before any install, they are held.
          const bodies = [held, ...placed].map((events, object) => {
            const batch = events
              .map((e) => {
                if (e.kind !== 'install') {
                  const extra = e.kind === 'purchase' ? { revenue_usd: e.id } : {};
                  return event(e.install, `${e.kind}-${e.install}-${e.id}`, e.kind, T0 + DAY + 2 * e.id * HOUR, extra);
                }
                const specs = installSpecs[e.install - 1] as Spec[];
                const n = (e.id - 1) % specs.length;
                const spec = specs[n] as Spec;
                specOf.set(`${uuid(e.install)}|i-${e.install}-${n}`, spec);
                const attribution = {
                  ...(spec.clickId ? { click_id: spec.clickId } : {}),
                  ...(spec.referrer ? { referrer: `utm_source=ads&click_id=${spec.referrer}` } : {}),
                };
                return {
                  ...event(
                    e.install,
                    `i-${e.install}-${n}`,
                    'install',
                    T0 + spec.slot * (HOUR / 2),
                    spec.clickId || spec.referrer ? { attribution } : {},
                  ),
                  platform: 'ios',
                };
              })
              .filter((e, i, all) => all.findIndex((o) => o.event_id === e.event_id) === i);
            sent.push(...batch.map((e) => ({ ...e, object })));
            return w.upload(batch, { body: `object ${object}` });
          });

          // `per` objects a delivery, each delivery with its fault and perhaps its twin; then every one not done comes back.
          let pending: string[] = [];
          const slices = Array.from({ length: Math.ceil(bodies.length / per) }, (_, d) => bodies.slice(d * per, (d + 1) * per));
          const portsOf = (d: number) => {
            const fault = faults[d];
            if (fault === undefined || fault.kind === 'slow') return w.ports;
            return fault.kind === 'dies' ? failingAfter(w.ports, fault.at).ports : losingAnswer(w.ports, fault.at);
          };
          const deliver = async (d: number, ports: AggregationPorts) => {
            const slice = slices[d] as string[];
            const outcomes = await w.deliver(slice, ports);
            pending.push(...slice.filter((_, j) => isRetried(outcomes[j] as DeliveryOutcome)));
          };
          const twin = async (d: number, turns: number) => {
            for (let turn = 0; turn < turns; turn++) await Promise.resolve();
            await deliver(d, w.ports);
          };
          const withTwin = (d: number, ports: AggregationPorts) => {
            const turns = twins[d];
            return Promise.all([deliver(d, ports), ...(turns === undefined ? [] : [twin(d, turns)])]);
          };
          for (let d = 0; d < slices.length; d++) {
            const fault = faults[d];
            if (fault?.kind !== 'slow') {
              await withTwin(d, portsOf(d));
              continue;
            }
            // The slow delivery holds one write's answer while its twin, then the next delivery, run whole.
            const slow = slowAt(w.ports, fault.at);
            const running = deliver(d, slow.ports);
            await Promise.race([slow.reached, running]);
            if (twins[d] !== undefined) await twin(d, 0);
            if (d + 1 < slices.length) {
              d++;
              await withTwin(d, portsOf(d));
            }
            slow.resume();
            await running;
          }
          for (let round = 0; round < 6 && pending.length > 0; round++) {
            w.clock.now += LEASE_MS + 1;
            const outcomes = await w.deliver(pending);
            pending = pending.filter((_, j) => isRetried(outcomes[j] as DeliveryOutcome));
          }
          expect(pending).toEqual([]);
          // An apply a dead invocation left open with no mark is taken over once its lease has run out.
          w.clock.now += LEASE_MS + 1;
          await settleStaleLanes(w.ports, { nowMs: () => w.clock.now, leaseMs: LEASE_MS });
          const lanes = await w.ledger.lanes(Array.from({ length: LANES }, (_, n) => n));
          expect([...lanes.values()].filter((lane) => lane.seq > lane.applied)).toEqual([]);

          // The oracle, which shares no code with the aggregation: distinct identities (a copy of an
          // identity is the same event), attributed by rule 1 written plainly (sim/oracle.ts).
          const identity = (e: { install_uuid: string; event_id: string }) => `${e.install_uuid}|${e.event_id}`;
          const distinct = new Map<string, Sent>();
          for (const e of sent) if (!distinct.has(identity(e))) distinct.set(identity(e), e);
          const decisionOf = (installUuid: string, eventId: string) => {
            const key = `${installUuid}|${eventId}`;
            const spec = specOf.get(key) as Spec;
            const clickOf = (clickId: string) => CLICKS.find((c) => c.click_id === clickId);
            return attributeByClicks([spec.clickId, spec.referrer], { appId: APP, tsMs: (distinct.get(key) as Sent).ts_ms }, clickOf);
          };
          const installsOf = (installUuid: string) =>
            [...distinct.values()].filter((e) => e.event_name === 'install' && e.install_uuid === installUuid);
          // Which install is first depends on the order of counting, which faults and twins make
          // unknowable: it is the one the uuid's `first` mark names, which must be one of its installs.
          const firstOf = new Map<string, string>();
          for (const installUuid of new Set(sent.map((e) => e.install_uuid))) {
            if (installsOf(installUuid).length === 0) continue;
            const mark = await w.installs.get<{ member: string }>(`${APP}#${installUuid}`, 'first');
            expect(installsOf(installUuid).map((e) => e.event_id)).toContain(mark?.member);
            firstOf.set(installUuid, mark?.member as string);
          }

          // The stream: each event once; the one first install of each uuid, the one its mark names;
          // each install under the partner the oracle gives it.
          const lines = w.stream.lines();
          expect(lines.map((line) => identity(line.event)).sort()).toEqual([...distinct.keys()].sort());
          for (const line of lines.filter((l) => l.install !== undefined)) {
            const { partner, type } = decisionOf(line.event.install_uuid, line.event.event_id);
            expect([line.install?.decision.partner, line.install?.decision.attribution_type]).toEqual([partner, type]);
            expect(line.install?.first).toBe(firstOf.get(line.event.install_uuid) === line.event.event_id);
          }
          // The install each other event counts against is also the order's: the stream names it
          // (a held event's is the first install). The rules allow any install of the uuid, but an
          // event sent once, after an install in its object sent once, counts against that install
          // or a newer one (the current install is the latest in time).
          const against = new Map<string, string>();
          for (const line of lines.filter((l) => l.event.event_name !== 'install')) {
            const e = line.event;
            const counted = e.attribution?.install_event_id ?? firstOf.get(e.install_uuid);
            if (counted === undefined) continue;
            const install = distinct.get(`${e.install_uuid}|${counted}`);
            expect(install?.event_name).toBe('install');
            against.set(identity(e), counted);
            const copies = sent.filter((s) => identity(s) === identity(e));
            if (copies.length !== 1) continue;
            const inObject = sent.filter((s) => s.object === (copies[0] as Sent).object);
            const before = inObject
              .slice(
                0,
                inObject.findIndex((s) => identity(s) === identity(e)),
              )
              .filter(
                (s) =>
                  s.event_name === 'install' &&
                  s.install_uuid === e.install_uuid &&
                  sent.filter((o) => identity(o) === identity(s)).length === 1,
              );
            for (const b of before) expect((install as Sent).ts_ms).toBeGreaterThanOrEqual(b.ts_ms);
          }

          // The rows, every family the reports read: the first installs first, then the others, then the rest.
          const rank = (e: Sent) => (e.event_name !== 'install' ? 2 : firstOf.get(e.install_uuid) === e.event_id ? 0 : 1);
          const ordered: OracleEvent[] = [...distinct.values()]
            .sort((a, b) => rank(a) - rank(b))
            .map((e) => ({
              installUuid: e.install_uuid,
              eventId: e.event_id,
              name: e.event_name,
              tsMs: e.ts_ms,
              revenueUsd: e.revenue_usd,
            }));
          const expected = dropZeros(
            oracleRows(ordered, (e) => decisionOf(e.installUuid, e.eventId), {
              countsAgainst: (e) => against.get(`${e.installUuid}|${e.eventId}`),
            }),
          );
          const { attribution, revenue, cohorts, events } = w.table();
          expect({ attribution, revenue, cohorts, events }).toEqual(expected);
          expect(w.attributionPages()).toEqual(attribution);
        },
      ),
      { numRuns: 500 },
    );
  });
});
