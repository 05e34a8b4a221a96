import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { envName, queues, tables } from '../../../lib/manifest';
import { fromCloudFront } from '../../support/edge';
import { mockOriginSecret } from '../../support/origin-secret';

// The handlers read CloudFront's origin secret from Secrets Manager before anything else.
mockOriginSecret();

// Handlers read their resource names at cold start.
process.env.AWS_REGION = 'us-east-1';
for (const name of Object.keys(tables)) process.env[envName.table(name)] = name;
for (const name of Object.keys(queues)) process.env[envName.queue(name)] = `http://127.0.0.1:1/000000000000/${name}`;
process.env[envName.bucket()] = 'audit';
process.env[envName.exportBucket()] = 'exports';

const db = mockClient(DynamoDBDocumentClient);

const request = (path: string, body: string): APIGatewayProxyEventV2 =>
  ({
    rawPath: path,
    headers: {
      ...fromCloudFront(),
      'content-type': 'application/json',
      'x-service-company-key': `co_live_${'a'.repeat(32)}`,
      'x-service-app-key': `app_live_${'b'.repeat(32)}`,
      'x-service-signature': 'c'.repeat(64),
    },
    body,
    isBase64Encoded: false,
    requestContext: { http: { method: 'POST', path, sourceIp: '192.0.2.1' } },
  }) as unknown as APIGatewayProxyEventV2;

const context = { functionName: 'test', awsRequestId: 'r' } as Context;

describe('the event API when the key store is down', () => {
  beforeEach(() => {
    db.reset();
    db.on(GetCommand).rejects(Object.assign(new Error('Service unavailable'), { name: 'InternalServerError' }));
  });

  it('answers POST /event with a retryable 503 audit_write_failed, not a 500', async () => {
    const { handler } = await import('../../../functions/ingest');
    const result = (await handler(request('/event', '{"events":[],"sent_at_ms":1}'), context)) as APIGatewayProxyStructuredResultV2;
    expect(result.statusCode).toBe(503);
    expect(JSON.parse(result.body as string)).toEqual({ error: 'audit_write_failed' });
  });

  it('answers POST /privacy/delete with a retryable 503 queue_write_failed, not a 500', async () => {
    const { handler } = await import('../../../functions/privacy-request');
    const result = (await handler(request('/privacy/delete', '{"install_uuid":"x"}'), context)) as APIGatewayProxyStructuredResultV2;
    expect(result.statusCode).toBe(503);
    expect(JSON.parse(result.body as string)).toEqual({ error: 'queue_write_failed' });
  });
});
