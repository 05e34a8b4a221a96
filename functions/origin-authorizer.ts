import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import middy from '@middy/core';
import type { APIGatewayRequestAuthorizerEventV2, APIGatewaySimpleAuthorizerResult } from 'aws-lambda';
import { envName } from '../lib/function-constants';
import { carriesOriginSecret } from './shared/http';
import { logger, metrics } from './shared/observability';

/**
 * The HTTP API's authorizer (lib/constructs/edge.ts, authorizeWith): only CloudFront reaches the
 * functions (docs/architecture.md section 1). Its identity source is the x-origin-verify header,
 * so API Gateway answers a request without it 401 {"message":"Unauthorized"} by itself; this
 * function answers for a request with one, and API Gateway keeps the answer per value (the
 * manifest's `authorizer.cacheSeconds`) and answers a refused one 403 {"message":"Forbidden"}. Either
 * way the route's function never runs. It still checks the header itself (functions/shared/http.ts):
 * the authorizer is API Gateway's, and the local runtime's, not the handler's guarantee.
 *
 * A missing secret ARN or an unreadable secret throws: API Gateway answers 500 and nothing is
 * served, the fail-closed answer of the routes' own check. Refusals are counted (OriginForbidden).
 */
export async function authorizeOrigin(
  event: Pick<APIGatewayRequestAuthorizerEventV2, 'headers'>,
): Promise<APIGatewaySimpleAuthorizerResult> {
  const arn = process.env[envName.originVerifySecretArn()];
  if (!arn) throw new Error(`${envName.originVerifySecretArn()} is not set: every request is refused`);
  const isAuthorized = await carriesOriginSecret(event, arn);
  if (!isAuthorized) {
    // Published here, not by the logMetrics middleware, which would warn on every answer that
    // adds no metric (each cache miss of CloudFront's own value).
    metrics.addMetric('OriginForbidden', MetricUnit.Count, 1);
    metrics.publishStoredMetrics();
  }
  return { isAuthorized };
}

export const handler = middy(authorizeOrigin).use(injectLambdaContext(logger, { resetKeys: true }));
