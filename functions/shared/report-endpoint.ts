import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { AggregateStore } from '../adapters/aggregate-store';
import { CachedTenants, TenantStore } from '../adapters/tenant-store';
import { ServiceError } from '../domain/common/errors';
import { answerReport, type ReportPorts } from '../domain/reports/answer-report';
import { reportError } from '../domain/reports/report-query';
import type { ReportName } from '../domain/reports/reports';
import { resourceName } from './config';
import { type HttpEvent, type HttpResult, header, httpHandler, json } from './http';
import { errorFields, logger, metrics } from './observability';

/** The interface advises clients to cache: a minute, and never in a shared cache (the key is per app). */
const CACHE_CONTROL = 'private, max-age=60';

/**
 * One report's HTTP function (functions/report-*.ts): the bearer key, the query and
 * If-None-Match in, the page (or 304) out. The rules are answerReport's. A store that fails is a
 * 503 store_unavailable, never a 500: the client's retry is safe, nothing was changed.
 */
export function reportEndpoint(report: ReportName) {
  const ports: ReportPorts = {
    keys: new CachedTenants(new TenantStore(resourceName.table('tenants'))),
    rows: new AggregateStore(resourceName.table('aggregates')),
    nowMs: Date.now,
  };

  async function handle(event: HttpEvent): Promise<HttpResult> {
    const startedMs = Date.now();
    try {
      const answer = await answerReport(ports, {
        report,
        authorization: header(event, 'authorization'),
        params: event.queryStringParameters ?? {},
        ifNoneMatch: header(event, 'if-none-match'),
      });
      const headers = { 'cache-control': CACHE_CONTROL, etag: answer.etag };
      if (answer.kind === 'not_modified') return { statusCode: 304, headers };
      return json(200, answer.body, headers);
    } catch (error) {
      if (error instanceof ServiceError) throw error;
      logger.error('report not answered: a store failed', {
        report,
        error: errorFields(error),
      });
      throw reportError('store_unavailable');
    } finally {
      // One latency figure per request, by report (the dimension is cleared when metrics flush).
      metrics.addDimension('report', report);
      metrics.addMetric('ReportLatency', MetricUnit.Milliseconds, Date.now() - startedMs);
    }
  }
  return { handle, handler: httpHandler(handle) };
}
