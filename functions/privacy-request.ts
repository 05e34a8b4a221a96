import { randomUUID } from 'node:crypto';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { MessageQueue } from './adapters/message-queue';
import { PrivacyRequests } from './adapters/privacy-store';
import { SigningSecretStore } from './adapters/signing-secret-store';
import { CachedTenants, TenantStore } from './adapters/tenant-store';
import type { PrivacyMessage } from './domain/privacy/privacy';
import { type PrivacyRequestPorts, takePrivacyRequest } from './domain/privacy/request';
import { resourceName } from './shared/config';
import { corsAnswers } from './shared/cors';
import { eventApi, readEventRequest } from './shared/event-request';
import { type HttpEvent, type HttpResult, httpHandler, json } from './shared/http';
import { errorFields, logger, metrics } from './shared/observability';

const tenants = new CachedTenants(
  new TenantStore(resourceName.table('tenants'), new SigningSecretStore(resourceName.table('signing_secrets'))),
);

const ports: PrivacyRequestPorts = {
  requests: new PrivacyRequests(resourceName.table('privacy_requests'), new MessageQueue<PrivacyMessage>(resourceName.queueUrl('privacy'))),
  newRequestId: randomUUID,
  failed: (receipt, error) => {
    metrics.addMetric('PrivacyRequestFailed', MetricUnit.Count, 1);
    logger.error('privacy request not queued', { request_id: receipt.request_id, app_id: receipt.app_id, error: errorFields(error) });
  },
};

/**
 * POST /privacy/delete: the event API's authentication and body handling (readEventRequest), then
 * takePrivacyRequest in the privacy domain (functions/domain/privacy/request.ts), then 202.
 */
export async function privacyRequest(event: HttpEvent): Promise<HttpResult> {
  const receivedMs = Date.now();
  const { app, company, body } = await readEventRequest(event, tenants);
  await takePrivacyRequest(ports, { appId: app.app_id, companyId: company.company_id, body, receivedMs });
  metrics.addMetric('PrivacyRequestsQueued', MetricUnit.Count, 1);
  return json(202, { ok: true, queued: true });
}

export const handler = httpHandler(eventApi(privacyRequest, 'queue_write_failed'), { cors: corsAnswers(tenants) });
