import { randomUUID } from 'node:crypto';
import { sha256Hex } from '../common/hashing';
import { BATCH_MARK_TTL_SECONDS, batchMarkKey, capCounterKey, capCounterKeys } from './cap';

/**
 * Metering a batch against its company's month, exactly once and before anything is stored
 * (docs/ingestion.md, "The free-tier cap, metered once"). No transactions (the local DynamoDB
 * lacks them), so whatever must change together lives in one item:
 *
 * - The counter item takes the batch's events and a **hold** in the same conditional update: the
 *   hold (`h_<id>`, the batch's token, its events and the attempts on it) says "counted, not yet
 *   settled", so an attempt that died after it leaves something the retry finds and completes
 *   rather than counting again. For a capped company the item is the month's shard 0 and the
 *   update refuses once the count has reached the cap: that one conditional write, not the read
 *   before it, is what bounds the count (under the cap plus one batch).
 * - Once the batch is stored and handed off, the **mark** (ledger table, expires) records the
 *   token of the hold that was counted, and the hold is taken off. A later copy of the same bytes
 *   whose own hold was counted too finds the mark under another token and gives its hold back.
 * - An attempt that cannot store the batch gives its hold back: the last attempt on the hold takes
 *   the events off again. One that died cannot; the hold stays counted until a copy of the same
 *   bytes settles it.
 */

/** A batch's hold on a counter item. */
export interface Hold {
  /** The attempt that counted the batch on this item: the mark names it. */
  readonly token: string;
  /** The events counted, taken off again if the hold is given back. */
  readonly accepted: number;
  /** Attempts on the hold that have neither settled nor given it back (a dead one stays). */
  readonly refs: number;
}

/** A counter item as read: its count and the holds on it by hold id (holdIdOf). */
export interface CounterItem {
  readonly key: string;
  readonly n: number;
  readonly holds: ReadonlyMap<string, Hold>;
}

/** The counters and marks, one conditional write per call (functions/adapters/cap-counter.ts). */
export interface CapStore {
  /** The items, read consistently, in the order of keys; an item never written is n 0 without holds. */
  read(keys: readonly string[]): Promise<CounterItem[]>;
  /** Adds the events and a hold with one attempt on it, unless the item holds holdId, or (below not null) its n is not below `below`. */
  hold(key: string, holdId: string, token: string, accepted: number, below: number | null): Promise<boolean>;
  /** One more attempt on the hold, if it is token's. */
  join(key: string, holdId: string, token: string): Promise<boolean>;
  /** One attempt fewer on the hold, if it is token's: the attempts left, undefined when it is not. */
  leave(key: string, holdId: string, token: string): Promise<number | undefined>;
  /** Takes the hold's events off and the hold away, if it is token's (and, lastOnly, no attempt is on it). */
  release(key: string, holdId: string, token: string, accepted: number, lastOnly: boolean): Promise<boolean>;
  /** Writes the batch's mark for token; false when the mark is there under another token (or from before holds). */
  mark(markKey: string, token: string, accepted: number, expiresAtS: number): Promise<boolean>;
  /** Takes the hold away, events counted, if it is token's. */
  unhold(key: string, holdId: string, token: string): Promise<void>;
}

/** A batch as metering knows it: counted by its app and body hash, in the month it arrived. */
export interface MeteredBatch {
  readonly companyId: string;
  readonly appId: string;
  readonly bodySha256: string;
  readonly receivedMs: number;
}

/** Where an attempt's batch is counted and under which hold: what it settles or gives back. */
export interface BatchHold {
  readonly key: string;
  readonly holdId: string;
  readonly token: string;
  readonly accepted: number;
  readonly markKey: string;
  readonly expiresAtS: number;
}

/** The month as the cap check reads it: the count, the part outside shard 0, and this batch's hold on shard 0. */
export interface MonthCount {
  readonly total: number;
  readonly others: number;
  readonly held?: Hold;
  /** The batch's hold id (holdIdOf), worked out once for the read and the hold. */
  readonly holdId: string;
}

/**
 * The hold's attribute name: per app and body in the company's item. 64 bits of a hash: two
 * batches collide only if both are held on the same item at the same time.
 */
export const holdIdOf = (appId: string, bodySha256: string): string => `h_${sha256Hex(`${appId}#${bodySha256}`).slice(0, 16)}`;

