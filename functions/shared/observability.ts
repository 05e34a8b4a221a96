import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics, MetricUnit } from '@aws-lambda-powertools/metrics';

/**
 * Logger and metrics are made once per execution environment. Service name and namespace come
 * from POWERTOOLS_SERVICE_NAME / POWERTOOLS_METRICS_NAMESPACE, which the function construct sets.
 */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'attribution' });
// Metrics' own warnings (an invalid dimension, or "No application metrics to publish" after an
// invocation that added none, such as a health check) go through the logger: one structured JSON
// line at WARN with the function's context, under POWERTOOLS_LOG_LEVEL like every other line,
// rather than bare text on stderr that the level cannot silence (tests run at SILENT).
export const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'AttributionService',
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'attribution',
  logger,
});

/**
 * What a log line says of an error: its name and message, never the stack or the fields an SDK
 * error carries (request ids, a request's input), which say nothing on-call needs.
 */
export function errorFields(error: unknown): { name?: string; message?: string } {
  const { name, message } = (error ?? {}) as Partial<Error>;
  return { name, message };
}

/**
 * One app's failure in a scheduled job that runs over every app (performance pages, export,
 * privacy drain): an error line naming the app, and `<job>AppFailed` counted with the app as a
 * dimension (a metric exists only for an app that failed, so the dimension stays cheap). The job
 * goes on with the other apps: one tenant's bad data never holds back another's.
 */
export function appFailed(job: string, appId: string, error: unknown, context: Record<string, unknown> = {}): void {
  logger.error(`${job}: app failed, the run goes on with the other apps`, { ...context, app_id: appId, error: errorFields(error) });
  const single = metrics.singleMetric();
  single.addDimension('app_id', appId);
  single.addMetric(`${job}AppFailed`, MetricUnit.Count, 1);
}
