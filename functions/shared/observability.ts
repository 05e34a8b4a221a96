import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

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
