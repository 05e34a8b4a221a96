import { type DayPage, mergePage, PAGED_FAMILIES } from '../../domain/aggregation/day-pages';
import type { UsageCounter } from '../../domain/aggregation/lanes';
import type { AggregationLedger, LaneState, ObjectMark, Stamp, TakeResult } from '../../domain/aggregation/lease';
import { ROW_FAMILIES, type RowDelta, type RowFamily, type RowStamp, type RowStore, sortKeyOf } from '../../domain/aggregation/rows';

/**
 * The report rows and the aggregation ledger in memory, standing in for functions/adapters/aggregate-store.ts
 * with the same conditional semantics. `admin rebuild` replays the audit store through them, and
 * the unit tests (fault injection included) run the whole use case on them. Items are copied in
 * and out, as a store would.
 */

export interface MemoryRow {
  counters: Record<string, number>;
  /** Per lane, the last apply written to the row (lease.ts). */
  lanes: Map<number, number>;
  /** Legacy objects' tokens (before lanes). */
  tokens: Set<string>;
  key: RowDelta;
  /** The row's version: 1 more with every write that adds to it (day-pages.ts). */
  v: number;
}

export class MemoryRowStore implements RowStore {
  /** `<app_id>#<family>` to sort key to row. */
  readonly partitions = new Map<string, Map<string, MemoryRow>>();
  /** `<app_id>#<family>` to day to page. */
  readonly pages = new Map<string, Map<string, DayPage>>();

  async add(appId: string, row: RowDelta, stamp: RowStamp): Promise<boolean> {
    const pk = `${appId}#${row.family}`;
    let partition = this.partitions.get(pk);
    if (!partition) {
      partition = new Map();
      this.partitions.set(pk, partition);
    }
    const sk = sortKeyOf(row);
    const stored = partition.get(sk) ?? {
      counters: {},
      lanes: new Map<number, number>(),
      tokens: new Set<string>(),
      key: { family: row.family, day: row.day, group: [...row.group], add: {} },
      v: 0,
    };
    if ('legacyToken' in stamp) {
      if (stored.tokens.has(stamp.legacyToken)) return false;
      stored.tokens.add(stamp.legacyToken);
    } else {
      if ((stored.lanes.get(stamp.lane) ?? 0) >= stamp.seq) return false;
      stored.lanes.set(stamp.lane, stamp.seq);
    }
    for (const [name, value] of Object.entries(row.add)) stored.counters[name] = (stored.counters[name] ?? 0) + value;
    if (Object.keys(row.add).length > 0) stored.v += 1;
    partition.set(sk, stored);
    return true;
  }

  async refreshPages(appId: string, family: RowFamily, days: readonly string[]): Promise<void> {
    if (!PAGED_FAMILIES.has(family)) return;
    const pk = `${appId}#${family}`;
    const pages = this.pages.get(pk) ?? new Map<string, DayPage>();
    this.pages.set(pk, pages);
    const rows = [...(this.partitions.get(pk)?.values() ?? [])];
    for (const day of days) {
      const snapshot = rows
        .filter((row) => row.key.day === day)
        .map((row) => ({ group: row.key.group, counters: { ...row.counters }, v: row.v }));
      const merged = mergePage(family, day, pages.get(day), snapshot);
      if (merged) pages.set(day, structuredClone(merged));
    }
  }

  /** The app's rows of one family in key order, counters only. */
  rowsOf(appId: string, family: RowFamily): { sk: string; key: RowDelta; counters: Record<string, number>; v: number }[] {
    const partition = this.partitions.get(`${appId}#${family}`) ?? new Map<string, MemoryRow>();
    return [...partition.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([sk, row]) => ({ sk, key: row.key, counters: { ...row.counters }, v: row.v }));
  }

  families(appId: string) {
    return Object.fromEntries(ROW_FAMILIES.map((family) => [family, this.rowsOf(appId, family)])) as Record<
      RowFamily,
      ReturnType<MemoryRowStore['rowsOf']>
    >;
  }
}

/** The aggregator's monthly counts of companies without a cap (functions/adapters/cap-counter.ts, add). */
export class MemoryUsageCounter implements UsageCounter {
  readonly counts = new Map<string, { n: number; lanes: Map<number, number> }>();

  async add(key: string, events: number, stamp: Stamp): Promise<boolean> {
    const counter = this.counts.get(key) ?? { n: 0, lanes: new Map<number, number>() };
    this.counts.set(key, counter);
    if ((counter.lanes.get(stamp.lane) ?? 0) >= stamp.seq) return false;
    counter.lanes.set(stamp.lane, stamp.seq);
    counter.n += events;
    return true;
  }
}

