// POST /event end to end: real HTTP through the local edge, the handler, dynalite, s3rver and the
// SQS emulator. Every code of the interface's error table, the check order, the audit object,
// the cap and the behaviour while the object store is down.

import { gunzipSync, gzipSync } from 'node:zlib';
import type { Logger } from '@aws-lambda-powertools/logger';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import { EventClient, eventBatchRequest, type SignedRequest, signedRequest } from '../../client/event-client';
import { TenantStore } from '../../functions/adapters/tenant-store';
import { capCounterKeys } from '../../functions/domain/ingest/cap';
import { MAX_RAW_BODY_BYTES } from '../../functions/domain/ingest/event-api';
import { signBody } from '../../functions/domain/ingest/signature';
import { newAppKey, newCompanyKey } from '../../functions/domain/tenants/keys';
import { dynamoClient } from '../../functions/shared/clients';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { sleep } from '../support/wait-for';
import { credentialsOf, post, signedBytes, validEvent } from './ingest-support';

let stack: LocalStack;
let s3: S3Client;
let tenant: Tenant;
let logger: Logger;

beforeAll(async () => {
  // Suspensions below must be seen at once, not after the key cache's 30 s.
  process.env.KEY_CACHE_TTL_MS = '0';
  stack = await startLocalStack();
  // The handlers' logger, imported only now that the runtime has set Powertools' environment.
  ({ logger } = await import('../../functions/shared/observability'));
  s3 = new S3Client({ forcePathStyle: true });
  tenant = await createTenant({ plan: 'paid' });
});

afterAll(async () => {
  s3.destroy();
  await stack.stop();
});

const send = (request: SignedRequest) => post(stack.baseUrl, '/event', request);
const batchOf = (events: unknown[], sentAtMs = Date.now()) => ({ events, sent_at_ms: sentAtMs });
/** A request for `payload` signed with the tenant's secret, gzipped when asked. */
const signed = (payload: unknown, options: { gzip?: boolean; as?: Tenant } = {}) =>
  signedRequest(credentialsOf(options.as ?? tenant), payload, { gzip: options.gzip });
const rawRequest = (body: Buffer, headers: Record<string, string> = {}) => signedBytes(tenant, body, headers);
const without = (request: SignedRequest, name: string): SignedRequest => {
  const { [name]: _dropped, ...headers } = request.headers;
  return { headers, body: request.body };
};

async function auditObject(key: string): Promise<Record<string, any>[]> {
  const object = await s3.send(new GetObjectCommand({ Bucket: stack.endpoints.bucket, Key: key }));
  const text = gunzipSync(await object.Body!.transformToByteArray()).toString('utf8');
  return text
    .trimEnd()
    .split('\n')
    .map((line) => JSON.parse(line));
}

/** Holds back what the handlers log at ERROR (the runtime runs them in this process) so a test can read it. */
function captureErrors(): { lines: string[]; restore(): void } {
  const lines: string[] = [];
  const spy = jest.spyOn(logger, 'error').mockImplementation((...args: unknown[]) => void lines.push(JSON.stringify(args)));
  return { lines, restore: () => spy.mockRestore() };
}

/** The month's count over its shards; undefined while no shard has been written. */
async function monthCount(companyId: string): Promise<number | undefined> {
  const table = stack.endpoints.tables.counters;
  const { Responses } = await dynamoClient().send(
    new BatchGetCommand({
      RequestItems: { [table]: { Keys: capCounterKeys(companyId, Date.now()).map((pk) => ({ pk })), ConsistentRead: true } },
    }),
  );
  const items = Responses?.[table] ?? [];
  return items.length === 0 ? undefined : items.reduce((sum, item) => sum + Number(item.n), 0);
}

async function auditKeysOf(companyId: string): Promise<string[]> {
  const { Contents = [] } = await s3.send(new ListObjectsV2Command({ Bucket: stack.endpoints.bucket, Prefix: 'audit/' }));
  return Contents.map((object) => object.Key!).filter((key) => key.includes(`/${companyId}/`));
}

