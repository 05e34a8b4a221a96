import { createHash } from 'node:crypto';
import type { RowFamily } from '../aggregation/rows';
import type { UsedKey } from '../tenants/key-use';
import { type ServerKeyScope, scopesOf } from '../tenants/tenant';
import { bearerKey, parseReportQuery, type ReportQuery, reportError, windowDays } from './report-query';
import { REPORT_FAMILY, renderRow, type StoredCounters } from './report-rows';
import type { ReportName } from './reports';

/**
 * A report request, from the bearer key to the page of rows (interface "Reporting API",
 * docs/reports.md): authenticate, read the parameters, then read the app's prebuilt rows of the window
 * in key order and stop after offset + limit, so a page of a 365-day window costs what a page of a
 * one-day window costs. Every row comes from the key's app, whatever the query says.
 */
export interface ReportPorts {
  readonly keys: ServerKeys;
  readonly rows: ReportRows;
  nowMs(): number;
}

/** The server keys (CachedTenants in functions/adapters/tenant-store.ts). */
export interface ServerKeys {
  /** The server key's record (looked up by its SHA-256, cached at most 60 s). */
  serverKey(key: string): Promise<
    | {
        readonly app_id: string;
        readonly revoked: boolean;
        readonly scopes?: readonly ServerKeyScope[];
        readonly key_hash?: string;
        readonly last_used_ms?: number;
      }
    | undefined
  >;
  /**
   * Notes that the key was accepted, for its last use (functions/domain/tenants/key-use.ts): at
   * most one write an hour, in the background; it never throws nor makes the request wait.
   */
  keyUsed?(key: UsedKey): void;
  /** The app's IANA time zone, whose days the report rows are (docs/reports.md, "Time zones"); cached as the keys are. */
  appTimeZone(appId: string): Promise<string>;
}

/** The prebuilt rows (functions/adapters/aggregate-store.ts). */
export interface ReportRows {
  /** At most `count` rows of the app's family whose day is in [firstDay, lastDay], in key order. */
  page(appId: string, family: RowFamily, window: { firstDay: string; lastDay: string }, count: number): Promise<readonly StoredCounters[]>;
}

export interface ReportRequest {
  readonly report: ReportName;
  readonly authorization?: string;
  readonly params: Readonly<Record<string, string | undefined>>;
  readonly ifNoneMatch?: string;
}

export type ReportAnswer =
  | { readonly kind: 'page'; readonly body: ReportBody; readonly etag: string; readonly appId: string }
  | { readonly kind: 'not_modified'; readonly etag: string; readonly appId: string };

export interface ReportBody {
  rows: Record<string, string | number | boolean>[];
  meta: { since_ms: number; until_ms: number; limit: number; offset: number; elapsed_ms: number };
  /** The SKAN report's postbacks of the window whose signature failed: the app's, in no row. */
  invalid_postbacks?: number;
}

export async function answerReport(ports: ReportPorts, request: ReportRequest): Promise<ReportAnswer> {
  const startedMs = ports.nowMs();
  const appId = await appOfKey(ports.keys, request.authorization);
  return answerAppReport(ports, { appId, timeZone: await ports.keys.appTimeZone(appId) }, request, startedMs);
}

/**
 * The app a request's bearer server key names: the reports' and the stream's 401s otherwise, and
 * 403 insufficient_scope for a key without the scope the endpoint needs (`read` for the reports
 * and the stream, `cost` for POST /api/v1/cost; a key made before scopes is a `read` key).
 */
export async function appOfKey(keys: ServerKeys, authorization: string | undefined, scope: ServerKeyScope = 'read'): Promise<string> {
  const record = await keys.serverKey(bearerKey(authorization));
  // An item without an app is no key: the key-use grant lets a function write `last_used_ms` on
  // any server_key# item, and so create one holding nothing else (docs/console.md, "Server keys").
  if (!record || record.revoked || !record.app_id) throw reportError('invalid_or_revoked_key');
  if (!scopesOf(record).includes(scope)) throw reportError('insufficient_scope');
  if (record.key_hash) keys.keyUsed?.({ key_hash: record.key_hash, last_used_ms: record.last_used_ms });
  return record.app_id;
}

/**
 * Everything after authentication, for an app already known: the Reporting API once the key has
 * named the app, and the operator's `admin report show` (and console), which reach an app through
 * their AWS access rather than a server key, so they read exactly the API's pages. The window's
 * days are the app's local days (its time zone), as the rows are.
 */
export async function answerAppReport(
  ports: Pick<ReportPorts, 'rows' | 'nowMs'>,
  app: { readonly appId: string; readonly timeZone: string },
  request: Omit<ReportRequest, 'authorization'>,
  startedMs = ports.nowMs(),
): Promise<ReportAnswer> {
  const { appId } = app;
  const query = parseReportQuery(request.params, startedMs);
  const days = windowDays(query, app.timeZone);
  const stored = await ports.rows.page(appId, REPORT_FAMILY[request.report], days, query.offset + query.limit);
  const rows = stored.slice(query.offset, query.offset + query.limit).map(renderRow[request.report]);
  return pageAnswer({ report: request.report, appId, rows, query, days, ifNoneMatch: request.ifNoneMatch }, () =>
    Math.round(ports.nowMs() - startedMs),
  );
}

/**
 * A report's page of rendered rows with its meta, or a 304 when If-None-Match names its ETag:
 * the one way every report (the four and the performance report) answers. `elapsedMs` is read
 * last, once the page is ready.
 */
export function pageAnswer(
  page: {
    readonly report: ReportName | 'performance' | 'skan';
    readonly appId: string;
    readonly rows: ReportBody['rows'];
    readonly query: ReportQuery;
    readonly days: { firstDay: string; lastDay: string };
    readonly ifNoneMatch: string | undefined;
    /** Members of the body beside rows and meta (the SKAN report's invalid_postbacks): the ETag covers them. */
    readonly extra?: Pick<ReportBody, 'invalid_postbacks'>;
  },
  elapsedMs: () => number,
): ReportAnswer {
  const { report, appId, rows, query, days, extra } = page;
  const etag = etagOf(report, extra === undefined ? rows : [rows, extra], query, days);
  if (matches(page.ifNoneMatch, etag)) return { kind: 'not_modified', etag, appId };
  const meta = { since_ms: query.sinceMs, until_ms: query.untilMs, limit: query.limit, offset: query.offset, elapsed_ms: elapsedMs() };
  return { kind: 'page', body: { rows, meta, ...extra }, etag, appId };
}

/**
 * A weak validator of what the page says: its rows, and the days, limit and offset that chose
 * them. Two requests whose bounds fall on the same days get the same rows, so a client polling
 * with "now" as the default bound still gets 304 while nothing changed; only meta (the echoed
 * bounds and elapsed_ms) differs, which is why the validator is weak.
 */
function etagOf(
  report: ReportName | 'performance' | 'skan',
  rows: unknown[],
  query: ReportQuery,
  days: { firstDay: string; lastDay: string },
): string {
  const hash = createHash('sha256')
    .update(JSON.stringify([report, days.firstDay, days.lastDay, query.limit, query.offset, rows]))
    .digest('base64url')
    .slice(0, 27);
  return `W/"${hash}"`;
}

/** If-None-Match: `*`, or a comma-separated list of (weak or strong) tags, compared weakly. */
function matches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || bare(tag) === bare(etag));
}
