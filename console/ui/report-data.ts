import { command } from './api';
import type { Period } from './period';
import type { Filter, GroupColumn, ReportRow } from './report-rows';

export { FILTERS, type Filter, GROUP_COLUMNS, type GroupColumn, num, type ReportRow } from './report-rows';

/**
 * The console's reads of the Reporting API, through `report show` (the API's own use case,
 * docs/console.md "What the reports are"): a whole window, every page of it, for the charts,
 * totals and CSVs.
 */

/** The API's largest page. */
export const MAX_LIMIT = 1000;
/** A read stops after this many pages (a year of a very busy app by every dimension is far below). */
export const MAX_PAGES = 100;

export type ReportName = 'attribution' | 'revenue' | 'cohorts' | 'events' | 'performance' | 'skan';

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
  /** The SKAN report's postbacks of the window whose signature failed (in no row). */
  invalid_postbacks?: number;
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

/** The SKAN report's invalid postbacks of the window: the app's total, which no row carries. */
export function readSkanInvalid(options: ReadOptions): Promise<number> {
  return command<Page>('report show', {
    'app-key': options.appKey,
    report: 'skan',
    'since-ms': String(options.period.sinceMs),
    'until-ms': String(options.period.untilMs),
    limit: '1',
  }).then((page) => page.invalid_postbacks ?? 0);
}

/**
 * Every row of the window, read page after page (the API gives no total: a short page is the last).
 * `pageSize` is the API's page (its largest unless a test or `page_size=` asks for smaller ones).
 */
export async function readAll(report: ReportName, options: ReadOptions, pageSize = MAX_LIMIT): Promise<ReportRow[]> {
  const rows: ReportRow[] = [];
  for (let page = 0; page * pageSize < MAX_PAGES * MAX_LIMIT; page += 1) {
    const next = await readPage(report, options, page * pageSize, pageSize);
    rows.push(...next);
    if (next.length < pageSize) return rows;
  }
  throw new Error(`the window has more than ${MAX_PAGES * MAX_LIMIT} rows: choose a shorter period or fewer groupings`);
}