/**
 * 48 random bits as 12 hex digits: a UUID's first twelve, which are all random (its version digit
 * comes after them). randomUUID draws from a pool of entropy it refills in bulk, where
 * randomBytes asks the system for each token (a tenth of the batch's time outside the primitives
 * in a profile, docs/benchmarks.md "Issue 41").
 */
const attemptToken = (): string => {
  const uuid = randomUUID();
  return uuid.slice(0, 8) + uuid.slice(9, 13);
};

/** Reads the month's items at once (cap.ts): the count the cap check compares, and this batch's hold on shard 0. */
export async function readMonth(store: CapStore, batch: MeteredBatch): Promise<MonthCount> {
  const items = await store.read(capCounterKeys(batch.companyId, batch.receivedMs));
  let others = 0;
  for (let i = 1; i < items.length; i++) others += items[i]?.n ?? 0;
  const first = items[0];
  const holdId = holdIdOf(batch.appId, batch.bodySha256);
  return { total: (first?.n ?? 0) + others, others, held: first?.holds.get(holdId), holdId };
}

/** Rounds of hold, read, join before the attempt gives up (503): each lost round means another attempt changed the hold meanwhile. */
const ROUNDS = 4;

/**
 * Counts a capped company's batch before it is stored: a new hold, or a place on the hold an
 * earlier attempt of the same bytes left (it died, or it is still running). The new hold is refused
 * once the company's count has reached the cap: cap_exceeded, and nothing was written. All of a
 * capped company's batches count on shard 0, so that one conditional write sees the whole count it
 * must stay under. `month` is the read the cap check made. (A company without a cap is counted by
 * the aggregator: nothing here.)
 */
export async function reserve(
  store: CapStore,
  batch: MeteredBatch,
  accepted: number,
  monthlyCap: number,
  month: MonthCount,
): Promise<BatchHold | 'cap_exceeded'> {
  const mine: BatchHold = {
    key: capCounterKey(batch.companyId, batch.receivedMs),
    holdId: month.holdId,
    token: attemptToken(),
    accepted,
    markKey: batchMarkKey(batch.appId, batch.bodySha256),
    expiresAtS: Math.floor(batch.receivedMs / 1000) + BATCH_MARK_TTL_SECONDS,
  };
  // Shard 0 stays under the cap by what the other items hold (counted while the company had none).
  const below = monthlyCap - month.others;
  let seen = month.held;
  try {
    for (let round = 0; round < ROUNDS; round++) {
      if (seen !== undefined) {
        if (await store.join(mine.key, mine.holdId, seen.token)) return { ...mine, token: seen.token, accepted: seen.accepted };
      } else {
        if (below <= 0) return 'cap_exceeded';
        if (await store.hold(mine.key, mine.holdId, mine.token, accepted, below)) return mine;
      }
      const [item] = await store.read([mine.key]);
      seen = item?.holds.get(mine.holdId);
      if (seen === undefined && (item?.n ?? 0) >= below) return 'cap_exceeded';
    }
  } catch (error) {
    // The hold may have been written before the error: give it back rather than leave it counted.
    await giveBack(store, mine).catch(() => undefined);
    throw error;
  }
  throw new Error("cap count: the batch's hold kept changing");
}

/**
 * The batch is stored and handed off: the mark records the hold that was counted, then the hold
 * comes off. If the mark names another hold (a copy of these bytes settled first, after this one
 * read), this one counts the batch a second time: its events come off, whoever else is on it (an
 * attempt on it that is still running finds the mark the same way, one that died never comes back).
 */
export async function settle(store: CapStore, hold: BatchHold): Promise<void> {
  if (await store.mark(hold.markKey, hold.token, hold.accepted, hold.expiresAtS)) await store.unhold(hold.key, hold.holdId, hold.token);
  else await store.release(hold.key, hold.holdId, hold.token, hold.accepted, false);
}

/**
 * The attempt could not store the batch: it leaves the hold, and the last to leave takes the
 * events off. An attempt that died on the hold never leaves it: the hold stays counted until a
 * copy of the same bytes settles it.
 */
export async function giveBack(store: CapStore, hold: BatchHold): Promise<void> {
  if ((await store.leave(hold.key, hold.holdId, hold.token)) === 0)
    await store.release(hold.key, hold.holdId, hold.token, hold.accepted, true);
}
