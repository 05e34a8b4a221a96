// The SKAN report end to end: postbacks POSTed through the local edge to skan-postback (its
// grants enforced, the local runtime's test keys trusted), then GET /api/v1/reports/skan. Apple's
// examples and postbacks signed with local/skan-test-key.ts appear once under their partner with
// the schema's estimated revenue; a tampered or junk one only in the app's `invalid_postbacks`,
// never in a row; an unknown app's nowhere; a
// redelivery and a retry after a failed report write count once. Every answer as
// docs/openapi.yaml documents it.

import { createSign } from 'node:crypto';
import { runAdmin } from '../../bin/admin';
import { SkanSchemaStore } from '../../functions/adapters/skan-schema-store';
import { localDayOf } from '../../functions/domain/common/days';
import { dynamoClient } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import { ADATTRIBUTIONKIT_TEST_KID, adAttributionKitTestPrivateKey, skadnetworkTestPrivateKey } from '../../local/skan-test-key';
import { problemsOf } from '../support/documented-answers';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { OpenApi } from '../support/openapi';
import { AAK_EXAMPLE, aakPayload, aakPostback, changed, type Postback, SKADNETWORK_EXAMPLES, signJws } from '../unit/skan/postbacks';

const PATH = '/api/v1/reports/skan';
const ZONE = 'Asia/Tokyo';
const APP_STORE_ID = '525463029';
const api = new OpenApi();
let stack: LocalStack;
let tenant: Tenant;

/** A SKAdNetwork 4.0 postback signed with the local runtime's test key. */
function testSigned(id: string, fields: Postback = {}): Postback {
  const body: Postback = {
    version: '4.0',
    'ad-network-id': 'sim.skadnetwork',
    'source-identifier': '1111',
    'app-id': Number(APP_STORE_ID),
    'transaction-id': id,
    redownload: false,
    'fidelity-type': 0,
    'did-win': true,
    'postback-sequence-index': 0,
    'conversion-value': 63,
    ...fields,
  };
  const order = ['version', 'ad-network-id', 'source-identifier', 'app-id', 'transaction-id', 'redownload', 'fidelity-type', 'did-win'];
  const message = [...order, 'postback-sequence-index'].map((name) => String(body[name])).join('\u2063');
  const signature = createSign('sha256').update(message, 'utf8').sign(skadnetworkTestPrivateKey()).toString('base64');
  return { ...body, 'attribution-signature': signature };
}

