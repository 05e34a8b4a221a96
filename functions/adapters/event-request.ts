import { authenticate, type TenantLookup } from '../domain/event-auth';
import { decodeBody, parseJson } from '../domain/batch-body';
import { EventApiError, type EventApiErrorCode } from '../domain/event-api';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { header, HttpError, rawBody, type HttpEvent, type HttpHandler } from '../shared/http';
import { logger, metrics } from '../shared/observability';
import type { App, Company } from './tenant-store';

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
  readonly body: unknown;
}

export const SDK_VERSION_HEADER = 'x-service-sdk';

export async function readEventRequest(event: HttpEvent, tenants: TenantLookup<App, Company>): Promise<EventRequest> {
  const raw = rawBody(event);
  const credentials = {
    companyKey: header(event, 'x-service-company-key'),
    appKey: header(event, 'x-service-app-key'),
    signature: header(event, 'x-service-signature'),
  };
  const { app, company } = await authenticate(credentials, raw, tenants);
  const decoded = await decodeBody(raw, header(event, 'content-encoding'));
  return { app, company, raw, body: parseJson(decoded) };
}

/**
 * The domain's refusals become the HttpErrors the shared middleware renders as {"error": code},
 * and each is counted (RequestsRefused, with the code as metadata) so a flood of bad signatures
 * or a tenant stuck at its cap shows on the dashboard.
 *
 * Anything else is a store that failed (say the key look-up): nothing was taken, so the client
 * is told to retry with the endpoint's documented 503 rather than a bare 500 that an SDK would
 * treat as final. An SDK that retries 503 loses nothing.
 */
export function eventApi(handler: HttpHandler, unavailable: EventApiErrorCode): HttpHandler {
  return async (event, context) => {
    try {
      return await handler(event, context);
    } catch (caught) {
      let error = caught;
      if (!(error instanceof EventApiError)) {
        logger.error('request not taken: a store failed', { error: { name: (error as Error).name, message: (error as Error).message } });
        error = new EventApiError(unavailable);
      }
      const refusal = error as EventApiError;
      metrics.addMetadata('refusal', refusal.code);
      metrics.addMetric('RequestsRefused', MetricUnit.Count, 1);
      throw new HttpError(refusal.statusCode, refusal.code);
    }
  };
}
