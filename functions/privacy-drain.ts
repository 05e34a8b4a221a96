import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { AuditEraser } from './adapters/audit-eraser';
import { AuditReader } from './adapters/audit-reader';
import { ClickStore } from './adapters/click-store';
import { DynamoInstallStore } from './adapters/install-store';
import { PostbackRecords } from './adapters/postback-store';
import { PrivacyQueue } from './adapters/privacy-queue';
import { PrivacyReceipts } from './adapters/privacy-store';
import { AuditObjectError } from './domain/audit/decode';
import { type DrainPorts, type DrainReport, drainPrivacyRequests } from './domain/privacy/drain';
import { resourceName } from './shared/config';
import { logger, metrics } from './shared/observability';

const installs = new DynamoInstallStore(resourceName.table('installs'));
const clicks = new ClickStore(resourceName.table('clicks'));
const postbacks = new PostbackRecords(resourceName.table('postbacks'));
const reader = new AuditReader(resourceName.bucket());
const eraser = new AuditEraser(resourceName.bucket());
const queue = new PrivacyQueue(resourceName.queueUrl('privacy'), () => logger.error('privacy message not readable: left for the DLQ'));
const receipts = new PrivacyReceipts(resourceName.table('privacy_requests'));

/**
 * The nightly privacy drain (functions/domain/privacy/drain.ts has the rules), on its schedule,
 * or now with `admin schedule run privacy-drain` locally.
 */
export async function privacyDrain(_event: unknown, context: Context): Promise<DrainReport> {
  const ports: DrainPorts = {
    receive: (max) => queue.receive(max),
    remove: (request) => queue.remove(request),
    carry: (request) => queue.carry(request),
    release: (request) => queue.release(request),
    installItems: (pk, limit) => installs.firstItems(pk, limit),
    deleteInstallItems: (pk, sortKeys) => installs.deleteItems(pk, sortKeys),
    deleteClicks: (clickIds) => clicks.deleteMany(clickIds),
    postbackItems: (installKey, limit) => postbacks.ofInstall(installKey, limit),
    deletePostbackItems: (keys) => postbacks.deleteItems(keys),
    auditLines: async (key) => {
      try {
        return await reader.lines(key);
      } catch (error) {
        // Deleted by an earlier run of this request (or never written): nothing left to erase.
        if (error instanceof AuditObjectError && error.reason === 'missing_object') return undefined;
        throw error;
      }
    },
    deleteAudit: (key) => eraser.delete(key),
    rewriteAudit: (key, lines) => eraser.rewrite(key, lines),
    receipt: (requestId, update) => receipts.record(requestId, update),
    nowMs: Date.now,
    timeLeftMs: () => context.getRemainingTimeInMillis(),
  };
  const report = await drainPrivacyRequests(ports);
  metrics.addMetric('PrivacyRequestsDrained', MetricUnit.Count, report.done.length);
  metrics.addMetric('PrivacyRequestsCarried', MetricUnit.Count, report.carried.length);
  metrics.addMetric('PrivacyDrainFailed', MetricUnit.Count, report.failed.length);
  for (const failure of report.failed) logger.error('privacy request not drained; it comes back', failure);
  logger.info('privacy drain finished', {
    batches: report.batches,
    done: report.done.length,
    carried: report.carried.length,
    stopped: report.stopped,
  });
  return report;
}

export const handler = middy(privacyDrain).use(injectLambdaContext(logger)).use(logMetrics(metrics));
