import fc from 'fast-check';
import { type Admission, admit, SLOTS_PER_WINDOW, slidingWindow } from '../../../functions/domain/links/sliding-window';
import { MemorySlotCounter } from './memory-slot-counter';

const KEY = 'block#198.51.100.0/24';

/** Runs requests at the given instants (ms, ascending) and returns each admission. */
async function run(times: number[], limit: number, windowMs: number, counter = new MemorySlotCounter()): Promise<Admission[]> {
  const window = slidingWindow(limit, windowMs);
  const results: Admission[] = [];
  for (const t of times) results.push(await admit(counter, KEY, t, window));
  return results;
}

const admittedCount = (results: Admission[]) => results.filter((r) => r.admitted).length;
const burst = (at: number, n: number) => Array<number>(n).fill(at);

describe('the sliding-window rate limit', () => {
  // A fixed one-minute bucket would start afresh at 60 000 ms and take another 120 there.
  const boundary = 60_000;

  it('admits the limit and refuses the next click with a Retry-After', async () => {
    const results = await run(burst(1_000, 121), 120, 60_000);
    expect(admittedCount(results)).toBe(120);
    const refused = results[120];
    expect(refused.admitted).toBe(false);
    if (!refused.admitted) expect(refused.retryAfterSeconds).toBeGreaterThanOrEqual(60);
  });

  it('cannot be doubled by a burst straddling a window boundary', async () => {
    const results = await run([...burst(boundary - 1, 120), ...burst(boundary + 1, 120)], 120, 60_000);
    expect(admittedCount(results.slice(0, 120))).toBe(120);
    expect(admittedCount(results.slice(120))).toBe(0);
  });

  it('cannot be doubled by bursts split across any two instants less than a window apart', async () => {
    for (const gap of [1, 999, 5_000, 30_000, 59_999]) {
      for (const start of [0, 1, 4_999, 59_999, 61_234]) {
        const results = await run([...burst(start, 120), ...burst(start + gap, 120)], 120, 60_000);
        expect(admittedCount(results)).toBe(120);
      }
    }
  });

  it('opens again once the clicks have left the window, at the time Retry-After named', async () => {
    const window = slidingWindow(3, 60_000);
    const counter = new MemorySlotCounter();
    for (let i = 0; i < 3; i++) expect((await admit(counter, KEY, 10_000, window)).admitted).toBe(true);
    const refused = await admit(counter, KEY, 20_000, window);
    expect(refused.admitted).toBe(false);
    if (refused.admitted) return;
    // Counted conservatively: the clicks of 10 000 ms count until their slot is a full window old.
    expect((await admit(counter, KEY, 70_001, window)).admitted).toBe(false);
    expect((await admit(counter, KEY, 20_000 + refused.retryAfterSeconds * 1000, window)).admitted).toBe(true);
  });

  it('keeps only the slots that can still count', async () => {
    const counter = new MemorySlotCounter();
    const window = slidingWindow(120, 60_000);
    for (let t = 0; t < 300_000; t += 1_000) await admit(counter, KEY, t, window);
    expect(counter.keys.get(KEY)!.size).toBeLessThanOrEqual(SLOTS_PER_WINDOW + 1);
  });

  it('counts refused requests for nothing, so a flood does not lock a block out for longer', async () => {
    const counter = new MemorySlotCounter();
    const results = await run([...burst(0, 5), ...burst(1_000, 500)], 5, 60_000, counter);
    expect(admittedCount(results)).toBe(5);
    expect([...counter.keys.get(KEY)!.values()].reduce((a, b) => a + b, 0)).toBe(5);
  });

  it('never admits more than the limit in any interval of one window, for any arrivals', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 8 }),
        fc.integer({ min: 12, max: 5_000 }),
        fc.array(fc.integer({ min: 0, max: 20_000 }), { maxLength: 120 }),
        async (limit, windowMs, arrivals) => {
          const times = [...arrivals].sort((a, b) => a - b);
          const results = await run(times, limit, windowMs);
          const admitted = times.filter((_, i) => results[i].admitted);
          for (let i = 0; i < admitted.length; i++) {
            const inWindow = admitted.filter((t) => t > admitted[i] - windowMs && t <= admitted[i]).length;
            expect(inWindow).toBeLessThanOrEqual(limit);
          }
        },
      ),
    );
  });

  it('admits every click of a steady stream at the limit per window plus one slot', async () => {
    // The price of counting whole slots: the effective window is up to one slot (1/12) longer.
    const window = slidingWindow(12, 60_000);
    const spacing = Math.ceil((window.windowMs + window.slotMs) / window.limit);
    const times = Array.from({ length: 60 }, (_, i) => 123 + i * spacing);
    expect(admittedCount(await run(times, 12, 60_000))).toBe(60);
  });

  it('rejects a limit or window it cannot honour', () => {
    expect(() => slidingWindow(0, 60_000)).toThrow();
    expect(() => slidingWindow(10, 5)).toThrow();
  });
});
