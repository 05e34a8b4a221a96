import { gzipSync } from 'node:zlib';
import { isAcceptedDay } from '../common/days';
import { type CostRow, type DimensionValues, daysOfWeek, dimsKey, encodePerfPage, NONE, type PerfPageRow, weekOf } from './performance';
import { ALL_COUNTERS, type AnyCounter, type DayFact, type DayWindow, type PageKind, type StoredPerfPage } from './performance-report';

/**
 * The compactor of the performance pages (docs/analytics.md, "Reading"): every few minutes, each
 * day whose stamp `v` moved past its `page_v` gets
 *   - a page: one item with the day's `perf` rows and its cost rows merged by dimensions, which
 *     the report reads in place of thousands of rows;
 *   - a partner page: the same summed by partner (a dozen lines), for the reads by partner;
 * and each week (Monday to Sunday) with such a day gets a week page and a week partner page: the
 * sums of its 7 day pages, recording the 7 page v's they were summed from (`vs`).
 *
 * Why a page is never wrong: its `v` is the stamp's as read BEFORE the rows, and every writer
 * adds to the stamp AFTER its rows (on a replay too). A write that lands while the page is built
 * moves the stamp past the page's `v`, so the report does not use that page and the day stays
 * stale (its `page_v` is at most the `v` read) for the next run. A week page holds its day pages'
 * sums, so it is exactly as good as they are: the report uses it only while each of its 7 days'
 * stamps still equals the v recorded for that day. Pages only move forward: a day page is
 * replaced only by one built at the same or a later `v`, a week page by one of the same or a
 * larger sum of `vs` (each day's page v only grows). A day is marked built (page_v) only after
 * its week is, so a run cut short leaves the day stale and the next run builds both again.
 */

/**
 * A day too big for one item (400 KB, the key and attributes included) keeps an overflow marker
 * instead, and is read row by row. The size is the page's as stored: a page of every dimension
 * gzipped (packPage), a partner page as its text.
 */
export const MAX_PAGE_BYTES = 350_000;

/**
 * How a page of every dimension is stored: its JSON gzipped, a seventh to a fifteenth of the text
 * (a busy day's 2,000 rows with every counter filled are about 440 KB of JSON and 30 to 60 KB
 * stored). The store writes these bytes, and their size, not the text's, decides whether the day
 * fits one item.
 */
export function packPage(text: string): Buffer {
  // The compactor packs a page to judge its size, then the store packs the same text to write it:
  // the last page packed is kept, so it is gzipped once.
  if (text !== lastPacked.text) lastPacked = { text, packed: gzipSync(text) };
  return lastPacked.packed;
}
let lastPacked: { text?: string; packed: Buffer } = { packed: Buffer.alloc(0) };
export const packedPageBytes = (text: string): number => packPage(text).length;

export interface StaleDay {
  readonly day: string;
  /** The stamp's v, read before the day's rows. */
  readonly v: number;
}

export type BuiltPage = StoredPerfPage;

/** A week's page: the sums of its 7 day pages, and their v's (Monday first; 0 for a day without a page). */
export type BuiltWeek =
  | { readonly vs: readonly number[]; readonly rows: string }
  | { readonly vs: readonly number[]; readonly overflow: true };

export interface PageStore {
  /** The days of the app whose stamp's v differs from its page_v (read consistently). */
  staleDays(appId: string): Promise<readonly StaleDay[]>;
  /** The day's `perf` rows and cost rows, read consistently. */
  dayRows(appId: string, day: string): Promise<{ readonly perf: readonly DayFact[]; readonly cost: readonly CostRow[] }>;
  /** Puts the day's page of this kind unless one of a later v is there already. */
  putPage(appId: string, kind: PageKind, day: string, page: BuiltPage): Promise<void>;
  /** The day pages of this kind of the window's days, read consistently. */
  dayPages(appId: string, kind: PageKind, window: DayWindow): Promise<ReadonlyMap<string, StoredPerfPage>>;
  /** Puts the week's page of this kind unless one of a larger sum of vs is there already. */
  putWeek(appId: string, kind: PageKind, monday: string, week: BuiltWeek): Promise<void>;
  /** Sets the stamp's page_v to v unless it is there or higher already. */
  markBuilt(appId: string, day: string, v: number): Promise<void>;
}

