import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { header, httpHandler, json, type HttpEvent, type HttpResult } from './shared/http';
import { resourceName } from './shared/config';
import { logger, metrics } from './shared/observability';
import { viewerOf } from './shared/viewer';
import { parseBatch } from './domain/batch-body';
import { capReached } from './domain/cap';
import { EventApiError } from './domain/event-api';
import { judgeEvents } from './domain/event-validation';
import { aggregationMessage, auditKey, auditLines, sha256Hex, type AggregationMessage, type AuditBatch } from './domain/audit-record';
import { CachedTenants, TenantStore } from './adapters/tenant-store';
import { eventApi, readEventRequest, SDK_VERSION_HEADER } from './adapters/event-request';
import { AuditStore } from './adapters/audit-store';
import { MessageQueue } from './adapters/message-queue';
import { CapCounter } from './adapters/cap-counter';

const tenants = new CachedTenants(new TenantStore(resourceName.table('tenants')));
const auditStore = new AuditStore(resourceName.bucket());
const aggregation = new MessageQueue<AggregationMessage>(resourceName.queueUrl('aggregation'));
const caps = new CapCounter(resourceName.table('counters'), resourceName.table('ledger'));

/**
 * POST /event. Authentication, body and batch shape first (readEventRequest, parseBatch); then
 * the cap, the per-event verdicts, the audit object, the hand-off and only then the count, so a
 * 503 counts nothing and a retried batch (same bytes, same audit key) counts once.
 */
export async function ingest(event: HttpEvent): Promise<HttpResult> {
  const receivedMs = Date.now();
  const { app, company, raw, body } = await readEventRequest(event, tenants);
  const batch = parseBatch(body);

  const audit: AuditBatch = {
    companyId: company.company_id,
    appId: app.app_id,
    receivedMs,
    bodySha256: sha256Hex(raw),
    clientIp: viewerOf(event).ip,
    sdkVersion: header(event, SDK_VERSION_HEADER),
  };
  const capHit = await storing(audit, 'cap_read', async () => {
    if (company.monthly_cap === null) return false;
    return capReached(await caps.acceptedThisMonth(company.company_id, receivedMs), company.monthly_cap);
  });
  if (capHit) throw new EventApiError('cap_exceeded');

  const { verdicts, accepted, rejected } = judgeEvents(batch.events, batch.sent_at_ms, receivedMs);
  const key = auditKey(audit);
  await storing(audit, 'audit_write', () => auditStore.putBatch(key, audit, auditLines(batch.events, verdicts, audit)));
  await storing(audit, 'hand_off', () => aggregation.send(aggregationMessage(auditStore.bucket, key, audit, { accepted, rejected })));
  await storing(audit, 'cap_count', () => caps.countOnce({ ...audit, accepted }));

  metrics.addMetric('EventsAccepted', MetricUnit.Count, accepted);
  metrics.addMetric('EventsRejected', MetricUnit.Count, rejected);
  return json(200, {
    accepted,
    rejected,
    results: verdicts.map(({ event_id, status, reason }) => ({ event_id, status, reason })),
    audit_key: key,
  });
}

/**
 * One step of taking the batch. A failure is 503 audit_write_failed (the client retries the same
 * bytes), the AuditWriteFailed metric the alarm watches, and a log line naming the step: ids
 * only, never a key, secret or signature.
 */
async function storing<T>(batch: AuditBatch, step: string, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    metrics.addMetric('AuditWriteFailed', MetricUnit.Count, 1);
    logger.error('batch not taken', {
      step,
      company_id: batch.companyId,
      app_id: batch.appId,
      error: { name: (error as Error).name, message: (error as Error).message },
    });
    throw new EventApiError('audit_write_failed');
  }
}

export const handler = httpHandler(eventApi(ingest, 'audit_write_failed'));
