import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { SigningSecretStore } from './adapters/signing-secret-store';
import { SkanSchemaStore } from './adapters/skan-schema-store';
import { CachedTenants, TenantStore } from './adapters/tenant-store';
import { ServiceError } from './domain/common/errors';
import { EventApiError } from './domain/ingest/event-api';
import { authenticate } from './domain/ingest/event-auth';
import { sdkSchemaAnswer } from './domain/skan/schema';
import type { App, Company } from './domain/tenants/tenant';
import { resourceName } from './shared/config';
import { corsAnswers } from './shared/cors';
import { type HttpEvent, type HttpResult, header, httpHandler, rawBody } from './shared/http';
import { errorFields, logger, metrics } from './shared/observability';

const tenants = new CachedTenants(
  new TenantStore(resourceName.table('tenants'), new SigningSecretStore(resourceName.table('signing_secrets'))),
);
const schemas = new SkanSchemaStore(resourceName.table('tenants'));

/**
 * The SDK may keep an answer five minutes and revalidate with If-None-Match; private because it
 * is one app's schema, fetched with its keys. A new version reaches devices within that time.
 */
const CACHE_CONTROL = 'private, max-age=300';

/**
 * GET /sdk/v1/skan-schema (docs/ios.md section 1): the event API's three headers, the signature
 * over the empty body, then the app's active conversion-value schema (sdkSchemaAnswer has the
 * body and its ETag). Refusals are the event API's codes; a store that fails is 503
 * store_unavailable, which SDKs retry.
 */
export async function sdkSkanSchema(event: HttpEvent): Promise<HttpResult> {
  try {
    const credentials = {
      companyKey: header(event, 'x-service-company-key'),
      appKey: header(event, 'x-service-app-key'),
      signature: header(event, 'x-service-signature'),
    };
    const { app } = await authenticate<App, Company>(credentials, rawBody(event), tenants, { emptyBody: 'signed' });
    const answer = sdkSchemaAnswer(await schemas.active(app.app_id), header(event, 'if-none-match'));
    switch (answer.kind) {
      case 'no_schema':
        throw new ServiceError(404, 'no_schema', { 'cache-control': CACHE_CONTROL });
      case 'not_modified':
        return { statusCode: 304, headers: { 'cache-control': CACHE_CONTROL, etag: answer.etag } };
      case 'schema':
        return {
          statusCode: 200,
          headers: { 'content-type': 'application/json', 'cache-control': CACHE_CONTROL, etag: answer.etag },
          body: answer.body,
        };
    }
  } catch (error) {
    if (error instanceof EventApiError) {
      metrics.addMetadata('refusal', error.code);
      metrics.addMetric('RequestsRefused', MetricUnit.Count, 1);
      throw error;
    }
    if (error instanceof ServiceError) throw error;
    logger.error('skan schema not answered: a store failed', { error: errorFields(error) });
    throw new ServiceError(503, 'store_unavailable');
  }
}

export const handler = httpHandler(sdkSkanSchema, { cors: corsAnswers(tenants) });
