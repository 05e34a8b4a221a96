import { type CostRow, type DimensionValues, dimsKey, encodePerfPage, type PerfPageRow } from './performance';
import { ALL_COUNTERS, type AnyCounter, type DayFact } from './performance-report';

/**
 * The compactor of the performance pages (docs/analytics.md, "Reading"): every few minutes, each
 * day whose stamp `v` moved past its `page_v` gets a page, one item with the day's `perf` rows and
 * its cost rows merged by dimensions, which the report reads in place of thousands of rows.
 *
 * Why a page is never wrong: its `v` is the stamp's as read BEFORE the rows, and every writer
 * adds to the stamp AFTER its rows (on a replay too). A write that lands while the page is built
 * moves the stamp past the page's `v`, so the report does not use that page and the day stays
 * stale (its `page_v` is at most the `v` read) for the next run. Pages only move forward: a page
 * is replaced only by one built at the same or a later `v`.
 */

/** A day too big for one item (400 KB, the key and attributes included) keeps an overflow marker instead, and is read row by row. */
export const MAX_PAGE_BYTES = 350_000;

export interface StaleDay {
  readonly day: string;
  /** The stamp's v, read before the day's rows. */
  readonly v: number;
}

export type BuiltPage = { readonly v: number; readonly rows: string } | { readonly v: number; readonly overflow: true };

export interface PageStore {
  /** The days of the app whose stamp's v differs from its page_v (read consistently). */
  staleDays(appId: string): Promise<readonly StaleDay[]>;
  /** The day's `perf` rows and cost rows, read consistently. */
  dayRows(appId: string, day: string): Promise<{ readonly perf: readonly DayFact[]; readonly cost: readonly CostRow[] }>;
  /** Puts the page unless one of a later v is there already. */
  putPage(appId: string, day: string, page: BuiltPage): Promise<void>;
  /** Sets the stamp's page_v to v unless it is there or higher already. */
  markBuilt(appId: string, day: string, v: number): Promise<void>;
}

export interface CompactionSummary {
  apps: number;
  pages: number;
  overflows: number;
  /** Apps left for the next run when the time ran out. */
  unfinished: string[];
}

/** The day's rows merged by dimensions: perf counters and cost counters of the same dimensions in one row, in dimension order. */
export function buildPageRows(perf: readonly DayFact[], cost: readonly CostRow[]): PerfPageRow[] {
  const rows = new Map<string, { dims: DimensionValues; counters: Record<AnyCounter, number> }>();
  const rowOf = (dims: DimensionValues) => {
    const key = dimsKey(dims);
    let row = rows.get(key);
    if (!row) {
      row = { dims, counters: Object.fromEntries(ALL_COUNTERS.map((name) => [name, 0])) as Record<AnyCounter, number> };
      rows.set(key, row);
    }
    return row;
  };
  for (const fact of perf) {
    const row = rowOf(fact.dims);
    for (const name of ALL_COUNTERS) row.counters[name] += fact.counters[name] ?? 0;
  }
  for (const line of cost) {
    const row = rowOf(line.dims);
    row.counters.cost_micros += line.cost_micros;
    row.counters.network_clicks += line.network_clicks;
    row.counters.impressions += line.impressions;
  }
  return [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, row]) => row);
}

/** The page of a day's rows at the stamp's v: its rows, or the overflow marker when they would not fit. */
export function pageOf(v: number, perf: readonly DayFact[], cost: readonly CostRow[]): BuiltPage {
  const rows = encodePerfPage(buildPageRows(perf, cost));
  return Buffer.byteLength(rows) > MAX_PAGE_BYTES ? { v, overflow: true } : { v, rows };
}

/** Builds the pages of one app's stale days. */
export async function compactApp(store: PageStore, appId: string): Promise<{ pages: number; overflows: number }> {
  let pages = 0;
  let overflows = 0;
  for (const { day, v } of await store.staleDays(appId)) {
    const { perf, cost } = await store.dayRows(appId, day);
    const page = pageOf(v, perf, cost);
    await store.putPage(appId, day, page);
    await store.markBuilt(appId, day, v);
    pages++;
    if ('overflow' in page) overflows++;
  }
  return { pages, overflows };
}

/** Every app's stale days, app after app, until the deadline: the apps not reached are the next run's. */
export async function compactPages(
  store: PageStore,
  appIds: readonly string[],
  deadlineMs: number,
  nowMs: () => number,
): Promise<CompactionSummary> {
  const summary: CompactionSummary = { apps: 0, pages: 0, overflows: 0, unfinished: [] };
  for (const appId of appIds) {
    if (nowMs() >= deadlineMs) {
      summary.unfinished.push(appId);
      continue;
    }
    const done = await compactApp(store, appId);
    summary.apps++;
    summary.pages += done.pages;
    summary.overflows += done.overflows;
  }
  return summary;
}
