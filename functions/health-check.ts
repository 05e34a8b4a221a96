import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import { healthProbes } from './adapters/health-probes';
import { BINDINGS, checkHealth, type HealthReport } from './domain/health/health';
import { intEnv } from './shared/config';
import { logger, metrics } from './shared/observability';

const probes = healthProbes();
const timeoutMs = intEnv('HEALTH_TIMEOUT_MS', 1500);

/**
 * Every five minutes: the same checks as GET /health, published as metrics. The alarm watches
 * Healthy (1 or 0) and also fires when the metric goes missing, so a check that cannot run at
 * all is noticed too.
 */
export async function healthCheck(): Promise<HealthReport> {
  const report = await checkHealth(probes, timeoutMs);
  metrics.addMetric('Healthy', MetricUnit.Count, report.status === 'ok' ? 1 : 0);
  for (const binding of BINDINGS) {
    if (report.bindings[binding] !== 'ok') {
      metrics.addMetric(`BindingFailing_${binding}`, MetricUnit.Count, 1);
      logger.warn('binding failing', { binding, reason: report.bindings[binding] });
    }
  }
  return report;
}

export const handler = middy(healthCheck).use(injectLambdaContext(logger)).use(logMetrics(metrics));
