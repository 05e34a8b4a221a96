import { randomUUID } from 'node:crypto';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { MessageQueue } from './adapters/message-queue';
import { PrivacyRequests } from './adapters/privacy-store';
import { SigningSecretStore } from './adapters/signing-secret-store';
import { CachedTenants, TenantStore } from './adapters/tenant-store';
import { EventApiError } from './domain/ingest/event-api';
import { privacyRequest as deletionRequest, type PrivacyMessage, parseDeletionRequest } from './domain/privacy/privacy';
import { resourceName } from './shared/config';
import { eventApi, readEventRequest } from './shared/event-request';
import { type HttpEvent, type HttpResult, httpHandler, json } from './shared/http';
import { errorFields, logger, metrics } from './shared/observability';

const tenants = new CachedTenants(
  new TenantStore(resourceName.table('tenants'), new SigningSecretStore(resourceName.table('signing_secrets'))),
);
const requests = new PrivacyRequests(
  resourceName.table('privacy_requests'),
  new MessageQueue<PrivacyMessage>(resourceName.queueUrl('privacy')),
);

/**
 * POST /privacy/delete: the event API's authentication and body handling, then a receipt and a
 * queued request for the nightly drain. Nothing is deleted here.
 */
export async function privacyRequest(event: HttpEvent): Promise<HttpResult> {
  const receivedMs = Date.now();
  const { app, company, body } = await readEventRequest(event, tenants);
  const installUuid = parseDeletionRequest(body);
  const { receipt, message } = deletionRequest({
    requestId: randomUUID(),
    appId: app.app_id,
    companyId: company.company_id,
    installUuid,
    receivedMs,
  });
  try {
    await requests.submit(receipt, message);
  } catch (error) {
    metrics.addMetric('PrivacyRequestFailed', MetricUnit.Count, 1);
    logger.error('privacy request not queued', {
      request_id: receipt.request_id,
      app_id: receipt.app_id,
      error: errorFields(error),
    });
    throw new EventApiError('queue_write_failed');
  }
  metrics.addMetric('PrivacyRequestsQueued', MetricUnit.Count, 1);
  return json(202, { ok: true, queued: true });
}

export const handler = httpHandler(eventApi(privacyRequest, 'queue_write_failed'));
