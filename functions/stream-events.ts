import { ServiceError } from './domain/common/errors';
import { type HttpEvent, type HttpResult, httpHandler } from './shared/http';

/**
 * PLACEHOLDER, made by the infrastructure part of issue 22 so that the stack synthesizes: the
 * stream endpoint's engineer replaces this file with GET /api/v1/stream/events.
 */
export async function streamEvents(_event: HttpEvent): Promise<HttpResult> {
  throw new ServiceError(404, 'not_found');
}

export const handler = httpHandler(streamEvents, { emitsMetrics: false });
