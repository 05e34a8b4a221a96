// Conversion-value schemas end to end: `admin skan schema set|show` against the local runtime
// (versions kept, refusals naming the field), and GET /sdk/v1/skan-schema through the local edge
// with the event API's headers (the signature over the empty body): the active schema under a
// strong ETag, 304, a new version a new ETag, the auth refusals, no schema, a store down. Every
// answer is checked against docs/openapi.yaml.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAdmin } from '../../bin/admin';
import { SkanSchemaStore } from '../../functions/adapters/skan-schema-store';
import { signBody } from '../../functions/domain/ingest/signature';
import { dynamoClient } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import { createTenant as createTenantWith, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { OpenApi, pointerOf } from '../support/openapi';
import { countingWrites } from '../support/write-faults';

let stack: LocalStack;
let tenant: Tenant;
let dir: string;
const api = new OpenApi();
let apps = 0;
/** A tenant of its own: each app a store URL of its own, since two apps cannot share an App Store id. */
const createTenant = () => createTenantWith({ app: { ios_url: `https://apps.apple.com/app/id${Date.now()}${++apps}` } });

beforeAll(async () => {
  stack = await startLocalStack();
  tenant = await createTenant();
  dir = mkdtempSync(join(tmpdir(), 'skan-schema-'));
});

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await stack?.stop();
});

const SCHEMA = {
  fine: [
    { value: 63, revenue_usd: [10, 20], events: ['purchase'] },
    { value: 1, revenue_usd: [0, 1] },
  ],
  coarse: [{ window: 0, value: 'high', revenue_usd: [5, 15], events: ['purchase'] }],
  lock: [{ window: 0, events: ['purchase'] }],
};

function schemaFile(name: string, json: unknown): string {
  const path = join(dir, name);
  writeFileSync(path, typeof json === 'string' ? json : JSON.stringify(json));
  return path;
}

interface Answer {
  status: number;
  headers: Headers;
  text: string;
  body: any;
}

/** The three headers of the event API for a tenant, the signature over the empty body; `headers` override. */
function credentials(t: Tenant, headers: Record<string, string> = {}): Record<string, string> {
  return {
    'x-service-company-key': t.company.company_key,
    'x-service-app-key': t.app.app_key,
    'x-service-signature': signBody(t.app.signing_secret, Buffer.alloc(0)),
    ...headers,
  };
}

/** GETs the schema through the local edge and checks the answer is one docs/openapi.yaml documents. */
async function fetchSchema(headers: Record<string, string>): Promise<Answer> {
  const response = await fetch(`${stack.baseUrl}/sdk/v1/skan-schema`, { headers });
  const text = await response.text();
  const answer = { status: response.status, headers: response.headers, text, body: text ? JSON.parse(text) : undefined };
  const operation = api.operationFor('GET', '/sdk/v1/skan-schema')!;
  const raw = operation.spec.responses[String(answer.status)];
  expect({ status: answer.status, documented: raw !== undefined }).toEqual({ status: answer.status, documented: true });
  if (answer.status !== 304) {
    const documented = api.response(raw, `${operation.pointer}${pointerOf('responses', String(answer.status))}`, String(answer.status));
    expect(api.validate(`${documented.pointer}${pointerOf('content', 'application/json', 'schema')}`, answer.body)).toEqual([]);
  }
  return answer;
}

describe('admin skan schema', () => {
  it('stores each set as a new version, made active, and shows the active one or any version', async () => {
    const other = await createTenant();
    const key = other.app.app_key;
    expect(await runAdmin(['skan', 'schema', 'show', '--app-key', key])).toEqual({ app_id: other.app.app_id, version: null, schema: null });

    const first = await runAdmin(['skan', 'schema', 'set', '--app-key', key, '--file', schemaFile('a.json', SCHEMA)]);
    expect(first).toMatchObject({ app_id: other.app.app_id, version: 1 });
    const second = await runAdmin(['skan', 'schema', 'set', '--app-key', key, '--json', JSON.stringify({ fine: [], coarse: [] })]);
    expect(second).toMatchObject({ version: 2, schema: { fine: [], coarse: [], lock: [] } });

    const active = await runAdmin(['skan', 'schema', 'show', '--app-key', key]);
    expect(active).toMatchObject({ version: 2, schema: { fine: [], coarse: [], lock: [] } });
    const v1 = (await runAdmin(['skan', 'schema', 'show', '--app-key', key, '--version', '1'])) as { schema: { fine: unknown[] } };
    expect(v1.schema.fine).toEqual([
      { value: 1, revenue_usd: [0, 1], events: [] },
      { value: 63, revenue_usd: [10, 20], events: ['purchase'] },
    ]);
    await expect(runAdmin(['skan', 'schema', 'show', '--app-key', key, '--version', '3'])).rejects.toThrow(/schema version 3 not found/);
  });

  it('refuses a schema naming the field at fault, and stores nothing', async () => {
    const other = await createTenant();
    const key = other.app.app_key;
    const bad = { ...SCHEMA, fine: [SCHEMA.fine[0], { value: 5, revenue_usd: [9, 2] }] };
    await expect(runAdmin(['skan', 'schema', 'set', '--app-key', key, '--file', schemaFile('b.json', bad)])).rejects.toThrow(
      /^fine\[1\]\.revenue_usd: min must not exceed max/,
    );
    await expect(runAdmin(['skan', 'schema', 'set', '--app-key', key, '--file', schemaFile('c.json', '{"fine": [')])).rejects.toThrow(
      /the schema file is not JSON/,
    );
    await expect(runAdmin(['skan', 'schema', 'set', '--app-key', key])).rejects.toThrow(/give exactly one of --file and --json/);
    await expect(runAdmin(['skan', 'schema', 'set', '--app-key', 'app_live_nope', '--json', '{}'])).rejects.toThrow(/app not found/);
    expect(await new SkanSchemaStore(resourceName.table('tenants')).active(other.app.app_id)).toBeUndefined();
  });
});

