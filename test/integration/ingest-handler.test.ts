// The ingest handler called directly with API Gateway events (fast enough for thousands of
// cases) against the emulators: the hand-off message, a failing hand-off, and a property-based
// test that no input, however broken, gets anything but a documented answer.

import { randomUUID } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { CreateQueueCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { BatchGetCommand } from '@aws-sdk/lib-dynamodb';
import type { Context } from 'aws-lambda';
import fc from 'fast-check';
import { TenantStore } from '../../functions/adapters/tenant-store';
import { capCounterKeys } from '../../functions/domain/ingest/cap';
import { BATCH_FIELDS, EVENT_API_ERRORS } from '../../functions/domain/ingest/event-api';
import { EVENT_FAULT_FIELDS, EVENT_RULES } from '../../functions/domain/ingest/event-validation';
import { signBody } from '../../functions/domain/ingest/signature';
import { newAppKey, newCompanyKey } from '../../functions/domain/tenants/keys';
import { dynamoClient } from '../../functions/shared/clients';
import type { HttpEvent, HttpResult } from '../../functions/shared/http';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { apiEvent, lambdaContext, validEvent } from './ingest-support';

type Handler = (event: HttpEvent, context: Context) => Promise<HttpResult>;

let stack: LocalStack;
let sqs: SQSClient;
let handler: Handler;
let rawBody: (event: HttpEvent) => Buffer;
let aggregationUrl: string;
const tenants: Record<'valid' | 'suspended' | 'capped' | 'other', Tenant> = {} as never;

beforeAll(async () => {
  stack = await startLocalStack();
  sqs = new SQSClient({});
  // A queue of this test's own, so no consumer of the runtime takes the hand-off messages first.
  ({ QueueUrl: aggregationUrl } = (await sqs.send(new CreateQueueCommand({ QueueName: `ingest-handler-${Date.now()}` }))) as {
    QueueUrl: string;
  });
  process.env.QUEUE_AGGREGATION_URL = aggregationUrl;
  // Loaded only now, after the runtime has set the environment the handler reads at cold start
  // (resource names, and Powertools' level and metrics switches).
  ({ handler } = (await import('../../functions/ingest')) as { handler: Handler });
  ({ rawBody } = await import('../../functions/shared/http'));

  tenants.valid = await createTenant({ plan: 'paid' });
  tenants.other = await createTenant({ plan: 'paid' });
  tenants.capped = await createTenant({ plan: 'free', monthlyCap: 1 });
  tenants.suspended = await createTenant({ plan: 'paid' });
  await new TenantStore(stack.endpoints.tables.tenants).setCompanySuspended(tenants.suspended.company.company_key, true);
});

afterAll(async () => {
  sqs.destroy();
  await stack.stop();
});

function signedEvent(tenant: Tenant, body: Buffer, headers: Record<string, string> = {}): HttpEvent {
  return apiEvent(
    '/event',
    {
      'content-type': 'application/json',
      'x-service-company-key': tenant.company.company_key,
      'x-service-app-key': tenant.app.app_key,
      'x-service-signature': signBody(tenant.app.signing_secret, body),
      ...headers,
    },
    body,
  );
}

const call = (event: HttpEvent) => handler(event, lambdaContext('ingest'));
const bodyOf = (result: HttpResult) => JSON.parse(result.body ?? 'null');

describe('the hand-off', () => {
  it('puts one message on the aggregation queue naming the audit object, the app and the counts', async () => {
    const events = [validEvent(), validEvent({ platform: 'web' })];
    const result = await call(signedEvent(tenants.valid, Buffer.from(JSON.stringify({ events, sent_at_ms: Date.now() }))));
    expect(result.statusCode).toBe(200);

    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: aggregationUrl, WaitTimeSeconds: 1 }));
    expect(Messages).toHaveLength(1);
    expect(JSON.parse(Messages[0].Body!)).toEqual({
      version: 1,
      bucket: stack.endpoints.bucket,
      audit_key: bodyOf(result).audit_key,
      company_id: tenants.valid.company.company_id,
      app_id: tenants.valid.app.app_id,
      accepted: 1,
      rejected: 1,
      received_ms: expect.any(Number),
      // A company without a cap: the aggregator adds the object's events to its month.
      meter: true,
    });
  });

  it('answers 503 audit_write_failed and counts nothing when the hand-off fails', async () => {
    const tenant = await createTenant({ plan: 'free', monthlyCap: 100 });
    const saved = process.env.QUEUE_AGGREGATION_URL;
    const savedLevel = process.env.POWERTOOLS_LOG_LEVEL;
    process.env.QUEUE_AGGREGATION_URL = `${stack.endpoints.sqs}/000000000000/no-such-queue`;
    process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
    let broken: Handler | undefined;
    jest.isolateModules(() => {
      broken = (require('../../functions/ingest') as { handler: Handler }).handler;
    });
    process.env.QUEUE_AGGREGATION_URL = saved;
    process.env.POWERTOOLS_LOG_LEVEL = savedLevel;

    const result = await broken!(
      signedEvent(tenant, Buffer.from(JSON.stringify({ events: [validEvent()], sent_at_ms: Date.now() }))),
      lambdaContext('ingest'),
    );
    expect(result.statusCode).toBe(503);
    expect(bodyOf(result)).toEqual({ error: 'audit_write_failed' });
    const { Responses } = await dynamoClient().send(
      new BatchGetCommand({
        RequestItems: {
          [stack.endpoints.tables.counters]: { Keys: capCounterKeys(tenant.company.company_id, Date.now()).map((pk) => ({ pk })) },
        },
      }),
    );
    // Counted before the audit write and taken off again: the shard is there, at 0, with no hold.
    expect(Responses?.[stack.endpoints.tables.counters]).toEqual([{ pk: expect.any(String), n: 0 }]);
  });
});

