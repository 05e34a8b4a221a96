import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { CostStore } from './adapters/cost-store';
import { FxStore } from './adapters/fx-store';
import { CostUploadError, type CostUploadPorts, MAX_COST_BODY_BYTES, rowsOfBody, uploadCost } from './domain/analytics/cost';
import { ServiceError } from './domain/common/errors';
import { parseStrictJson } from './domain/common/json';
import { appOfKey } from './domain/reports/answer-report';
import { resourceName } from './shared/config';
import { type HttpEvent, type HttpResult, header, httpHandler, json, rawBody } from './shared/http';
import { errorFields, logger, metrics } from './shared/observability';
import { serverKeys } from './shared/server-keys';

// The reports' key look-up, cache included: the same 401s, and a revoked key stops within 30 s.
const keys = serverKeys();
const ports: CostUploadPorts = {
  days: new CostStore(resourceName.table('aggregates')),
  // Uploads are rare and a rate set a moment ago must count: read, not cached.
  rates: new FxStore(resourceName.table('fx_rates')),
};

/**
 * POST /api/v1/cost (functions/domain/analytics/cost.ts has the rules; docs/analytics.md, "Cost").
 * Checked in this order: the bearer key and its `cost` scope (401, 403), the body (413, 400), each
 * row (400 bad_cost_row), then the stores. The answer comes after every write: a store that fails
 * is 503 store_unavailable, and the client's resend completes what was begun (uploads replace).
 */
export async function costUpload(event: HttpEvent): Promise<HttpResult> {
  try {
    const appId = await appOfKey(keys, header(event, 'authorization'), 'cost');
    const raw = rawBody(event);
    if (raw.length > MAX_COST_BODY_BYTES) throw new CostUploadError('body_too_large');
    if (raw.length === 0) throw new CostUploadError('empty_body');
    const { accepted } = await uploadCost(ports, appId, rowsOfBody(parseBody(raw, event.isBase64Encoded === true)));
    metrics.addMetric('CostRowsAccepted', MetricUnit.Count, accepted);
    return json(200, { accepted });
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    logger.error('cost not uploaded: a store failed', { error: errorFields(error) });
    throw new CostUploadError('store_unavailable');
  }
}

/**
 * The bytes as sent must be UTF-8 JSON (parseStrictJson), as POST /event's are. A body API Gateway
 * passed as text (application/json) was decoded on the way, an invalid byte becoming U+FFFD, so
 * U+FFFD in a text body is bad_json too: it is such a byte, or a character no name needs, and
 * two names that differ only in their invalid bytes must not merge (issue 36).
 */
function parseBody(raw: Buffer, base64: boolean): unknown {
  let body: unknown;
  try {
    body = parseStrictJson(raw);
  } catch {
    throw new CostUploadError('bad_json');
  }
  if (!base64 && raw.includes(REPLACEMENT_CHARACTER)) throw new CostUploadError('bad_json');
  return body;
}

const REPLACEMENT_CHARACTER = Buffer.from('\uFFFD', 'utf8');

export const handler = httpHandler(costUpload);
