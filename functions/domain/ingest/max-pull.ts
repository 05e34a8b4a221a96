import { createHash } from 'node:crypto';
import { MAX_REPORT_KEY_SECRET_PREFIX } from '../../../lib/function-constants';
import { UUID_PATTERN } from '../common/uuid';
import type { MaxPullSettings } from '../tenants/tenant';
import { MAX_IMPRESSIONS } from './ad-revenue-upload';
import type { AdRevenue } from './event-validation';

/**
 * The daily pull of AppLovin MAX's user-level ad revenue report (docs/ad-revenue.md, "The daily
 * MAX pull"; functions/max-revenue-pull.ts runs it). MAX documents the API at
 * https://support.axon.ai/en/max/reporting-apis/user-level-ad-revenue-api: a GET of
 * `userAdRevenueReport` with the report key, a UTC day, the platform and the application answers
 * JSON whose `ad_revenue_report_url` is a CSV with a row per impression (`aggregated=false`). Each
 * row whose `User ID` names a counted install of the app becomes an impression of POST
 * /api/v1/ad-revenue (takeImpressions), so the same rules, conversion and dedupe hold; every other
 * row is rejected with a reason and counted in the pull's summary, never dropped unseen.
 */

/** MAX's endpoint; the stack sets it (lib/manifest.ts, `internet`), locally a stand-in (local/max-report-stub.ts). */
export const MAX_REPORT_URL = 'https://r.applovin.com/max/userAdRevenueReport';
export const MAX_PLATFORMS = ['android', 'fireos', 'ios'] as const;
export type MaxPlatform = (typeof MAX_PLATFORMS)[number];

/** A Secrets Manager name under the report keys' prefix (Secrets Manager's characters, at most 512). */
export const MAX_REPORT_KEY_SECRET = new RegExp(`^${MAX_REPORT_KEY_SECRET_PREFIX.replaceAll('/', '\\/')}[A-Za-z0-9/_+=.@-]{1,400}$`);
/** A package name or bundle id (letters, digits, `.`, `_`, `-`), as MAX's `application` takes it. */
export const MAX_APPLICATION = /^[A-Za-z0-9._-]{1,255}$/;

/** What `app update`'s MAX flags ask for; each unset part keeps the app's. */
export interface MaxPullChange {
  readonly on?: boolean;
  readonly report_key_secret?: string;
  readonly application?: string;
  readonly platform?: MaxPlatform;
}

/**
 * The app's settings after a change, or undefined when nothing changes. Turning the pull on needs
 * all three parts, from the change or kept; the part missing is the error's `flag`.
 */
export function changedMaxPull(
  before: MaxPullSettings | undefined,
  change: MaxPullChange,
): MaxPullSettings | undefined | { readonly missing: 'max-report-key-secret' | 'max-application' | 'max-platform' } {
  if (Object.values(change).every((value) => value === undefined)) return undefined;
  const report_key_secret = change.report_key_secret ?? before?.report_key_secret;
  const application = change.application ?? before?.application;
  const platform = change.platform ?? before?.platform;
  const on = change.on ?? before?.on ?? false;
  if (report_key_secret === undefined) return { missing: 'max-report-key-secret' };
  if (application === undefined) return { missing: 'max-application' };
  if (platform === undefined) return { missing: 'max-platform' };
  return { on, report_key_secret, application, platform };
}

/** The JSON answer naming the CSV, at most: a few hundred bytes in MAX's documentation. */
export const MAX_ANSWER_BYTES = 64 * 1024;
/** A day's CSV, at most: about 200 bytes a row, so 100,000 rows and room for long ids. */
export const MAX_REPORT_CSV_BYTES = 32 * 1024 * 1024;
/** Impression rows of one app's day, at most (beyond: the app's pull fails with too_many_rows, nothing taken). */
export const MAX_REPORT_ROWS = 100_000;

/** Why an app's whole pull failed (logged, counted, and the other apps pulled all the same). */
export type MaxPullFailure =
  | 'secret_unreadable'
  | 'report_refused'
  | 'bad_report_answer'
  | 'report_too_large'
  | 'too_many_rows'
  | 'bad_csv'
  | 'missing_column';

export class MaxPullError extends Error {
  constructor(
    readonly code: MaxPullFailure,
    detail: string,
  ) {
    super(`${code}: ${detail}`);
    this.name = 'MaxPullError';
  }
}

/** Why one row was not taken: the pull's own reasons, or the reason POST /event's rules gave. */
export type MaxRowReason = 'no_user_id' | 'unknown_install' | 'bad_date' | 'other_day' | 'bad_revenue' | (string & {});

/** The columns read, by the names of MAX's CSV header (any order; other columns ignored). */
export const MAX_COLUMNS = {
  date: 'Date',
  adUnitId: 'Ad Unit ID',
  adFormat: 'Ad Format',
  userId: 'User ID',
  revenue: 'Revenue',
  network: 'Network',
  placement: 'Placement',
} as const;
const REQUIRED = [
  MAX_COLUMNS.date,
  MAX_COLUMNS.adUnitId,
  MAX_COLUMNS.adFormat,
  MAX_COLUMNS.userId,
  MAX_COLUMNS.revenue,
  MAX_COLUMNS.network,
];

