import { pool } from '../common/pool';
import { keepIncluded, type StreamObjects, streamKey } from '../raw-data/stream-objects';
import { PAGED_FAMILIES } from './day-pages';
import { type AggregationLedger, type Journal, LANES, type LaneState, type Stamp, type Usage } from './lease';
import { type RowDelta, RowDeltas, type RowFamily, type RowStamp, type RowStore, rowKeyOf } from './rows';

/**
 * Applying journals to the report rows on a lane (lease.ts): take a lane, replay what a dead
 * holder left open on it, write the rows of a batch of journals once each, refresh their day
 * pages. Every row write carries the apply's stamp, so an apply replayed after a crash adds only
 * where it had not landed.
 */

/** The monthly counts of companies without a cap (functions/adapters/cap-counter.ts). */
export interface UsageCounter {
  /** Adds the events to the counter unless it holds this apply or a later one of the lane: false when refused. */
  add(key: string, events: number, stamp: Stamp): Promise<boolean>;
}

export interface LanePorts {
  readonly ledger: AggregationLedger;
  readonly rows: RowStore;
  /** Absent in a rebuild, which counts no usage. */
  readonly usage?: UsageCounter;
  /** The event stream's objects (functions/domain/raw-data/stream-objects.ts); absent in a rebuild. */
  readonly stream?: StreamObjects;
}

/** What one object adds: its app and journal, and its events to a monthly count. */
export interface JournalEntry {
  readonly appId: string;
  readonly journal: Journal;
  readonly usage?: Usage;
}

/** Rows written, and day pages refreshed, at the same time. */
const ROW_CONCURRENCY = 16;
/** Lanes an invocation tries before it sends its objects back for a moment. */
const TRIES = 6;

/**
 * The lanes an invocation tries, in order: the one this execution environment used last (so two
 * environments rarely meet on one), then others. `start` is random per environment in AWS; the
 * tests and the rebuild start at 0 and go in order, so their writes are the same at every run.
 */
export class LanePicker {
  private preferred: number;

  constructor(
    start = 0,
    private readonly random?: () => number,
  ) {
    this.preferred = ((start % LANES) + LANES) % LANES;
  }

  candidates(): number[] {
    const lanes = [this.preferred];
    for (let i = 1; lanes.length < TRIES; i++) {
      const lane = this.random ? Math.floor(this.random() * LANES) : (this.preferred + i) % LANES;
      if (!lanes.includes(lane)) lanes.push(lane);
    }
    return lanes;
  }

  keep(lane: number): void {
    this.preferred = lane;
  }
}

/**
 * Takes a lane for the objects and reserves the next apply on it: the stamp their marks and row
 * writes carry. An apply a dead holder left open on the lane is replayed first. Undefined when
 * every lane tried is held by another invocation.
 */
export async function takeLane(
  ports: LanePorts,
  picker: LanePicker,
  holder: string,
  objects: readonly string[],
  now: () => number,
  leaseMs: number,
  apps: readonly string[] = [],
): Promise<Stamp | undefined> {
  for (const lane of picker.candidates()) {
    const openedMs = now();
    const taken = await ports.ledger.take(lane, holder, objects, openedMs, leaseMs, apps);
    if (taken.state === 'held') continue;
    if (taken.state === 'reserved') {
      picker.keep(lane);
      return { lane, seq: taken.seq, openedMs };
    }
    try {
      await replay(ports, taken.lane, openedMs);
    } catch (error) {
      await ports.ledger.release(lane, holder).catch(() => undefined);
      throw error;
    }
    const reopenedMs = now();
    if (await ports.ledger.reserveAfter(lane, holder, taken.lane.seq, objects, reopenedMs, apps)) {
      picker.keep(lane);
      return { lane, seq: taken.lane.seq + 1, openedMs: reopenedMs };
    }
  }
  return undefined;
}

/**
 * Finishes the apply left open on a lane this invocation now holds: the objects listed for it that
 * have a mark of it are written again (the rows refuse where it landed); those without a mark get
 * a void one, so a write of their mark still in flight from the dead holder is refused. Its
 * stream objects keep the lines of the objects it included, and only those (the dead holder wrote
 * them before any mark), before the lane records it finished.
 */
