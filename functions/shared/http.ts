import middy, { type MiddlewareObj } from '@middy/core';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { ServiceError } from '../domain/common/errors';
import { logger, metrics } from './observability';

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;

export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResult {
  return {
    statusCode,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  };
}

/** Every error body on every endpoint is {"error": code}, with the code one of the documented ones. */
export function errorResult(error: ServiceError): HttpResult {
  return json(error.statusCode, { error: error.code }, { ...error.headers });
}

/**
 * Maps thrown errors to HTTP in one place: a ServiceError (an event API refusal, an unknown link,
 * a rate limit) as its code, anything else a bare 500.
 */
export function httpErrors(): MiddlewareObj<HttpEvent, HttpResult> {
  return {
    onError: async (request) => {
      const { error } = request;
      if (error instanceof ServiceError) {
        request.response = errorResult(error);
        return;
      }
      logger.error('unhandled error', { error: error as Error });
      request.response = json(500, { error: 'internal_error' });
    },
  };
}

export type HttpHandler = (event: HttpEvent, context: Context) => Promise<HttpResult>;

/**
 * Wraps a domain-facing handler with the observability and error middleware every HTTP function
 * shares. The undecorated handler stays exported beside it for unit tests. A handler that never
 * emits metrics says so, because Powertools warns on every invocation that flushes none.
 */
export function httpHandler(handler: HttpHandler, options: { emitsMetrics?: boolean } = {}) {
  const wrapped = middy<HttpEvent, HttpResult>(handler).use(injectLambdaContext(logger, { resetKeys: true }));
  if (options.emitsMetrics !== false) wrapped.use(logMetrics(metrics));
  return wrapped.use(httpErrors());
}

/** API Gateway v2 lower-cases header names; tests and the local runtime do the same. */
export function header(event: HttpEvent, name: string): string | undefined {
  return event.headers?.[name.toLowerCase()];
}

/** The body bytes exactly as the client sent them (API Gateway base64-encodes binary bodies). */
export function rawBody(event: HttpEvent): Buffer {
  if (event.body === undefined || event.body === null) return Buffer.alloc(0);
  return event.isBase64Encoded ? Buffer.from(event.body, 'base64') : Buffer.from(event.body, 'utf8');
}
