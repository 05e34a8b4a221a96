// ADR 0008: the click-count lane counts each logged click once across a crash between any two of
// its writes. The ports are in memory; a fault stops an apply at a chosen write (the write lost,
// or landed with its answer lost), then the lane runs again. The counts are held to an
// independent count of the click log, and a read's top-up to the same count at every crash point.

import fc from 'fast-check';
import {
  CLICKS_PER_APPLY,
  type ClickCountPorts,
  type ClickLanePorts,
  type ClickLogState,
  countAppClicks,
  HORIZON_MS,
  type LoggedClick,
  readsLegacy,
  runClickLane,
  topUp,
} from '../../../functions/domain/aggregation/click-counts';
import { type ClickCount, clickCountSortKey } from '../../../functions/domain/analytics/click-counts';

const APP = 'app_1';
const HOUR = 3_600_000;
/** Mid-hour, so the log spans this hour and the one before (the top-up's two hours). */
const NOW = Date.parse('2026-06-01T10:40:00Z');

class Crash extends Error {}

/** The stored world: the click log, the counter items with their `applied` id, the stamps, the state. */
function world(log: readonly LoggedClick[]) {
  const items = new Map<string, { clicks: number; applied?: string }>();
  const stamps = new Map<string, number>();
  let stored: ClickLogState | undefined;
  let writes = 0;
  /** Stop at the write numbered `at`: lost, or landed with its answer lost. */
  let fault: { at: number; landed: boolean } | undefined;
  const write = async (apply: () => void) => {
    writes += 1;
    if (fault && writes === fault.at) {
      if (fault.landed) apply();
      throw new Crash(`write ${writes}`);
    }
    apply();
  };
  const ports: ClickCountPorts = {
    state: async () => stored && structuredClone(stored),
    putState: async (_app, state, expectedRev) => {
      let put = false;
      await write(() => {
        if (stored?.rev !== expectedRev) return;
        stored = structuredClone(state);
        put = true;
      });
      return put;
    },
    addOnce: (_app, applyId, count) =>
      write(() => {
        const key = clickCountSortKey(count.day, count.dims, count.linkId);
        const item = items.get(key) ?? { clicks: 0 };
        if (item.applied === applyId) return;
        items.set(key, { clicks: item.clicks + count.clicks, applied: applyId });
      }),
    stamp: (_app, day) => write(() => stamps.set(day, (stamps.get(day) ?? 0) + 1)),
    // The old clicks table's clicks (`legacy`) only when asked for, as ClickStore.clicksAfter.
    clicksAfter: async (_app, hour, fromTs, withLegacy) =>
      log.filter(
        (click) =>
          new Date(click.ts_ms).toISOString().slice(0, 13) === hour && click.ts_ms >= fromTs && (withLegacy || click.legacy !== true),
      ),
    legacyHolds: async () => log.some((click) => click.legacy === true),
  };
  return {
    ports,
    items,
    stamps,
    state: () => stored,
    writes: () => writes,
    failAt: (at: number, landed: boolean) => {
      writes = 0;
      fault = { at, landed };
    },
    noFault: () => {
      fault = undefined;
    },
  };
}

