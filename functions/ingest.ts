import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { AuditStore } from './adapters/audit-store';
import { CapCounter } from './adapters/cap-counter';
import { CachedFxRates, FxStore } from './adapters/fx-store';
import { MessageQueue } from './adapters/message-queue';
import { SigningSecretStore } from './adapters/signing-secret-store';
import { CachedTenants, TenantStore } from './adapters/tenant-store';
import type { AggregationMessage } from './domain/audit/types';
import { EVENTS_ACCEPTED, EVENTS_REJECTED, rejectedMetric, rejectionsByReason } from './domain/health/ingestion-metrics';
import { type TakeBatchPorts, takeBatch } from './domain/ingest/take-batch';
import { resourceName } from './shared/config';
import { corsAnswers } from './shared/cors';
import { eventApi, readEventRequest, SDK_VERSION_HEADER } from './shared/event-request';
import { type HttpEvent, type HttpResult, header, httpHandler, json } from './shared/http';
import { errorFields, logger, metrics } from './shared/observability';
import { viewerOf } from './shared/viewer';

const tenants = new CachedTenants(
  new TenantStore(resourceName.table('tenants'), new SigningSecretStore(resourceName.table('signing_secrets'))),
);
const ports: TakeBatchPorts = {
  caps: new CapCounter(resourceName.table('counters'), resourceName.table('ledger')),
  audit: new AuditStore(resourceName.bucket()),
  aggregation: new MessageQueue<AggregationMessage>(resourceName.queueUrl('aggregation')),
  enrichment: new MessageQueue<AggregationMessage>(resourceName.queueUrl('enrichment')),
  rates: new CachedFxRates(new FxStore(resourceName.table('fx_rates'))),
  // The step failed and the client gets 503 audit_write_failed: the AuditWriteFailed metric the
  // alarm watches, and a log line naming the step, ids only, never a key, secret or signature.
  // cap_mark alone comes after the batch was taken: logged, answered 200 all the same.
  failed: (step, batch, error) => {
    if (step !== 'cap_mark') metrics.addMetric('AuditWriteFailed', MetricUnit.Count, 1);
    logger.error(step === 'cap_mark' ? 'batch taken, its count not settled' : 'batch not taken', {
      step,
      company_id: batch.companyId,
      app_id: batch.appId,
      error: errorFields(error),
    });
  },
};

/**
 * POST /event: authentication and body (readEventRequest), then takeBatch in the ingest domain
 * (functions/domain/ingest/take-batch.ts has the order of the steps), then the verdicts as JSON.
 */
export async function ingest(event: HttpEvent): Promise<HttpResult> {
  const receivedMs = Date.now();
  const { app, company, raw, jsonText, body } = await readEventRequest(event, tenants);
  // Read once: the address is parsed and normalised on each read.
  const viewer = viewerOf(event);
  const taken = await takeBatch(ports, {
    companyId: company.company_id,
    appId: app.app_id,
    monthlyCap: company.monthly_cap,
    raw,
    body,
    jsonText,
    clientIp: viewer.ip,
    country: viewer.country,
    sdkVersion: header(event, SDK_VERSION_HEADER),
    receivedMs,
  });

  metrics.addMetric(EVENTS_ACCEPTED, MetricUnit.Count, taken.accepted);
  metrics.addMetric(EVENTS_REJECTED, MetricUnit.Count, taken.rejected);
  // Per reason too: the operators' health view shows rejections by reason per hour (docs/operations.md).
  for (const [reason, count] of rejectionsByReason(taken.verdicts)) metrics.addMetric(rejectedMetric(reason), MetricUnit.Count, count);
  return json(200, {
    accepted: taken.accepted,
    rejected: taken.rejected,
    // A rejected event's result names the field at fault beside its reason (undefined ones are left out).
    results: taken.verdicts.map(({ event_id, status, reason, field }) => ({ event_id, status, reason, field })),
    audit_key: taken.auditKey,
  });
}

export const handler = httpHandler(eventApi(ingest, 'audit_write_failed'), { cors: corsAnswers(tenants) });
