import fc from 'fast-check';
import { LANE_NUMBERS, type LaneOpening, STREAM_SETTLE_MS, watermarkOf } from '../../../functions/domain/raw-data/watermark';

const NOW = Date.UTC(2026, 10, 21, 12);

describe('the stream watermark', () => {
  it('is now minus the settle time when no lane is open', () => {
    expect(STREAM_SETTLE_MS).toBe(10_000);
    expect(watermarkOf([], NOW)).toBe(NOW - 10_000);
    expect(watermarkOf([undefined, { seq: 7, applied: 7, openedMs: NOW - 60_000 }], NOW)).toBe(NOW - 10_000);
  });

  it('stops at the earliest opening of an open lane', () => {
    const lanes: LaneOpening[] = [
      { seq: 3, applied: 2, openedMs: NOW - 30_000 },
      { seq: 8, applied: 7, openedMs: NOW - 45_000 },
      { seq: 5, applied: 5, openedMs: NOW - 90_000 },
    ];
    expect(watermarkOf(lanes, NOW)).toBe(NOW - 45_000);
  });

  it('leaves out a lane open without opened_ms (an apply from before stream objects writes none)', () => {
    expect(watermarkOf([{ seq: 2, applied: 1 }], NOW)).toBe(NOW - 10_000);
  });

  it("holds an app's stream back only at the lanes whose open apply writes it, or does not say which apps it writes", () => {
    const lanes: LaneOpening[] = [
      { seq: 3, applied: 2, openedMs: NOW - 30_000, apps: ['app_a', 'app_b'] },
      { seq: 8, applied: 7, openedMs: NOW - 45_000, apps: ['app_b'] },
      { seq: 2, applied: 1, openedMs: NOW - 20_000, apps: [] },
    ];
    expect(watermarkOf(lanes, NOW, 'app_a')).toBe(NOW - 30_000);
    expect(watermarkOf(lanes, NOW, 'app_b')).toBe(NOW - 45_000);
    expect(watermarkOf(lanes, NOW, 'app_c')).toBe(NOW - 10_000);
    expect(watermarkOf(lanes, NOW)).toBe(NOW - 45_000);
    expect(watermarkOf([...lanes, { seq: 5, applied: 4, openedMs: NOW - 60_000 }], NOW, 'app_c')).toBe(NOW - 60_000);
  });

  it('is never above now minus the settle time, nor above an open lane, and is one of them', () => {
    const lane = fc.option(
      fc.record({
        seq: fc.integer({ min: 0, max: 5 }),
        applied: fc.integer({ min: 0, max: 5 }),
        openedMs: fc.option(fc.integer({ min: NOW - 600_000, max: NOW + 60_000 }), { nil: undefined }),
      }),
      { nil: undefined },
    );
    fc.assert(
      fc.property(fc.array(lane, { maxLength: LANE_NUMBERS.length }), (lanes) => {
        const watermark = watermarkOf(lanes, NOW);
        const open = lanes.filter((l) => l !== undefined && l.seq > l.applied && l.openedMs !== undefined);
        expect(watermark).toBeLessThanOrEqual(NOW - STREAM_SETTLE_MS);
        for (const l of open) expect(watermark).toBeLessThanOrEqual(l!.openedMs!);
        expect([NOW - STREAM_SETTLE_MS, ...open.map((l) => l!.openedMs)]).toContain(watermark);
      }),
    );
  });

  it('reads all 64 lanes of the ledger', () => {
    expect(LANE_NUMBERS).toEqual(Array.from({ length: 64 }, (_, n) => n));
  });
});
