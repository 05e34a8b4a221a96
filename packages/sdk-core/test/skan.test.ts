import fc from 'fast-check';
import { Sdk, type SdkConfig, type SkanPort, type SkanUpdate, skanConversions } from '../src';
import { CREDENTIALS, World } from './world';

/**
 * SKAN conversion values on the device (docs/skan-postbacks.md, "Choosing a conversion value on
 * the device"). The property's oracle is the doc's rule written again from the list of events the
 * app tracked, without the core's code: Apple (the port) must receive exactly its updates, through
 * restarts and through processes that die around the call to Apple (a call Apple took may come
 * again with the same value after a restart; never a lower one).
 */
const DAY = 24 * 60 * 60_000;
const NAMES = ['purchase', 'level_up', 'tutorial', 'subscribe'] as const;
const RANK = { low: 0, medium: 1, high: 2 } as const;
type Coarse = keyof typeof RANK;

interface Schema {
  fine: { value: number; revenue_usd: [number, number]; events: string[] }[];
  coarse: { window: 0 | 1 | 2; value: Coarse; revenue_usd: [number, number]; events: string[] }[];
  lock: { window: 0 | 1 | 2; events: string[] }[];
}

const config = (overrides: Partial<SdkConfig> = {}): SdkConfig => ({
  ...CREDENTIALS,
  baseUrl: 'https://api.example.com',
  // One session for the whole run: the oracle then knows every event the core counts.
  sessionTimeoutMs: 1_000 * DAY,
  // No periodic send: the runs move the clock by days, and SKAN needs no event to reach the service.
  flushIntervalMs: 1_000 * DAY,
  ...overrides,
});

const revenueMin = fc.constantFrom(0, 0, 1, 5, 20, 100);
const names = fc.subarray([...NAMES], { maxLength: 2 });
const schemaArb: fc.Arbitrary<Schema> = fc.record({
  fine: fc.uniqueArray(
    fc.record({ value: fc.integer({ min: 0, max: 63 }), min: revenueMin, events: names }).map(({ value, min, events }) => ({
      value,
      revenue_usd: [min, min + 10] as [number, number],
      events,
    })),
    { selector: (e) => e.value, maxLength: 6 },
  ),
  coarse: fc.uniqueArray(
    fc
      .record({
        window: fc.constantFrom<0 | 1 | 2>(0, 1, 2),
        value: fc.constantFrom<Coarse>('low', 'medium', 'high'),
        min: revenueMin,
        events: names,
      })
      .map(({ window, value, min, events }) => ({ window, value, revenue_usd: [min, min + 10] as [number, number], events })),
    { selector: (e) => `${e.window}/${e.value}`, maxLength: 9 },
  ),
  lock: fc.uniqueArray(
    fc.record({ window: fc.constantFrom<0 | 1 | 2>(0, 1, 2), events: fc.subarray([...NAMES], { minLength: 1, maxLength: 2 }) }),
    { selector: (r) => r.window, maxLength: 2 },
  ),
});

type Step =
  | { kind: 'track'; name: string; revenue?: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'restart' }
  | { kind: 'dies_at_apple'; taken: boolean };

const step: fc.Arbitrary<Step> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      { kind: fc.constant('track' as const), name: fc.constantFrom(...NAMES), revenue: fc.constantFrom(0.99, 4, 15, 60) },
      { requiredKeys: ['kind', 'name'] },
    ),
  },
  {
    weight: 3,
    arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.constantFrom(60_000, 3_600_000, DAY, 3 * DAY, 10 * DAY) }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('restart' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('dies_at_apple' as const), taken: fc.boolean() }) },
);

