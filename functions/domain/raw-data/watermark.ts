import { LANES } from '../aggregation/lease';

/**
 * The stream's watermark (docs/raw-data.md, "When an object is final"): the key time below which
 * every stream object is final. The aggregator writes an apply's stream objects while the apply is
 * open on its ledger lane, under a key whose time is the moment the apply opened, and the lane says
 * the apply is finished only after they are written. So while a lane is open, objects at or above
 * its `opened_ms` may still appear or change; below the smallest such time, and below now minus
 * the settle time, nothing will. Readers (the stream endpoint, the export) read below it only.
 */

/**
 * How far behind now the watermark stays even with every lane closed: an apply reserved a moment
 * ago may not be on its lane item yet when the lanes are read, and the aggregator's clock and the
 * reader's are different hosts' clocks.
 */
export const STREAM_SETTLE_MS = 10_000;

/** Every ledger lane's key number, 0 to LANES - 1: a reader reads them all at once. */
export const LANE_NUMBERS: readonly number[] = Array.from({ length: LANES }, (_, lane) => lane);

/** What a reader needs of a lane item (`lane#<n>` in the ledger table). */
export interface LaneOpening {
  /** The last apply number reserved, and the last one finished: equal when nothing is open. */
  readonly seq: number;
  readonly applied: number;
  /** When the open apply was reserved; absent on an apply from before stream objects, which writes none. */
  readonly openedMs?: number;
  /** The apps the open apply writes stream objects of, written with `opened_ms`; absent: unknown, so any app. */
  readonly apps?: readonly string[];
}

/** The ledger's lanes, read consistently (functions/adapters/stream-reader.ts). */
export interface LedgerLanes {
  /** The lanes that have an item (at most LANES); a lane without one has never opened an apply. */
  lanes(): Promise<readonly LaneOpening[]>;
}

/**
 * W = min(now - STREAM_SETTLE_MS, opened_ms of every open lane). A lane is open when `seq` is above
 * `applied`; an open lane without `opened_ms` is left out (its apply writes no stream object), and
 * so is a lane without an item (never opened).
 *
 * Given an app, the watermark of that app's stream: an open lane whose apply names the apps it
 * writes stream objects of, and not this one, cannot add or change an object of it, so it does not
 * hold the app back. That keeps one slow or crashed apply (open until its lease runs out and the
 * lane's next holder replays it, over a minute) from stalling the stream of every app.
 */
export function watermarkOf(lanes: Iterable<LaneOpening | undefined>, nowMs: number, appId?: string): number {
  let watermark = nowMs - STREAM_SETTLE_MS;
  for (const lane of lanes) {
    if (!lane || !(lane.seq > lane.applied) || lane.openedMs === undefined || !Number.isFinite(lane.openedMs)) continue;
    if (appId !== undefined && lane.apps !== undefined && !lane.apps.includes(appId)) continue;
    watermark = Math.min(watermark, lane.openedMs);
  }
  return watermark;
}
