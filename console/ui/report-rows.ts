/**
 * The reports' rows and the performance report's columns, DOM-free (report-data.ts reads them
 * through the page's API client; the pure modules and their node unit tests import these alone).
 */

export type ReportRow = Record<string, string | number | boolean>;

/** The performance report's grouping columns and filters (docs/analytics.md). */
export const GROUP_COLUMNS = ['day', 'partner', 'campaign', 'country', 'platform'] as const;
export type GroupColumn = (typeof GROUP_COLUMNS)[number];
export const FILTERS = ['partner', 'campaign', 'country', 'platform'] as const;
export type Filter = (typeof FILTERS)[number];

/** A row's figure as a number (0 when absent). */
export const num = (value: unknown): number => (typeof value === 'number' ? value : Number(value ?? 0) || 0);
