// POST /api/v1/cost over real HTTP against the local runtime (dynalite, the handler run with its
// manifest grants): rows stored per (app, local day) and re-sent rows replacing, not adding; a row
// in euros converted at the rate set for its day; the scopes of server keys (a read key cannot
// upload, a cost key cannot read, a read,cost key does both); the 401s, 400s and 413, and 503
// while the store is down; every answer as docs/openapi.yaml documents it.

import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { CostStore } from '../../functions/adapters/cost-store';
import { FxStore } from '../../functions/adapters/fx-store';
import { TenantStore } from '../../functions/adapters/tenant-store';
import { COST_PATH, MAX_COST_BODY_BYTES } from '../../functions/domain/analytics/cost';
import { dimsKey, PERF_FAMILIES } from '../../functions/domain/analytics/performance';
import type { ServerKeyScope } from '../../functions/domain/tenants/tenant';
import { dynamoClient } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import { problemsOf } from '../support/documented-answers';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { OpenApi } from '../support/openapi';
import { countingWrites } from '../support/write-faults';

const api = new OpenApi();
let stack: LocalStack;
let tenant: Tenant;
let costKey: string;
let bothKey: string;
let costDays: CostStore;

interface Answer {
  status: number;
  body: Record<string, unknown> | undefined;
}

