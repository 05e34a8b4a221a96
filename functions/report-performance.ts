import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { PerformanceStore } from './adapters/performance-store';
import { CachedTenants, TenantStore } from './adapters/tenant-store';
import { answerPerformance, type PerformancePorts } from './domain/analytics/performance-report';
import { ServiceError } from './domain/common/errors';
import { reportError } from './domain/reports/report-query';
import { resourceName } from './shared/config';
import { type HttpEvent, type HttpResult, header, httpHandler, json } from './shared/http';
import { errorFields, logger, metrics } from './shared/observability';

/** As the four reports: a minute, and never in a shared cache (the key is per app). */
const CACHE_CONTROL = 'private, max-age=60';

const ports: PerformancePorts = {
  keys: new CachedTenants(new TenantStore(resourceName.table('tenants'))),
  rows: new PerformanceStore(resourceName.table('aggregates')),
  nowMs: Date.now,
};

/**
 * GET /api/v1/reports/performance (functions/domain/analytics/performance-report.ts has the
 * rules): the bearer key, the query and If-None-Match in, the page (or 304) out. A store that
 * fails is a 503 store_unavailable, as in the four reports (functions/shared/report-endpoint.ts).
 */
export async function reportPerformance(event: HttpEvent): Promise<HttpResult> {
  const startedMs = Date.now();
  try {
    const answer = await answerPerformance(ports, {
      authorization: header(event, 'authorization'),
      params: event.queryStringParameters ?? {},
      ifNoneMatch: header(event, 'if-none-match'),
    });
    const headers = { 'cache-control': CACHE_CONTROL, etag: answer.etag };
    if (answer.kind === 'not_modified') return { statusCode: 304, headers };
    return json(200, answer.body, headers);
  } catch (error) {
    if (error instanceof ServiceError) throw error;
    logger.error('report not answered: a store failed', { report: 'performance', error: errorFields(error) });
    throw reportError('store_unavailable');
  } finally {
    metrics.addDimension('report', 'performance');
    metrics.addMetric('ReportLatency', MetricUnit.Milliseconds, Date.now() - startedMs);
  }
}

export const handler = httpHandler(reportPerformance);
