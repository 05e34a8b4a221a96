import type { StoredCounters } from '../reports/report-rows';
import { ROW_COUNTERS, ROW_GROUPS, type RowFamily, sortKeyOf } from './rows';

/**
 * Day pages: for the families in PAGED_FAMILIES, every app-day's rows are also kept as one item,
 * so a report of a long window reads one item per day rather than one per row (a 365-day
 * attribution page of 1,000 rows is about 34 items instead of 1,000; docs/aggregation.md, "Day
 * pages"). The rows stay the truth: they are what the aggregator counts exactly once into, with
 * their tokens. A page is derived from them, and only ever brought forward:
 *
 *   - every write that changes a row's counters adds 1 to its version `v` in the same write, so a
 *     row's version names its state;
 *   - a refresh reads the day's rows (a consistent query, after the writes it follows) and merges
 *     them into the page, row by row, keeping whichever side has the higher version;
 *   - the page is replaced only if nobody replaced it since it was read (its own `ver`).
 *
 * Merging by version is commutative, associative and idempotent, so refreshes that run at the same
 * time, again after a crash, or in any order, all leave the page holding each row's newest state
 * that any refresh saw. The aggregator refreshes the days it wrote before it marks its objects
 * done, so a page is never behind a finished object.
 */

/** The families kept as day pages: attribution, whose long windows are many rows a day and whose rows change only with installs. */
export const PAGED_FAMILIES: ReadonlySet<RowFamily> = new Set<RowFamily>(['attribution']);

/** A page whose rows would take more than this many bytes is kept as a marker: its day is read row by row. */
export const MAX_PAGE_ROWS_BYTES = 300_000;

/** One row of a day as a page holds it: its group, its counters, and the version they are at. */
export interface PageRow {
  readonly group: readonly string[];
  readonly counters: Readonly<Record<string, number>>;
  readonly v: number;
}

export type DayPage = { readonly overflow: false; readonly rows: readonly PageRow[] } | { readonly overflow: true };

/**
 * The page with the snapshot merged in, or undefined when the page already holds every row of the
 * snapshot at its version or newer (nothing to write). Rows come out in the rows' key order: the
 * order of their sort keys' UTF-8 bytes, as DynamoDB orders them.
 */
export function mergePage(family: RowFamily, day: string, page: DayPage | undefined, snapshot: readonly PageRow[]): DayPage | undefined {
  if (page?.overflow) return undefined;
  const merged = new Map<string, PageRow>();
  for (const row of page?.rows ?? []) merged.set(sortKeyOf({ day, group: row.group }), row);
  let changed = page === undefined;
  for (const row of snapshot) {
    const sk = sortKeyOf({ day, group: row.group });
    const held = merged.get(sk);
    if (held && held.v >= row.v) continue;
    merged.set(sk, row);
    changed = true;
  }
  if (!changed) return undefined;
  const rows = [...merged].sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b))).map(([, row]) => row);
  if (Buffer.byteLength(encodePageRows(family, rows)) > MAX_PAGE_ROWS_BYTES) return { overflow: true };
  return { overflow: false, rows };
}

/** Compact JSON: one array per row, the group values, then the counters in ROW_COUNTERS order, then the version. */
export function encodePageRows(family: RowFamily, rows: readonly PageRow[]): string {
  const counters = ROW_COUNTERS[family] as readonly string[];
  return JSON.stringify(rows.map((row) => [...row.group, ...counters.map((name) => row.counters[name] ?? 0), row.v]));
}

export function decodePageRows(family: RowFamily, text: string): PageRow[] {
  const groups = ROW_GROUPS[family].length;
  const counters = ROW_COUNTERS[family] as readonly string[];
  return (JSON.parse(text) as (string | number)[][]).map((cells) => ({
    group: cells.slice(0, groups).map(String),
    counters: Object.fromEntries(counters.map((name, i) => [name, Number(cells[groups + i])])),
    v: Number(cells[groups + counters.length]),
  }));
}

/**
 * A page's rows in the form a report renders (the columns of a stored row), straight from the
 * page's text, at most `count` of them.
 */
export function pageReportRows(family: RowFamily, day: string, text: string, count: number): StoredCounters[] {
  const groupColumns = ROW_GROUPS[family] as readonly string[];
  const counterColumns = ROW_COUNTERS[family] as readonly string[];
  const cells = JSON.parse(text) as (string | number)[][];
  const rows: StoredCounters[] = [];
  for (const line of cells.slice(0, count)) {
    const row: Record<string, string | number | undefined> = { day };
    for (const [i, column] of groupColumns.entries()) row[column] = line[i];
    for (const [i, column] of counterColumns.entries()) row[column] = line[groupColumns.length + i];
    rows.push(row);
  }
  return rows;
}
