import fc from 'fast-check';
import { poolOrder } from '../../../bench/pool-order';

describe("the end-to-end load's pool order", () => {
  it('sends every batch once, each install in order, its next batch at least a wave of requests after the one before', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 300 }),
        fc.integer({ min: 1, max: 6 }),
        fc.integer({ min: 1, max: 80 }),
        (installs, batches, wave) => {
          const order = poolOrder(installs, batches, wave);
          const seen = new Map<number, number[]>();
          order.forEach(([install, batch], at) => {
            const positions = seen.get(install) ?? [];
            expect(batch).toBe(positions.length);
            positions.push(at);
            seen.set(install, positions);
          });
          expect(order).toHaveLength(installs * batches);
          expect(seen.size).toBe(installs);
          // The smallest gap between an install's consecutive batches is the size of its wave.
          for (const [install, positions] of seen) {
            const waveSize = Math.min(wave, installs - Math.floor(install / wave) * wave);
            for (let b = 1; b < positions.length; b++) expect(positions[b]! - positions[b - 1]!).toBe(waveSize);
          }
        },
      ),
    );
  });

  it("gives a load that takes only the pool's start the pool's mix: one first batch in four", () => {
    const order = poolOrder(1_000, 4, 64);
    // Three whole waves, about what a 10 s load takes on this machine: a quarter of them first batches.
    const taken = order.slice(0, 768);
    expect(taken.filter(([, batch]) => batch === 0).length / taken.length).toBe(0.25);
    // One batch per install is the surge: every batch a first one, wherever the load stops.
    expect(poolOrder(1_000, 1, 64).every(([, batch]) => batch === 0)).toBe(true);
  });
});
