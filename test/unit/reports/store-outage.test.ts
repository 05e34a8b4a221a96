import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { QueryCommand as DocumentQueryCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { hashServerKey } from '../../../functions/domain/tenants/keys';
import { envName, tables } from '../../../lib/manifest';
import { fromCloudFront } from '../../support/edge';
import { mockOriginSecret } from '../../support/origin-secret';

// The handlers read CloudFront's origin secret from Secrets Manager before anything else.
mockOriginSecret();

// Handlers read their resource names at cold start.
process.env.AWS_REGION = 'us-east-1';
for (const name of Object.keys(tables)) process.env[envName.table(name)] = name;

const db = mockClient(DynamoDBDocumentClient);
const KEY = `srv_${'e'.repeat(48)}`;
const outage = Object.assign(new Error('Service unavailable'), { name: 'InternalServerError' });

const request = (): APIGatewayProxyEventV2 =>
  ({
    rawPath: '/api/v1/reports/cohorts',
    headers: { ...fromCloudFront(), authorization: `Bearer ${KEY}` },
    queryStringParameters: { limit: '5' },
    isBase64Encoded: false,
    requestContext: { http: { method: 'GET', path: '/api/v1/reports/cohorts', sourceIp: '192.0.2.1' } },
  }) as unknown as APIGatewayProxyEventV2;

const context = { functionName: 'test', awsRequestId: 'r' } as Context;

describe('a report when a store is down', () => {
  beforeEach(() => db.reset());

  it('answers a retryable 503 store_unavailable when the key look-up fails, not a 500', async () => {
    db.on(GetCommand).rejects(outage);
    const { handler } = await import('../../../functions/report-cohorts');
    const result = (await handler(request(), context)) as APIGatewayProxyStructuredResultV2;
    expect(result.statusCode).toBe(503);
    expect(JSON.parse(result.body as string)).toEqual({ error: 'store_unavailable' });
  });

  it('answers 503 store_unavailable when the rows cannot be read', async () => {
    db.on(GetCommand).resolves({
      Item: { pk: `server_key#${hashServerKey(KEY)}`, key_hash: hashServerKey(KEY), app_id: 'app_1', revoked: false },
    });
    // The app's time zone (its by_id look-up), then the report pages, read with the plain DynamoDB command (functions/adapters/query-pages.ts).
    db.on(DocumentQueryCommand).resolves({
      Items: [{ pk: 'app#app_live_1', id: 'app_1', kind: 'app', app_id: 'app_1', time_zone: 'Asia/Tokyo' }],
    });
    db.on(QueryCommand).rejects(outage);
    const { handler } = await import('../../../functions/report-cohorts');
    const result = (await handler(request(), context)) as APIGatewayProxyStructuredResultV2;
    expect(result.statusCode).toBe(503);
    expect(JSON.parse(result.body as string)).toEqual({ error: 'store_unavailable' });
    expect(db.commandCalls(QueryCommand)[0].args[0].input).toMatchObject({
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': { S: 'app_1#cohorts' } },
    });
  });
});