describe('any input', () => {
  const now = Date.now();
  const documentedStatus = new Map<string, number>(Object.entries(EVENT_API_ERRORS));
  const reasons = new Set(['bad_event', ...EVENT_RULES.map((rule) => rule.reason)]);

  const field = fc.oneof(fc.jsonValue({ maxDepth: 2 }), fc.string({ maxLength: 200 }), fc.integer(), fc.constant(undefined));
  const goodEvent = fc.record({
    event_id: fc.stringMatching(/^[A-Za-z0-9._:-]{1,20}$/),
    event_name: fc.constantFrom('install', 'open', 'purchase', 'level_up'),
    install_uuid: fc.uuid(),
    ts_ms: fc.integer({ min: now - 100 * 86_400_000, max: now + 2 * 3_600_000 }),
    platform: fc.constantFrom('ios', 'android', undefined),
    revenue_usd: fc.option(fc.double({ min: -10, max: 2_000_000, noNaN: true }), { nil: undefined }),
    properties: fc.option(fc.dictionary(fc.string({ maxLength: 10 }), fc.oneof(fc.string({ maxLength: 20 }), fc.integer(), fc.boolean())), {
      nil: undefined,
    }),
  });
  const mutatedEvent = fc
    .tuple(
      goodEvent,
      fc.constantFrom(
        'event_id',
        'event_name',
        'install_uuid',
        'ts_ms',
        'revenue_usd',
        'platform',
        'device_id',
        'attribution',
        'properties',
      ),
      field,
    )
    .map(([event, name, value]) => ({ ...event, [name]: value }));
  const entry = fc.oneof(
    { weight: 4, arbitrary: goodEvent },
    { weight: 4, arbitrary: mutatedEvent },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  );
  const batch = fc.record({
    events: fc.oneof({ weight: 8, arbitrary: fc.array(entry, { minLength: 1, maxLength: 30 }) }, { weight: 1, arbitrary: field }),
    sent_at_ms: fc.oneof(
      { weight: 6, arbitrary: fc.constant(now) },
      { weight: 1, arbitrary: fc.integer() },
      { weight: 1, arbitrary: field },
    ),
  });
  const json = fc.oneof(
    { weight: 6, arbitrary: batch.map((b) => JSON.stringify(b)) },
    { weight: 1, arbitrary: fc.jsonValue().map((v) => JSON.stringify(v) ?? '') },
  );
  const bytes = fc.oneof(
    { weight: 6, arbitrary: json.map((text) => Buffer.from(text, 'utf8')) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 300 }).map((a) => Buffer.from(a)) },
    { weight: 1, arbitrary: fc.tuple(json, fc.nat(), fc.nat()).map(([text, cut, at]) => mutateBytes(Buffer.from(text), cut, at)) },
  );
  /** Mostly the well-formed choice, so most cases get deep into the pipeline; every other choice now and then. */
  const mostly = <T>(usual: T, ...others: T[]) =>
    fc.oneof(
      { weight: 6 * others.length, arbitrary: fc.constant(usual) },
      ...others.map((other) => ({ weight: 1, arbitrary: fc.constant(other) })),
    );
  const encoding = fc.oneof(
    mostly<string | undefined>(undefined, 'identity', 'br', 'deflate', 'gzip, br'),
    mostly('gzip', 'GZIP', 'x-gzip'),
  );
  const compression = mostly('as-declared', 'never', 'always', 'corrupt');
  const tenant = mostly('valid', 'capped', 'suspended', 'mismatch', 'unknown-app', 'unknown-company', 'garbage-keys');
  const signature = mostly('correct', 'wrong-secret', 'over-decompressed', 'malformed', 'missing');
  const request = fc.record({
    bytes,
    encoding,
    compression,
    tenant,
    signature,
    base64: mostly(true, false),
    sdk: fc.option(fc.string({ maxLength: 300 }), { nil: undefined }),
    dropKey: mostly<string | undefined>(undefined, 'x-service-company-key', 'x-service-app-key'),
  });

  function mutateBytes(bytes: Buffer, cut: number, at: number): Buffer {
    if (bytes.length === 0) return bytes;
    const copy = Buffer.from(bytes.subarray(0, Math.max(1, bytes.length - (cut % bytes.length))));
    copy[at % copy.length] ^= 0xff;
    return copy;
  }

  type RequestInput = typeof request extends fc.Arbitrary<infer T> ? T : never;

  function buildEvent(input: RequestInput): HttpEvent {
    const who = input.tenant === 'capped' || input.tenant === 'suspended' ? tenants[input.tenant] : tenants.valid;
    const declaredGzip = ['gzip', 'x-gzip'].includes(input.encoding?.toLowerCase() ?? '');
    const gzip = input.compression === 'always' || input.compression === 'corrupt' || (input.compression === 'as-declared' && declaredGzip);
    let body = gzip ? gzipSync(input.bytes) : input.bytes;
    if (input.compression === 'corrupt' && body.length > 12) body = mutateBytes(body, 0, 11);
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'x-service-company-key':
        {
          mismatch: tenants.other.company.company_key,
          'unknown-company': newCompanyKey(),
          'garbage-keys': 'co_live_<script>',
        }[input.tenant as string] ?? who.company.company_key,
      'x-service-app-key': { 'unknown-app': newAppKey(), 'garbage-keys': randomUUID() }[input.tenant as string] ?? who.app.app_key,
    };
    if (input.encoding !== undefined) headers['content-encoding'] = input.encoding;
    if (input.sdk !== undefined) headers['x-service-sdk'] = input.sdk;
    if (input.dropKey) delete headers[input.dropKey];
    const event = apiEvent('/event', headers, body, { base64: input.base64 });
    // Signed over the bytes the handler will see (a text body is re-encoded as UTF-8 on the way).
    const seen = rawBody(event);
    const signatures: Record<string, string | undefined> = {
      correct: signBody(who.app.signing_secret, seen),
      'wrong-secret': signBody(tenants.other.app.signing_secret, seen),
      'over-decompressed': signBody(who.app.signing_secret, input.bytes),
      malformed: 'Z'.repeat(64),
      missing: undefined,
    };
    const value = signatures[input.signature];
    if (value !== undefined) event.headers['x-service-signature'] = value;
    return event;
  }

  it('gets only documented statuses and codes, never a 500, and never an echoed secret', async () => {
    const seenCodes = new Set<string>();
    await fc.assert(
      fc.asyncProperty(request, async (input) => {
        const event = buildEvent(input);
        const result = await call(event);
        const body = bodyOf(result);
        const text = result.body ?? '';
        for (const t of Object.values(tenants)) {
          expect(text).not.toContain(t.app.signing_secret);
          expect(text).not.toContain(t.company.company_key);
        }
        if (result.statusCode === 200) {
          seenCodes.add('200');
          expect(body.accepted + body.rejected).toBe(body.results.length);
          expect(body.results.filter((r: { status: string }) => r.status === 'accepted')).toHaveLength(body.accepted);
          for (const r of body.results) {
            expect(typeof r.event_id).toBe('string');
            if (r.status === 'rejected') {
              expect(reasons.has(r.reason)).toBe(true);
              // A field at fault on every rejection but of an entry that is not an event.
              if (r.reason === 'bad_event') expect(r.field).toBeUndefined();
              else expect(EVENT_FAULT_FIELDS).toContain(r.field);
            } else expect(r).toEqual({ event_id: r.event_id, status: 'accepted' });
          }
          expect(body.audit_key).toMatch(/^audit\/\d{4}\/\d{2}\/\d{2}\/com_[0-9a-f]+\/app_[0-9a-f]+\/[0-9a-f]{64}\.jsonl\.gz$/);
          return;
        }
        seenCodes.add(body?.error);
        // The code alone, but for the field a bad_batch_shape may name.
        const { error, field: named, ...rest } = body;
        expect(rest).toEqual({});
        if (named !== undefined) expect([error, BATCH_FIELDS.includes(named)]).toEqual(['bad_batch_shape', true]);
        expect(documentedStatus.get(body.error)).toBe(result.statusCode);
        expect(result.statusCode).not.toBe(503);
      }),
      { numRuns: 2000, seed: Number(process.env.FC_SEED ?? Date.now() % 2 ** 31) },
    );
    // The generators reach every stage of the pipeline, not just the first check.
    for (const code of [
      '200',
      'missing_auth_headers',
      'unknown_app_key',
      'unknown_company_key',
      'app_company_mismatch',
      'company_suspended',
      'bad_signature',
      'unsupported_content_encoding',
      'bad_gzip',
      'bad_json',
      'bad_batch_shape',
      'cap_exceeded',
    ]) {
      expect(seenCodes).toContain(code);
    }
  }, 60_000);
});