async function postback(body: Postback) {
  const response = await fetch(`${stack.baseUrl}/skan-postback`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

async function report(query = '', headers: Record<string, string> = { authorization: `Bearer ${tenant.serverKey}` }) {
  const response = await fetch(`${stack.baseUrl}${PATH}${query}`, { headers });
  const text = await response.text();
  const answer = { method: 'GET', path: PATH, status: response.status, headers: Object.fromEntries(response.headers), text };
  expect({ status: answer.status, problems: problemsOf(api, answer) }).toEqual({ status: answer.status, problems: [] });
  return {
    status: response.status,
    etag: response.headers.get('etag'),
    body: text ? (JSON.parse(text) as { rows: Record<string, unknown>[]; invalid_postbacks?: number; error?: string }) : undefined,
  };
}

/** The app's invalid postbacks of the last two days. */
async function invalidNow(): Promise<number | undefined> {
  const now = Date.now();
  return (await report(`?since_ms=${now - 2 * 86_400_000}&until_ms=${now + 86_400_000}`)).body?.invalid_postbacks;
}

/** The rows without their day (checked apart: the test may straddle Tokyo's midnight), keyed partner/source/window/fidelity/type. */
async function rowsNow(): Promise<Map<string, Record<string, unknown>>> {
  const now = Date.now();
  const answer = await report(`?since_ms=${now - 2 * 86_400_000}&until_ms=${now + 86_400_000}`);
  expect(answer.status).toBe(200);
  const days = new Set([localDayOf(now - 600_000, ZONE), localDayOf(now, ZONE)]);
  const rows = new Map<string, Record<string, unknown>>();
  for (const { day, partner, source_identifier, postback_sequence_index, fidelity_type, conversion_type, ...columns } of answer.body!
    .rows) {
    expect(days).toContain(day);
    const key = [partner, source_identifier, postback_sequence_index, fidelity_type, conversion_type].join('/');
    const before = rows.get(key);
    rows.set(key, before ? Object.fromEntries(Object.entries(columns).map(([k, v]) => [k, Number(v) + Number(before[k])])) : columns);
  }
  return rows;
}

const counts = (postbacks: number, more: Partial<Record<string, number>> = {}) => ({
  postbacks,
  installs: 0,
  redownloads: 0,
  with_fine_value: 0,
  with_coarse_value: 0,
  without_value: 0,
  estimated_revenue_usd: 0,
  ...more,
});

beforeAll(async () => {
  stack = await startLocalStack();
  tenant = await createTenant({ app: { appStoreId: APP_STORE_ID, timeZone: ZONE } });
  await new SkanSchemaStore(resourceName.table('tenants')).put(tenant.app.app_id, {
    fine: [
      { value: 63, revenue_usd: [10, 20] },
      { value: 20, revenue_usd: [1, 2] },
      { value: 24, revenue_usd: [3, 4] },
    ],
    coarse: [{ window: 0, value: 'high', revenue_usd: [5, 15.5] }],
  } as never);
  await runAdmin([
    'skan',
    'network',
    'set',
    '--app-key',
    tenant.app.app_key,
    '--ad-network-id',
    'example123.skadnetwork',
    '--partner',
    'meta',
  ]);
});
afterAll(async () => {
  await stack?.stop();
});

describe('the App Store id and the ad network mapping', () => {
  it('shows the id in app show and skan network show, and refuses a second app the same id (app_store_id_taken)', async () => {
    expect(await runAdmin(['app', 'show', '--app-key', tenant.app.app_key])).toMatchObject({ app_store_id: APP_STORE_ID });
    expect(await runAdmin(['skan', 'network', 'show', '--app-key', tenant.app.app_key])).toEqual({
      app_id: tenant.app.app_id,
      app_store_id: APP_STORE_ID,
      skan_networks: { 'example123.skadnetwork': 'meta' },
    });
    const other = await createTenant({ app: { ios_url: 'https://apps.apple.com/us/app/other/id987654321' } });
    expect(await runAdmin(['app', 'show', '--app-key', other.app.app_key])).toMatchObject({ app_store_id: '987654321' });
    await expect(runAdmin(['app', 'update', '--app-key', other.app.app_key, '--app-store-id', APP_STORE_ID])).rejects.toThrow(
      /app_store_id_taken/,
    );
    await expect(runAdmin(['app', 'update', '--app-key', other.app.app_key, '--app-store-id', '12ab'])).rejects.toThrow(/App Store id/);
    expect(await runAdmin(['app', 'update', '--app-key', other.app.app_key, '--app-store-id', '987654322'])).toMatchObject({
      app_store_id: '987654322',
    });
  });
});

describe('GET /api/v1/reports/skan', () => {
  it("counts Apple's examples once each under their partner, the test key's postbacks, a tampered one only in invalid_postbacks, and no unknown app's", async () => {
    const { metrics } = await import('../../functions/shared/observability');
    const published: string[] = [];
    const addMetric = jest.spyOn(metrics, 'addMetric').mockImplementation((name) => {
      published.push(name);
      return metrics;
    });
    try {
      for (const { postback: body } of SKADNETWORK_EXAMPLES) expect((await postback(body)).status).toBe(200);
      expect((await postback(AAK_EXAMPLE.postback)).status).toBe(200);
      const aak = signJws(
        { kid: ADATTRIBUTIONKIT_TEST_KID, alg: 'ES256' },
        aakPayload('AAK-LOCAL-1', { 'advertised-item-identifier': Number(APP_STORE_ID), 'conversion-type': 'download' }),
        adAttributionKitTestPrivateKey(),
      );
      expect((await postback(aakPostback(aak))).status).toBe(200);
      expect((await postback(testSigned('local-1'))).status).toBe(200);
      expect((await postback(testSigned('local-1'))).status).toBe(200);
      expect((await postback(changed(testSigned('local-2'), { 'source-identifier': '2222' }))).status).toBe(200);
      expect((await postback(testSigned('local-3', { 'app-id': 999 }))).status).toBe(200);
    } finally {
      addMetric.mockRestore();
    }
    // The two P-192 examples (another app) and the test key's postback for app 999: unknown; Apple's AdAttributionKit example: development.
    expect(published.filter((name) => name === 'SkanPostbackUnknownApp')).toHaveLength(3);
    expect(published.filter((name) => name === 'SkanPostbackDevelopment')).toHaveLength(1);

    expect(Object.fromEntries(await rowsNow())).toEqual({
      // Apple's 4.0 examples: a fine 63 (10 to 20: 15) and a coarse high (5 to 15.5: 10.25).
      'com.example/39/0/1/download': counts(1, { installs: 1, with_coarse_value: 1, estimated_revenue_usd: 10.25 }),
      'com.example/5239/0/1/download': counts(1, { installs: 1, with_fine_value: 1, estimated_revenue_usd: 15 }),
      // 3.0 winning (fine 20: 1.5) and nonwinning; the 2.2 and 2.1 examples share the winning one's transaction id.
      'meta/42/0/1/redownload': counts(2, { redownloads: 2, with_fine_value: 1, without_value: 1, estimated_revenue_usd: 1.5 }),
      // The local test keys: AdAttributionKit (fine 24: 3.5) and SKAdNetwork 4 (sent twice); the tampered copy has no row.
      'development.adattributionkit/1234/0/1/download': counts(1, { installs: 1, with_fine_value: 1, estimated_revenue_usd: 3.5 }),
      'sim.skadnetwork/1111/0/0/download': counts(1, { installs: 1, with_fine_value: 1, estimated_revenue_usd: 15 }),
    });
    expect(await invalidNow()).toBe(1);
  });

  it("makes no row and no partner of forged postbacks (30 new ad network ids, a version 99), only the app's invalid total", async () => {
    const rowsBefore = await rowsNow();
    const invalidBefore = (await invalidNow()) ?? 0;
    for (let i = 0; i < 30; i++) {
      // Signed, then re-labelled: the signature no longer holds.
      const forged = changed(testSigned(`forged-${i}`), { 'ad-network-id': `forger${i}.skadnetwork`, 'source-identifier': `${7000 + i}` });
      expect((await postback(forged)).status).toBe(200);
    }
    expect((await postback({ ...testSigned('forged-99'), version: '99', 'ad-network-id': 'v99.skadnetwork' })).status).toBe(200);
    expect(await rowsNow()).toEqual(rowsBefore);
    expect(await invalidNow()).toBe(invalidBefore + 31);
  });

  it('answers 503 when the report item cannot be written, and counts the retry once', async () => {
    const failures: string[] = [];
    const name = 'fail-skan-report-item';
    dynamoClient().middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as { TableName?: string; Item?: { pk?: string } };
        const command = (context as { commandName?: string }).commandName;
        if (command === 'PutItemCommand' && input.TableName === resourceName.table('aggregates') && failures.length === 0) {
          failures.push(String(input.Item?.pk));
          throw Object.assign(new Error('store unavailable (injected)'), { name: 'ServiceUnavailable' });
        }
        return next(args);
      },
      { step: 'initialize', name },
    );
    try {
      expect(await postback(testSigned('local-retry', { 'source-identifier': '3333' }))).toEqual({
        status: 503,
        body: { error: 'store_unavailable' },
      });
    } finally {
      dynamoClient().middlewareStack.remove(name);
    }
    expect(failures).toHaveLength(1);
    expect((await rowsNow()).get('sim.skadnetwork/3333/0/0/download')).toBeUndefined();
    expect(await postback(testSigned('local-retry', { 'source-identifier': '3333' }))).toEqual({ status: 200, body: { ok: true } });
    expect(await postback(testSigned('local-retry', { 'source-identifier': '3333' }))).toEqual({ status: 200, body: { ok: true } });
    expect((await rowsNow()).get('sim.skadnetwork/3333/0/0/download')).toEqual(
      counts(1, { installs: 1, with_fine_value: 1, estimated_revenue_usd: 15 }),
    );
  });

  it('answers 304 to its ETag, and the reports’ errors', async () => {
    const query = `?since_ms=${Date.now() - 86_400_000}&until_ms=${Date.now() + 86_400_000}`;
    const page = await report(query);
    expect(page.status).toBe(200);
    expect((await report(query, { authorization: `Bearer ${tenant.serverKey}`, 'if-none-match': page.etag! })).status).toBe(304);
    expect((await report('', {})).body).toEqual({ error: 'missing_bearer_token' });
    expect((await report('?limit=0')).body).toEqual({ error: 'invalid_limit' });
    expect((await report('?since_ms=10&until_ms=5')).body).toEqual({ error: 'since_ms_must_be_less_than_until_ms' });
  });
});
