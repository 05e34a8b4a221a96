import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import { type LaneSweep, settleStaleLanes } from './domain/aggregation/aggregate';
import { LANE_LEASE_MS, lanePorts } from './shared/lane-ports';
import { errorFields, logger, metrics } from './shared/observability';

const ports = lanePorts();

/**
 * Every minute: replays and closes each ledger lane whose open apply no live invocation holds, so
 * an aggregator invocation that died between taking its lane and its first mark holds its apps'
 * event stream back no longer than the lease plus a minute (issue 35, item 4; docs/raw-data.md,
 * "Latency"). A lane it cannot settle fails the run, after the others, so the error alarm sees a
 * lane that stays stuck; the next run tries again.
 */
export async function laneSweep(): Promise<LaneSweep> {
  const sweep = await settleStaleLanes(ports, { nowMs: Date.now, leaseMs: LANE_LEASE_MS });
  metrics.addMetric('StaleLanesSettled', MetricUnit.Count, sweep.settled.length);
  if (sweep.settled.length > 0) logger.info('stale lanes settled', { lanes: sweep.settled });
  for (const { lane, error } of sweep.failed) logger.error('stale lane not settled', { lane, error: errorFields(error) });
  if (sweep.failed.length > 0) throw new Error(`stale lanes not settled: ${sweep.failed.map(({ lane }) => lane).join(', ')}`);
  return sweep;
}

export const handler = middy(laneSweep).use(injectLambdaContext(logger)).use(logMetrics(metrics));
