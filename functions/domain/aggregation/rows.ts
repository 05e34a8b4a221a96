import { DIMENSIONS, NONE, PERF_COUNTERS, PERF_FAMILIES } from '../analytics/performance';
import type { Stamp } from './lease';

/**
 * The prebuilt report rows (interface "row tables", docs/architecture.md section 7). Each family is one
 * DynamoDB partition per app, sorted by day then the grouping columns, so a report reads a day
 * range in key order and stops. The aggregator only ever adds to these counters; the reports turn
 * micro-dollars and counts into the interface's fields.
 */

/** The families of the interface's four reports. */
export const REPORT_FAMILIES = ['attribution', 'revenue', 'cohorts', 'events'] as const;
/**
 * Every family the aggregator adds to: the four reports', then the performance report's
 * (docs/analytics.md, "Rows"): `perf` by day and the four install dimensions, `perf_partner` the
 * same contributions by day and partner, and `perf_stamp` per day, `v` 1 up per apply, click or
 * cost upload that changed the day (the page compactor rebuilds a day whose `v` moved); then
 * `link`, per day and tracking link, for `admin link stats` (docs/tracking-links.md, "Link stats").
 */
export const ROW_FAMILIES = [...REPORT_FAMILIES, PERF_FAMILIES.perf, PERF_FAMILIES.perfPartner, PERF_FAMILIES.perfStamp, 'link'] as const;
export type RowFamily = (typeof ROW_FAMILIES)[number];

/** The counters each family keeps, all integers (revenue in micro-dollars). */
export const ROW_COUNTERS = {
  attribution: ['installs', 'organic', 'reinstalls', 'fraud_flagged'],
  revenue: ['purchases', 'revenue_micros', 'payers'],
  cohorts: ['installs', 'd1', 'd7', 'd30'],
  events: ['events', 'unique_installs', 'revenue_micros'],
  perf: PERF_COUNTERS,
  perf_partner: PERF_COUNTERS,
  perf_stamp: ['v'],
  /** `clicks` from the link redirect (a plain ADD, as perf's); `installs` from the aggregator: non-organic install events whose decision names the link. */
  link: ['clicks', 'installs', 'reengagements'],
} as const satisfies Record<RowFamily, readonly string[]>;

export type Counter<F extends RowFamily> = (typeof ROW_COUNTERS)[F][number];
export type Counters = Readonly<Record<string, number>>;

/** The grouping columns of each family after the day, in report order. */
export const ROW_GROUPS = {
  attribution: ['partner', 'attribution_type'],
  revenue: ['partner'],
  cohorts: [],
  events: ['event_name'],
  perf: DIMENSIONS,
  perf_partner: ['partner'],
  perf_stamp: [],
  link: ['link_id'],
} as const satisfies Record<RowFamily, readonly string[]>;

/**
 * The families whose `clicks` the link redirect adds outside the lanes: no audit object holds a
 * click, so a rebuild keeps the live rows' (rebuild.ts, `differences`).
 */
export const CLICK_FAMILIES: ReadonlySet<RowFamily> = new Set<RowFamily>([PERF_FAMILIES.perf, PERF_FAMILIES.perfPartner, 'link']);

export interface RowKey {
  readonly family: RowFamily;
  /** YYYY-MM-DD, the app's local day (docs/analytics.md, "Time zones"). */
  readonly day: string;
  /** Values of ROW_GROUPS[family], in order. */
  readonly group: readonly string[];
}

export interface RowDelta extends RowKey {
  readonly add: Counters;
}

/**
 * Separates the day and group values in a sort key. It sorts below every printable character, so
 * "a" < "a b" holds for the stored keys as it does for the tuples (a '#' separator would not).
 */
export const SORT_SEPARATOR = '\u0001';

/**
 * A dimension's value as a row keeps it (docs/analytics.md, "Dimensions of an install"): NONE for
 * one nobody gave; control characters, the sort key's separators among them, become spaces.
 */
export function dimensionValue(value: string | undefined | null): string {
  if (value === undefined || value === null || value === '') return NONE;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the separators are what is taken out.
  return value.replace(/[\u0000-\u001f]/g, ' ');
}

export const sortKeyOf = (key: Pick<RowKey, 'day' | 'group'>): string => [key.day, ...key.group].join(SORT_SEPARATOR);

/** One string per row, unique across families: the combining key and the journal's row name. */
export const rowId = (key: RowKey): string => `${key.family}${SORT_SEPARATOR}${sortKeyOf(key)}`;

export function rowKeyOf(id: string): RowKey {
  const [family, day, ...group] = id.split(SORT_SEPARATOR);
  if (family === undefined || !(ROW_FAMILIES as readonly string[]).includes(family) || day === undefined)
    throw new Error(`not a row id: ${JSON.stringify(id)}`);
  return { family: family as RowFamily, day, group };
}

/** Revenue is summed in integer micro-dollars so that no sum ever drifts (docs/architecture.md section 7). */
export const toMicros = (usd: number): number => Math.round(usd * 1_000_000);

/**
 * Increments combined per row: every contribution of an invocation to one row becomes one write.
 * Zero counters are dropped, and a row whose counters are all zero is not written at all.
 */
export class RowDeltas {
  private readonly rows = new Map<string, Record<string, number>>();

  add(key: RowKey, counters: Counters): void {
    const id = rowId(key);
    const row = this.rows.get(id) ?? {};
    for (const [name, value] of Object.entries(counters)) {
      if (value !== 0) row[name] = (row[name] ?? 0) + value;
    }
    if (Object.keys(row).length > 0) this.rows.set(id, row);
  }

  addAll(deltas: Iterable<RowDelta>): this {
    for (const delta of deltas) this.add(delta, delta.add);
    return this;
  }

  get size(): number {
    return this.rows.size;
  }

  *[Symbol.iterator](): IterableIterator<RowDelta> {
    for (const [id, add] of this.rows) yield { ...rowKeyOf(id), add };
  }

  /** Journal form: row id to counters, small and JSON-safe. */
  toJournal(): Record<string, Record<string, number>> {
    return Object.fromEntries(this.rows);
  }

  static fromJournal(journal: Readonly<Record<string, Readonly<Record<string, number>>>>): RowDeltas {
    const deltas = new RowDeltas();
    for (const [id, add] of Object.entries(journal)) deltas.add(rowKeyOf(id), add);
    return deltas;
  }
}

/** How a row write proves it lands once: an apply on a lane (lease.ts), or a legacy object's own token. */
export type RowStamp = Stamp | { readonly legacyToken: string };

/** The report rows as the aggregator writes them (functions/adapters/aggregate-store.ts). */
export interface RowStore {
  /**
   * Adds the counters to the row and records the stamp on it in one conditional write: an apply's
   * sequence number under its lane (`l<lane>`), refused (false, nothing written) when the row holds
   * that number or a later one for the lane; a legacy object's token (`t_<token>`), refused when
   * the row holds it.
   */
  add(appId: string, row: RowDelta, stamp: RowStamp): Promise<boolean>;
  /**
   * Brings the day pages of these days up to date with their rows (day-pages.ts); nothing for a
   * family that is not paged. Safe to run again and at the same time as another refresh.
   */
  refreshPages(appId: string, family: RowFamily, days: readonly string[]): Promise<void>;
}
