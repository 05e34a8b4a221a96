import { gzipSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { BatchGetCommand, DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { streamName } from '../../../functions/domain/raw-data/stream-objects';
import { hashServerKey } from '../../../functions/domain/tenants/keys';
import { envName, tables } from '../../../lib/manifest';
import { fromCloudFront } from '../../support/edge';
import { mockOriginSecret } from '../../support/origin-secret';

// The handler as Lambda runs it, its AWS clients mocked: what it asks of each store, and its 503s.
mockOriginSecret();
for (const name of Object.keys(tables)) process.env[envName.table(name)] = name;
process.env[envName.exportBucket()] = 'exports-bucket';

const db = mockClient(DynamoDBDocumentClient);
const s3 = mockClient(S3Client);
const KEY = `srv_${'e'.repeat(48)}`;
const outage = Object.assign(new Error('Service unavailable'), { name: 'InternalServerError' });
const NOW = Date.now();
const NAME = streamName({ openedMs: NOW - 60_000, lane: 3, seq: 7 });

const request = (query: Record<string, string>, key: string): APIGatewayProxyEventV2 =>
  ({
    rawPath: '/api/v1/stream/events',
    headers: { ...fromCloudFront(), authorization: `Bearer ${key}` },
    queryStringParameters: query,
    isBase64Encoded: false,
    requestContext: { http: { method: 'GET', path: '/api/v1/stream/events', sourceIp: '192.0.2.1' } },
  }) as unknown as APIGatewayProxyEventV2;
const context = { functionName: 'test', awsRequestId: 'r' } as Context;

async function call(query: Record<string, string> = {}, key = KEY) {
  const { handler } = await import('../../../functions/stream-events');
  const result = (await handler(request(query, key), context)) as APIGatewayProxyStructuredResultV2;
  return { status: result.statusCode, headers: result.headers, body: JSON.parse(result.body as string) as Record<string, unknown> };
}

/** What the adapter reads of a GetObject answer's body: its bytes. */
const body = (lines: unknown[]) => {
  const bytes = gzipSync(lines.map((line) => JSON.stringify(line)).join('\n'));
  return { transformToByteArray: async () => new Uint8Array(bytes) };
};
const event = { event_id: 'e1', event_name: 'install', install_uuid: 'u', ts_ms: 1, corrected_ts: 1, received_ms: 2 };

describe('GET /api/v1/stream/events, its stores mocked', () => {
  beforeEach(() => {
    db.reset();
    s3.reset();
    db.on(GetCommand).resolves({
      Item: { pk: `server_key#${hashServerKey(KEY)}`, key_hash: hashServerKey(KEY), app_id: 'app_1', revoked: false },
    });
    db.on(BatchGetCommand).resolves({ Responses: { ledger: [{ pk: 'lane#4', seq: 2, applied: 2 }] } });
    s3.on(ListObjectsV2Command).resolves({ Contents: [{ Key: `stream/app_1/${NAME}`, Size: 40 }], IsTruncated: false });
    s3.on(GetObjectCommand).callsFake(async () => ({ Body: body([{ o: 'tok', event, install: { first: true } }]) as never }));
  });

  it("reads the 64 lanes in one consistent BatchGetItem, lists the app's prefix once and serves the lines' events", async () => {
    const answer = await call({ limit: '10' });
    expect(answer.status).toBe(200);
    expect(answer.headers).toMatchObject({ 'cache-control': 'no-store' });
    expect(answer.body).toMatchObject({ events: [{ event_id: 'e1', attribution: null }], has_more: false });
    expect(JSON.stringify(answer.body)).not.toMatch(/"o":|"install":|tok/);
    const [batch] = db.commandCalls(BatchGetCommand);
    const read = batch!.args[0].input.RequestItems!.ledger!;
    expect(read.ConsistentRead).toBe(true);
    expect(read.Keys).toEqual(Array.from({ length: 64 }, (_, n) => ({ pk: `lane#${n}` })));
    expect(db.commandCalls(BatchGetCommand)).toHaveLength(1);
    expect(s3.commandCalls(ListObjectsV2Command).map((c) => c.args[0].input)).toEqual([
      { Bucket: 'exports-bucket', Prefix: 'stream/app_1/', MaxKeys: 1000 },
    ]);
    expect(s3.commandCalls(GetObjectCommand).map((c) => c.args[0].input)).toEqual([
      { Bucket: 'exports-bucket', Key: `stream/app_1/${NAME}` },
    ]);
  });

  it('lists from just after the object its cursor names', async () => {
    const first = await call();
    s3.resetHistory();
    s3.on(ListObjectsV2Command).resolves({ Contents: [], IsTruncated: false });
    const poll = await call({ cursor: first.body.next_cursor as string });
    expect(poll.body).toEqual({ events: [], next_cursor: first.body.next_cursor, has_more: false });
    expect(s3.commandCalls(ListObjectsV2Command).map((c) => c.args[0].input)).toEqual([
      { Bucket: 'exports-bucket', Prefix: 'stream/app_1/', MaxKeys: 1000, StartAfter: `stream/app_1/${NAME}` },
    ]);
    expect(s3.commandCalls(GetObjectCommand).map((c) => c.args[0].input)).toEqual([]);
  });

  it('answers a retryable 503 store_unavailable when the key look-up fails, never a 500', async () => {
    // A key of its own: the handler keeps keys it has looked up (as the reports do).
    db.on(GetCommand).rejects(outage);
    const answer = await call({}, `srv_${'f'.repeat(48)}`);
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 503, body: { error: 'store_unavailable' } });
  });

  it.each([
    ['the lanes cannot be read', () => db.on(BatchGetCommand).rejects(outage)],
    ['the lanes stay unprocessed', () => db.on(BatchGetCommand).resolves({ UnprocessedKeys: { ledger: { Keys: [{ pk: 'lane#0' }] } } })],
    ['the LIST fails', () => s3.on(ListObjectsV2Command).rejects(outage)],
    ['an object cannot be read', () => s3.on(GetObjectCommand).rejects(outage)],
  ])('answers a retryable 503 store_unavailable when %s, never a 500', async (_name, fail) => {
    fail();
    const answer = await call();
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 503, body: { error: 'store_unavailable' } });
  });

  it('answers the documented 400s without reading a lane or an object', async () => {
    expect((await call({ limit: '1001' })).body).toEqual({ error: 'invalid_limit' });
    expect((await call({ cursor: 'nope!' })).body).toEqual({ error: 'invalid_cursor' });
    expect((await call({ since_ms: '1e3' })).body).toEqual({ error: 'invalid_since_until' });
    expect(db.commandCalls(BatchGetCommand)).toHaveLength(0);
    expect(s3.calls()).toHaveLength(0);
  });
});