describe('POST /event answers', () => {
  it('200 with one result per event for a correctly signed batch', async () => {
    const events = [validEvent(), validEvent({ event_name: 'install', revenue_usd: undefined, platform: 'android' })];
    const { status, body } = await send(signed(batchOf(events)));
    expect(status).toBe(200);
    expect(body).toEqual({
      accepted: 2,
      rejected: 0,
      results: events.map((e) => ({ event_id: e.event_id, status: 'accepted' })),
      audit_key: expect.stringMatching(
        new RegExp(`^audit/\\d{4}/\\d{2}/\\d{2}/${tenant.company.company_id}/${tenant.app.app_id}/[0-9a-f]{64}\\.jsonl\\.gz$`),
      ),
    });
  });

  it.each(['x-service-company-key', 'x-service-app-key', 'x-service-signature'])('400 missing_auth_headers without %s', async (name) => {
    expect(await send(without(signed(batchOf([validEvent()])), name))).toEqual({ status: 400, body: { error: 'missing_auth_headers' } });
  });

  it('400 missing_auth_headers before looking at a body over 1 MiB', async () => {
    const huge = Buffer.alloc(MAX_RAW_BODY_BYTES + 1, 0x20);
    expect(await send(without(rawRequest(huge), 'x-service-signature'))).toEqual({ status: 400, body: { error: 'missing_auth_headers' } });
  });

  it('413 body_too_large over 1 MiB raw, even with unknown keys, and takes exactly 1 MiB', async () => {
    const huge = Buffer.alloc(MAX_RAW_BODY_BYTES + 1, 0x20);
    expect(await send(rawRequest(huge, { 'x-service-app-key': newAppKey() }))).toEqual({ status: 413, body: { error: 'body_too_large' } });

    const json = Buffer.from(JSON.stringify(batchOf([validEvent()])));
    const padded = Buffer.concat([json, Buffer.alloc(MAX_RAW_BODY_BYTES - json.length, 0x20)]);
    expect((await send(rawRequest(padded))).status).toBe(200);
  });

  it('400 empty_body, before the keys are looked up', async () => {
    expect(await send(rawRequest(Buffer.alloc(0)))).toEqual({ status: 400, body: { error: 'empty_body' } });
    expect(await send(rawRequest(Buffer.alloc(0), { 'x-service-app-key': newAppKey() }))).toEqual({
      status: 400,
      body: { error: 'empty_body' },
    });
  });

  it('401 unknown_app_key for a well-formed and for a malformed app key', async () => {
    const request = signed(batchOf([validEvent()]));
    for (const appKey of [newAppKey(), 'app_live_nope', 'x'.repeat(3000)]) {
      expect(await send({ ...request, headers: { ...request.headers, 'x-service-app-key': appKey } })).toEqual({
        status: 401,
        body: { error: 'unknown_app_key' },
      });
    }
  });

  it('401 unknown_company_key', async () => {
    const request = signed(batchOf([validEvent()]));
    expect(await send({ ...request, headers: { ...request.headers, 'x-service-company-key': newCompanyKey() } })).toEqual({
      status: 401,
      body: { error: 'unknown_company_key' },
    });
  });

  it("401 app_company_mismatch for another company's app", async () => {
    const other = await createTenant({ plan: 'paid' });
    const request = signed(batchOf([validEvent()]));
    expect(await send({ ...request, headers: { ...request.headers, 'x-service-company-key': other.company.company_key } })).toEqual({
      status: 401,
      body: { error: 'app_company_mismatch' },
    });
  });

  it('401 company_suspended, and 200 again once resumed', async () => {
    const suspended = await createTenant({ plan: 'paid' });
    const store = new TenantStore(stack.endpoints.tables.tenants);
    const request = signed(batchOf([validEvent()]), { as: suspended });
    expect((await send(request)).status).toBe(200);
    await store.setCompanySuspended(suspended.company.company_key, true);
    expect(await send(request)).toEqual({ status: 401, body: { error: 'company_suspended' } });
    await store.setCompanySuspended(suspended.company.company_key, false);
    expect((await send(request)).status).toBe(200);
  });

  it('401 bad_signature for a wrong secret, a malformed signature header and the right signature in upper-case hex', async () => {
    const request = signed(batchOf([validEvent()]));
    const right = request.headers['x-service-signature'];
    for (const signature of [signBody('wrong-secret', request.body), 'not-a-signature', right.slice(1), right.toUpperCase()]) {
      expect(await send({ ...request, headers: { ...request.headers, 'x-service-signature': signature } })).toEqual({
        status: 401,
        body: { error: 'bad_signature' },
      });
    }
  });

  it('401 bad_signature for a gzip batch signed over its decompressed bytes; 200 when signed over the compressed bytes', async () => {
    const json = Buffer.from(JSON.stringify(batchOf(Array.from({ length: 12 }, () => validEvent()))));
    const gz = gzipSync(json);
    const overDecompressed = rawRequest(gz, {
      'content-encoding': 'gzip',
      'x-service-signature': signBody(tenant.app.signing_secret, json),
    });
    expect(await send(overDecompressed)).toEqual({ status: 401, body: { error: 'bad_signature' } });
    const overCompressed = rawRequest(gz, { 'content-encoding': 'gzip' });
    expect((await send(overCompressed)).body).toMatchObject({ accepted: 12, rejected: 0 });
  });

  it('415 unsupported_content_encoding for br, after the signature', async () => {
    const body = Buffer.from(JSON.stringify(batchOf([validEvent()])));
    expect(await send(rawRequest(body, { 'content-encoding': 'br' }))).toEqual({
      status: 415,
      body: { error: 'unsupported_content_encoding' },
    });
    expect(await send(rawRequest(body, { 'content-encoding': 'br', 'x-service-signature': '0'.repeat(64) }))).toEqual({
      status: 401,
      body: { error: 'bad_signature' },
    });
  });

  it('400 bad_gzip for corrupt gzip, but 401 bad_signature when it is also badly signed', async () => {
    const corrupt = gzipSync(Buffer.from(JSON.stringify(batchOf([validEvent()]))));
    corrupt[corrupt.length - 6] ^= 0xff;
    expect(await send(rawRequest(corrupt, { 'content-encoding': 'gzip' }))).toEqual({ status: 400, body: { error: 'bad_gzip' } });
    expect(await send(rawRequest(corrupt, { 'content-encoding': 'gzip', 'x-service-signature': signBody('nope', corrupt) }))).toEqual({
      status: 401,
      body: { error: 'bad_signature' },
    });
  });

  it('400 bad_gzip for a gzip batch followed by a zero byte and garbage, zero padding or garbage; 200 for two members', async () => {
    const member = gzipSync(Buffer.from(JSON.stringify(batchOf([validEvent()]))));
    for (const trailing of [Buffer.from('\0garbage'), Buffer.alloc(4), Buffer.from('garbage')]) {
      expect(await send(rawRequest(Buffer.concat([member, trailing]), { 'content-encoding': 'gzip' }))).toEqual({
        status: 400,
        body: { error: 'bad_gzip' },
      });
    }
    // One JSON batch cut in two members inflates as one stream.
    const json = Buffer.from(JSON.stringify(batchOf([validEvent()])));
    const members = Buffer.concat([gzipSync(json.subarray(0, 20)), gzipSync(json.subarray(20))]);
    expect((await send(rawRequest(members, { 'content-encoding': 'gzip' }))).body).toMatchObject({ accepted: 1, rejected: 0 });
  });

  it('413 decompressed_too_large for a body that inflates past 8 MiB', async () => {
    const gz = gzipSync(Buffer.alloc(9 * 1024 * 1024, 0x20));
    expect(await send(rawRequest(gz, { 'content-encoding': 'gzip' }))).toEqual({ status: 413, body: { error: 'decompressed_too_large' } });
  });

  it('400 bad_json for unparseable JSON and for invalid UTF-8', async () => {
    const invalidJson = Buffer.from('{"events": [');
    expect(await send(rawRequest(invalidJson))).toEqual({ status: 400, body: { error: 'bad_json' } });
    expect(await send(rawRequest(gzipSync(invalidJson), { 'content-encoding': 'gzip' }))).toEqual({
      status: 400,
      body: { error: 'bad_json' },
    });

    // Invalid UTF-8 reaches the function intact only inside a body API Gateway passes as base64
    // (compressed or of a binary type); in a text body it would be replaced before the handler.
    const invalidUtf8 = Buffer.concat([
      Buffer.from('{"events":[{"event_id":"'),
      Buffer.from([0xff, 0xfe]),
      Buffer.from('"}],"sent_at_ms":1}'),
    ]);
    expect(await send(rawRequest(gzipSync(invalidUtf8), { 'content-encoding': 'gzip' }))).toEqual({
      status: 400,
      body: { error: 'bad_json' },
    });
    expect(await send(rawRequest(invalidUtf8, { 'content-type': 'application/octet-stream' }))).toEqual({
      status: 400,
      body: { error: 'bad_json' },
    });
  });

  it.each([
    ['an array, naming no field', [validEvent()], {}],
    ['no events', { sent_at_ms: Date.now() }, { field: 'events' }],
    ['an empty events array', batchOf([]), { field: 'events' }],
    ['1,001 events', batchOf(Array.from({ length: 1001 }, () => ({}))), { field: 'events' }],
    ['no sent_at_ms', { events: [validEvent()] }, { field: 'sent_at_ms' }],
    ['a string sent_at_ms', { events: [validEvent()], sent_at_ms: String(Date.now()) }, { field: 'sent_at_ms' }],
    ['a fractional sent_at_ms', { events: [validEvent()], sent_at_ms: 1.5 }, { field: 'sent_at_ms' }],
  ])('400 bad_batch_shape for %s', async (_name, payload, hint) => {
    expect(await send(signed(payload))).toEqual({ status: 400, body: { error: 'bad_batch_shape', ...hint } });
  });

  it('tells a batch without sent_at_ms from one with no events by the field it names, gzipped or not', async () => {
    for (const gzip of [false, true]) {
      const withoutSentAt = await send(signed({ events: [validEvent()] }, { gzip }));
      const withoutEvents = await send(signed(batchOf([]), { gzip }));
      expect([withoutSentAt, withoutEvents]).toEqual([
        { status: 400, body: { error: 'bad_batch_shape', field: 'sent_at_ms' } },
        { status: 400, body: { error: 'bad_batch_shape', field: 'events' } },
      ]);
    }
  });

  it('200 naming sent_at_ms on every event of a batch stamped in seconds, and ts_ms on the event whose own time is wrong', async () => {
    const now = Date.now();
    const events = [validEvent({}, now - 60_000), validEvent({}, now), validEvent({}, now - 100 * 24 * 60 * 60 * 1000)];
    const answer = await send(signed(batchOf(events, Math.floor(now / 1000))));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatchObject({ accepted: 0, rejected: 3 });
    expect(answer.body.results).toEqual([
      { event_id: events[0].event_id, status: 'rejected', reason: 'bad_timestamp', field: 'sent_at_ms' },
      { event_id: events[1].event_id, status: 'rejected', reason: 'bad_timestamp', field: 'sent_at_ms' },
      { event_id: events[2].event_id, status: 'rejected', reason: 'bad_timestamp', field: 'ts_ms' },
    ]);
  });

  it('200 for a binary-typed body, which API Gateway hands over base64-encoded', async () => {
    const body = Buffer.from(JSON.stringify(batchOf([validEvent()])));
    expect((await send(rawRequest(body, { 'content-type': 'application/octet-stream' }))).body).toMatchObject({ accepted: 1 });
  });
});

