import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { exportApps, exportPorts } from './adapters/export-store';
import { LedgerLaneReader } from './adapters/stream-reader';
import { type ExportSummary, runExport } from './domain/raw-data/export';
import { RAW_TABLE_NAMES } from './domain/raw-data/tables';
import { clickTables } from './shared/click-tables';
import { resourceName } from './shared/config';
import { appFailed, errorFields, logger, metrics } from './shared/observability';

const ports = exportPorts({
  exportBucket: resourceName.exportBucket(),
  auditBucket: resourceName.bucket(),
  clickTables: clickTables(),
});
const lanes = new LedgerLaneReader(resourceName.table('ledger'));
const tenantsTable = resourceName.table('tenants');

/**
 * No app is started this close to the function's time limit: an app's step writes its files and
 * checkpoint well within it, and what is left is the next run's (its checkpoint says where).
 */
const STOP_BEFORE_LIMIT_MS = 120_000;

/** What the run returns and logs: counts, not every file name (a first run writes thousands). */
export interface ScheduledExportResult {
  readonly watermark_ms: number;
  readonly apps: number;
  readonly unfinished: readonly string[];
  readonly failed: readonly { app_id: string; error: ReturnType<typeof errorFields> }[];
  readonly tables: Record<string, { files: number; rows: number; deleted: number; skipped: number }>;
}

/**
 * The hourly warehouse export (functions/domain/raw-data/export.ts has the rules; docs/raw-data.md,
 * "Warehouse exports"): every app's hours that changed since its checkpoint, and the SKAN
 * postbacks'. `admin export run` does the same from the command line.
 */
export async function scheduledExport(_event: unknown, context: Context): Promise<ScheduledExportResult> {
  const nowMs = Date.now();
  const summary = await runExport(ports, {
    apps: await exportApps(tenantsTable),
    lanes: await lanes.lanes(),
    nowMs,
    skan: true,
    deadlineMs: nowMs + context.getRemainingTimeInMillis() - STOP_BEFORE_LIMIT_MS,
  });
  const result = countsOf(summary);
  for (const table of RAW_TABLE_NAMES) metrics.addMetric(`ExportRows_${table}`, MetricUnit.Count, summary.tables[table].rows);
  metrics.addMetric('ExportAppsUnfinished', MetricUnit.Count, summary.unfinished.length);
  for (const { app_id, error } of summary.failed) appFailed('Export', app_id, error);
  if (summary.unfinished.length > 0) logger.warn('export run out of time: apps left for the next run', { unfinished: summary.unfinished });
  logger.info('export finished', { ...result });
  return result;
}

export function countsOf(summary: ExportSummary): ScheduledExportResult {
  return {
    watermark_ms: summary.watermark_ms,
    apps: summary.apps,
    unfinished: summary.unfinished,
    failed: summary.failed.map(({ app_id, error }) => ({ app_id, error: errorFields(error) })),
    tables: Object.fromEntries(
      RAW_TABLE_NAMES.map((table) => {
        const { files, rows, deleted, skipped } = summary.tables[table];
        return [table, { files: files.length, rows, deleted, skipped }];
      }),
    ),
  };
}

export const handler = middy(scheduledExport).use(injectLambdaContext(logger)).use(logMetrics(metrics));