/** The doc's rule, from the events in the order tracked (each with its time), as a list of calls to Apple. */
function oracle(schema: Schema, firstLaunchMs: number, events: readonly { name: string; ts: number; revenue: number }[]): SkanUpdate[] {
  const updates: SkanUpdate[] = [];
  let window = -1;
  let revenue = 0;
  let seen: string[] = [];
  let fine: number | undefined;
  let coarse: Coarse | undefined;
  let locked = false;
  const decide = (lockingName: string | undefined) => {
    if (locked) return;
    const ok = (e: { revenue_usd: [number, number]; events: string[] }) =>
      e.revenue_usd[0] <= revenue && e.events.every((n) => seen.includes(n));
    const fines = window === 0 ? schema.fine.filter(ok).map((e) => e.value) : [];
    const coarses = schema.coarse.filter((e) => e.window === window && ok(e)).map((e) => e.value);
    const bestFine = fines.length ? Math.max(...fines) : undefined;
    const bestCoarse = coarses.sort((a, b) => RANK[b] - RANK[a])[0];
    const fineUp = bestFine !== undefined && (fine === undefined || bestFine > fine);
    const coarseUp = bestCoarse !== undefined && (coarse === undefined || RANK[bestCoarse] > RANK[coarse]);
    const lock = lockingName !== undefined && schema.lock.some((r) => r.window === window && r.events.includes(lockingName));
    if (!fineUp && !coarseUp && !lock) return;
    if (fineUp) fine = bestFine;
    if (coarseUp) coarse = bestCoarse;
    locked = lock;
    updates.push({
      window: window as 0 | 1 | 2,
      ...(fine !== undefined && { fine }),
      ...(coarse !== undefined && { coarse }),
      lockWindow: lock,
    });
  };
  for (const [i, event] of events.entries()) {
    const days = Math.floor((event.ts - firstLaunchMs) / DAY);
    const w = days <= 2 ? 0 : days <= 7 ? 1 : days <= 35 ? 2 : undefined;
    if (w === undefined) continue;
    if (w !== window) {
      window = w;
      revenue = 0;
      seen = [];
      fine = undefined;
      coarse = undefined;
      locked = false;
    }
    revenue += event.revenue;
    if (!seen.includes(event.name)) seen.push(event.name);
    // The install and the first session are counted before the schema arrives: one decision on its arrival.
    if (i === 0) continue;
    decide(i === 1 ? undefined : event.name);
  }
  return updates;
}

/** Apple, as one process sees it: a dead process calls nothing; `dies` makes the process die at the next call. */
function apple(world: World) {
  const taken: SkanUpdate[] = [];
  const dies: boolean[] = [];
  const portOf = (): SkanPort => {
    const generation = world.generation;
    return {
      updateConversionValue: async (update) => {
        if (generation !== world.generation) throw new Error('the process is gone');
        const death = dies.shift();
        if (death === false) world.crash(); // Dies before Apple hears of it.
        if (generation !== world.generation) throw new Error('the process died');
        taken.push(update);
        if (death === true) {
          world.crash(); // Apple took it; the process dies before it writes that down.
          throw new Error('the process died');
        }
      },
    };
  };
  return { taken, dies, portOf };
}

async function run(schema: Schema, steps: readonly Step[]) {
  const world = new World();
  world.skanSchema = schema;
  const { taken, dies, portOf } = apple(world);
  const firstLaunchMs = world.now;
  const start = () => Sdk.start(config(), { ...world.ports(), skan: skanConversions(portOf()) });
  let generation = world.generation;
  let sdk = await start();
  await world.advance(0);
  await world.advance(0);
  const tracked: { name: string; ts: number; revenue: number }[] = [
    { name: 'install', ts: firstLaunchMs, revenue: 0 },
    { name: 'session_start', ts: firstLaunchMs, revenue: 0 },
  ];
  for (const s of steps) {
    switch (s.kind) {
      case 'track': {
        const ts = world.now;
        const id = await sdk.track(s.name, s.revenue === undefined ? {} : { revenue: s.revenue });
        if (id !== undefined) tracked.push({ name: s.name, ts, revenue: s.revenue ?? 0 });
        break;
      }
      case 'advance':
        await world.advance(s.ms);
        break;
      case 'restart':
        world.crash();
        break;
      case 'dies_at_apple':
        dies.push(s.taken);
        break;
    }
    // A process that died (a restart, or inside the call to Apple) is started again over the same storage.
    while (generation !== world.generation) {
      sdk.stop();
      generation = world.generation;
      sdk = await start();
      await world.advance(0);
    }
  }
  sdk.stop();
  return { taken, expected: oracle(schema, firstLaunchMs, tracked) };
}

