import { createHash } from 'node:crypto';
import { ServiceError } from '../common/errors';
import { isPlainObject } from '../common/json';
import { MAX_EVENTS_PER_BATCH } from './event-api';
import { AD_REVENUE_EVENT } from './event-validation';
import { type BatchRequest, type TakeBatchPorts, type TakenBatch, takeBatch } from './take-batch';

/**
 * POST /api/v1/ad-revenue (docs/ad-revenue.md): a mediation platform's impressions, sent by the
 * tenant's server with a server key of the `ad_revenue` scope. Each impression becomes an
 * `ad_revenue` event of its install and the batch is taken as POST /event takes one (takeBatch:
 * the same rules, the same conversion, the cap, the audit object, the hand-off), so the
 * aggregator counts each impression_id of an install once, whichever route or how often it came.
 */

export const AD_REVENUE_PATH = '/api/v1/ad-revenue';

/**
 * The refusals and their statuses (docs/openapi.yaml). The 401s and the 403 are the reports'
 * (appOfKey), company_suspended, the body's codes, cap_exceeded and audit_write_failed the event
 * API's names for the same faults.
 */
export const AD_REVENUE_ERRORS = {
  empty_body: 400,
  bad_json: 400,
  bad_batch_shape: 400,
  missing_bearer_token: 401,
  invalid_or_revoked_key: 401,
  company_suspended: 401,
  insufficient_scope: 403,
  body_too_large: 413,
  cap_exceeded: 429,
  audit_write_failed: 503,
} as const;
export type AdRevenueErrorCode = keyof typeof AD_REVENUE_ERRORS;

export class AdRevenueUploadError extends ServiceError {
  declare readonly code: AdRevenueErrorCode;

  constructor(code: AdRevenueErrorCode) {
    super(AD_REVENUE_ERRORS[code], code);
    this.name = 'AdRevenueUploadError';
  }
}

/** A request body, at most (bytes as sent): 1,000 impressions of a few hundred bytes each. */
export const MAX_AD_REVENUE_BODY_BYTES = 1024 * 1024;
/** Impressions per request, at most: a batch of POST /event's size. */
export const MAX_IMPRESSIONS = MAX_EVENTS_PER_BATCH;

/**
 * The event an impression row stands for: its install_uuid, ts_ms, platform and ad_revenue (any
 * other member is ignored, not stored). Its event_id is made from the impression_id (a hash, so
 * any impression_id makes a valid id) and the row's position (two rows of one request never share
 * one); its impression_id, not its event_id, is what the aggregator counts once.
 */
export function impressionEvent(row: unknown, index: number): unknown {
  if (!isPlainObject(row)) return row;
  const adRevenue = row.ad_revenue;
  const impressionId = isPlainObject(adRevenue) && typeof adRevenue.impression_id === 'string' ? adRevenue.impression_id : '';
  const digest = createHash('sha256').update(impressionId).digest('hex').slice(0, 32);
  return {
    event_id: `s2s.${digest}.${index}`,
    event_name: AD_REVENUE_EVENT,
    install_uuid: row.install_uuid,
    ts_ms: row.ts_ms,
    ...(row.platform === undefined ? {} : { platform: row.platform }),
    ad_revenue: adRevenue,
  };
}

export interface AdRevenueRequest {
  readonly appId: string;
  readonly company: { readonly company_id: string; readonly monthly_cap: number | null; readonly suspended: boolean };
  readonly raw: Uint8Array;
  readonly body: unknown;
  readonly clientIp: string;
  readonly receivedMs: number;
}

export interface ImpressionResult {
  readonly index: number;
  readonly status: 'accepted' | 'rejected';
  readonly reason?: string;
  readonly field?: string;
}

/** The impressions taken: an answer per row, in order, and the audit object that holds them. */
export async function takeImpressions(
  ports: TakeBatchPorts,
  request: AdRevenueRequest,
): Promise<{ accepted: number; rejected: number; results: ImpressionResult[]; audit_key: string }> {
  if (request.company.suspended) throw new AdRevenueUploadError('company_suspended');
  const body = request.body;
  const rows = isPlainObject(body) ? body.impressions : undefined;
  if (!Array.isArray(rows) || rows.length === 0 || rows.length > MAX_IMPRESSIONS) throw new AdRevenueUploadError('bad_batch_shape');
  // The server's own clock stamps the batch: an impression's ts_ms is taken as the server time it names.
  const batch: BatchRequest = {
    companyId: request.company.company_id,
    appId: request.appId,
    monthlyCap: request.company.monthly_cap,
    raw: request.raw,
    body: { events: rows.map(impressionEvent), sent_at_ms: request.receivedMs },
    clientIp: request.clientIp,
    sdkVersion: 'server/ad-revenue',
    receivedMs: request.receivedMs,
  };
  const taken: TakenBatch = await takeBatch(ports, batch);
  return {
    accepted: taken.accepted,
    rejected: taken.rejected,
    results: taken.verdicts.map(({ index, status, reason, field }) => ({ index, status, reason, field })),
    audit_key: taken.auditKey,
  };
}
