import { sha256Hex } from '../common/hashing';

/**
 * The aggregation ledger (docs/aggregation.md, "Exactly once"): lanes and object marks.
 *
 * - A **lane** (one of LANES) is what an invocation holds while it writes report rows. Each of its
 *   applies has the next sequence number of the lane; a row records, per lane, the last sequence
 *   number applied to it (`l<lane>` on the row), and a write with a number not above it is refused.
 *   So a row carries at most LANES numbers, whatever the traffic or backlog behind it: that is the
 *   whole of the exactly-once bookkeeping on a row.
 * - An **object mark** is written once per audit object: the lane and sequence number of the apply
 *   that includes it, with its journal (what it adds to each row). The first mark written stands:
 *   a second delivery of the object finds it and counts nothing.
 *
 * A lane holds at most one apply that is not known finished (`seq` above `applied`), with the
 * tokens of its objects: whoever takes the lane next (or a redelivery of one of those objects)
 * replays it from the objects' marks before anything else, which rows refuse where it landed.
 */

/** Short owner token of an audit object: what its claims and its ledger mark carry. */
export const tokenOf = (auditKey: string): string => sha256Hex(auditKey).slice(0, 24);

export type Journal = Record<string, Record<string, number>>;

/**
 * Lanes an invocation can take. A row carries at most this many sequence numbers (about 10 bytes
 * each); the event source mapping's maximum concurrency (lib/manifest.ts) stays below it, so an
 * invocation nearly always finds a lane free.
 */
export const LANES = 64;

/** An apply on a lane: its number and the lane's. */
export interface Stamp {
  readonly lane: number;
  readonly seq: number;
  /**
   * When the apply was reserved: the key time of its stream objects (functions/domain/raw-data/
   * stream-objects.ts). Absent on marks and lanes written before the stream existed.
   */
  readonly openedMs?: number;
}

/** Events the aggregator adds to a company's monthly count (the counter's key: functions/domain/ingest/cap.ts, capMeteredKey). */
export interface Usage {
  readonly key: string;
  readonly events: number;
}

export type ObjectMark =
  /** The object's journal (and usage), included in that apply. */
  | {
      readonly kind: 'included';
      readonly stamp: Stamp;
      readonly appId: string;
      readonly journal: Journal;
      readonly usage?: Usage;
    }
  /** A replay of that apply found no mark: the object was never included in it, and a late write for it is refused. */
  | { readonly kind: 'void'; readonly stamp: Stamp }
  /** A mark of the protocol before lanes: finished, or left running (its rows carry `t_<token>` where they were added). */
  | { readonly kind: 'legacy'; readonly done: boolean; readonly leaseUntilMs: number; readonly journal?: Journal };

export interface LaneState {
  readonly lane: number;
  /** The last sequence number reserved, and the last one applied: equal when nothing is open. */
  readonly seq: number;
  readonly applied: number;
  /** Tokens of the objects of the open apply (seq above applied). */
  readonly objects: readonly string[];
  /** When the open apply was reserved, and the apps it writes stream objects of (none for an apply before the stream). */
  readonly openedMs?: number;
  readonly apps: readonly string[];
  /** Who holds the lane and until when (0: free). */
  readonly holder?: string;
  readonly leaseUntilMs: number;
}

export type TakeResult =
  /** The lane is this holder's, with `seq` reserved for these objects. */
  | { readonly state: 'reserved'; readonly seq: number }
  /** The lane is this holder's, but an earlier apply is open on it: replay it, then reserve. */
  | { readonly state: 'open'; readonly lane: LaneState }
  /** Another holder has it. */
  | { readonly state: 'held'; readonly leaseUntilMs: number };

export interface AggregationLedger {
  /** The marks of these objects, read consistently; absent ones are missing from the map. */
  marks(tokens: readonly string[]): Promise<Map<string, ObjectMark>>;
  /** Writes the object's mark unless one stands (a void of another apply does not); returns the mark that stands. */
  include(token: string, mark: Extract<ObjectMark, { kind: 'included' }>, nowMs: number): Promise<ObjectMark>;
  /** Marks an object of an open apply that has no mark as never included in it; returns the mark that stands. */
  void(token: string, stamp: Stamp, nowMs: number): Promise<ObjectMark>;
  /** The lanes' states, read consistently. */
  lanes(numbers: readonly number[]): Promise<Map<number, LaneState>>;
  /**
   * Takes the lane if it is free (or its lease has run out) and reserves its next apply for the
   * objects, in one write when nothing is open on it; the apply opens at `nowMs` and writes the
   * stream objects of `apps`.
   */
  take(
    lane: number,
    holder: string,
    objects: readonly string[],
    nowMs: number,
    leaseMs: number,
    apps?: readonly string[],
  ): Promise<TakeResult>;
  /**
   * Closes the open apply (it has been replayed) and reserves the next for the objects, opened at
   * `openedMs` with the stream objects of `apps`, if the holder still has the lane.
   */
  reserveAfter(
    lane: number,
    holder: string,
    applied: number,
    objects: readonly string[],
    openedMs?: number,
    apps?: readonly string[],
  ): Promise<boolean>;
  /** Records the apply as finished and frees the lane, if the holder still has it. */
  settle(lane: number, holder: string, seq: number): Promise<void>;
  /** Frees the lane, its open apply left for the next holder to replay. */
  release(lane: number, holder: string): Promise<void>;
  /** A legacy object, replayed with its journal: its mark becomes done. */
  finishLegacy(token: string, nowMs: number): Promise<void>;
}

/**
 * The lease an invocation takes on a lane: its function's timeout plus 15 s. Lambda stops an
 * invocation at its timeout, so a lease outlives the invocation that took it; and it must stay
 * shorter than the queue's visibility timeout, or a delivery that died comes back while its lease
 * still holds and is deferred for nothing (test/stack/queue-timeouts.test.ts holds the stack to it).
 */
export const leaseMsFor = (timeoutSeconds: number): number => (timeoutSeconds + 15) * 1000;

/**
 * How long a delivery that found its object in another invocation's apply (busy) stays away:
 * until that lane's lease has run out, not the queue's whole visibility timeout. Whole seconds,
 * as SQS counts them, and one more for the clocks of different hosts: a delivery that comes back a
 * moment early is only deferred again.
 */
export const secondsUntilLeaseEnds = (leaseUntilMs: number, nowMs: number): number =>
  Math.max(0, Math.ceil((leaseUntilMs - nowMs) / 1000)) + 1;
