import { healthProbes } from './adapters/health-probes';
import { checkHealth } from './domain/health/health';
import { intEnv } from './shared/config';
import { type HttpResult, httpHandler, json } from './shared/http';

const probes = healthProbes();
const timeoutMs = intEnv('HEALTH_TIMEOUT_MS', 1500);

/** GET /health: 200 when every binding answers, 503 with the same body naming the failing one. */
export async function health(): Promise<HttpResult> {
  const report = await checkHealth(probes, timeoutMs);
  return json(report.status === 'ok' ? 200 : 503, report, { 'cache-control': 'no-store' });
}

export const handler = httpHandler(health, { emitsMetrics: false });
