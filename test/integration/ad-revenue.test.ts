// Ad revenue through the local runtime (issue 40): an install and its impressions sent by the SDK's
// route (POST /event, one impression twice), more by the server-to-server route (POST
// /api/v1/ad-revenue, one the SDK sent too, one refused), a purchase and a day's cost; the
// performance report's ad revenue, total revenue and ROAS equal an oracle's in the app's time zone,
// while the interface's revenue report stays purchases alone and the events report counts the
// impressions with their dollars. Every answer is what docs/openapi.yaml says of it.

import { randomUUID } from 'node:crypto';
import { eventBatchRequest } from '../../client/event-client';
import { TenantStore } from '../../functions/adapters/tenant-store';
import { AD_REVENUE_PATH } from '../../functions/domain/ingest/ad-revenue-upload';
import { resourceName } from '../../functions/shared/config';
import { problemsOf } from '../support/documented-answers';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { OpenApi } from '../support/openapi';
import { waitFor } from '../support/wait-for';
import { credentialsOf, post } from './ingest-support';

const api = new OpenApi();
const ZONE = 'Asia/Tokyo';
let stack: LocalStack;
let tenant: Tenant;

beforeAll(async () => {
  stack = await startLocalStack();
  tenant = await createTenant({ app: { timeZone: ZONE } });
});

afterAll(async () => {
  await stack?.stop();
});

async function call(method: string, path: string, key: string, body?: unknown) {
  const response = await fetch(`${stack.baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const answer = { method, path: path.split('?')[0] ?? path, status: response.status, headers: Object.fromEntries(response.headers), text };
  expect({ status: answer.status, problems: problemsOf(api, answer) }).toEqual({ status: answer.status, problems: [] });
  return { status: response.status, body: JSON.parse(text) as Record<string, unknown> };
}

const impression = (id: string, revenue: number, format = 'rewarded') => ({
  source: 'applovin_max',
  network: 'AppLovin',
  format,
  placement: 'level_end',
  revenue,
  currency: 'USD',
  precision: 'exact',
  impression_id: id,
});

describe('ad revenue, from the SDK and server to server', () => {
  it('gives the performance report ad revenue, total revenue and ROAS equal to the oracle, each impression once', async () => {
    const installUuid = randomUUID();
    const installMs = Date.now() - 60 * 60 * 1000;
    const day = new Intl.DateTimeFormat('en-CA', { timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit' }).format(installMs);
    const event = (name: string, tsMs: number, extra: object = {}) => ({
      event_id: randomUUID(),
      event_name: name,
      install_uuid: installUuid,
      ts_ms: tsMs,
      ...extra,
    });
    const sdk = (events: object[]) =>
      post(stack.baseUrl, '/event', eventBatchRequest(credentialsOf(tenant), { events, sent_at_ms: Date.now() }));

    // The SDK: the install, two impressions and a purchase; then one of the impressions again in a batch of its own.
    const first = await sdk([
      event('install', installMs, { platform: 'ios' }),
      event('ad_revenue', installMs + 1000, { ad_revenue: impression('imp-1', 0.015) }),
      event('ad_revenue', installMs + 2000, { ad_revenue: impression('imp-2', 0.0042, 'banner') }),
      event('purchase', installMs + 3000, { revenue_usd: 2 }),
    ]);
    expect(first.body).toMatchObject({ accepted: 4, rejected: 0 });
    expect((await sdk([event('ad_revenue', installMs + 1000, { ad_revenue: impression('imp-1', 0.015) })])).body).toMatchObject({
      accepted: 1,
    });

    // Server to server: a new impression, the SDK's imp-2 again, and one refused for its format.
    const tenants = new TenantStore(resourceName.table('tenants'));
    const { serverKey: adKey } = await tenants.createServerKey(tenant.app.app_key, ['ad_revenue']);
    const { serverKey: costKey } = await tenants.createServerKey(tenant.app.app_key, ['cost']);
    const row = (id: string, revenue: number, format?: string) => ({
      install_uuid: installUuid,
      ts_ms: installMs + 4000,
      ad_revenue: impression(id, revenue, format),
    });
    expect((await call('POST', AD_REVENUE_PATH, tenant.serverKey, { impressions: [row('imp-3', 0.03)] })).body).toEqual({
      error: 'insufficient_scope',
    });
    const s2s = await call('POST', AD_REVENUE_PATH, adKey, {
      impressions: [row('imp-3', 0.03), row('imp-2', 0.0042), row('imp-4', 1, 'video')],
    });
    expect(s2s.status).toBe(200);
    expect(s2s.body).toMatchObject({
      accepted: 2,
      rejected: 1,
      results: [
        { index: 0, status: 'accepted' },
        { index: 1, status: 'accepted' },
        { index: 2, status: 'rejected', reason: 'bad_ad_revenue', field: 'ad_revenue.format' },
      ],
    });
    expect(
      (await call('POST', '/api/v1/cost', costKey, { rows: [{ date: day, partner: 'organic', cost: 1, currency: 'USD' }] })).status,
    ).toBe(200);

    // The oracle: each impression of the install once, in micro-dollars, on the install's local day.
    const adMicros = [0.015, 0.0042, 0.03].reduce((sum, usd) => sum + Math.round(usd * 1e6), 0);
    const purchaseMicros = 2_000_000;
    const costMicros = 1_000_000;
    const expected = {
      day,
      partner: 'organic',
      installs: 1,
      revenue_usd: purchaseMicros / 1e6,
      ad_revenue_usd: adMicros / 1e6,
      cohort_ad_revenue_d0_usd: adMicros / 1e6,
      cohort_ad_revenue_d30_usd: adMicros / 1e6,
      total_revenue_usd: (purchaseMicros + adMicros) / 1e6,
      cost_usd: costMicros / 1e6,
      roas_d0: Math.round((purchaseMicros / costMicros) * 1e4) / 1e4,
      total_roas_d0: Math.round(((purchaseMicros + adMicros) / costMicros) * 1e4) / 1e4,
      total_roas_d30: Math.round(((purchaseMicros + adMicros) / costMicros) * 1e4) / 1e4,
    };
    const window = `since_ms=${installMs - 2 * 86_400_000}&until_ms=${Date.now() + 60_000}`;
    let rows: Record<string, unknown>[] = [];
    await waitFor(
      async () => {
        rows = (await call('GET', `/api/v1/reports/performance?${window}`, tenant.serverKey)).body.rows as Record<string, unknown>[];
        return rows.length === 1 && rows[0]?.ad_revenue_usd === expected.ad_revenue_usd && rows[0]?.cost_usd === 1;
      },
      { timeoutMs: 30_000 },
    );
    expect(rows[0]).toMatchObject(expected);

    // The interface's reports keep their shapes: revenue is the purchase alone; the events report counts each impression once.
    const revenue = (await call('GET', `/api/v1/reports/revenue?${window}`, tenant.serverKey)).body.rows;
    expect(revenue).toEqual([{ day, partner: 'organic', purchases: 1, revenue_usd: 2, arppu_usd: 2 }]);
    const events = (await call('GET', `/api/v1/reports/events?${window}`, tenant.serverKey)).body.rows as Record<string, unknown>[];
    expect(events.find((r) => r.event_name === 'ad_revenue')).toEqual({
      day,
      event_name: 'ad_revenue',
      events: 3,
      unique_installs: 1,
      revenue_usd: adMicros / 1e6,
    });
  });
});
