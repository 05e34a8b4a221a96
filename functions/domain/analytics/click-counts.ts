import { SORT_SEPARATOR } from '../aggregation/rows';
import { type DimensionValues, NONE } from './performance';

/**
 * The click counter (docs/adr/0006-one-click-counter.md): one item per (day, partner, campaign,
 * country, platform, link) that the link redirect adds 1 to, where it used to add 1 to three
 * items (the `perf` row, the `perf_partner` row, the `link` row). Those three families' `clicks`
 * are derived from it when they are read: by the report's rows, by the compactor's pages, by
 * `admin link stats` and by the rebuild (AggregateStore, PerformanceStore). A `clicks` value
 * already stored on a `perf`, `perf_partner` or `link` row (counted before this item existed)
 * still counts: the derived value is added to it.
 */
export const CLICK_COUNT_FAMILY = 'click';

/** One click counter item: its day, the click's dimensions, its link, and the clicks it holds. */
export interface ClickCount {
  readonly day: string;
  readonly dims: DimensionValues;
  readonly linkId: string;
  readonly clicks: number;
  /** The id of the last click-count lane apply that added to the item (functions/domain/aggregation/click-counts.ts). */
  readonly applied?: string;
}

/**
 * sk `<day>␁<partner>␁<campaign>␁<country>␁<platform>␁<link_id>`. The dimension values are
 * dimensionValue()'s (no control character) and a link id is base64url, so the separator splits
 * the key back into exactly these six parts.
 */
export const clickCountSortKey = (day: string, dims: DimensionValues, linkId: string): string =>
  [day, ...dims, linkId].join(SORT_SEPARATOR);

/** The item of a sort key and a count; undefined for a key of another shape (nothing this code wrote). */
export function clickCountOf(sortKey: string, clicks: number, applied?: string): ClickCount | undefined {
  const parts = sortKey.split(SORT_SEPARATOR);
  if (parts.length !== 6) return undefined;
  const [day = '', partner = NONE, campaign = NONE, country = NONE, platform = NONE, linkId = ''] = parts;
  return { day, dims: [partner, campaign, country, platform], linkId, clicks, ...(applied === undefined ? {} : { applied }) };
}

/** Which family's rows the counters stand in for, and the group of that family a counter adds to. */
export const DERIVED_GROUPS = {
  perf: (count: ClickCount): readonly string[] => count.dims,
  perf_partner: (count: ClickCount): readonly string[] => [count.dims[0]],
  link: (count: ClickCount): readonly string[] => [count.linkId],
} as const;

export type DerivedFamily = keyof typeof DERIVED_GROUPS;

export const isDerivedFamily = (family: string): family is DerivedFamily => Object.hasOwn(DERIVED_GROUPS, family);

/** A derived row: the family's day and group, and the clicks of every counter item that falls in it. */
export interface DerivedClicks {
  readonly day: string;
  readonly group: readonly string[];
  readonly clicks: number;
}

/** The counters summed into the family's rows, in key order (day, then group), rows of no click left out. */
export function derivedClicks(family: DerivedFamily, counts: readonly ClickCount[]): DerivedClicks[] {
  const groupOf = DERIVED_GROUPS[family];
  const sums = new Map<string, DerivedClicks>();
  for (const count of counts) {
    if (count.clicks === 0) continue;
    const group = groupOf(count);
    const key = [count.day, ...group].join(SORT_SEPARATOR);
    const sum = sums.get(key);
    sums.set(key, { day: count.day, group, clicks: (sum?.clicks ?? 0) + count.clicks });
  }
  return [...sums.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
}
