import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { type AppCredentials, type SignedRequest, signedRequest } from '../../client/event-client';
import type { SdkEvent } from '../../functions/domain/ingest/event-validation';
import { signBody } from '../../functions/domain/ingest/signature';
import type { HttpEvent } from '../../functions/shared/http';
import { fromCloudFront } from '../support/edge';
import type { Tenant } from '../support/local-stack';

/** Helpers shared by the ingestion tests (unit and integration). */

export function validEvent(overrides: Record<string, unknown> = {}, tsMs = Date.now()): SdkEvent {
  return {
    event_id: `evt-${randomUUID()}`,
    event_name: 'purchase',
    install_uuid: randomUUID(),
    ts_ms: tsMs,
    revenue_usd: 4.99,
    platform: 'ios',
    properties: { sku: 'gold', level: 3 },
    ...overrides,
  };
}

export function credentialsOf(tenant: Pick<Tenant, 'company' | 'app'>): AppCredentials {
  return { companyKey: tenant.company.company_key, appKey: tenant.app.app_key, signingSecret: tenant.app.signing_secret };
}

/** Raw bytes with a tenant's credential headers and a correct signature over them; `headers` override. */
export function signedBytes(tenant: Pick<Tenant, 'company' | 'app'>, body: Buffer, headers: Record<string, string> = {}): SignedRequest {
  const { headers: base } = signedRequest(credentialsOf(tenant), {});
  return { headers: { ...base, 'x-service-signature': signBody(tenant.app.signing_secret, body), ...headers }, body };
}

export interface Answer {
  status: number;
  /** Parsed JSON when the answer is JSON, else the text. */
  body: any;
}

/** POSTs exactly these headers and bytes through the local edge (no client retries). */
export async function post(baseUrl: string, path: string, request: SignedRequest): Promise<Answer> {
  const response = await fetch(new URL(path, baseUrl), { method: 'POST', headers: request.headers, body: request.body });
  const text = await response.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: response.status, body };
}

/** An API Gateway v2 event as the edge would build it (CloudFront's origin secret included), for calling a handler directly. */
export function apiEvent(
  path: string,
  headers: Record<string, string>,
  body: Buffer,
  options: { base64?: boolean; sourceIp?: string } = {},
): HttpEvent {
  const base64 = options.base64 ?? true;
  return {
    version: '2.0',
    routeKey: `POST ${path}`,
    rawPath: path,
    rawQueryString: '',
    headers: { ...fromCloudFront(), ...headers },
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: 'localhost',
      domainPrefix: 'local',
      http: { method: 'POST', path, protocol: 'HTTP/1.1', sourceIp: options.sourceIp ?? '203.0.113.9', userAgent: 'test' },
      requestId: randomUUID(),
      routeKey: `POST ${path}`,
      stage: '$default',
      time: new Date().toUTCString(),
      timeEpoch: Date.now(),
    },
    body: body.length === 0 ? undefined : base64 ? body.toString('base64') : body.toString('utf8'),
    isBase64Encoded: body.length > 0 && base64,
  };
}

export function lambdaContext(functionName: string): Context {
  return {
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:000000000000:function:${functionName}`,
    memoryLimitInMB: '512',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'test',
    callbackWaitsForEmptyEventLoop: true,
    getRemainingTimeInMillis: () => 10_000,
    done: () => undefined,
    fail: () => undefined,
    succeed: () => undefined,
  };
}
