import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { CachedWebOrigins, WebOriginStore } from './adapters/web-origin-store';
import { resourceName } from './shared/config';
import { preflight } from './shared/cors';
import { type HttpEvent, type HttpResult, httpHandler } from './shared/http';
import { metrics } from './shared/observability';

// One GetItem per origin, cached as every hot-path tenant look-up (unlisted origins for less).
const origins = new CachedWebOrigins(new WebOriginStore(resourceName.table('tenants')));

/**
 * OPTIONS on any path (docs/sdk.md, "CORS"): a browser's preflight before it calls POST /event,
 * POST /privacy/delete or /sdk/v1/* from a page. A preflight carries no keys, so the answer
 * depends on the Origin alone: 204 with the CORS headers when some app lists it, else 403
 * origin_not_allowed (functions/shared/cors.ts).
 */
export async function corsPreflight(event: HttpEvent): Promise<HttpResult> {
  try {
    const answer = await preflight(event, origins);
    metrics.addMetric('PreflightsAllowed', MetricUnit.Count, 1);
    return answer;
  } catch (error) {
    metrics.addMetric('PreflightsRefused', MetricUnit.Count, 1);
    throw error;
  }
}

export const handler = httpHandler(corsPreflight);
