// POST /privacy/delete end to end against the emulators: the shared authentication, the body
// rules, the receipt and the queued request, and what happens when the queue cannot take it.

import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { DeleteMessageCommand, type Message, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import fc from 'fast-check';
import { EventClient, type SignedRequest, signedRequest } from '../../client/event-client';
import { TenantStore } from '../../functions/adapters/tenant-store';
import { EVENT_API_ERRORS, MAX_RAW_BODY_BYTES } from '../../functions/domain/ingest/event-api';
import { signBody } from '../../functions/domain/ingest/signature';
import { installHash } from '../../functions/domain/privacy/privacy';
import { newAppKey, newCompanyKey } from '../../functions/domain/tenants/keys';
import { dynamoClient } from '../../functions/shared/clients';
import type { HttpEvent, HttpResult } from '../../functions/shared/http';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { apiEvent, credentialsOf, lambdaContext, post, signedBytes } from './ingest-support';

type Handler = (event: HttpEvent, context: Context) => Promise<HttpResult>;

let stack: LocalStack;
let sqs: SQSClient;
let tenant: Tenant;

beforeAll(async () => {
  process.env.KEY_CACHE_TTL_MS = '0';
  stack = await startLocalStack();
  sqs = new SQSClient({});
  tenant = await createTenant({ plan: 'paid' });
});

afterAll(async () => {
  sqs.destroy();
  await stack.stop();
});

const send = (request: SignedRequest) => post(stack.baseUrl, '/privacy/delete', request);
const signed = (payload: unknown, options: { gzip?: boolean; as?: Tenant } = {}) =>
  signedRequest(credentialsOf(options.as ?? tenant), payload, { gzip: options.gzip });
const rawRequest = (body: Buffer, headers: Record<string, string> = {}) => signedBytes(tenant, body, headers);

/** Takes the queued request for an install off the privacy queue (other tests queue theirs too). */
async function queuedFor(installUuid: string): Promise<Record<string, unknown> | undefined> {
  for (let poll = 0; poll < 5; poll++) {
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: stack.endpoints.queues.privacy,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 1,
        VisibilityTimeout: 0,
      }),
    );
    const found = Messages.find((message: Message) => JSON.parse(message.Body!).install_uuid === installUuid);
    if (found) {
      await sqs.send(new DeleteMessageCommand({ QueueUrl: stack.endpoints.queues.privacy, ReceiptHandle: found.ReceiptHandle }));
      return JSON.parse(found.Body!);
    }
  }
  return undefined;
}

async function receiptsOf(appId: string): Promise<Record<string, unknown>[]> {
  const { Items = [] } = await dynamoClient().send(
    new ScanCommand({
      TableName: stack.endpoints.tables.privacy_requests,
      FilterExpression: 'app_id = :app',
      ExpressionAttributeValues: { ':app': appId },
    }),
  );
  return Items;
}

