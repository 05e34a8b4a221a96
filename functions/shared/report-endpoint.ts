import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { AggregateStore } from '../adapters/aggregate-store';
import { ServiceError } from '../domain/common/errors';
import { answerReport, type ReportAnswer, type ReportPorts } from '../domain/reports/answer-report';
import { reportError } from '../domain/reports/report-query';
import type { ReportName } from '../domain/reports/reports';
import { resourceName } from './config';
import { type HttpEvent, type HttpResult, header, httpHandler, json } from './http';
import { errorFields, logger, metrics } from './observability';
import { serverKeys } from './server-keys';

/** The interface advises clients to cache: a minute, and never in a shared cache (the key is per app). */
const CACHE_CONTROL = 'private, max-age=60';

/** A report request as the HTTP edge reads it: the bearer key, the query and If-None-Match. */
export interface ReportHttpRequest {
  readonly authorization?: string;
  readonly params: Readonly<Record<string, string | undefined>>;
  readonly ifNoneMatch?: string;
}

/**
 * A report's HTTP function: the request in, the page (or 304) out; `answer` holds the rules
 * (answerReport for the four reports, answerPerformance for the performance report). A store
 * that fails is a 503 store_unavailable, never a 500: the client's retry is safe, nothing was
 * changed.
 */
export function reportHttpEndpoint(name: string, answer: (request: ReportHttpRequest) => Promise<ReportAnswer>) {
  async function handle(event: HttpEvent): Promise<HttpResult> {
    const startedMs = Date.now();
    try {
      const answered = await answer({
        authorization: header(event, 'authorization'),
        params: event.queryStringParameters ?? {},
        ifNoneMatch: header(event, 'if-none-match'),
      });
      const headers = { 'cache-control': CACHE_CONTROL, etag: answered.etag };
      if (answered.kind === 'not_modified') return { statusCode: 304, headers };
      return json(200, answered.body, headers);
    } catch (error) {
      if (error instanceof ServiceError) throw error;
      logger.error('report not answered: a store failed', { report: name, error: errorFields(error) });
      throw reportError('store_unavailable');
    } finally {
      // One latency figure per request, by report (the dimension is cleared when metrics flush).
      metrics.addDimension('report', name);
      metrics.addMetric('ReportLatency', MetricUnit.Milliseconds, Date.now() - startedMs);
    }
  }
  return { handle, handler: httpHandler(handle) };
}

/** One of the four interface reports' HTTP functions (functions/report-*.ts); the rules are answerReport's. */
export function reportEndpoint(report: ReportName) {
  const ports: ReportPorts = {
    keys: serverKeys(),
    rows: new AggregateStore(resourceName.table('aggregates')),
    nowMs: Date.now,
  };
  return reportHttpEndpoint(report, (request) => answerReport(ports, { report, ...request }));
}