const collapsed = (updates: readonly SkanUpdate[]) =>
  updates.filter((u, i) => i === 0 || JSON.stringify(u) !== JSON.stringify(updates[i - 1]));

describe('SKAN conversion values', () => {
  it('sends Apple exactly the rule’s updates, never lower within a window and nothing after a lock, through restarts', async () => {
    const seen = { updates: 0, locks: 0, laterWindows: 0, resent: 0 };
    const reached = () => Math.min(seen.updates, seen.locks, seen.laterWindows, seen.resent) > 0;
    // More rounds only while a case the rule is about has not come up yet (a call Apple took twice
    // is the rarest draw): every round's runs must hold, and the cases must be reached at the end.
    for (let round = 0; round === 0 || (round < 5 && !reached()); round++)
      await fc.assert(
        fc.asyncProperty(schemaArb, fc.array(step, { maxLength: 30 }), async (schema, steps) => {
          const { taken, expected } = await run(schema, steps);
          expect(collapsed(taken)).toEqual(expected);
          seen.updates += expected.length;
          seen.locks += expected.filter((u) => u.lockWindow).length;
          seen.laterWindows += expected.filter((u) => u.window > 0).length;
          seen.resent += taken.length - expected.length;
          for (const [i, u] of taken.entries()) {
            const before = taken.slice(0, i).filter((p) => p.window === u.window);
            for (const p of before) {
              expect(p.lockWindow && JSON.stringify(p) !== JSON.stringify(u)).toBe(false);
              expect((u.fine ?? -1) >= (p.fine ?? -1)).toBe(true);
              expect(RANK[u.coarse ?? 'low'] >= RANK[p.coarse ?? 'low'] || p.coarse === undefined).toBe(true);
            }
          }
        }),
        { numRuns: Number(process.env.SKAN_RUNS ?? 100) },
      );
    // The runs reach what the rule is about: rising values, locks, the later windows, a call Apple took twice.
    expect({ seen, reached: reached() }).toEqual({ seen, reached: true });
  }, 300_000);
});

