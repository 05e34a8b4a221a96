import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { ServiceError } from '../domain/common/errors';
import { decodeBody, parseJson } from '../domain/ingest/batch-body';
import { EventApiError, type EventApiErrorCode } from '../domain/ingest/event-api';
import { authenticate, type EventCredentials, type TenantLookup } from '../domain/ingest/event-auth';
import type { App, Company } from '../domain/tenants/tenant';
import { type HttpEvent, type HttpHandler, header, rawBody } from './http';
import { errorFields, logger, metrics } from './observability';

/**
 * The HTTP side of the event API, shared by POST /event and POST /privacy/delete: the three
 * credential headers and the body bytes out of the API Gateway event, authentication, then the
 * body decoded and parsed. What each endpoint does with the JSON is its own business.
 */
export interface EventRequest {
  readonly app: App;
  readonly company: Company;
  /** The body bytes as sent (compressed when the client gzipped them). */
  readonly raw: Buffer;
  /** The body decompressed: the JSON text `body` was parsed from. */
  readonly jsonText: Buffer;
  readonly body: unknown;
}

export const SDK_VERSION_HEADER = 'x-service-sdk';

/** The event API's three headers, as every signed route reads them. */
export function eventCredentials(event: HttpEvent): EventCredentials {
  return {
    companyKey: header(event, 'x-service-company-key'),
    appKey: header(event, 'x-service-app-key'),
    signature: header(event, 'x-service-signature'),
  };
}

export async function readEventRequest(event: HttpEvent, tenants: TenantLookup<App, Company>): Promise<EventRequest> {
  const raw = rawBody(event);
  const { app, company } = await authenticate(eventCredentials(event), raw, tenants);
  const jsonText = await decodeBody(raw, header(event, 'content-encoding'));
  return { app, company, raw, jsonText, body: parseJson(jsonText) };
}

/**
 * Each refusal is counted (RequestsRefused, with the code as metadata) so a flood of bad
 * signatures or a tenant stuck at its cap shows on the dashboard, and rethrown as it is: an
 * EventApiError (or the first-launch routes' own refusal) is a ServiceError, which the shared
 * middleware renders as {"error": code}, with the field at fault beside it when the refusal names
 * one (bad_batch_shape).
 *
 * Anything else is a store that failed (say the key look-up): nothing was taken, so the client
 * is told to retry with the endpoint's documented 503 rather than a bare 500 that an SDK would
 * treat as final. An SDK that retries 503 loses nothing.
 */
export function eventApi(handler: HttpHandler, unavailable: EventApiErrorCode | (() => ServiceError)): HttpHandler {
  return async (event, context) => {
    try {
      return await handler(event, context);
    } catch (error) {
      const refusal = error instanceof ServiceError ? error : storeFailed(error, unavailable);
      metrics.addMetadata('refusal', refusal.code);
      metrics.addMetric('RequestsRefused', MetricUnit.Count, 1);
      throw refusal;
    }
  };
}

function storeFailed(error: unknown, unavailable: EventApiErrorCode | (() => ServiceError)): ServiceError {
  logger.error('request not taken: a store failed', { error: errorFields(error) });
  return typeof unavailable === 'function' ? unavailable() : new EventApiError(unavailable);
}