describe('POST /privacy/delete', () => {
  it('answers 202, queues the request and stores a receipt naming the install only by its hash', async () => {
    const installUuid = randomUUID().toUpperCase();
    const client = new EventClient({ ...credentialsOf(tenant), baseUrl: stack.baseUrl });
    await expect(client.deleteInstall(installUuid)).resolves.toEqual({ ok: true, queued: true });

    const message = await queuedFor(installUuid.toLowerCase());
    expect(message).toEqual({
      version: 1,
      request_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      app_id: tenant.app.app_id,
      company_id: tenant.company.company_id,
      install_uuid: installUuid.toLowerCase(),
    });
    const { Item } = await dynamoClient().send(
      new GetCommand({
        TableName: stack.endpoints.tables.privacy_requests,
        Key: { request_id: message!.request_id },
        ConsistentRead: true,
      }),
    );
    expect(Item).toEqual({
      request_id: message!.request_id,
      app_id: tenant.app.app_id,
      company_id: tenant.company.company_id,
      install_hash: installHash(installUuid),
      app_install: `${tenant.app.app_id}#${installHash(installUuid)}`,
      received_ms: expect.any(Number),
      state: 'queued',
    });
  });

  it('takes a gzip body signed over its compressed bytes', async () => {
    const installUuid = randomUUID();
    expect(await send(signed({ install_uuid: installUuid }, { gzip: true }))).toEqual({ status: 202, body: { ok: true, queued: true } });
    expect(await queuedFor(installUuid)).toMatchObject({ install_uuid: installUuid });
  });

  it.each([
    ['no install_uuid', {}],
    ['a numeric install_uuid', { install_uuid: 42 }],
    ['an install_uuid that is not a UUID', { install_uuid: 'device-123' }],
  ])('answers 400 bad_install_uuid for %s', async (_name, payload) => {
    expect(await send(signed(payload))).toEqual({ status: 400, body: { error: 'bad_install_uuid' } });
  });

  it('answers 400 bad_json for unparseable JSON, a body that is not an object, and invalid UTF-8', async () => {
    expect(await send(rawRequest(Buffer.from('{"install_uuid":')))).toEqual({ status: 400, body: { error: 'bad_json' } });
    expect(await send(signed([randomUUID()]))).toEqual({ status: 400, body: { error: 'bad_json' } });
    expect(await send(signed('text'))).toEqual({ status: 400, body: { error: 'bad_json' } });
    const invalidUtf8 = Buffer.concat([Buffer.from('{"install_uuid":"'), Buffer.from([0xc3, 0x28]), Buffer.from('"}')]);
    expect(await send(rawRequest(gzipSync(invalidUtf8), { 'content-encoding': 'gzip' }))).toEqual({
      status: 400,
      body: { error: 'bad_json' },
    });
  });

  it('refuses what the event API refuses, with the same codes and in the same order', async () => {
    const body = Buffer.from(JSON.stringify({ install_uuid: randomUUID() }));
    const ok = rawRequest(body);
    const other = await createTenant({ plan: 'paid' });
    const with_ = (headers: Record<string, string>, raw = body) => rawRequest(raw, headers);
    const { 'x-service-signature': _s, ...unsigned } = ok.headers;

    expect(await send({ headers: unsigned, body })).toEqual({ status: 400, body: { error: 'missing_auth_headers' } });
    expect(await send(with_({}, Buffer.alloc(MAX_RAW_BODY_BYTES + 1, 0x20)))).toEqual({ status: 413, body: { error: 'body_too_large' } });
    expect(await send(with_({}, Buffer.alloc(0)))).toEqual({ status: 400, body: { error: 'empty_body' } });
    expect(await send(with_({ 'x-service-app-key': newAppKey() }))).toEqual({ status: 401, body: { error: 'unknown_app_key' } });
    expect(await send(with_({ 'x-service-company-key': newCompanyKey() }))).toEqual({
      status: 401,
      body: { error: 'unknown_company_key' },
    });
    expect(await send(with_({ 'x-service-company-key': other.company.company_key }))).toEqual({
      status: 401,
      body: { error: 'app_company_mismatch' },
    });
    expect(await send(with_({ 'x-service-signature': signBody('wrong', body) }))).toEqual({
      status: 401,
      body: { error: 'bad_signature' },
    });
    expect(await send(with_({ 'x-service-signature': ok.headers['x-service-signature'].toUpperCase() }))).toEqual({
      status: 401,
      body: { error: 'bad_signature' },
    });
    expect(await send(with_({ 'content-encoding': 'br' }))).toEqual({ status: 415, body: { error: 'unsupported_content_encoding' } });
    const corrupt = gzipSync(body).subarray(0, 20);
    expect(await send(with_({ 'content-encoding': 'gzip' }, corrupt))).toEqual({ status: 400, body: { error: 'bad_gzip' } });
    const inflating = gzipSync(Buffer.alloc(9 * 1024 * 1024, 0x20));
    expect(await send(with_({ 'content-encoding': 'gzip' }, inflating))).toEqual({
      status: 413,
      body: { error: 'decompressed_too_large' },
    });

    await new TenantStore(stack.endpoints.tables.tenants).setCompanySuspended(other.company.company_key, true);
    expect(await send(signed({ install_uuid: randomUUID() }, { as: other }))).toEqual({
      status: 401,
      body: { error: 'company_suspended' },
    });
  });

  it('answers 503 queue_write_failed and keeps no receipt when the queue cannot take the request', async () => {
    const failing = await createTenant({ plan: 'paid' });
    const saved = { queue: process.env.QUEUE_PRIVACY_URL, level: process.env.POWERTOOLS_LOG_LEVEL };
    process.env.QUEUE_PRIVACY_URL = `${stack.endpoints.sqs}/000000000000/no-such-queue`;
    process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
    let handler: Handler | undefined;
    jest.isolateModules(() => {
      handler = (require('../../functions/privacy-request') as { handler: Handler }).handler;
    });
    process.env.QUEUE_PRIVACY_URL = saved.queue;
    process.env.POWERTOOLS_LOG_LEVEL = saved.level;

    const { headers, body } = signed({ install_uuid: randomUUID() }, { as: failing });
    const result = await handler!(apiEvent('/privacy/delete', headers, body), lambdaContext('privacy-request'));
    expect(result.statusCode).toBe(503);
    expect(JSON.parse(result.body!)).toEqual({ error: 'queue_write_failed' });
    expect(await receiptsOf(failing.app.app_id)).toEqual([]);
  });

  it('answers any body with a documented status and code, never a 500', async () => {
    const { handler } = (await import('../../functions/privacy-request')) as { handler: Handler };
    const body = fc.oneof(
      fc.record({ install_uuid: fc.oneof(fc.uuid(), fc.string(), fc.jsonValue()) }).map((value) => Buffer.from(JSON.stringify(value))),
      fc.jsonValue().map((value) => Buffer.from(JSON.stringify(value) ?? '')),
      fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)),
    );
    await fc.assert(
      fc.asyncProperty(body, fc.boolean(), async (raw, gzip) => {
        const bytes = gzip ? gzipSync(raw) : raw;
        const headers: Record<string, string> = {
          ...signed({}).headers,
          'x-service-signature': signBody(tenant.app.signing_secret, bytes),
        };
        if (gzip) headers['content-encoding'] = 'gzip';
        const result = await handler(apiEvent('/privacy/delete', headers, bytes), lambdaContext('privacy-request'));
        const answer = JSON.parse(result.body!);
        if (result.statusCode === 202) {
          expect(answer).toEqual({ ok: true, queued: true });
          return;
        }
        expect(Object.keys(answer)).toEqual(['error']);
        expect(['empty_body', 'bad_json', 'bad_install_uuid']).toContain(answer.error);
        expect(EVENT_API_ERRORS[answer.error as keyof typeof EVENT_API_ERRORS]).toBe(result.statusCode);
      }),
      { numRuns: 300 },
    );
  });
});