describe('the SKAN schema fetch', () => {
  const schema: Schema = {
    fine: [
      { value: 5, revenue_usd: [1, 10], events: [] },
      { value: 9, revenue_usd: [20, 50], events: [] },
    ],
    coarse: [],
    lock: [],
  };

  async function device(world: World) {
    const taken: SkanUpdate[] = [];
    const sdk = await Sdk.start(config(), {
      ...world.ports(),
      skan: skanConversions({ updateConversionValue: async (update) => void taken.push(update) }),
    });
    await world.advance(0);
    return { sdk, taken };
  }

  it('asks at launch signed over the empty body, then after five minutes with If-None-Match, and keeps the schema on 304', async () => {
    const world = new World();
    world.skanSchema = schema;
    const { sdk, taken } = await device(world);
    expect(world.skanRequests).toEqual([undefined]);
    expect(world.badSignatures).toBe(0);
    await sdk.track('purchase', { revenue: 4 });
    await world.advance(4 * 60_000);
    await sdk.track('purchase', { revenue: 1 });
    await world.advance(0);
    expect(world.skanRequests).toHaveLength(1); // Within the cache's five minutes: not asked again.
    await world.advance(60_000);
    await sdk.track('purchase', { revenue: 20 });
    await world.advance(0);
    const etag = world.skanRequests[1];
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect(taken).toEqual([
      { window: 0, fine: 5, lockWindow: false },
      { window: 0, fine: 9, lockWindow: false },
    ]);
    sdk.stop();
  });

  it('keeps the schema across a restart and does not ask again within its five minutes', async () => {
    const world = new World();
    world.skanSchema = schema;
    await device(world);
    world.crash();
    const { sdk, taken } = await device(world);
    expect(world.skanRequests).toEqual([undefined]);
    await sdk.track('purchase', { revenue: 2 });
    expect(taken).toEqual([{ window: 0, fine: 5, lockWindow: false }]);
    sdk.stop();
  });

  it('sends nothing when the app has no schema (404 no_schema), and forgets one the app took away', async () => {
    const world = new World();
    const first = await device(world);
    await first.sdk.track('purchase', { revenue: 30 });
    expect(first.taken).toEqual([]);
    first.sdk.stop();
    world.crash();
    await world.advance(5 * 60_000); // The 404 is cached five minutes too.
    world.skanSchema = schema;
    const second = await device(world);
    world.skanSchema = undefined;
    await world.advance(5 * 60_000);
    await second.sdk.track('tutorial');
    await world.advance(0);
    expect(world.skanRequests).toHaveLength(3);
    await second.sdk.track('purchase', { revenue: 100 });
    // The second launch's schema met the 30 dollars counted (fine 9); after the 404 nothing more goes.
    expect(second.taken).toEqual([{ window: 0, fine: 9, lockWindow: false }]);
    second.sdk.stop();
  });

  it('calls Apple only once consent is given, with what was counted before it', async () => {
    const world = new World();
    world.skanSchema = schema;
    const taken: SkanUpdate[] = [];
    const sdk = await Sdk.start(config({ requireConsent: true }), {
      ...world.ports(),
      skan: skanConversions({ updateConversionValue: async (update) => void taken.push(update) }),
    });
    await world.advance(0);
    expect(world.skanRequests).toEqual([]); // Nothing asked of the service before consent either.
    await sdk.track('purchase', { revenue: 30 });
    expect(taken).toEqual([]);
    await sdk.setConsent(true);
    await world.advance(0);
    // The schema arrives after consent and meets the 30 dollars counted before it.
    expect(taken).toEqual([{ window: 0, fine: 9, lockWindow: false }]);
    sdk.stop();
  });

  it('retries a call Apple refused at the next save, and drops it once its window is over', async () => {
    const world = new World();
    world.skanSchema = schema;
    const taken: SkanUpdate[] = [];
    let refusing = true;
    const port = {
      updateConversionValue: async (update: SkanUpdate) => {
        if (refusing) throw new Error('SKAdNetwork refused');
        taken.push(update);
      },
    };
    const start = () => Sdk.start(config(), { ...world.ports(), skan: skanConversions(port) });
    let sdk = await start();
    await world.advance(0);
    await sdk.track('purchase', { revenue: 2 });
    refusing = false;
    await sdk.track('tutorial');
    expect(taken).toEqual([{ window: 0, fine: 5, lockWindow: false }]);
    refusing = true;
    await sdk.track('purchase', { revenue: 20 });
    refusing = false;
    sdk.stop();
    world.crash();
    await world.advance(4 * DAY);
    sdk = await start();
    await world.advance(0);
    expect(taken).toEqual([{ window: 0, fine: 5, lockWindow: false }]);
    sdk.stop();
  });

  it('keeps the schema kept last on a 503 or a network error', async () => {
    const world = new World();
    world.skanSchema = schema;
    const { sdk, taken } = await device(world);
    for (const mode of ['unavailable', 'network_down'] as const) {
      await world.advance(5 * 60_000);
      world.modes = [mode];
      await sdk.track('level_up');
      await world.advance(0);
    }
    expect(world.requests).toBeGreaterThanOrEqual(3);
    await sdk.track('purchase', { revenue: 25 });
    expect(taken).toEqual([{ window: 0, fine: 9, lockWindow: false }]);
    sdk.stop();
  });
});