/** The independent count: one per logged click that carries count_day, by its day, dimensions and link, as text. */
function oracle(log: readonly LoggedClick[], untilMs: number): Map<string, number> {
  const counts = new Map<string, number>();
  for (const click of log) {
    if (click.count_day === undefined || click.ts_ms > untilMs) continue;
    const key = [click.count_day, click.partner, click.campaign ?? '(none)', click.country ?? '(none)', click.platform, click.link_id].join(
      '|',
    );
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

const asText = (counts: Iterable<[string, number]>): Map<string, number> => {
  const text = new Map<string, number>();
  for (const [sortKey, clicks] of counts)
    if (clicks > 0) text.set(sortKey.split('\u0001').join('|'), (text.get(sortKey.split('\u0001').join('|')) ?? 0) + clicks);
  return text;
};
const itemCounts = (items: ReadonlyMap<string, { clicks: number }>) => asText([...items].map(([key, item]) => [key, item.clicks]));
const plus = (a: Map<string, number>, counts: readonly ClickCount[]) => {
  const sum = new Map(a);
  for (const [key, clicks] of asText(counts.map((count) => [clickCountSortKey(count.day, count.dims, count.linkId), count.clicks]))) {
    sum.set(key, (sum.get(key) ?? 0) + clicks);
  }
  return sum;
};

/**
 * Clicks of the last two hours up to NOW, ids unique, some recorded before the lane (no count_day),
 * and an upgrade to click_log somewhere (or nowhere) in them: the clicks before it are in the old
 * clicks table (`legacy`), and so are a few of the 10 seconds after it (the old version of the
 * redirect still running beside the new one).
 */
const logArb = fc
  .tuple(
    fc.array(
      fc.record({
        offsetMs: fc.integer({ min: 0, max: HOUR + 40 * 60_000 }),
        partner: fc.constantFrom('acme', 'beta'),
        campaign: fc.option(fc.constantFrom('spring', 'fall'), { nil: undefined }),
        country: fc.option(fc.constantFrom('US', 'JP'), { nil: undefined }),
        platform: fc.constantFrom('ios', 'android'),
        link: fc.constantFrom('lnk_1', 'lnk_2'),
        day: fc.option(fc.constantFrom('2026-06-01', '2026-05-31'), { nil: undefined, freq: 6 }),
        straggler: fc.boolean(),
      }),
      { maxLength: 40 },
    ),
    fc.integer({ min: -60_000, max: HOUR + 41 * 60_000 }),
  )
  .map(([draws, upgradeMs]) =>
    draws.map(
      (draw, i): LoggedClick => ({
        click_id: `c${String(i).padStart(3, '0')}`,
        // Several clicks share a millisecond: the watermark orders them by click_id.
        ts_ms: Date.parse('2026-06-01T09:00:00Z') + draw.offsetMs - (draw.offsetMs % 7),
        link_id: draw.link,
        partner: draw.partner,
        platform: draw.platform,
        ...(draw.campaign === undefined ? {} : { campaign: draw.campaign }),
        ...(draw.country === undefined ? {} : { country: draw.country }),
        ...(draw.day === undefined ? {} : { count_day: draw.day }),
        ...(draw.offsetMs < upgradeMs || (draw.straggler && draw.offsetMs < upgradeMs + 10_000) ? { legacy: true } : {}),
      }),
    ),
  );

/** A read at `nowMs`: the items as stored plus the top-up of what the state says is not counted. */
async function readAt(w: ReturnType<typeof world>, nowMs: number): Promise<Map<string, number>> {
  const applied = (key: string) => w.items.get(key)?.applied;
  const added = await topUp(w.ports, APP, w.state(), applied, { firstDay: '2000-01-01', lastDay: '2999-12-31' }, nowMs);
  return plus(itemCounts(w.items), added.counts);
}

describe('the click-count lane across a crash between any two writes', () => {
  it('counts every logged click once after a fault at any write and a retry, and a read sees each click once at every point', async () => {
    await fc.assert(
      fc.asyncProperty(
        logArb,
        fc.nat({ max: 60 }),
        fc.boolean(),
        fc.integer({ min: 0, max: 30 * 60_000 }),
        async (log, at, landed, laterMs) => {
          const w = world(log);
          // A first run over part of the log, so the faulted run starts from a watermark in the middle.
          await countAppClicks(w.ports, APP, NOW - 30 * 60_000);
          expect(await readAt(w, NOW)).toEqual(oracle(log, NOW));
          w.failAt(at + 1, landed);
          await countAppClicks(w.ports, APP, NOW).catch((error) => {
            if (!(error instanceof Crash)) throw error;
          });
          // Between the crash and the retry, a read is exact.
          expect(await readAt(w, NOW)).toEqual(oracle(log, NOW));
          w.noFault();
          await countAppClicks(w.ports, APP, NOW + laterMs);
          expect(w.state()?.pending).toBeUndefined();
          expect(itemCounts(w.items)).toEqual(oracle(log, NOW + laterMs - HORIZON_MS));
          expect(await readAt(w, NOW + laterMs)).toEqual(oracle(log, NOW + laterMs));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('counts nothing twice when a fault hits every write of a run in turn, each followed by a retry', async () => {
    await fc.assert(
      fc.asyncProperty(logArb, async (log) => {
        const w = world(log);
        // Each run dies at its k-th write; the next one resumes; and so on, until a run finishes.
        for (let at = 1; at < 200; at += 1) {
          w.failAt(at, at % 2 === 0);
          const crashed = await countAppClicks(w.ports, APP, NOW).then(
            () => false,
            (error) => {
              if (!(error instanceof Crash)) throw error;
              return true;
            },
          );
          expect(await readAt(w, NOW)).toEqual(oracle(log, NOW));
          if (!crashed) break;
        }
        w.noFault();
        await countAppClicks(w.ports, APP, NOW);
        expect(itemCounts(w.items)).toEqual(oracle(log, NOW - HORIZON_MS));
      }),
      { numRuns: 100 },
    );
  });

  it("moves each touched day's stamp after its counts, so a page built at the new stamp holds them", async () => {
    const log: LoggedClick[] = [
      { click_id: 'a', ts_ms: NOW - HOUR, link_id: 'l', partner: 'p', platform: 'ios', count_day: '2026-06-01' },
      { click_id: 'b', ts_ms: NOW - HOUR, link_id: 'l', partner: 'p', platform: 'ios', count_day: '2026-05-31' },
    ];
    const w = world(log);
    const order: string[] = [];
    const traced: ClickCountPorts = {
      ...w.ports,
      addOnce: async (...args) => {
        order.push(`add ${args[2].day}`);
        await w.ports.addOnce(...args);
      },
      stamp: async (...args) => {
        order.push(`stamp ${args[1]}`);
        await w.ports.stamp(...args);
      },
    };
    await countAppClicks(traced, APP, NOW);
    expect(order).toEqual(['add 2026-05-31', 'add 2026-06-01', 'stamp 2026-05-31', 'stamp 2026-06-01']);
    expect(w.stamps).toEqual(
      new Map([
        ['2026-05-31', 1],
        ['2026-06-01', 1],
      ]),
    );
  });

  it('leaves a click of the last five seconds to the next run and closes an hour once it is over', async () => {
    const log: LoggedClick[] = [
      { click_id: 'old', ts_ms: NOW - HOUR, link_id: 'l', partner: 'p', platform: 'ios', count_day: '2026-06-01' },
      { click_id: 'new', ts_ms: NOW - 1_000, link_id: 'l', partner: 'p', platform: 'ios', count_day: '2026-06-01' },
    ];
    const w = world(log);
    await countAppClicks(w.ports, APP, NOW);
    expect(itemCounts(w.items)).toEqual(new Map([['2026-06-01|p|(none)|(none)|ios|l', 1]]));
    expect(w.state()?.next).toBe('2026-06-01T10');
    await countAppClicks(w.ports, APP, NOW + HORIZON_MS);
    expect(itemCounts(w.items)).toEqual(new Map([['2026-06-01|p|(none)|(none)|ios|l', 2]]));
  });
});

describe('the click-count lane across the upgrade to click_log', () => {
  it('reads the old clicks table for every hour up to the first click_log click, and the hour after it, then no more', async () => {
    const at = (time: string) => Date.parse(`2026-06-01T${time}Z`);
    const log: LoggedClick[] = [
      { click_id: 'old', ts_ms: at('08:30:00'), link_id: 'l', partner: 'p', platform: 'ios', count_day: '2026-06-01', legacy: true },
      { click_id: 'new', ts_ms: at('08:59:59.500'), link_id: 'l', partner: 'p', platform: 'ios', count_day: '2026-06-01' },
      // The old redirect, still running for a few seconds of the update, past the hour.
      { click_id: 'late', ts_ms: at('09:00:03'), link_id: 'l', partner: 'p', platform: 'ios', count_day: '2026-06-01', legacy: true },
    ];
    const w = world(log);
    const reads: [string, boolean][] = [];
    const traced: ClickCountPorts = {
      ...w.ports,
      clicksAfter: async (...args) => {
        reads.push([args[1], args[3]]);
        return w.ports.clicksAfter(...args);
      },
    };
    await countAppClicks(traced, APP, NOW);
    expect(itemCounts(w.items)).toEqual(new Map([['2026-06-01|p|(none)|(none)|ios|l', 3]]));
    expect(w.state()?.log_from).toBe('2026-06-01T08');
    expect([...new Set(reads.map(([hour, withLegacy]) => `${hour} ${withLegacy}`))]).toEqual([
      '2026-06-01T08 true',
      '2026-06-01T09 true',
      '2026-06-01T10 false',
    ]);
  });
});

describe('the click-count lane on a busy hour', () => {
  it('reads the hour once per run and counts it in applies of CLICKS_PER_APPLY, exactly across a crash in the middle one', async () => {
    const start = Date.parse('2026-06-01T09:00:00Z');
    const total = 2 * CLICKS_PER_APPLY + 1;
    const log: LoggedClick[] = Array.from({ length: total }, (_, i) => ({
      click_id: `c${String(i).padStart(6, '0')}`,
      // Several clicks share a millisecond: the log's order goes on by click id.
      ts_ms: start + Math.floor(i / 3) * 100,
      link_id: `l${i % 3}`,
      partner: 'p',
      platform: i % 2 === 0 ? 'ios' : 'android',
      count_day: '2026-06-01',
    }));
    const w = world(log);
    const reads = new Map<string, number>();
    const traced: ClickCountPorts = {
      ...w.ports,
      clicksAfter: async (...args) => {
        reads.set(args[1], (reads.get(args[1]) ?? 0) + 1);
        return w.ports.clicksAfter(...args);
      },
    };
    const nowMs = start + HOUR + HORIZON_MS + 1;
    // The second apply's third counter item is lost with the crash.
    let addsSeen = 0;
    const crashing: ClickCountPorts = {
      ...traced,
      addOnce: async (...args) => {
        addsSeen += 1;
        if (addsSeen === 6 + 3) throw new Crash('lost');
        return traced.addOnce(...args);
      },
    };
    await expect(countAppClicks(crashing, APP, nowMs)).rejects.toThrow(Crash);
    expect(reads.get('2026-06-01T09')).toBe(1);
    const run = await countAppClicks(traced, APP, nowMs);
    expect(itemCounts(w.items)).toEqual(oracle(log, nowMs));
    // The pending apply resumed (one read of its span), then the rest of the hour in one read.
    expect(reads.get('2026-06-01T09')).toBe(3);
    expect(run.applies).toBe(2);
    expect(w.state()?.next).toBe('2026-06-01T10');
  });
});

describe('the click-count lane on a deployment made after click_log', () => {
  it('finds the old clicks table empty and never reads it for the app again: not the lane, not a report', async () => {
    const at = (time: string) => Date.parse(`2026-06-01T${time}Z`);
    const log: LoggedClick[] = [
      { click_id: 'a', ts_ms: at('08:30:00'), link_id: 'l', partner: 'p', platform: 'ios', count_day: '2026-06-01' },
      { click_id: 'b', ts_ms: at('09:10:00'), link_id: 'l', partner: 'p', platform: 'ios', count_day: '2026-06-01' },
    ];
    const w = world(log);
    const reads: boolean[] = [];
    const traced: ClickCountPorts = {
      ...w.ports,
      clicksAfter: async (...args) => {
        reads.push(args[3]);
        return w.ports.clicksAfter(...args);
      },
    };
    await countAppClicks(traced, APP, at('09:20:00'));
    expect(w.state()?.no_legacy).toBe(true);
    expect(itemCounts(w.items)).toEqual(new Map([['2026-06-01|p|(none)|(none)|ios|l', 2]]));
    expect(reads.length).toBeGreaterThan(0);
    expect(reads.every((withLegacy) => !withLegacy)).toBe(true);
    // A report's top-up after a click the lane has not counted yet: read without the old table.
    log.push({ click_id: 'c', ts_ms: at('09:25:00'), link_id: 'l', partner: 'p', platform: 'ios', count_day: '2026-06-01' });
    reads.length = 0;
    const uncounted = await topUp(
      traced,
      APP,
      w.state(),
      () => undefined,
      { firstDay: '2026-06-01', lastDay: '2026-06-01' },
      at('09:26:00'),
    );
    expect(uncounted.counts.map((count) => count.clicks)).toEqual([1]);
    expect(reads).toEqual([false]);
  });

  it("tops up a new app's clicks before the lane has run for it with one look at the old table, not its 16 keys an hour", async () => {
    const at = (time: string) => Date.parse(`2026-06-01T${time}Z`);
    const fresh: LoggedClick = {
      click_id: 'n',
      ts_ms: at('09:25:00'),
      link_id: 'l',
      partner: 'p',
      platform: 'ios',
      count_day: '2026-06-01',
    };
    const old: LoggedClick = { ...fresh, click_id: 'o', ts_ms: at('08:40:00'), legacy: true };
    const day = { firstDay: '2026-06-01', lastDay: '2026-06-01' };
    for (const [log, withLegacy, clicks] of [
      [[fresh], false, 1],
      [[fresh, old], true, 2],
    ] as const) {
      const w = world(log);
      const reads: boolean[] = [];
      let looks = 0;
      const traced: ClickCountPorts = {
        ...w.ports,
        clicksAfter: async (...args) => {
          reads.push(args[3]);
          return w.ports.clicksAfter(...args);
        },
        legacyHolds: async () => {
          looks += 1;
          return w.ports.legacyHolds();
        },
      };
      const uncounted = await topUp(traced, APP, undefined, () => undefined, day, at('09:26:00'));
      expect(uncounted.counts.map((count) => count.clicks)).toEqual([clicks]);
      expect([looks, reads]).toEqual([1, [withLegacy, withLegacy]]);
    }
  });

  it('keeps reading the old table while it holds a click, as before', async () => {
    const at = (time: string) => Date.parse(`2026-06-01T${time}Z`);
    const w = world([
      { click_id: 'old', ts_ms: at('07:30:00'), link_id: 'l', partner: 'p', platform: 'ios', count_day: '2026-06-01', legacy: true },
    ]);
    await countAppClicks(w.ports, APP, at('09:20:00'));
    expect(w.state()?.no_legacy).toBeUndefined();
    expect(readsLegacy(w.state(), '2026-06-01T09')).toBe(true);
  });

  it('takes a failed look at the old table for an outage, never for an empty table: the run and the top-up fail, and the next run looks again', async () => {
    const at = (time: string) => Date.parse(`2026-06-01T${time}Z`);
    const log: LoggedClick[] = [
      { click_id: 'a', ts_ms: at('09:10:00'), link_id: 'l', partner: 'p', platform: 'ios', count_day: '2026-06-01' },
    ];
    const w = world(log);
    const down: ClickCountPorts = { ...w.ports, legacyHolds: () => Promise.reject(new Error('clicks table unavailable (injected)')) };
    const day = { firstDay: '2026-06-01', lastDay: '2026-06-01' };
    await expect(topUp(down, APP, undefined, () => undefined, day, at('09:20:00'))).rejects.toThrow('unavailable');
    await expect(countAppClicks(down, APP, at('09:20:00'))).rejects.toThrow('unavailable');
    expect(w.state()?.no_legacy).toBeUndefined();
    expect(w.items.size).toBe(0);
    await countAppClicks(w.ports, APP, at('09:20:00'));
    expect(w.state()?.no_legacy).toBe(true);
    expect(itemCounts(w.items)).toEqual(oracle(log, at('09:20:00')));
  });
});

describe('the click-count lane under its lease', () => {
  const lanePorts = (w: ReturnType<typeof world>, lease: { holder?: string; until: number }): ClickLanePorts => ({
    ...w.ports,
    apps: async () => [APP],
    takeLease: async (holder, nowMs, leaseMs) => {
      if (lease.until > nowMs) return false;
      Object.assign(lease, { holder, until: nowMs + leaseMs });
      return true;
    },
    releaseLease: async (holder) => {
      if (lease.holder === holder) lease.until = 0;
    },
  });

  it('counts nothing while another run holds the lease, and everything once it is free', async () => {
    const log: LoggedClick[] = [{ click_id: 'a', ts_ms: NOW - HOUR, link_id: 'l', partner: 'p', platform: 'ios', count_day: '2026-06-01' }];
    const w = world(log);
    const lease = { holder: 'dead', until: NOW + 10_000 };
    const options = { holder: 'me', nowMs: () => NOW, leaseMs: 75_000, stopAtMs: NOW + 60_000 };
    expect(await runClickLane(lanePorts(w, lease), options)).toMatchObject({ held: false, clicks: 0 });
    expect(w.items.size).toBe(0);
    expect(await runClickLane(lanePorts(w, lease), { ...options, nowMs: () => NOW + 10_001 })).toMatchObject({ held: true, clicks: 1 });
    expect(lease.until).toBe(0);
  });

  it('reports an app whose apply failed and releases the lease for the next run, which finishes it', async () => {
    const log: LoggedClick[] = [{ click_id: 'a', ts_ms: NOW - HOUR, link_id: 'l', partner: 'p', platform: 'ios', count_day: '2026-06-01' }];
    const w = world(log);
    const lease = { until: 0 };
    const options = { holder: 'me', nowMs: () => NOW, leaseMs: 75_000, stopAtMs: NOW + 60_000 };
    // Writes: the first state, its no_legacy (the old table is empty), hour 08 closed, the apply opened, then its count: lost.
    w.failAt(5, false);
    const failed = await runClickLane(lanePorts(w, lease), options);
    expect(failed.failed.map(({ appId }) => appId)).toEqual([APP]);
    expect(w.state()?.pending).toBeDefined();
    w.noFault();
    await runClickLane(lanePorts(w, lease), { ...options, holder: 'next' });
    expect(itemCounts(w.items)).toEqual(new Map([['2026-06-01|p|(none)|(none)|ios|l', 1]]));
  });
});
