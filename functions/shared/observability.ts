import { Logger } from '@aws-lambda-powertools/logger';
import { Metrics } from '@aws-lambda-powertools/metrics';

/**
 * Logger and metrics are made once per execution environment. Service name and namespace come
 * from POWERTOOLS_SERVICE_NAME / POWERTOOLS_METRICS_NAMESPACE, which the function construct sets.
 */
export const logger = new Logger({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'attribution' });
export const metrics = new Metrics({
  namespace: process.env.POWERTOOLS_METRICS_NAMESPACE ?? 'AttributionService',
  serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'attribution',
});
