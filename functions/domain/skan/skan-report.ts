import { localDayOf } from '../common/days';
import { appOfKey, pageAnswer, type ReportAnswer, type ReportBody, type ServerKeys } from '../reports/answer-report';
import { parseReportQuery, windowDays } from '../reports/report-query';
import { type AppsByStoreId, type ConversionType, matchPostback, type SkanRowDims } from './postback-match';
import { invalidExpiry, type PostbackKind, type PostbackRecord } from './postback-record';
import { type ActiveSkanSchemas, estimateRevenueUsd, type PostbackWindow } from './schema';

/**
 * The SKAN report (docs/ios.md section 3). Counting: one item per counted postback, keyed by
 * its transaction id, so writing it again (Apple's retry after a failure) is the same item; each
 * write also bumps its day's `written` counter. Reading: each day's summary of its items, rebuilt
 * from them when `written` moved since it was built. Invalid postbacks get no item and no row:
 * what they name is the sender's word, so they only add to the app's invalid total of the day
 * (issue 36: forged postbacks once made rows and partner labels), a counter that expires with
 * the day's last invalid record.
 */

/** What crowd anonymity left of a postback's conversion value. */
export type ValueTier = 'fine' | 'coarse' | 'none';

/** One counted postback, as the aggregates table keeps it (pk `<app_id>#skanpb#<day>`, sk its transaction id). */
export interface SkanItem extends SkanRowDims {
  readonly transaction_id: string;
  /** The receive day in the app's time zone (of the first verified delivery, so a retry lands on the same day). */
  readonly day: string;
  readonly kind: PostbackKind;
  readonly ad_network_id: string;
  readonly value: ValueTier;
  readonly fine?: number;
  readonly coarse?: string;
  /** The estimate (docs/ios.md section 1) in micro-dollars, through the schema version active when it was received. */
  readonly estimate_micros: number;
  /** That version; absent when the app had no schema. */
  readonly schema_version?: number;
  readonly received_ms: number;
}

/** A report row's counters (invalid postbacks are counted apart, in no row). */
export const SKAN_COUNTERS = ['postbacks', 'installs', 'redownloads', 'with_fine_value', 'with_coarse_value', 'without_value'] as const;
export type SkanCounter = (typeof SKAN_COUNTERS)[number];
export type SkanSums = Record<SkanCounter | 'estimate_micros', number>;

const zeroSums = (): SkanSums => ({
  postbacks: 0,
  installs: 0,
  redownloads: 0,
  with_fine_value: 0,
  with_coarse_value: 0,
  without_value: 0,
  estimate_micros: 0,
});

/** A row's dimensions as one string: the key of a summary's rows. */
export const rowKeyOf = (dims: SkanRowDims): string =>
  JSON.stringify([dims.partner, dims.source_identifier, dims.postback_sequence_index, dims.fidelity_type, dims.conversion_type]);

export function dimsOfKey(key: string): SkanRowDims {
  const [partner, source_identifier, postback_sequence_index, fidelity_type, conversion_type] = JSON.parse(key) as [
    string,
    string,
    PostbackWindow,
    number,
    ConversionType,
  ];
  return { partner, source_identifier, postback_sequence_index, fidelity_type, conversion_type };
}

/** What one item adds to its row. */
export function sumsOfItem(item: Pick<SkanItem, 'postback_sequence_index' | 'conversion_type' | 'value' | 'estimate_micros'>): SkanSums {
  return {
    postbacks: 1,
    installs: item.postback_sequence_index === 0 && item.conversion_type === 'download' ? 1 : 0,
    redownloads: item.conversion_type === 'redownload' ? 1 : 0,
    with_fine_value: item.value === 'fine' ? 1 : 0,
    with_coarse_value: item.value === 'coarse' ? 1 : 0,
    without_value: item.value === 'none' ? 1 : 0,
    estimate_micros: item.estimate_micros,
  };
}

function add(into: SkanSums, sums: SkanSums): void {
  for (const name of Object.keys(into) as (keyof SkanSums)[]) into[name] += sums[name];
}

/** A day's items summed by row. */
export function summaryOf(items: readonly SkanItem[]): Map<string, SkanSums> {
  const rows = new Map<string, SkanSums>();
  for (const item of items) {
    const key = rowKeyOf(item);
    const sums = rows.get(key) ?? zeroSums();
    add(sums, sumsOfItem(item));
    rows.set(key, sums);
  }
  return rows;
}

const COLUMNS = [...SKAN_COUNTERS, 'estimate_micros'] as const;

