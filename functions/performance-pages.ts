import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { PerformanceStore } from './adapters/performance-store';
import { TenantStore } from './adapters/tenant-store';
import { type CompactionSummary, compactPages } from './domain/analytics/pages';
import { clickTables } from './shared/click-tables';
import { resourceName } from './shared/config';
import { appFailed, errorFields, logger, metrics } from './shared/observability';

// clicks: the clicks the lane sweep has not counted yet go into the page (ADR 0008).
const store = new PerformanceStore(resourceName.table('aggregates'), clickTables());
const tenants = new TenantStore(resourceName.table('tenants'));

/** No app is started this close to the time limit; the apps not reached are the next run's. */
const STOP_BEFORE_LIMIT_MS = 30_000;

/**
 * Every five minutes: the performance pages (day, partner and week pages) of every app's days that
 * changed since their page was built (functions/domain/analytics/pages.ts; docs/analytics.md, "Reading").
 */
export async function performancePages(_event: unknown, context?: Pick<Context, 'getRemainingTimeInMillis'>): Promise<CompactionSummary> {
  const startedMs = Date.now();
  const remainingMs = context?.getRemainingTimeInMillis() ?? 300_000;
  const apps = (await tenants.listApps()).map((app) => app.app_id);
  const summary = await compactPages(store, apps, startedMs + remainingMs - STOP_BEFORE_LIMIT_MS, Date.now);
  metrics.addMetric('PerformancePagesBuilt', MetricUnit.Count, summary.pages);
  metrics.addMetric('PerformancePagesOverflow', MetricUnit.Count, summary.overflows);
  metrics.addMetric('PerformanceWeekPagesBuilt', MetricUnit.Count, summary.weeks);
  for (const { app_id, error } of summary.failed) appFailed('PerformancePages', app_id, error);
  if (summary.unfinished.length > 0)
    logger.warn('performance pages out of time: apps left for the next run', { unfinished: summary.unfinished });
  logger.info('performance pages built', { apps: summary.apps, pages: summary.pages, weeks: summary.weeks, overflows: summary.overflows });
  return { ...summary, failed: summary.failed.map(({ app_id, error }) => ({ app_id, error: errorFields(error) })) };
}

export const handler = middy(performancePages).use(injectLambdaContext(logger)).use(logMetrics(metrics));