export async function replay(ports: LanePorts, state: LaneState, nowMs: number): Promise<void> {
  if (state.seq === state.applied) return;
  const stamp: Stamp = { lane: state.lane, seq: state.seq };
  const marks = await ports.ledger.marks(state.objects);
  const entries: JournalEntry[] = [];
  const included = new Set<string>();
  for (const token of state.objects) {
    const mark = marks.get(token) ?? (await ports.ledger.void(token, stamp, nowMs));
    if (mark.kind === 'included' && mark.stamp.lane === stamp.lane && mark.stamp.seq === stamp.seq) {
      entries.push(mark);
      included.add(token);
    }
  }
  const { stream } = ports;
  const { openedMs } = state;
  if (stream && openedMs !== undefined) {
    await Promise.all(state.apps.map((appId) => keepIncluded(stream, streamKey(appId, { openedMs, ...stamp }), included)));
  }
  const failures = await applyJournals(ports, entries, stamp);
  const [failure] = failures.values();
  if (failure) throw failure;
}

/**
 * Writes the entries' journals to the rows, combined: one write per row whatever the number of
 * objects behind it, then the day pages of every paged day written. Returns the entries whose
 * rows or pages failed, with the error (the rest are on the rows).
 */
export async function applyJournals(
  ports: LanePorts,
  entries: readonly JournalEntry[],
  stamp: RowStamp,
): Promise<Map<JournalEntry, Error>> {
  const failed = new Map<JournalEntry, Error>();
  const rows = new Map<string, { appId: string; delta: RowDelta; entries: JournalEntry[] }>();
  for (const entry of entries) {
    for (const [id, add] of Object.entries(entry.journal)) {
      const key = `${entry.appId}\u0000${id}`;
      const row = rows.get(key);
      if (row) {
        row.delta = combined(row.delta, add);
        row.entries.push(entry);
      } else rows.set(key, { appId: entry.appId, delta: onlyDelta(id, add), entries: [entry] });
    }
  }
  await pool([...rows.values()], ROW_CONCURRENCY, async (row) => {
    try {
      await ports.rows.add(row.appId, row.delta, stamp);
    } catch (error) {
      for (const entry of row.entries) if (!failed.has(entry)) failed.set(entry, error as Error);
    }
  });
  if (!('legacyToken' in stamp)) await addUsage(ports, entries, stamp, failed);
  const days = new Map<string, { appId: string; family: RowFamily; day: string; entries: JournalEntry[] }>();
  for (const entry of entries) {
    for (const id of Object.keys(entry.journal)) {
      const { family, day } = rowKeyOf(id);
      if (!PAGED_FAMILIES.has(family)) continue;
      const key = `${entry.appId}\u0000${family}\u0000${day}`;
      const page = days.get(key) ?? { appId: entry.appId, family, day, entries: [] };
      page.entries.push(entry);
      days.set(key, page);
    }
  }
  // A page is refreshed only after every row of the batch was written, so it is never behind an
  // object reported counted; a refresh that fails fails the objects that wrote that day.
  await pool([...days.values()], ROW_CONCURRENCY, async ({ appId, family, day, entries: writers }) => {
    try {
      await ports.rows.refreshPages(appId, family, [day]);
    } catch (error) {
      for (const entry of writers) if (!failed.has(entry)) failed.set(entry, error as Error);
    }
  });
  return failed;
}

/** The entries' events added to their monthly counters, one write per counter. */
async function addUsage(ports: LanePorts, entries: readonly JournalEntry[], stamp: Stamp, failed: Map<JournalEntry, Error>): Promise<void> {
  const { usage } = ports;
  if (!usage) return;
  const counters = new Map<string, { events: number; entries: JournalEntry[] }>();
  for (const entry of entries) {
    if (!entry.usage) continue;
    const counter = counters.get(entry.usage.key) ?? { events: 0, entries: [] };
    counter.events += entry.usage.events;
    counter.entries.push(entry);
    counters.set(entry.usage.key, counter);
  }
  await Promise.all(
    [...counters].map(async ([key, counter]) => {
      try {
        await usage.add(key, counter.events, stamp);
      } catch (error) {
        for (const entry of counter.entries) if (!failed.has(entry)) failed.set(entry, error as Error);
      }
    }),
  );
}

/** The one delta of a journal's row: a journal never names a row it adds nothing to. */
function onlyDelta(id: string, add: Readonly<Record<string, number>>): RowDelta {
  const [delta] = RowDeltas.fromJournal({ [id]: add });
  if (!delta) throw new Error(`the journal adds nothing to row ${id}`);
  return delta;
}

function combined(delta: RowDelta, add: Readonly<Record<string, number>>): RowDelta {
  const sum: Record<string, number> = { ...delta.add };
  for (const [name, value] of Object.entries(add)) sum[name] = (sum[name] ?? 0) + value;
  return { ...delta, add: sum };
}