describe('GET /sdk/v1/skan-schema', () => {
  it('answers 404 no_schema for an app without one', async () => {
    const answer = await fetchSchema(credentials(tenant));
    expect({ status: answer.status, body: answer.body }).toEqual({ status: 404, body: { error: 'no_schema' } });
  });

  it('answers the active schema under a strong ETag, 304 for that ETag, and a new ETag for a new version', async () => {
    await runAdmin(['skan', 'schema', 'set', '--app-key', tenant.app.app_key, '--file', schemaFile('d.json', SCHEMA)]);
    const first = await fetchSchema(credentials(tenant));
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      version: 1,
      fine: [
        { value: 1, revenue_usd: [0, 1], events: [] },
        { value: 63, revenue_usd: [10, 20], events: ['purchase'] },
      ],
      coarse: SCHEMA.coarse,
      lock: SCHEMA.lock,
    });
    expect(first.headers.get('cache-control')).toBe('private, max-age=300');
    const etag = first.headers.get('etag') ?? '';
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{27}"$/);
    expect((await fetchSchema(credentials(tenant))).headers.get('etag')).toBe(etag);

    const unchanged = await fetchSchema(credentials(tenant, { 'if-none-match': etag }));
    expect({ status: unchanged.status, text: unchanged.text, etag: unchanged.headers.get('etag') }).toEqual({
      status: 304,
      text: '',
      etag,
    });
    expect((await fetchSchema(credentials(tenant, { 'if-none-match': `"other", W/${etag}` }))).status).toBe(304);
    expect((await fetchSchema(credentials(tenant, { 'if-none-match': '"other"' }))).status).toBe(200);

    await runAdmin(['skan', 'schema', 'set', '--app-key', tenant.app.app_key, '--json', JSON.stringify({ ...SCHEMA, lock: [] })]);
    const next = await fetchSchema(credentials(tenant, { 'if-none-match': etag }));
    expect(next.status).toBe(200);
    expect(next.body).toMatchObject({ version: 2, lock: [] });
    expect(next.headers.get('etag')).not.toBe(etag);
  });

  it("refuses with the event API's codes: a wrong signature, a signature over a body, a missing header, keys of another company", async () => {
    const other = await createTenant();
    const refused = async (headers: Record<string, string>) => {
      const answer = await fetchSchema(headers);
      return { status: answer.status, body: answer.body };
    };
    expect(await refused(credentials(tenant, { 'x-service-signature': signBody('not the secret', Buffer.alloc(0)) }))).toEqual({
      status: 401,
      body: { error: 'bad_signature' },
    });
    expect(await refused(credentials(tenant, { 'x-service-signature': signBody(tenant.app.signing_secret, Buffer.from('{}')) }))).toEqual({
      status: 401,
      body: { error: 'bad_signature' },
    });
    const { 'x-service-signature': _, ...unsigned } = credentials(tenant);
    expect(await refused(unsigned)).toEqual({ status: 400, body: { error: 'missing_auth_headers' } });
    expect(await refused(credentials(tenant, { 'x-service-company-key': other.company.company_key }))).toEqual({
      status: 401,
      body: { error: 'app_company_mismatch' },
    });
    expect(await refused(credentials(tenant, { 'x-service-app-key': `app_live_${'0'.repeat(32)}` }))).toEqual({
      status: 401,
      body: { error: 'unknown_app_key' },
    });
  });

  it('answers 503 store_unavailable while the table is down', async () => {
    const fresh = await createTenant();
    const fault = countingWrites(dynamoClient(), 0);
    try {
      const answer = await fetchSchema(credentials(fresh));
      expect({ status: answer.status, body: answer.body }).toEqual({ status: 503, body: { error: 'store_unavailable' } });
    } finally {
      fault.stop();
    }
  });
});