/** MAX's `Ad Format` values and the service's formats (anything else is `other`). */
const FORMATS: Readonly<Record<string, AdRevenue['format']>> = {
  BANNER: 'banner',
  MREC: 'banner',
  LEADER: 'banner',
  INTER: 'interstitial',
  REWARD: 'rewarded',
  REWARDED_INTER: 'rewarded',
  APPOPEN: 'app_open',
  NATIVE: 'native',
};

/** The report request of one app's UTC day, one row per impression. */
export function reportRequestUrl(base: string, query: { apiKey: string; day: string; platform: MaxPlatform; application: string }): string {
  const url = new URL(base);
  url.search = new URLSearchParams({
    api_key: query.apiKey,
    date: query.day,
    platform: query.platform,
    application: query.application,
    aggregated: 'false',
  }).toString();
  return url.toString();
}

/** The CSV's address in MAX's JSON answer. */
export function reportCsvUrl(answer: string): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer);
  } catch {
    throw new MaxPullError('bad_report_answer', 'not JSON');
  }
  const url = (parsed as { ad_revenue_report_url?: unknown } | null)?.ad_revenue_report_url;
  if (typeof url !== 'string' || !/^https?:\/\//.test(url)) throw new MaxPullError('bad_report_answer', 'no ad_revenue_report_url');
  return url;
}

/**
 * RFC 4180 records: fields separated by commas, quoted with `"` (a quote doubled inside), records
 * by CRLF or LF; a blank line is no record. At most `maxRecords` records (too_many_rows).
 */
export function parseCsv(text: string, maxRecords: number): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  const endRecord = () => {
    record.push(field);
    field = '';
    if (record.length > 1 || record[0] !== '') {
      if (records.length === maxRecords) throw new MaxPullError('too_many_rows', `more than ${maxRecords - 1} rows`);
      records.push(record);
    }
    record = [];
  };
  while (i < text.length) {
    const c = text[i];
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i += 2;
        continue;
      }
      if (c === '"') quoted = false;
      else field += c;
      i++;
      continue;
    }
    if (c === '"' && field === '') quoted = true;
    else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\n') endRecord();
    else if (c === '\r' && text[i + 1] === '\n') {
      endRecord();
      i++;
    } else field += c;
    i++;
  }
  if (quoted) throw new MaxPullError('bad_csv', 'a quoted field is never closed');
  if (field !== '' || record.length > 0) endRecord();
  return records;
}

/** One row of the report as an impression of POST /api/v1/ad-revenue, or why it is not one. */
export interface ReportImpression {
  readonly install_uuid: string;
  readonly ts_ms: number;
  readonly ad_revenue: AdRevenue;
}
export interface RowRejection {
  /** The row's number in the CSV, 1 the first after the header. */
  readonly row: number;
  readonly reason: MaxRowReason;
}
export interface ReportRows {
  readonly impressions: readonly ReportImpression[];
  readonly rejected: readonly RowRejection[];
}

