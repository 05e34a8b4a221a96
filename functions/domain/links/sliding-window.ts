/**
 * The click rate limit: at most `limit` admitted clicks per IP block in ANY interval of
 * `windowMs`, wherever the interval starts. A fixed window (a counter per minute) lets 2x the
 * limit through a boundary: `limit` clicks at 0:59 and `limit` more at 1:00. This one cannot.
 *
 * The window is cut into SLOTS_PER_WINDOW slots of windowMs / SLOTS_PER_WINDOW, each with an
 * atomic counter. A request first adds itself to the current slot and, in the same atomic step,
 * reads every slot of its key; it is admitted when the slots that touch the last windowMs (the
 * current slot and the SLOTS_PER_WINDOW before it) hold at most `limit`. Those slots cover more
 * than the window, never less, so the count can only be too high: the limit holds in every
 * interval, and the price is that a slot's clicks keep counting up to one slot (5 s of a
 * minute) longer than a click-by-click log would. A refused request takes its increment back,
 * so the counters hold admitted clicks only and Retry-After is exact to the slot.
 *
 * Why increment first: two concurrent requests that each read and then wrote could both see
 * room for one more. When each increments first, the last admitted click of any interval saw
 * every other admitted click of that interval in its own atomic read, so it cannot be one too many.
 */
export const SLOTS_PER_WINDOW = 12;

export interface SlidingWindow {
  readonly limit: number;
  readonly windowMs: number;
  readonly slotMs: number;
}

export function slidingWindow(limit: number, windowMs: number): SlidingWindow {
  if (!Number.isInteger(limit) || limit < 1) throw new Error(`the rate limit must be a positive integer, got ${limit}`);
  if (!Number.isInteger(windowMs) || windowMs < SLOTS_PER_WINDOW) throw new Error(`the rate window is too short: ${windowMs} ms`);
  // slotMs * SLOTS_PER_WINDOW >= windowMs, so the counted slots always cover the whole window.
  return { limit, windowMs, slotMs: Math.ceil(windowMs / SLOTS_PER_WINDOW) };
}

/** The store side: one atomic counter per (key, slot). */
export interface SlotCounter {
  /**
   * Adds one to the slot and returns every slot count of the key, this increment included, as
   * one atomic read. The key may expire once no slot of it can count any more (expiresAtMs).
   */
  increment(key: string, slot: number, expiresAtMs: number): Promise<ReadonlyMap<number, number>>;
  /** Takes one back from `release` (a refused request) and forgets slots that no longer count. */
  tidy(key: string, change: { release?: number; stale: readonly number[] }): Promise<void>;
}

export type Admission = { readonly admitted: true } | { readonly admitted: false; readonly retryAfterSeconds: number };

export async function admit(counter: SlotCounter, key: string, nowMs: number, window: SlidingWindow): Promise<Admission> {
  const slot = Math.floor(nowMs / window.slotMs);
  const counts = await counter.increment(key, slot, (slot + SLOTS_PER_WINDOW + 1) * window.slotMs);
  const verdict = assess(counts, nowMs, window);
  if (!verdict.admitted || verdict.stale.length > 0) {
    await counter.tidy(key, { release: verdict.admitted ? undefined : slot, stale: verdict.stale });
  }
  return verdict.admitted ? { admitted: true } : { admitted: false, retryAfterSeconds: verdict.retryAfterSeconds };
}

type Verdict = ({ admitted: true } | { admitted: false; retryAfterSeconds: number }) & { stale: number[] };

/** The decision on the counts a request read back after adding itself. */
export function assess(counts: ReadonlyMap<number, number>, nowMs: number, window: SlidingWindow): Verdict {
  const current = Math.floor(nowMs / window.slotMs);
  const oldest = current - SLOTS_PER_WINDOW;
  const live = [...counts].filter(([slot]) => slot >= oldest).sort(([a], [b]) => a - b);
  const stale = [...counts.keys()].filter((slot) => slot < oldest);
  const total = live.reduce((sum, [, count]) => sum + count, 0);
  if (total <= window.limit) return { admitted: true, stale };

  // Without this request, total - 1 clicks count; room for one more opens when slots holding at
  // least total - limit of them have left, and slot s stops counting when slot s + SLOTS_PER_WINDOW + 1 begins.
  const mustLeave = total - window.limit;
  let left = 0;
  let reopensAtMs = (current + SLOTS_PER_WINDOW + 1) * window.slotMs;
  for (const [slot, count] of live) {
    left += count;
    if (left >= mustLeave) {
      reopensAtMs = (slot + SLOTS_PER_WINDOW + 1) * window.slotMs;
      break;
    }
  }
  return { admitted: false, retryAfterSeconds: Math.max(1, Math.ceil((reopensAtMs - nowMs) / 1000)), stale };
}