/** One request; every answer, whatever its status, is what docs/openapi.yaml says of it. */
async function call(method: string, path: string, headers: Record<string, string>, body?: string | Buffer): Promise<Answer> {
  const response = await fetch(`${stack.baseUrl}${path}`, { method, headers, body });
  const text = await response.text();
  const answer = { method, path: path.split('?')[0] ?? path, status: response.status, headers: Object.fromEntries(response.headers), text };
  expect({ status: answer.status, problems: problemsOf(api, answer) }).toEqual({ status: answer.status, problems: [] });
  return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const upload = (key: string, rows: unknown) => call('POST', COST_PATH, bearer(key), JSON.stringify({ rows }));

async function keyWith(scopes: ServerKeyScope[]): Promise<string> {
  const { serverKey } = await new TenantStore(resourceName.table('tenants')).createServerKey(tenant.app.app_key, scopes);
  return serverKey;
}

async function partnerCost(day: string, partner: string) {
  const { Item } = await dynamoClient().send(
    new GetCommand({
      TableName: resourceName.table('aggregates'),
      Key: { pk: `${tenant.app.app_id}#${PERF_FAMILIES.costPartner}`, sk: `${day}\u0001${partner}` },
      ConsistentRead: true,
    }),
  );
  return Item && { cost_micros: Item.cost_micros, network_clicks: Item.network_clicks, impressions: Item.impressions, ver: Item.ver };
}

async function stampOf(day: string): Promise<number | undefined> {
  const { Item } = await dynamoClient().send(
    new GetCommand({
      TableName: resourceName.table('aggregates'),
      Key: { pk: `${tenant.app.app_id}#${PERF_FAMILIES.perfStamp}`, sk: day },
      ConsistentRead: true,
    }),
  );
  return Item?.v as number | undefined;
}

const spring = {
  date: '2026-03-01',
  partner: 'meta',
  campaign: 'spring',
  country: 'US',
  platform: 'ios',
  cost: 123.45,
  currency: 'USD',
  clicks: 120,
  impressions: 45000,
};

beforeAll(async () => {
  stack = await startLocalStack();
  tenant = await createTenant();
  [costKey, bothKey] = [await keyWith(['cost']), await keyWith(['read', 'cost'])];
  costDays = new CostStore(resourceName.table('aggregates'));
});

afterAll(async () => {
  await stack?.stop();
});

describe('POST /api/v1/cost', () => {
  it("stores the rows in the app's cost day, sums them by partner and stamps the day", async () => {
    const answer = await upload(costKey, [spring, { date: '2026-03-01', partner: 'google', cost: 10 }]);
    expect(answer).toEqual({ status: 200, body: { accepted: 2 } });
    const day = await costDays.readDay(tenant.app.app_id, '2026-03-01');
    expect(day.ver).toBe(1);
    expect(day.rows.map((row) => [dimsKey(row.dims), row.cost_micros])).toEqual([
      [dimsKey(['meta', 'spring', 'US', 'ios']), 123_450_000],
      [dimsKey(['google', '(none)', '(none)', '(none)']), 10_000_000],
    ]);
    expect(await partnerCost('2026-03-01', 'meta')).toEqual({ cost_micros: 123_450_000, network_clicks: 120, impressions: 45000, ver: 1 });
    expect(await stampOf('2026-03-01')).toBe(1);
  });

  it('counts a row sent again once: the second send replaces the first', async () => {
    expect((await upload(costKey, [spring])).status).toBe(200);
    expect((await upload(bothKey, [{ ...spring, cost: 200, clicks: 150 }])).status).toBe(200);
    const rows = (await costDays.readDay(tenant.app.app_id, '2026-03-01')).rows.filter((row) => row.dims[0] === 'meta');
    expect(rows.map((row) => row.cost_micros)).toEqual([200_000_000]);
    expect(await partnerCost('2026-03-01', 'meta')).toMatchObject({ cost_micros: 200_000_000, network_clicks: 150, impressions: 45000 });
    expect(await partnerCost('2026-03-01', 'google')).toMatchObject({ cost_micros: 10_000_000 });
  });

  it('converts euros at the rate set for the day, and refuses a currency without a rate, naming it', async () => {
    await new FxStore(resourceName.table('fx_rates')).putRates('2026-02-27', { EUR: 1.08 });
    const row = { date: '2026-03-02', partner: 'tiktok', cost: 50, currency: 'EUR' };
    expect(await upload(costKey, [row])).toEqual({ status: 200, body: { accepted: 1 } });
    expect((await costDays.readDay(tenant.app.app_id, '2026-03-02')).rows[0]).toMatchObject({
      cost_micros: 54_000_000,
      currency: 'EUR',
      cost: 50,
    });
    const refused = await upload(costKey, [row, { ...row, currency: 'JPY' }]);
    expect(refused).toEqual({
      status: 400,
      body: { error: 'bad_cost_row', index: 1, field: 'currency', message: expect.stringContaining('JPY') },
    });
  });

  describe('scopes', () => {
    it('refuses a read key (every key made before scopes is one) with 403 insufficient_scope', async () => {
      expect(await upload(tenant.serverKey, [spring])).toEqual({ status: 403, body: { error: 'insufficient_scope' } });
    });

    it('refuses a cost key the reports and the stream with 403 insufficient_scope', async () => {
      expect(await call('GET', '/api/v1/reports/attribution', bearer(costKey))).toEqual({
        status: 403,
        body: { error: 'insufficient_scope' },
      });
      expect(await call('GET', '/api/v1/stream/events', bearer(costKey))).toEqual({ status: 403, body: { error: 'insufficient_scope' } });
    });

    it('lets a read,cost key read and upload', async () => {
      expect((await call('GET', '/api/v1/reports/revenue', bearer(bothKey))).status).toBe(200);
      expect((await call('GET', '/api/v1/stream/events', bearer(bothKey))).status).toBe(200);
      expect((await upload(bothKey, [spring])).status).toBe(200);
    });
  });

  it('answers 401 without a bearer key, or with one unknown or revoked', async () => {
    expect(await call('POST', COST_PATH, {}, '{"rows":[]}')).toEqual({ status: 401, body: { error: 'missing_bearer_token' } });
    expect(await upload(`srv_${'0'.repeat(48)}`, [spring])).toEqual({ status: 401, body: { error: 'invalid_or_revoked_key' } });
    const revoked = await keyWith(['cost']);
    await new TenantStore(resourceName.table('tenants')).revokeServerKey(revoked);
    expect(await upload(revoked, [spring])).toEqual({ status: 401, body: { error: 'invalid_or_revoked_key' } });
  });

  it.each([
    ['empty_body', '', undefined],
    ['bad_json', '{"rows": [', undefined],
    ['bad_batch_shape', '[]', undefined],
    ['bad_batch_shape', '{"rows": []}', 'rows'],
    ['bad_batch_shape', '{"rows": {}}', 'rows'],
  ])('answers 400 %s to %j', async (code, body, field) => {
    const answer = await call('POST', COST_PATH, bearer(costKey), body);
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ error: code, ...(field ? { field } : {}) });
  });

  it('answers 400 bad_cost_row with the index and field of the first bad row, and stores nothing of the request', async () => {
    const before = await costDays.readDay(tenant.app.app_id, '2026-03-05');
    const answer = await upload(costKey, [
      { ...spring, date: '2026-03-05' },
      { ...spring, country: 'Germany' },
      { ...spring, cost: -1 },
    ]);
    expect(answer).toEqual({ status: 400, body: { error: 'bad_cost_row', index: 1, field: 'country', message: expect.any(String) } });
    expect(await costDays.readDay(tenant.app.app_id, '2026-03-05')).toEqual(before);
  });

  it('answers 400 bad_json to an application/json body that is not UTF-8, or holds what a gateway makes of such bytes', async () => {
    const json = { ...bearer(costKey), 'content-type': 'application/json' };
    const withName = (name: Buffer) =>
      Buffer.concat([Buffer.from(`{"rows":[{"date":"2026-03-07","partner":"`), name, Buffer.from('","cost":1}]}')]);
    expect(await call('POST', COST_PATH, json, withName(Buffer.from([0x6d, 0xff])))).toEqual({ status: 400, body: { error: 'bad_json' } });
    expect(await call('POST', COST_PATH, json, withName(Buffer.from('m\uFFFD')))).toEqual({ status: 400, body: { error: 'bad_json' } });
    expect((await costDays.readDay(tenant.app.app_id, '2026-03-07')).ver).toBe(0);
  });

  it('answers 400 cost_day_too_large to a day whose cost would add up past $20,000,000, and stores nothing of it', async () => {
    const rows = Array.from({ length: 10 }, (_, i) => ({ ...spring, date: '2026-03-08', campaign: `c${i}`, cost: 1e9 }));
    const answer = await upload(costKey, rows);
    expect(answer).toEqual({
      status: 400,
      body: { error: 'cost_day_too_large', index: 0, field: 'cost', message: expect.stringContaining('$20000000') },
    });
    expect((await costDays.readDay(tenant.app.app_id, '2026-03-08')).ver).toBe(0);
    expect(await partnerCost('2026-03-08', 'meta')).toBeUndefined();
  });

  it('answers 413 body_too_large to a body over 1 MiB', async () => {
    const body = JSON.stringify({ rows: [spring], padding: 'x'.repeat(MAX_COST_BODY_BYTES) });
    expect(await call('POST', COST_PATH, bearer(costKey), body)).toEqual({ status: 413, body: { error: 'body_too_large' } });
  });

  it('answers 503 store_unavailable while the store fails, and stores the rows when sent again', async () => {
    const row = { date: '2026-03-09', partner: 'meta', cost: 5 };
    // The first write (the cost day) goes through, then the store fails: the sums and stamp are not written.
    const fault = countingWrites(dynamoClient(), 1);
    try {
      expect(await upload(costKey, [row])).toEqual({ status: 503, body: { error: 'store_unavailable' } });
    } finally {
      fault.stop();
    }
    expect(await partnerCost('2026-03-09', 'meta')).toBeUndefined();
    expect(await upload(costKey, [row])).toEqual({ status: 200, body: { accepted: 1 } });
    expect(await partnerCost('2026-03-09', 'meta')).toEqual({ cost_micros: 5_000_000, network_clicks: 0, impressions: 0, ver: 1 });
    expect(await stampOf('2026-03-09')).toBe(1);
  });
});
