import { setTimeout as sleep } from 'node:timers/promises';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { AdServicesAnswerEraser } from './adapters/adservices-answers';
import { AggregationLedgerStore } from './adapters/aggregate-store';
import { AuditEraser } from './adapters/audit-eraser';
import { AuditReader } from './adapters/audit-reader';
import { ClickStore } from './adapters/click-store';
import { DynamoInstallStore } from './adapters/install-store';
import { PostbackRecords } from './adapters/postback-store';
import { PrivacyQueue } from './adapters/privacy-queue';
import { PrivacyReceipts } from './adapters/privacy-store';
import { ExportFileEraser } from './adapters/raw-data-eraser';
import { LedgerLaneReader, StreamReader } from './adapters/stream-reader';
import { StreamStore } from './adapters/stream-store';
import { type DrainPorts, type DrainReport, drainPrivacyRequests } from './domain/privacy/drain';
import { clickTables } from './shared/click-tables';
import { resourceName } from './shared/config';
import { appFailed, logger, metrics } from './shared/observability';

const stores: Omit<DrainPorts, 'nowMs' | 'pause' | 'timeLeftMs'> = {
  queue: new PrivacyQueue(resourceName.queueUrl('privacy'), () => logger.error('privacy message not readable: left for the DLQ')),
  installs: new DynamoInstallStore(resourceName.table('installs')),
  clicks: new ClickStore(clickTables()),
  postbacks: new PostbackRecords(resourceName.table('postbacks')),
  auditObjects: new AuditReader(resourceName.bucket()),
  auditErasure: new AuditEraser(resourceName.bucket()),
  adServicesAnswers: new AdServicesAnswerEraser(resourceName.bucket()),
  rawData: {
    marks: new AggregationLedgerStore(resourceName.table('ledger')),
    lanes: new LedgerLaneReader(resourceName.table('ledger')),
    stream: new StreamStore(resourceName.exportBucket()),
    streamNames: new StreamReader(resourceName.exportBucket()),
    exportFiles: new ExportFileEraser(resourceName.exportBucket()),
  },
  receipts: new PrivacyReceipts(resourceName.table('privacy_requests')),
};

/**
 * The nightly privacy drain (functions/domain/privacy/drain.ts has the rules), on its schedule,
 * or now with `admin schedule run privacy-drain` locally.
 */
export async function privacyDrain(_event: unknown, context: Context): Promise<DrainReport> {
  const report = await drainPrivacyRequests({
    ...stores,
    nowMs: Date.now,
    pause: (ms) => sleep(ms),
    timeLeftMs: () => context.getRemainingTimeInMillis(),
  });
  metrics.addMetric('PrivacyRequestsDrained', MetricUnit.Count, report.done.length);
  metrics.addMetric('PrivacyRequestsCarried', MetricUnit.Count, report.carried.length);
  metrics.addMetric('PrivacyDrainFailed', MetricUnit.Count, report.failed.length);
  // Each comes back after the visibility timeout; the run went on with the other requests.
  for (const { app_id, request_id, error } of report.failed) appFailed('PrivacyDrain', app_id, { message: error }, { request_id });
  logger.info('privacy drain finished', {
    batches: report.batches,
    done: report.done.length,
    carried: report.carried.length,
    stopped: report.stopped,
  });
  return report;
}

export const handler = middy(privacyDrain).use(injectLambdaContext(logger)).use(logMetrics(metrics));
