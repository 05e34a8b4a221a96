import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { envName, tables, viewerHostHeader } from '../../../lib/manifest';
import { fromCloudFront } from '../../support/edge';
import { mockOriginSecret } from '../../support/origin-secret';

// The handler reads CloudFront's origin secret from Secrets Manager before anything else.
mockOriginSecret();
for (const name of Object.keys(tables)) process.env[envName.table(name)] = name;
process.env.KEY_CACHE_TTL_MS = '0';

const db = mockClient(DynamoDBDocumentClient);
const outage = Object.assign(new Error('Service unavailable'), { name: 'InternalServerError' });
const PATH = '/.well-known/apple-app-site-association';

const request = (host: string): APIGatewayProxyEventV2 =>
  ({
    rawPath: PATH,
    headers: { ...fromCloudFront(), [viewerHostHeader]: host },
    isBase64Encoded: false,
    requestContext: { http: { method: 'GET', path: PATH, sourceIp: '192.0.2.1' } },
  }) as unknown as APIGatewayProxyEventV2;

async function fetchFile(host: string) {
  const { handler } = await import('../../../functions/well-known');
  return (await handler(request(host), { functionName: 'test', awsRequestId: 'r' } as Context)) as APIGatewayProxyStructuredResultV2;
}

describe('GET /.well-known/* when the tenants table is down', () => {
  beforeEach(() => db.reset());

  it('answers 503 service_unavailable with a short Retry-After, not a 500, and nothing cached', async () => {
    db.on(GetCommand).rejects(outage);
    const result = await fetchFile('go.example.com');
    expect(result.statusCode).toBe(503);
    expect(JSON.parse(result.body as string)).toEqual({ error: 'service_unavailable' });
    expect(result.headers).toMatchObject({ 'retry-after': '5', 'cache-control': 'no-store' });
  });

  it('answers a host that is no DNS name 404 without reading the store', async () => {
    db.on(GetCommand).rejects(outage);
    expect((await fetchFile('127.0.0.1:3000')).statusCode).toBe(404);
    expect(db.commandCalls(GetCommand)).toHaveLength(0);
  });
});
