import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context, Handler } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { fromEdge } from '../../../functions/shared/viewer';
import { envName, type FunctionSpec, functions, originVerifyHeader, queues, tables } from '../../../lib/manifest';
import { fromCloudFront, TEST_ORIGIN_SECRET, TEST_ORIGIN_SECRET_ARN } from '../../support/edge';
import { mockOriginSecret } from '../../support/origin-secret';

// Handlers read their resource names at cold start.
for (const name of Object.keys(tables)) process.env[envName.table(name)] = name;
for (const name of Object.keys(queues)) process.env[envName.queue(name)] = `http://127.0.0.1:1/000000000000/${name}`;
process.env[envName.bucket()] = 'audit';
process.env[envName.exportBucket()] = 'exports';

// Every store client the handlers can reach; a request refused at the origin check reaches none.
const stores = [mockClient(DynamoDBDocumentClient), mockClient(DynamoDBClient), mockClient(S3Client), mockClient(SQSClient)];
const storeCalls = () => stores.reduce((sum, store) => sum + store.calls().length, 0);
// The origin secret, read from Secrets Manager by the ARN the stack gives the function.
const secrets = mockOriginSecret();
const secretReads = () => secrets.commandCalls(GetSecretValueCommand).length;

const ROOT = join(__dirname, '..', '..', '..');
const routed = (Object.entries(functions) as [string, FunctionSpec][]).filter(([, spec]) => spec.routes?.length);

const request = (headers: Record<string, string>): APIGatewayProxyEventV2 =>
  ({
    rawPath: '/l/AbCdEf123456',
    headers: {
      'user-agent': 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X)',
      'content-type': 'application/json',
      authorization: `Bearer srv_${'e'.repeat(48)}`,
      // A direct caller can forge CloudFront's viewer headers; they must not help it in.
      'cloudfront-viewer-address': '198.51.100.10:443',
      'cloudfront-viewer-country': 'US',
      ...headers,
    },
    pathParameters: { link_id: 'AbCdEf123456' },
    body: '{"install_uuid":"x","events":[],"sent_at_ms":1}',
    isBase64Encoded: false,
    requestContext: { http: { method: 'GET', path: '/l/AbCdEf123456', sourceIp: '203.0.113.9' } },
  }) as unknown as APIGatewayProxyEventV2;

const context = { functionName: 'test', awsRequestId: 'r' } as Context;

async function call(entry: string, event: APIGatewayProxyEventV2) {
  const { handler } = (await import(join(ROOT, entry))) as { handler: Handler<APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2> };
  const result = (await handler(event, context, () => undefined)) as APIGatewayProxyStructuredResultV2;
  return { status: result.statusCode, body: JSON.parse(result.body as string) as unknown };
}

describe('the origin check of every routed function', () => {
  beforeEach(() => {
    for (const store of stores) store.reset();
    secrets.resetHistory();
  });
  afterEach(() => {
    process.env[envName.originVerifySecretArn()] = TEST_ORIGIN_SECRET_ARN;
  });

  describe.each(routed)('%s', (_name, spec) => {
    it('answers 403 forbidden to a request without the origin header, touching no store and not reading the secret', async () => {
      expect(await call(spec.entry, request({}))).toEqual({ status: 403, body: { error: 'forbidden' } });
      expect(storeCalls()).toBe(0);
      expect(secretReads()).toBe(0);
    });

    it('answers 403 forbidden to a wrong origin secret, whatever its length, and touches no store', async () => {
      for (const wrong of ['', 'x', TEST_ORIGIN_SECRET.slice(0, -1), `${TEST_ORIGIN_SECRET}x`, TEST_ORIGIN_SECRET.toUpperCase()]) {
        expect(await call(spec.entry, request({ [originVerifyHeader]: wrong }))).toEqual({ status: 403, body: { error: 'forbidden' } });
      }
      expect(storeCalls()).toBe(0);
    });

    it("fails closed with a 500 when the function was deployed without the secret's ARN, touching no store", async () => {
      delete process.env[envName.originVerifySecretArn()];
      expect(await call(spec.entry, request({ [originVerifyHeader]: '' }))).toEqual({ status: 500, body: { error: 'internal_error' } });
      expect(await call(spec.entry, request(fromCloudFront()))).toEqual({ status: 500, body: { error: 'internal_error' } });
      expect(storeCalls()).toBe(0);
    });

    it('fails closed with a 500 when the secret cannot be read from Secrets Manager, touching no store', async () => {
      // An ARN of its own: the secret of the other tests is kept five minutes.
      process.env[envName.originVerifySecretArn()] = `${TEST_ORIGIN_SECRET_ARN}-unreadable-${spec.entry}`;
      expect(await call(spec.entry, request(fromCloudFront()))).toEqual({ status: 500, body: { error: 'internal_error' } });
      expect(storeCalls()).toBe(0);
    });

    it('lets a request with the origin secret through to the handler', async () => {
      const answer = await call(spec.entry, request(fromCloudFront()));
      // Not the origin check's refusal; a handler may refuse with a 403 of its own (cors-preflight's origin_not_allowed).
      expect(answer).not.toEqual({ status: 403, body: { error: 'forbidden' } });
    });
  });
});

describe('fromEdge', () => {
  const event = (headers: Record<string, string>) => ({ headers }) as unknown as APIGatewayProxyEventV2;

  it('accepts exactly the configured secret', () => {
    expect(fromEdge(event({ [originVerifyHeader]: 's3cret' }), 's3cret')).toBe(true);
    expect(fromEdge(event({ [originVerifyHeader]: 's3cre' }), 's3cret')).toBe(false);
    expect(fromEdge(event({ [originVerifyHeader]: 's3cret ' }), 's3cret')).toBe(false);
    expect(fromEdge(event({}), 's3cret')).toBe(false);
  });

  it('matches nothing when no secret is configured, not even an empty header', () => {
    expect(fromEdge(event({ [originVerifyHeader]: '' }), '')).toBe(false);
    expect(fromEdge(event({ [originVerifyHeader]: '' }), undefined)).toBe(false);
  });
});
