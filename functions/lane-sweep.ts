import { randomUUID } from 'node:crypto';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { type LaneSweep, settleStaleLanes } from './domain/aggregation/aggregate';
import { type ClickLaneRun, runClickLane } from './domain/aggregation/click-counts';
import { clickLanePorts, LANE_LEASE_MS, lanePorts } from './shared/lane-ports';
import { appFailed, errorFields, logger, metrics } from './shared/observability';

const ports = lanePorts();
const clickPorts = clickLanePorts();

/** No app's clicks are started this close to the time limit; the apps not reached are the next run's. */
const STOP_BEFORE_LIMIT_MS = 10_000;

/**
 * Every minute, the aggregator's schedule:
 *
 * - replays and closes each ledger lane whose open apply no live invocation holds, so an
 *   aggregator invocation that died between taking its lane and its first mark holds its apps'
 *   event stream back no longer than the lease plus a minute (issue 35, item 4; docs/raw-data.md,
 *   "Latency");
 * - counts the clicks the redirect logged since the last run into the click counter items, under
 *   the click-count lane's lease (docs/adr/0008-click-counts-from-the-click-log.md).
 *
 * A lane it cannot settle fails the run, after the others, so the error alarm sees a lane that
 * stays stuck; the next run tries again. An app whose clicks failed is logged and metered
 * (AppFailed), its apply resumed by the next run.
 */
export async function laneSweep(
  _event?: unknown,
  context?: Pick<Context, 'getRemainingTimeInMillis'>,
): Promise<LaneSweep & { clicks: Omit<ClickLaneRun, 'failed'> & { failed: string[] } }> {
  const startedMs = Date.now();
  const remainingMs = context?.getRemainingTimeInMillis() ?? LANE_LEASE_MS - 15_000;
  const sweep = await settleStaleLanes(ports, { nowMs: Date.now, leaseMs: LANE_LEASE_MS });
  metrics.addMetric('StaleLanesSettled', MetricUnit.Count, sweep.settled.length);
  if (sweep.settled.length > 0) logger.info('stale lanes settled', { lanes: sweep.settled });
  for (const { lane, error } of sweep.failed) logger.error('stale lane not settled', { lane, error: errorFields(error) });

  const clicks = await runClickLane(clickPorts, {
    holder: randomUUID(),
    nowMs: Date.now,
    leaseMs: LANE_LEASE_MS,
    stopAtMs: startedMs + remainingMs - STOP_BEFORE_LIMIT_MS,
  });
  metrics.addMetric('ClicksCounted', MetricUnit.Count, clicks.clicks);
  for (const { appId, error } of clicks.failed) appFailed('ClickCounts', appId, error);
  if (clicks.unfinished.length > 0) logger.warn('click counts out of time: apps left for the next run', { unfinished: clicks.unfinished });

  if (sweep.failed.length > 0) throw new Error(`stale lanes not settled: ${sweep.failed.map(({ lane }) => lane).join(', ')}`);
  return { ...sweep, clicks: { ...clicks, failed: clicks.failed.map(({ appId }) => appId) } };
}

export const handler = middy(laneSweep).use(injectLambdaContext(logger)).use(logMetrics(metrics));