/** A summary's rows as stored: `[[rowKey, postbacks, ..., estimate_micros], ...]`. */
export const encodeSummary = (rows: ReadonlyMap<string, SkanSums>): string =>
  JSON.stringify([...rows].map(([key, sums]) => [key, ...COLUMNS.map((column) => sums[column])]));

export function decodeSummary(text: string): Map<string, SkanSums> {
  const rows = new Map<string, SkanSums>();
  for (const [key, ...values] of JSON.parse(text) as [string, ...number[]][]) {
    rows.set(key, Object.fromEntries(COLUMNS.map((column, i) => [column, values[i] ?? 0])) as SkanSums);
  }
  return rows;
}

/** Where counted postbacks go (functions/adapters/skan-report-store.ts). */
export interface SkanReportWriter {
  /** Puts the item; the same transaction id again replaces it, so it counts once. */
  putItem(appId: string, item: SkanItem): Promise<void>;
  /** ADDs 1 to the day summary's `written`: the summary is stale until rebuilt. */
  addWritten(appId: string, day: string): Promise<void>;
  /**
   * ADDs 1 to the app's invalid total of a day, and sets its expiry (epoch seconds) to
   * `expiresAt` if later: the total goes when the day's last invalid record does.
   */
  addInvalid(appId: string, day: string, expiresAt: number): Promise<void>;
}

export interface SkanCountingPorts {
  readonly apps: AppsByStoreId;
  readonly schemas: ActiveSkanSchemas;
  readonly report: SkanReportWriter;
}

export type CountOutcome =
  | { readonly kind: 'counted' | 'invalid'; readonly appId: string; readonly day: string }
  | { readonly kind: 'development' | 'unknown_app' };

/**
 * Takes a filed postback into the report: a verified production postback of a known app becomes
 * its item (then its day's `written` moves); an invalid one adds to its app's invalid total of
 * the day, under no row; the rest are not reported. `countedMs` is the instant its day is taken from: the
 * first verified delivery's, so a retry on a later day writes the same item. Throws when a store
 * fails: the caller releases the claim and Apple's retry counts it.
 */
export async function countPostback(ports: SkanCountingPorts, record: PostbackRecord, countedMs: number): Promise<CountOutcome> {
  const match = await matchPostback(record, ports.apps);
  if (match.kind === 'development' || match.kind === 'unknown_app') return { kind: match.kind };
  const { app } = match;
  const day = localDayOf(countedMs, app.time_zone);
  if (match.kind === 'invalid') {
    await ports.report.addInvalid(app.app_id, day, record.expires_at ?? invalidExpiry(record.received_ms));
    return { kind: 'invalid', appId: app.app_id, day };
  }
  const { facts, dims } = match;
  const active = await ports.schemas.active(app.app_id);
  const value = { window: dims.postback_sequence_index, fine: facts.fine, coarse: facts.coarse };
  const item: SkanItem = {
    transaction_id: record.transaction_id,
    day,
    kind: record.kind,
    ad_network_id: facts.adNetworkId,
    ...dims,
    value: facts.fine !== undefined ? 'fine' : facts.coarse !== undefined ? 'coarse' : 'none',
    ...(facts.fine === undefined ? {} : { fine: facts.fine }),
    ...(facts.coarse === undefined ? {} : { coarse: facts.coarse }),
    estimate_micros: Math.round(estimateRevenueUsd(active?.schema, value) * 1_000_000),
    ...(active === undefined ? {} : { schema_version: active.version }),
    received_ms: record.received_ms,
  };
  await ports.report.putItem(app.app_id, item);
  await ports.report.addWritten(app.app_id, day);
  return { kind: 'counted', appId: app.app_id, day };
}

/** A day summary as stored (pk `<app_id>#skan`, sk `<day>`). */
export interface DaySummary {
  /** Items written to the day (a retried write counts again: it only says the summary is stale). */
  readonly written: number;
  /** `written` when `rows` was built. */
  readonly built?: number;
  readonly rows?: string;
}

/** The invalid postbacks of an app's day, and when the last of their records expires (epoch seconds). */
export interface InvalidTotal {
  readonly postbacks: number;
  readonly expiresAt: number;
}

export interface DayWindow {
  readonly firstDay: string;
  readonly lastDay: string;
}

/** The report's rows in the aggregates table (functions/adapters/skan-report-store.ts). */
export interface SkanReportRows {
  /** The window's day summaries, and its invalid totals by day. */
  summaries(
    appId: string,
    window: DayWindow,
  ): Promise<{ readonly days: ReadonlyMap<string, DaySummary>; readonly invalid: ReadonlyMap<string, InvalidTotal> }>;
  /** Every item of a day, read consistently. */
  items(appId: string, day: string): Promise<readonly SkanItem[]>;
  /** Writes a rebuilt summary back, only if `written` is still what it was built at; otherwise leaves it (a later read rebuilds). */
  saveSummary(appId: string, day: string, written: number, rows: string): Promise<void>;
}

