import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { CachedTenants, TenantStore } from './adapters/tenant-store';
import { parseStrictJson } from './domain/common/json';
import { AdRevenueUploadError, MAX_AD_REVENUE_BODY_BYTES, takeImpressions } from './domain/ingest/ad-revenue-upload';
import { appOfKey } from './domain/reports/answer-report';
import { resourceName } from './shared/config';
import { type HttpEvent, type HttpResult, header, httpHandler, json, rawBody } from './shared/http';
import { impressionPorts } from './shared/impression-ports';
import { metrics } from './shared/observability';
import { serverKeys } from './shared/server-keys';
import { viewerOf } from './shared/viewer';

// The reports' key look-up, cache included: the same 401s, and a revoked key stops within 30 s.
const keys = serverKeys();
const tenants = new CachedTenants(new TenantStore(resourceName.table('tenants')));
const ports = impressionPorts();

/**
 * POST /api/v1/ad-revenue (functions/domain/ingest/ad-revenue-upload.ts has the rules;
 * docs/ad-revenue.md). Checked in this order: the bearer key and its `ad_revenue` scope (401,
 * 403), the body (413, 400), the company, then each impression as an ad_revenue event of POST
 * /event (200 with a result per impression), the cap (429) and the stores (503).
 */
export async function adRevenueUpload(event: HttpEvent): Promise<HttpResult> {
  const receivedMs = Date.now();
  const appId = await appOfKey(keys, header(event, 'authorization'), 'ad_revenue');
  const raw = rawBody(event);
  if (raw.length > MAX_AD_REVENUE_BODY_BYTES) throw new AdRevenueUploadError('body_too_large');
  if (raw.length === 0) throw new AdRevenueUploadError('empty_body');
  let body: unknown;
  try {
    body = parseStrictJson(raw);
  } catch {
    throw new AdRevenueUploadError('bad_json');
  }
  const app = await tenants.appById(appId);
  const company = app && (await tenants.companyByKey(app.company_key));
  // A key whose app or company is gone is no key.
  if (!company) throw new AdRevenueUploadError('invalid_or_revoked_key');
  const taken = await takeImpressions(ports, { appId, company, raw, body, clientIp: viewerOf(event).ip, receivedMs });
  metrics.addMetric('ImpressionsAccepted', MetricUnit.Count, taken.accepted);
  metrics.addMetric('ImpressionsRejected', MetricUnit.Count, taken.rejected);
  return json(200, taken);
}

export const handler = httpHandler(adRevenueUpload);
