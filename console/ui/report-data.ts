import { command } from './api';
import type { Period } from './period';

/**
 * The console's reads of the Reporting API, through `report show` (the API's own use case,
 * docs/console.md "What the reports are"): a whole window, every page of it, for the charts,
 * totals and CSVs.
 */

export type ReportRow = Record<string, string | number | boolean>;

/** The API's largest page. */
export const MAX_LIMIT = 1000;
/** A read stops after this many pages (a year of a very busy app by every dimension is far below). */
export const MAX_PAGES = 100;

export type ReportName = 'attribution' | 'revenue' | 'cohorts' | 'events' | 'performance' | 'skan';

/** The performance report's grouping columns and filters (docs/analytics.md). */
export const GROUP_COLUMNS = ['day', 'partner', 'campaign', 'country', 'platform'] as const;
export type GroupColumn = (typeof GROUP_COLUMNS)[number];
export const FILTERS = ['partner', 'campaign', 'country', 'platform'] as const;
export type Filter = (typeof FILTERS)[number];

export interface ReadOptions {
  readonly appKey: string;
  readonly period: Pick<Period, 'sinceMs' | 'untilMs'>;
  /** Performance only: the group_by columns (the API's default, day and partner, when empty). */
  readonly groupBy?: readonly GroupColumn[];
  /** Performance only: comma lists of values. */
  readonly filters?: Partial<Record<Filter, string>>;
}

interface Page {
  rows: ReportRow[];
}

/** One page, as `GET /api/v1/reports/{report}` answers it. */
export function readPage(report: ReportName, options: ReadOptions, offset: number, limit: number): Promise<ReportRow[]> {
  return command<Page>('report show', {
    'app-key': options.appKey,
    report,
    'since-ms': String(options.period.sinceMs),
    'until-ms': String(options.period.untilMs),
    limit: String(limit),
    offset: String(offset),
    'group-by': options.groupBy?.length ? options.groupBy.join(',') : undefined,
    ...(options.filters ?? {}),
  }).then((page) => page.rows);
}

/** Every row of the window, read page after page (the API gives no total: a short page is the last). */
export async function readAll(report: ReportName, options: ReadOptions): Promise<ReportRow[]> {
  const rows: ReportRow[] = [];
  for (let page = 0; page < MAX_PAGES; page += 1) {
    const next = await readPage(report, options, page * MAX_LIMIT, MAX_LIMIT);
    rows.push(...next);
    if (next.length < MAX_LIMIT) return rows;
  }
  throw new Error(`the window has more than ${MAX_PAGES * MAX_LIMIT} rows: choose a shorter period or fewer groupings`);
}

export const num = (value: unknown): number => (typeof value === 'number' ? value : Number(value ?? 0) || 0);