/** `2026-11-27 09:25:56.21` (UTC, MAX's format), or ISO 8601 with a zone. */
function timestampMs(text: string): number | undefined {
  const match = /^(\d{4}-\d{2}-\d{2})[ T](\d{2}:\d{2}:\d{2}(?:\.\d{1,6})?)(Z|[+-]\d{2}:\d{2})?$/.exec(text.trim());
  if (!match) return undefined;
  const [, day, time, zone] = match;
  const ms = Date.parse(`${day}T${time?.replace(/(\.\d{3})\d+$/, '$1')}${zone ?? 'Z'}`);
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * A pulled row's impression_id (reportRows): what tells the aggregator a pulled `applovin_max`
 * impression from one the app sent itself, which the pull supersedes (docs/ad-revenue.md, "Source of truth").
 */
export const PULLED_IMPRESSION_ID = /^max\.[0-9a-f]{40}\.[1-9][0-9]*$/;

/**
 * The report's rows for `appId`'s `day`. A row's impression_id is `max.` and a SHA-256 of the app,
 * the day and the row's cells (40 hex), then `.n` for the n-th row with the same cells: the same
 * report pulled again gives the same ids, so a re-run of a day counts nothing twice, and two
 * impressions MAX reports alike still count twice.
 */
export function reportRows(csv: string, appId: string, day: string): ReportRows {
  const records = parseCsv(csv, MAX_REPORT_ROWS + 1);
  const header = records[0]?.map((name) => name.trim()) ?? [];
  const missing = REQUIRED.filter((name) => !header.includes(name));
  if (missing.length > 0) throw new MaxPullError('missing_column', missing.join(', '));
  const column = (record: readonly string[], name: string): string => (record[header.indexOf(name)] ?? '').trim();
  const seen = new Map<string, number>();
  const impressions: ReportImpression[] = [];
  const rejected: RowRejection[] = [];
  records.slice(1).forEach((record, index) => {
    const row = index + 1;
    const userId = column(record, MAX_COLUMNS.userId);
    const tsMs = timestampMs(column(record, MAX_COLUMNS.date));
    const revenueText = column(record, MAX_COLUMNS.revenue);
    const revenue = Number(revenueText);
    const reason =
      userId === ''
        ? 'no_user_id'
        : !UUID_PATTERN.test(userId)
          ? 'unknown_install'
          : tsMs === undefined
            ? 'bad_date'
            : new Date(tsMs).toISOString().slice(0, 10) !== day
              ? 'other_day'
              : revenueText === '' || !Number.isFinite(revenue) || revenue < 0
                ? 'bad_revenue'
                : undefined;
    if (reason !== undefined || tsMs === undefined) {
      rejected.push({ row, reason: reason ?? 'bad_date' });
      return;
    }
    const digest = createHash('sha256')
      .update(JSON.stringify([appId, day, record]))
      .digest('hex')
      .slice(0, 40);
    const nth = (seen.get(digest) ?? 0) + 1;
    seen.set(digest, nth);
    const placement = column(record, MAX_COLUMNS.placement);
    const adUnit = column(record, MAX_COLUMNS.adUnitId);
    impressions.push({
      install_uuid: userId.toLowerCase(),
      ts_ms: tsMs,
      ad_revenue: {
        source: 'applovin_max',
        network: column(record, MAX_COLUMNS.network),
        format: FORMATS[column(record, MAX_COLUMNS.adFormat).toUpperCase()] ?? 'other',
        ...(placement === '' ? {} : { placement }),
        ...(adUnit === '' ? {} : { ad_unit: adUnit }),
        revenue,
        // MAX's user-level report is in US dollars and gives no precision per row: its revenue is MAX's estimate.
        currency: 'USD',
        precision: 'estimated',
        impression_id: `max.${digest}.${nth}`,
      },
    });
  });
  return { impressions, rejected };
}

export interface MaxPullPorts {
  /** The JSON answer, then the CSV: each a text of at most its cap, or a MaxPullError. */
  readonly download: (url: string, maxBytes: number) => Promise<string>;
  /** Whether the app has counted the install (its head item exists). */
  readonly knownInstall: (installUuid: string) => Promise<boolean>;
  /** Takes up to MAX_IMPRESSIONS impressions as POST /api/v1/ad-revenue does; a verdict per impression, in order. */
  readonly take: (impressions: readonly ReportImpression[]) => Promise<readonly { status: string; reason?: string }[]>;
}

export interface MaxPullRequest {
  readonly appId: string;
  readonly apiKey: string;
  readonly day: string;
  readonly platform: MaxPlatform;
  readonly application: string;
  readonly baseUrl: string;
}

export interface MaxPullSummary {
  readonly app_id: string;
  readonly day: string;
  readonly rows: number;
  readonly accepted: number;
  readonly rejected: number;
  /** Rejected rows by reason. */
  readonly reasons: Readonly<Record<string, number>>;
}

/** Install look-ups at once, at most: a day's distinct users are read a few dozen at a time. */
const LOOKUPS_AT_ONCE = 25;

/** One app's day: the report fetched, each row judged, the impressions taken in batches of POST /api/v1/ad-revenue's size. */
export async function pullDay(ports: MaxPullPorts, request: MaxPullRequest): Promise<MaxPullSummary> {
  const answer = await ports.download(reportRequestUrl(request.baseUrl, request), MAX_ANSWER_BYTES);
  const csv = await ports.download(reportCsvUrl(answer), MAX_REPORT_CSV_BYTES);
  const { impressions, rejected } = reportRows(csv, request.appId, request.day);
  const reasons: Record<string, number> = {};
  const reject = (reason: string) => {
    reasons[reason] = (reasons[reason] ?? 0) + 1;
  };
  for (const { reason } of rejected) reject(reason);

  const users = [...new Set(impressions.map((impression) => impression.install_uuid))];
  const known = new Set<string>();
  for (let i = 0; i < users.length; i += LOOKUPS_AT_ONCE) {
    const slice = users.slice(i, i + LOOKUPS_AT_ONCE);
    const found = await Promise.all(slice.map((user) => ports.knownInstall(user)));
    slice.forEach((user, j) => {
      if (found[j]) known.add(user);
    });
  }
  const joined: ReportImpression[] = [];
  for (const impression of impressions) {
    if (known.has(impression.install_uuid)) joined.push(impression);
    else reject('unknown_install');
  }
  let accepted = 0;
  for (let i = 0; i < joined.length; i += MAX_IMPRESSIONS) {
    for (const verdict of await ports.take(joined.slice(i, i + MAX_IMPRESSIONS))) {
      if (verdict.status === 'accepted') accepted++;
      else reject(verdict.reason ?? 'rejected');
    }
  }
  const rows = impressions.length + rejected.length;
  return { app_id: request.appId, day: request.day, rows, accepted, rejected: rows - accepted, reasons };
}