export interface CompactionSummary {
  apps: number;
  pages: number;
  overflows: number;
  /** Week pages built (each with its week partner page). */
  weeks: number;
  /** Apps left for the next run when the time ran out. */
  unfinished: string[];
  /** Apps whose compaction failed, with the error (the run went on with the others; docs/analytics.md, "Reading"). */
  failed: { app_id: string; error: unknown }[];
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

type Line = (string | number)[];

/**
 * Lines of pages (encodePerfPage) summed by their dimensions, or by partner alone (the other
 * three NONE), in dimension order: a week's page from its days', a partner page from a page.
 */
export function sumPages(texts: readonly string[], byPartner: boolean): string {
  const sums = new Map<string, Line>();
  for (const text of texts) {
    for (const line of JSON.parse(text) as Line[]) {
      const dims = byPartner ? [line[0] as string, NONE, NONE, NONE] : (line.slice(0, 4) as string[]);
      const key = dims.join('\u0001');
      const sum = sums.get(key);
      if (!sum) {
        sums.set(key, [...dims, ...ALL_COUNTERS.map((_, i) => Number(line[4 + i] ?? 0))]);
        continue;
      }
      for (let i = 4; i < 4 + ALL_COUNTERS.length; i++) sum[i] = (sum[i] as number) + Number(line[i] ?? 0);
    }
  }
  return JSON.stringify([...sums.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, line]) => line));
}

/** Whether a page's rows fit one item as the store keeps them: packed for the rows of every dimension, as text for a partner page. */
const fits = (text: string, byPartner: boolean) => (byPartner ? Buffer.byteLength(text) : packedPageBytes(text)) <= MAX_PAGE_BYTES;

/** The pages of a day's rows at the stamp's v: its rows (or the overflow marker when they would not fit), and its partner page. */
export function pagesOf(v: number, perf: readonly DayFact[], cost: readonly CostRow[]): { page: BuiltPage; partner: BuiltPage } {
  const rows = encodePerfPage(buildPageRows(perf, cost));
  const partner = sumPages([rows], true);
  return {
    page: fits(rows, false) ? { v, rows } : { v, overflow: true },
    partner: fits(partner, true) ? { v, rows: partner } : { v, overflow: true },
  };
}

/** The week's page of one kind from its day pages: overflow when a day's is one, or the sums would not fit. */
export function weekOfPages(monday: string, pages: ReadonlyMap<string, StoredPerfPage>, byPartner: boolean): BuiltWeek {
  const days = daysOfWeek(monday).map((day) => pages.get(day));
  const vs = days.map((page) => page?.v ?? 0);
  const texts: string[] = [];
  for (const page of days) {
    if (!page) continue;
    if (!('rows' in page)) return { vs, overflow: true };
    texts.push(page.rows);
  }
  const rows = sumPages(texts, byPartner);
  return fits(rows, byPartner) ? { vs, rows } : { vs, overflow: true };
}

/** Builds the pages of one app's stale days, then the pages of their weeks, then marks the days built. */
export async function compactApp(store: PageStore, appId: string): Promise<{ pages: number; overflows: number; weeks: number }> {
  let pages = 0;
  let overflows = 0;
  const all = await store.staleDays(appId);
  // A day outside the accepted range (a cost row stored before such dates were refused) is never
  // read (report windows stop at the range's edges) and its week may end past 9999-12-31: it is
  // marked built without pages, so it neither fails nor returns on every run.
  const stale = all.filter(({ day }) => isAcceptedDay(day));
  for (const { day, v } of all) if (!isAcceptedDay(day)) await store.markBuilt(appId, day, v);
  for (const { day, v } of stale) {
    const { perf, cost } = await store.dayRows(appId, day);
    const built = pagesOf(v, perf, cost);
    await store.putPage(appId, 'rows', day, built.page);
    await store.putPage(appId, 'partner', day, built.partner);
    pages++;
    if ('overflow' in built.page) overflows++;
  }
  const mondays = [...new Set(stale.map(({ day }) => weekOf(day)))].sort();
  for (const monday of mondays) {
    const window = { firstDay: monday, lastDay: daysOfWeek(monday)[6] as string };
    for (const kind of ['rows', 'partner'] as const) {
      const dayPages = await store.dayPages(appId, kind, window);
      await store.putWeek(appId, kind, monday, weekOfPages(monday, dayPages, kind === 'partner'));
    }
  }
  for (const { day, v } of stale) await store.markBuilt(appId, day, v);
  return { pages, overflows, weeks: mondays.length };
}

/**
 * Every app's stale days, app after app, until the deadline: the apps not reached are the next
 * run's. One app's failure (a store error, a row nobody foresaw) is the app's: it is named in
 * `failed` and the run goes on with the others, whose pages would otherwise wait behind it forever.
 */
export async function compactPages(
  store: PageStore,
  appIds: readonly string[],
  deadlineMs: number,
  nowMs: () => number,
): Promise<CompactionSummary> {
  const summary: CompactionSummary = { apps: 0, pages: 0, overflows: 0, weeks: 0, unfinished: [], failed: [] };
  for (const appId of appIds) {
    if (nowMs() >= deadlineMs) {
      summary.unfinished.push(appId);
      continue;
    }
    let done: Awaited<ReturnType<typeof compactApp>>;
    try {
      done = await compactApp(store, appId);
    } catch (error) {
      summary.failed.push({ app_id: appId, error });
      continue;
    }
    summary.apps++;
    summary.pages += done.pages;
    summary.overflows += done.overflows;
    summary.weeks += done.weeks;
  }
  return summary;
}
