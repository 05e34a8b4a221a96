import fc from 'fast-check';
import { dimensionValue } from '../../../functions/domain/aggregation/rows';
import {
  type ClickCount,
  clickCountOf,
  clickCountSortKey,
  type DerivedFamily,
  derivedClicks,
  isDerivedFamily,
} from '../../../functions/domain/analytics/click-counts';
import type { DimensionValues } from '../../../functions/domain/analytics/performance';

/** A click as the link redirect counts it: its day, its four dimensions, its link. */
const click = fc.record({
  day: fc.constantFrom('2025-01-14', '2025-01-15', '2025-01-16'),
  dims: fc.tuple(
    fc.constantFrom('acme', 'beta', '(none)', 'a\u0001b'),
    fc.constantFrom('spring', '(none)', 'x y'),
    fc.constantFrom('US', 'JP', '(none)'),
    fc.constantFrom('ios', 'android', 'desktop'),
  ),
  linkId: fc.constantFrom('lnk_1', 'lnk-2', 'L3_'),
});
type Click = { day: string; dims: [string, string, string, string]; linkId: string };

/** The counter items a run of clicks leaves: one ADD of 1 per click on its item's key, as AggregateStore.countClick does. */
function counterItems(clicks: readonly Click[]): ClickCount[] {
  const items = new Map<string, number>();
  for (const { day, dims, linkId } of clicks) {
    const key = clickCountSortKey(day, dims.map(dimensionValue) as unknown as DimensionValues, linkId);
    items.set(key, (items.get(key) ?? 0) + 1);
  }
  return [...items].map(([sk, clicks]) => clickCountOf(sk, clicks) as ClickCount);
}

/** The oracle: what the family's rows counted when the redirect added 1 to each of them per click. */
function rowsCountedPerClick(family: DerivedFamily, clicks: readonly Click[]): Map<string, number> {
  const rows = new Map<string, number>();
  for (const { day, dims, linkId } of clicks) {
    const clean = dims.map(dimensionValue);
    const group = family === 'perf' ? clean : family === 'perf_partner' ? [clean[0]] : [linkId];
    const key = JSON.stringify([day, ...group]);
    rows.set(key, (rows.get(key) ?? 0) + 1);
  }
  return rows;
}

describe('the click counter items', () => {
  it.each(['perf', 'perf_partner', 'link'] as const)('derive exactly the %s rows that one ADD per click on each row counted', (family) => {
    fc.assert(
      fc.property(fc.array(click, { maxLength: 60 }), (clicks) => {
        const derived = derivedClicks(family, counterItems(clicks));
        const asRows = new Map(derived.map((row) => [JSON.stringify([row.day, ...row.group]), row.clicks]));
        expect(asRows).toEqual(rowsCountedPerClick(family, clicks));
        // In key order, each row once.
        const keys = derived.map((row) => [row.day, ...row.group].join('\u0001'));
        expect(keys).toEqual([...keys].sort());
        expect(new Set(keys).size).toBe(keys.length);
      }),
    );
  });

  it('read back a key into the day, dimensions and link it was written with', () => {
    fc.assert(
      fc.property(click, ({ day, dims, linkId }) => {
        const clean = dims.map(dimensionValue) as unknown as DimensionValues;
        expect(clickCountOf(clickCountSortKey(day, clean, linkId), 3)).toEqual({ day, dims: clean, linkId, clicks: 3 });
      }),
    );
  });

  it('ignore a key of another shape and leave out counters of zero', () => {
    expect(clickCountOf('2025-01-15\u0001acme', 1)).toBeUndefined();
    const zero = clickCountOf(clickCountSortKey('2025-01-15', ['acme', 'x', 'US', 'ios'], 'lnk_1'), 0) as ClickCount;
    expect(derivedClicks('perf', [zero])).toEqual([]);
  });

  it('stand in for the perf, perf_partner and link families only', () => {
    expect(['perf', 'perf_partner', 'link', 'perf_stamp', 'attribution'].filter(isDerivedFamily)).toEqual(['perf', 'perf_partner', 'link']);
  });
});
