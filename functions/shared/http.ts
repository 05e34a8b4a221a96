import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy, { type MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { envName, originVerifyHeader } from '../../lib/function-constants';
import { originSecretValues } from '../adapters/origin-secret';
import { ServiceError } from '../domain/common/errors';
import { logger, metrics } from './observability';
import { fromEdge, markFromEdge, type WithHeaders } from './viewer';

export type HttpEvent = APIGatewayProxyEventV2;
export type HttpResult = APIGatewayProxyStructuredResultV2;

export function json(statusCode: number, body: unknown, headers: Record<string, string> = {}): HttpResult {
  return {
    statusCode,
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  };
}

/**
 * Every error body on every endpoint is {"error": code}, with the code one of the documented ones;
 * POST /event's bad_batch_shape adds the field at fault (EventApiError).
 */
export function errorResult(error: ServiceError): HttpResult {
  return json(error.statusCode, error.body(), { ...error.headers });
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

/**
 * docs/architecture.md section 1: only CloudFront reaches the functions. A request without the origin secret
 * (one sent to the API Gateway URL directly) is 403 before the handler runs, so before any store
 * is touched; fromEdge compares in constant time, with the current value and, during a rotation,
 * the previous one (functions/adapters/origin-secret.ts reads them from Secrets Manager and keeps
 * them five minutes). A request with no origin header at all is refused without that read, so a
 * flood at the API Gateway URL costs no Secrets Manager call.
 *
 * The secret's ARN is read per request rather than at cold start because the local runtime sets
 * it after handlers may have been loaded (a process.env read costs nothing). A function without
 * the ARN, or whose secret cannot be read, fails closed as a 500: a deployment fault the API 5xx
 * alarm should see, not a client's, and nothing is served either way. Refusals are counted
 * (OriginForbidden) where the function flushes metrics.
 */
export function originVerify(options: { countRefusals: boolean }): MiddlewareObj<HttpEvent, HttpResult> {
  const refuse = () => {
    if (options.countRefusals) metrics.addMetric('OriginForbidden', MetricUnit.Count, 1);
    return new ServiceError(403, 'forbidden');
  };
  return {
    before: async (request) => {
      const arn = process.env[envName.originVerifySecretArn()];
      if (!arn) throw new Error(`${envName.originVerifySecretArn()} is not set: every request is refused`);
      if (request.event.headers?.[originVerifyHeader] === undefined) throw refuse();
      if (!(await carriesOriginSecret(request.event, arn))) throw refuse();
      markFromEdge(request.event);
    },
  };
}

/**
 * Whether a request's origin header is a value of the secret at `arn`: the current one or, during
 * a rotation, the previous one. The routes' origin check and the API's authorizer
 * (functions/origin-authorizer.ts) both ask this.
 */
export async function carriesOriginSecret(event: WithHeaders, arn: string): Promise<boolean> {
  const values = await originSecretValues(arn);
  // Every value is compared, matched or not, so the time taken does not say which one matched.
  const matches = values.map((value) => fromEdge(event, value));
  return matches.includes(true);
}

export type HttpHandler = (event: HttpEvent, context: Context) => Promise<HttpResult>;

/**
 * Wraps a domain-facing handler with the origin check, observability and error middleware every
 * HTTP function shares. The origin check comes first: a request that did not come through
 * CloudFront is 403 before anything else runs. The undecorated
 * handler stays exported beside it for unit tests. A handler that never emits metrics says so,
 * because Powertools warns on every invocation that flushes none.
 */
export function httpHandler(
  handler: HttpHandler,
  options: {
    emitsMetrics?: boolean;
    /** The routes browsers call: corsAnswers (functions/shared/cors.ts). */
    cors?: MiddlewareObj<HttpEvent, HttpResult>;
  } = {},
) {
  const wrapped = middy<HttpEvent, HttpResult>(handler).use(originVerify({ countRefusals: options.emitsMetrics !== false }));
  // After the origin check, and before the error middleware so that its onError sees the rendered refusal.
  if (options.cors) wrapped.use(options.cors);
  wrapped.use(injectLambdaContext(logger, { resetKeys: true }));
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
