import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { envName, tables } from '../../../lib/manifest';
import { fromCloudFront } from '../../support/edge';
import { mockOriginSecret } from '../../support/origin-secret';
import { MOBILE } from './user-agents';

// The handlers read CloudFront's origin secret from Secrets Manager before anything else.
mockOriginSecret();

// Handlers read their resource names at cold start.
for (const name of Object.keys(tables)) process.env[envName.table(name)] = name;
process.env.LINK_CACHE_TTL_MS = '0';

const db = mockClient(DynamoDBDocumentClient);
const outage = Object.assign(new Error('Service unavailable'), { name: 'InternalServerError' });
const LINK = {
  link_id: 'lnk_outage01',
  app_id: 'app_1',
  company_id: 'co_1',
  partner: 'meta',
  honeypot: false,
  ios_url: 'https://apps.apple.com/app/id1',
  lookback_days: 7,
  created_ms: 1,
};

const request = (): APIGatewayProxyEventV2 =>
  ({
    rawPath: `/l/${LINK.link_id}`,
    headers: { ...fromCloudFront(), 'user-agent': MOBILE.iosSafari },
    pathParameters: { link_id: LINK.link_id },
    isBase64Encoded: false,
    requestContext: { http: { method: 'GET', path: `/l/${LINK.link_id}`, sourceIp: '192.0.2.1' } },
  }) as unknown as APIGatewayProxyEventV2;

const context = { functionName: 'test', awsRequestId: 'r' } as Context;

async function follow() {
  const { handler } = await import('../../../functions/link-redirect');
  return (await handler(request(), context)) as APIGatewayProxyStructuredResultV2;
}

describe('GET /l/{link_id} when a store is down', () => {
  beforeEach(() => db.reset());

  it('answers 503 service_unavailable with a short Retry-After, not a 500, when the link look-up fails', async () => {
    db.on(GetCommand).rejects(outage);
    const result = await follow();
    expect(result.statusCode).toBe(503);
    expect(JSON.parse(result.body as string)).toEqual({ error: 'service_unavailable' });
    expect(result.headers).toMatchObject({ 'retry-after': '5', 'cache-control': 'no-store' });
    expect(db.commandCalls(UpdateCommand)).toHaveLength(0);
    expect(db.commandCalls(PutCommand)).toHaveLength(0);
  });

  it.each([
    ['the IP block look-up', () => db.on(GetCommand, { TableName: 'ip_blocks' }).rejects(outage)],
    ['the rate window', () => db.on(UpdateCommand).rejects(outage)],
    ['the click write', () => db.on(PutCommand).rejects(outage)],
  ])('still redirects the visitor, without a click, when %s fails', async (_what, breakIt) => {
    db.on(GetCommand, { TableName: 'links' }).resolves({ Item: LINK });
    db.on(GetCommand, { TableName: 'ip_blocks' }).resolves({});
    db.on(UpdateCommand).resolves({ Attributes: {} });
    db.on(PutCommand).resolves({});
    breakIt();
    const result = await follow();
    expect(result.statusCode).toBe(302);
    expect(result.headers?.location).toBe('https://apps.apple.com/app/id1');
  });
});
