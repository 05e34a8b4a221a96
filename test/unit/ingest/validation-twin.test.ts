import { batchContext, sampleBatch, validateWithZod } from '../../../bench/event-validation';
import { validateEvent } from '../../../functions/domain/ingest/event-validation';

// The benchmark compares the hand-written validator with a zod schema; the comparison means
// something only while both give the same answers.
describe("the benchmark's zod twin", () => {
  it('gives the same verdict as the hand-written validator for every event of a varied batch', () => {
    const now = Date.now();
    const events = sampleBatch(1000, now);
    const hand = batchContext(now);
    const zod = batchContext(now);
    const verdicts = events.map((event) => [validateEvent(event, hand), validateWithZod(event, zod)]);
    expect(verdicts.filter(([a, b]) => a !== b)).toEqual([]);
    expect(new Set(verdicts.map(([reason]) => reason)).size).toBeGreaterThan(8);
  });
});