describe('a batch of 100 with 3 bad events', () => {
  it('answers 200 with 97 accepted and 3 rejected with their reasons, and stores 100 audit lines', async () => {
    const events: unknown[] = Array.from({ length: 100 }, () => validEvent({ device_id: 'IDFV-SECRET-1' }));
    events[10] = validEvent({ event_name: 'bad name!' });
    events[50] = validEvent({ ts_ms: Date.now() + 2 * 60 * 60 * 1000 });
    events[99] = { ...(events[0] as object) };
    const client = new EventClient({ ...credentialsOf(tenant), baseUrl: stack.baseUrl, sdkVersion: 'ios/3.2.1' });

    const result = await client.sendEvents(events as never[]);
    expect(result.accepted).toBe(97);
    expect(result.rejected).toBe(3);
    expect(result.results).toHaveLength(100);
    expect(result.results.filter((r) => r.status === 'rejected')).toEqual([
      { event_id: (events[10] as { event_id: string }).event_id, status: 'rejected', reason: 'bad_event_name', field: 'event_name' },
      { event_id: (events[50] as { event_id: string }).event_id, status: 'rejected', reason: 'bad_timestamp', field: 'ts_ms' },
      { event_id: (events[0] as { event_id: string }).event_id, status: 'rejected', reason: 'bad_event_id', field: 'event_id' },
    ]);

    const lines = await auditObject(result.audit_key);
    expect(lines).toHaveLength(100);
    expect(lines.map((line) => line.index)).toEqual(Array.from({ length: 100 }, (_, i) => i));
    expect(lines.filter((line) => line.status === 'accepted')).toHaveLength(97);
    expect(lines[10]).toMatchObject({ status: 'rejected', reason: 'bad_event_name', sdk_version: 'ios/3.2.1', client_ip: '127.0.0.1' });
    expect(lines[0]).toMatchObject({
      status: 'accepted',
      received_ms: expect.any(Number),
      corrected_ts: expect.any(Number),
      install_uuid: (events[0] as { install_uuid: string }).install_uuid,
      device_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    const { device_id: _dropped, ...stored } = events[1] as Record<string, unknown>;
    expect(lines[1].event).toEqual(stored);
    expect(JSON.stringify(lines)).not.toContain('IDFV-SECRET-1');
  });
});

describe('the free-tier cap', () => {
  it('takes a batch that starts under the cap whole, then answers 429 cap_exceeded and writes nothing', async () => {
    const capped = await createTenant({ plan: 'free', monthlyCap: 5 });
    const request = (n: number) => signed(batchOf(Array.from({ length: n }, () => validEvent())), { as: capped });

    expect((await send(request(3))).body).toMatchObject({ accepted: 3 });
    expect(await monthCount(capped.company.company_id)).toBe(3);
    expect((await send(request(4))).body).toMatchObject({ accepted: 4 });
    expect(await monthCount(capped.company.company_id)).toBe(7);
    const keys = await auditKeysOf(capped.company.company_id);

    expect(await send(request(1))).toEqual({ status: 429, body: { error: 'cap_exceeded' } });
    expect(await monthCount(capped.company.company_id)).toBe(7);
    expect(await auditKeysOf(capped.company.company_id)).toEqual(keys);
  });

  it('answers 429 once exactly the cap has been accepted', async () => {
    const capped = await createTenant({ plan: 'free', monthlyCap: 5 });
    const client = new EventClient({ ...credentialsOf(capped), baseUrl: stack.baseUrl, retry: { maxAttempts: 1 } });
    expect((await client.sendEvents(Array.from({ length: 5 }, () => validEvent()))).accepted).toBe(5);
    await expect(client.sendEvents([validEvent()])).rejects.toMatchObject({ status: 429, code: 'cap_exceeded' });
  });

  it('counts rejected events against nothing', async () => {
    const capped = await createTenant({ plan: 'free', monthlyCap: 5 });
    const events = [validEvent(), validEvent({ platform: 'web' }), 'junk'];
    expect((await send(signed(batchOf(events), { as: capped }))).body).toMatchObject({ accepted: 1, rejected: 2 });
    expect(await monthCount(capped.company.company_id)).toBe(1);
  });
});

describe('with the object store down', () => {
  it('answers 503 audit_write_failed and counts nothing; the retried batch is then accepted and counted once', async () => {
    const capped = await createTenant({ plan: 'free', monthlyCap: 1000 });
    const request = eventBatchRequest(credentialsOf(capped), batchOf(Array.from({ length: 20 }, () => validEvent())));

    // The earlier tests' batches aggregated first: an aggregation in flight when the store stops
    // would log its own failure beside the one this test reads.
    await stack.pollers.drain();
    const logged = captureErrors();
    await stack.emulators.stopS3();
    try {
      expect(await send(request)).toEqual({ status: 503, body: { error: 'audit_write_failed' } });
      // Counted before the audit write, taken off again when it failed.
      expect(await monthCount(capped.company.company_id)).toBe(0);
    } finally {
      logged.restore();
      await stack.emulators.startS3();
    }
    // The failure is logged with its step and ids, and with nothing secret.
    expect(JSON.parse(logged.lines[0])).toEqual([
      'batch not taken',
      { step: 'audit_write', company_id: capped.company.company_id, app_id: capped.app.app_id, error: expect.any(Object) },
    ]);
    for (const secret of [
      capped.app.signing_secret,
      capped.company.company_key,
      capped.app.app_key,
      request.headers['x-service-signature'],
    ]) {
      expect(logged.lines.join('\n')).not.toContain(secret);
    }

    const retried = await send(request);
    expect(retried).toMatchObject({ status: 200, body: { accepted: 20, rejected: 0 } });
    expect(await monthCount(capped.company.company_id)).toBe(20);
    expect(await auditObject(retried.body.audit_key)).toHaveLength(20);

    // The client never saw the 200 and sends the same bytes again: same audit object, no second count.
    const again = await send(request);
    expect(again).toMatchObject({ status: 200, body: { accepted: 20, audit_key: retried.body.audit_key } });
    expect(await monthCount(capped.company.company_id)).toBe(20);
  });

  it('lets the typed client ride out the outage with its retries', async () => {
    const client = new EventClient({
      ...credentialsOf(tenant),
      baseUrl: stack.baseUrl,
      retry: { maxAttempts: 8, baseDelayMs: 100, maxDelayMs: 400 },
    });
    // The earlier tests' batches aggregated first: an aggregation in flight when the store stops
    // would log its own failure beside the one this test reads.
    await stack.pollers.drain();
    const logged = captureErrors();
    await stack.emulators.stopS3();
    // A 500 ms outage, timed: the client's retries (100-400 ms apart) must meet it and outlast it.
    const restart = sleep(500).then(() => stack.emulators.startS3());
    try {
      const result = await client.sendEvents(Array.from({ length: 3 }, () => validEvent()));
      expect(result.accepted).toBe(3);
    } finally {
      await restart;
      logged.restore();
    }
  });
});
