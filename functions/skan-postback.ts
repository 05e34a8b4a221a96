import { randomUUID } from 'node:crypto';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { SkanReportStore } from './adapters/skan-report-store';
import { SkanSchemaStore } from './adapters/skan-schema-store';
import { SkanStore } from './adapters/skan-store';
import { CachedTenants, TenantStore } from './adapters/tenant-store';
import { ServiceError } from './domain/common/errors';
import { testKeysOf } from './domain/skan/postback-keys';
import type { PostbackRefusal } from './domain/skan/postback-record';
import { type PostbackOutcome, type SkanPostbackPorts, takePostback } from './domain/skan/take-postback';
import { resourceName } from './shared/config';
import { type HttpEvent, type HttpResult, httpHandler, json, rawBody } from './shared/http';
import { errorFields, logger, metrics } from './shared/observability';

const tenants = new CachedTenants(new TenantStore(resourceName.table('tenants')));

const ports: SkanPostbackPorts = {
  // Apple's keys; locally also the runtime's test keys (TEST_KEYS_VARIABLE, which the stack never
  // sets). Read by its literal name: production bundles compile it to undefined (LOCAL_ONLY_SWITCHES).
  keys: testKeysOf(process.env.SKAN_TEST_KEYS),
  filing: new SkanStore(resourceName.table('skan_postbacks'), resourceName.bucket()),
  report: {
    apps: (appStoreId) => tenants.skanAppOf(appStoreId),
    schemas: new SkanSchemaStore(resourceName.table('tenants')),
    report: new SkanReportStore(resourceName.table('aggregates')),
  },
  newClaimId: randomUUID,
};

/**
 * POST /skan-postback: Apple's SKAdNetwork and AdAttributionKit postbacks, public (Apple signs
 * them). functions/domain/skan/take-postback.ts has the rules; docs/skan-postbacks.md the why.
 * A postback whose signature fails is still 200: Apple retries anything else for days.
 */
export async function skanPostback(event: HttpEvent): Promise<HttpResult> {
  const outcome = await takePostback(ports, { body: rawBody(event), receivedMs: Date.now() });
  count(outcome);
  switch (outcome.kind) {
    case 'refused':
      throw refusal(outcome.refusal);
    // Another delivery of the id being filed right now, or a store that failed: Apple's retry is taken.
    case 'in_progress':
    case 'store_failed':
      throw new ServiceError(503, 'store_unavailable');
    case 'stored':
    case 'duplicate':
      return json(200, { ok: true });
  }
}

function refusal(code: PostbackRefusal): ServiceError {
  switch (code) {
    case 'body_too_large':
      return new ServiceError(413, 'body_too_large');
    case 'bad_json':
      return new ServiceError(400, 'bad_json');
    case 'bad_postback':
      return new ServiceError(400, 'bad_postback');
  }
}

/** One metric per request by outcome (stored ones by verification), and a log line for what on-call must see. */
function count(outcome: PostbackOutcome): void {
  switch (outcome.kind) {
    case 'refused':
      // The reason as EMF metadata, not a dimension: the dashboard sums one metric per outcome.
      metrics.addMetadata('reason', outcome.refusal);
      metrics.addMetric('SkanPostbackRefused', MetricUnit.Count, 1);
      return;
    case 'duplicate':
      metrics.addMetric('SkanPostbackDuplicate', MetricUnit.Count, 1);
      return;
    case 'in_progress':
      metrics.addMetric('SkanPostbackInProgress', MetricUnit.Count, 1);
      return;
    case 'store_failed':
      metrics.addMetric('SkanPostbackStoreFailed', MetricUnit.Count, 1);
      logger.error('postback not stored: a store failed', {
        step: outcome.step,
        transaction_id: outcome.record.transaction_id,
        error: errorFields(outcome.failure),
      });
      return;
    case 'stored': {
      const { record } = outcome;
      if (!record.verified) metrics.addMetadata('reason', record.reason ?? 'unknown');
      metrics.addMetric(record.verified ? 'SkanPostbackVerified' : 'SkanPostbackInvalid', MetricUnit.Count, 1);
      // Postbacks the report leaves out: of no app here (or naming none), or signed with Apple's development key.
      if (outcome.counted?.kind === 'unknown_app') metrics.addMetric('SkanPostbackUnknownApp', MetricUnit.Count, 1);
      if (outcome.counted?.kind === 'development') metrics.addMetric('SkanPostbackDevelopment', MetricUnit.Count, 1);
      if (outcome.markFailure !== undefined) {
        logger.error('postback stored, but its claim was not marked stored', {
          transaction_id: record.transaction_id,
          error: errorFields(outcome.markFailure),
        });
      }
      return;
    }
  }
}

export const handler = httpHandler(skanPostback);