export interface SkanReportPorts {
  readonly keys: ServerKeys;
  readonly rows: SkanReportRows;
  nowMs(): number;
}

export interface SkanReportRequest {
  readonly authorization?: string;
  readonly params: Readonly<Record<string, string | undefined>>;
  readonly ifNoneMatch?: string;
}

/** GET /api/v1/reports/skan: the four reports' key, parameters, errors and ETag. */
export async function answerSkan(ports: SkanReportPorts, request: SkanReportRequest): Promise<ReportAnswer> {
  const startedMs = ports.nowMs();
  const appId = await appOfKey(ports.keys, request.authorization);
  return answerAppSkan(ports, { appId, timeZone: await ports.keys.appTimeZone(appId) }, request, startedMs);
}

/** Everything after the key, for an app already known. */
export async function answerAppSkan(
  ports: Pick<SkanReportPorts, 'rows' | 'nowMs'>,
  app: { readonly appId: string; readonly timeZone: string },
  request: Omit<SkanReportRequest, 'authorization'>,
  startedMs = ports.nowMs(),
): Promise<ReportAnswer> {
  const query = parseReportQuery(request.params, startedMs);
  const days = windowDays(query, app.timeZone);
  const all = await skanRows(ports.rows, app.appId, days, startedMs);
  const rows = all.rows.slice(query.offset, query.offset + query.limit);
  return pageAnswer(
    {
      report: 'skan',
      appId: app.appId,
      rows,
      query,
      days,
      ifNoneMatch: request.ifNoneMatch,
      extra: { invalid_postbacks: all.invalidPostbacks },
    },
    () => Math.round(ports.nowMs() - startedMs),
  );
}

/**
 * Every row of the window, sorted by day then by the row's dimensions, and the window's invalid
 * postbacks (the days' totals whose records have not expired at `nowMs`; DynamoDB's TTL deletes
 * them up to days late, and never locally). A day's summary is used while `built` equals
 * `written`; otherwise the day's items are summed and the summary written back on the condition
 * that `written` did not move meanwhile (so past days are one read each).
 */
export async function skanRows(
  rows: SkanReportRows,
  appId: string,
  window: DayWindow,
  nowMs: number,
): Promise<{ readonly rows: ReportBody['rows']; readonly invalidPostbacks: number }> {
  const { days, invalid } = await rows.summaries(appId, window);
  const inWindow = (day: string) => day >= window.firstDay && day <= window.lastDay;
  const out: { day: string; key: string; dims: SkanRowDims; sums: SkanSums }[] = [];
  for (const [day, summary] of days) {
    if (!inWindow(day)) continue;
    let sums: Map<string, SkanSums>;
    if (summary.built === summary.written && summary.rows !== undefined) sums = decodeSummary(summary.rows);
    else {
      sums = summaryOf(await rows.items(appId, day));
      await rows.saveSummary(appId, day, summary.written, encodeSummary(sums));
    }
    for (const [key, daySums] of sums) out.push({ day, key, dims: dimsOfKey(key), sums: daySums });
  }
  let invalidPostbacks = 0;
  for (const [day, total] of invalid) if (inWindow(day) && total.expiresAt * 1000 > nowMs) invalidPostbacks += total.postbacks;
  out.sort((a, b) => compare(a.day, b.day) || compareDims(a.dims, b.dims));
  const reportRows = out.map(({ day, dims, sums }) => ({
    day,
    ...dims,
    postbacks: sums.postbacks,
    installs: sums.installs,
    redownloads: sums.redownloads,
    with_fine_value: sums.with_fine_value,
    with_coarse_value: sums.with_coarse_value,
    without_value: sums.without_value,
    estimated_revenue_usd: Math.round(sums.estimate_micros / 10_000) / 100,
  }));
  return { rows: reportRows, invalidPostbacks };
}

const compare = (a: string | number, b: string | number): number => (a < b ? -1 : a > b ? 1 : 0);

function compareDims(a: SkanRowDims, b: SkanRowDims): number {
  return (
    compare(a.partner, b.partner) ||
    compare(a.source_identifier, b.source_identifier) ||
    compare(a.postback_sequence_index, b.postback_sequence_index) ||
    compare(a.fidelity_type, b.fidelity_type) ||
    compare(a.conversion_type, b.conversion_type)
  );
}
