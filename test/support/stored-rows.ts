import { isDeepStrictEqual } from 'node:util';
import { AggregateStore } from '../../functions/adapters/aggregate-store';
import { REPORT_FAMILIES, ROW_COUNTERS, ROW_GROUPS } from '../../functions/domain/aggregation/rows';
import { resourceName } from '../../functions/shared/config';
import type { OracleRows } from './aggregation-oracle';

/**
 * The app's stored rows as the oracle writes them: "day|group" to the non-zero counters. Fails
 * unless the attribution day pages hold exactly the attribution rows, so every test that reads the
 * rows also holds the pages to them.
 */
export async function storedRows(appId: string): Promise<OracleRows> {
  const store = new AggregateStore(resourceName.table('aggregates'));
  const out = {} as OracleRows;
  // The interface's four families, as the oracle gives them (the perf families have tests of their own).
  for (const family of REPORT_FAMILIES) {
    out[family] = {};
    for (const row of await store.rows(appId, family)) {
      const counters: Record<string, number> = {};
      for (const [name, value] of Object.entries(row)) {
        if (typeof value === 'number' && value !== 0 && !name.startsWith('t_')) counters[name] = value;
      }
      if (Object.keys(counters).length > 0)
        out[family][[row.day, ...ROW_GROUPS[family].map((column) => String(row[column]))].join('|')] = counters;
    }
  }
  await expectPagesMatchRows(appId, out.attribution);
  return out;
}

/**
 * The attribution family as the reports read it, from its day pages (functions/domain/aggregation/
 * day-pages.ts), in the oracle's form: "day|group" to the non-zero counters.
 */
export async function attributionFromPages(appId: string): Promise<OracleRows['attribution']> {
  const store = new AggregateStore(resourceName.table('aggregates'));
  const out: OracleRows['attribution'] = {};
  for (const row of await store.page(appId, 'attribution', { firstDay: '0000-00-00', lastDay: '9999-12-31' }, Number.MAX_SAFE_INTEGER)) {
    const counters = Object.fromEntries(
      ROW_COUNTERS.attribution.map((name) => [name, Number(row[name] ?? 0)]).filter(([, value]) => value !== 0),
    );
    if (Object.keys(counters).length > 0)
      out[[row.day, ...ROW_GROUPS.attribution.map((column) => String(row[column]))].join('|')] = counters;
  }
  return out;
}

/** Fails unless the day pages hold exactly the attribution rows: no write, fault or retry may leave a page behind. */
export async function expectPagesMatchRows(appId: string, fromRows: OracleRows['attribution']): Promise<void> {
  const fromPages = await attributionFromPages(appId);
  if (!isDeepStrictEqual(fromPages, fromRows)) {
    throw new Error(
      `the attribution day pages differ from the rows:\n  pages ${JSON.stringify(fromPages)}\n  rows  ${JSON.stringify(fromRows)}`,
    );
  }
}