interface MemoryLane {
  seq: number;
  applied: number;
  objects: string[];
  openedMs?: number;
  apps: string[];
  holder?: string;
  leaseUntilMs: number;
}

/** The ledger's lanes and object marks (functions/adapters/aggregate-store.ts AggregationLedgerStore). */
export class MemoryLedger implements AggregationLedger {
  readonly objectMarks = new Map<string, ObjectMark>();
  readonly laneItems = new Map<number, MemoryLane>();

  async marks(tokens: readonly string[]): Promise<Map<string, ObjectMark>> {
    const found = new Map<string, ObjectMark>();
    for (const token of tokens) {
      const mark = this.objectMarks.get(token);
      if (mark) found.set(token, structuredClone(mark));
    }
    return found;
  }

  async include(token: string, mark: Extract<ObjectMark, { kind: 'included' }>, nowMs: number): Promise<ObjectMark> {
    const stored = this.objectMarks.get(token);
    const replaceable =
      stored === undefined ||
      (stored.kind === 'void' && (stored.stamp.lane !== mark.stamp.lane || stored.stamp.seq !== mark.stamp.seq)) ||
      (stored.kind === 'legacy' && !stored.done && stored.leaseUntilMs < nowMs);
    if (replaceable) this.objectMarks.set(token, structuredClone(mark));
    return structuredClone(this.objectMarks.get(token) as ObjectMark);
  }

  async void(token: string, stamp: Stamp): Promise<ObjectMark> {
    if (!this.objectMarks.has(token)) this.objectMarks.set(token, { kind: 'void', stamp: { ...stamp } });
    return structuredClone(this.objectMarks.get(token) as ObjectMark);
  }

  async lanes(numbers: readonly number[]): Promise<Map<number, LaneState>> {
    return new Map(numbers.map((lane) => [lane, this.state(lane)]));
  }

  async take(
    lane: number,
    holder: string,
    objects: readonly string[],
    nowMs: number,
    leaseMs: number,
    apps: readonly string[] = [],
  ): Promise<TakeResult> {
    const current = this.lane(lane);
    if (current.holder !== undefined && current.leaseUntilMs >= nowMs) return { state: 'held', leaseUntilMs: current.leaseUntilMs };
    current.holder = holder;
    current.leaseUntilMs = nowMs + leaseMs;
    if (current.seq !== current.applied) return { state: 'open', lane: this.state(lane) };
    current.seq += 1;
    current.objects = [...objects];
    current.openedMs = nowMs;
    current.apps = [...apps];
    return { state: 'reserved', seq: current.seq };
  }

  async reserveAfter(
    lane: number,
    holder: string,
    applied: number,
    objects: readonly string[],
    openedMs?: number,
    apps: readonly string[] = [],
  ): Promise<boolean> {
    const current = this.lane(lane);
    if (current.holder !== holder || current.seq !== applied) return false;
    current.applied = applied;
    current.seq = applied + 1;
    current.objects = [...objects];
    current.openedMs = openedMs;
    current.apps = [...apps];
    return true;
  }

  async settle(lane: number, holder: string, seq: number): Promise<void> {
    const current = this.lane(lane);
    if (current.holder !== holder || current.seq !== seq) return;
    current.applied = seq;
    current.objects = [];
    current.openedMs = undefined;
    current.apps = [];
    current.leaseUntilMs = 0;
  }

  async release(lane: number, holder: string): Promise<void> {
    const current = this.lane(lane);
    if (current.holder === holder) current.leaseUntilMs = 0;
  }

  async finishLegacy(token: string): Promise<void> {
    this.objectMarks.set(token, { kind: 'legacy', done: true, leaseUntilMs: 0 });
  }

  private lane(lane: number): MemoryLane {
    const current = this.laneItems.get(lane) ?? { seq: 0, applied: 0, objects: [], apps: [], leaseUntilMs: 0 };
    this.laneItems.set(lane, current);
    return current;
  }

  private state(lane: number): LaneState {
    const { seq, applied, objects, openedMs, apps, holder, leaseUntilMs } = this.lane(lane);
    return {
      lane,
      seq,
      applied,
      objects: [...objects],
      ...(openedMs === undefined ? {} : { openedMs }),
      apps: [...apps],
      holder,
      leaseUntilMs,
    };
  }
}
