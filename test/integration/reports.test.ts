// The Reporting API over real HTTP against the local runtime: every error of the interface's
// table by its cause, the key's scope under random parameters, paging, caching, revocation, and
// the rows the aggregator made from events sent through POST /event.

import fc from 'fast-check';
import { EventClient } from '../../client/event-client';
import { AggregateStore } from '../../functions/adapters/aggregate-store';
import { TenantStore } from '../../functions/adapters/tenant-store';
import { sortKeyOf } from '../../functions/domain/aggregation/rows';
import { REPORT_ERRORS } from '../../functions/domain/reports/report-query';
import { resourceName } from '../../functions/shared/config';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { freshStamp } from '../support/row-stamps';

const DAY = 86_400_000;
let stack: LocalStack;
let a: Tenant;
let b: Tenant;

beforeAll(async () => {
  // Revocation is tested against a short key cache; production keeps keys at most 30 s (docs/architecture.md section 4: 60).
  process.env.KEY_CACHE_TTL_MS = '1000';
  stack = await startLocalStack();
  [a, b] = [await createTenant(), await createTenant()];
});
afterAll(async () => {
  await stack?.stop();
});

async function get(path: string, headers: Record<string, string> = {}, method = 'GET') {
  const response = await fetch(`${stack.baseUrl}${path}`, { method, headers });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined };
}
const bearer = (tenant: Tenant) => ({ authorization: `Bearer ${tenant.serverKey}` });
const rows = () => new AggregateStore(resourceName.table('aggregates'));

describe('the Reporting API errors', () => {
  const cases: [string, string, Record<string, string>, string, number, string][] = [
    ['a non-numeric since_ms', '/api/v1/reports/attribution?since_ms=abc', {}, 'auth', 400, 'invalid_since_until'],
    ['an exponent until_ms', '/api/v1/reports/revenue?until_ms=1e12', {}, 'auth', 400, 'invalid_since_until'],
    ['an empty since_ms', '/api/v1/reports/cohorts?since_ms=', {}, 'auth', 400, 'invalid_since_until'],
    ['a reversed window', '/api/v1/reports/events?since_ms=2000&until_ms=1000', {}, 'auth', 400, 'since_ms_must_be_less_than_until_ms'],
    [
      'a since_ms after the last date JavaScript has',
      '/api/v1/reports/events?since_ms=8640000000000001',
      {},
      'auth',
      400,
      'invalid_since_until',
    ],
    [
      'an until_ms after the last date JavaScript has',
      '/api/v1/reports/revenue?since_ms=8639999999999000&until_ms=8640000000000001',
      {},
      'auth',
      400,
      'invalid_since_until',
    ],
    [
      'a since_ms before the first date JavaScript has',
      '/api/v1/reports/attribution?since_ms=-8640000000000001&until_ms=-8639999999999000',
      {},
      'auth',
      400,
      'invalid_since_until',
    ],
    ['a window over 365 days', `/api/v1/reports/cohorts?since_ms=0&until_ms=${365 * DAY + 1}`, {}, 'auth', 400, 'window_too_large'],
    ['a limit of 1001', '/api/v1/reports/attribution?limit=1001', {}, 'auth', 400, 'invalid_limit'],
    ['a negative offset', '/api/v1/reports/attribution?offset=-1', {}, 'auth', 400, 'invalid_offset'],
    ['no Authorization header', '/api/v1/reports/attribution', {}, 'none', 401, 'missing_bearer_token'],
    ['another scheme', '/api/v1/reports/attribution', { authorization: 'Basic dXNlcjpwYXNz' }, 'none', 401, 'missing_bearer_token'],
    [
      'an unknown key',
      '/api/v1/reports/attribution',
      { authorization: `Bearer srv_${'0'.repeat(48)}` },
      'none',
      401,
      'invalid_or_revoked_key',
    ],
    ['a malformed key', '/api/v1/reports/attribution', { authorization: 'Bearer srv_short' }, 'none', 401, 'invalid_or_revoked_key'],
    ['an unknown report, without a key', '/api/v1/reports/installs', {}, 'none', 404, 'unknown_report'],
    ['an unknown report, with a bad key', '/api/v1/reports/installs', { authorization: 'Bearer nope' }, 'none', 404, 'unknown_report'],
    ['the prefix alone', '/api/v1/reports', {}, 'none', 404, 'unknown_report'],
  ];

  it.each(cases)('answers %s with its status and code', async (_name, path, headers, auth, status, code) => {
    const response = await get(path, auth === 'auth' ? { ...headers, ...bearer(a) } : headers);
    expect({ status: response.status, body: response.body }).toEqual({ status, body: { error: code } });
    expect(REPORT_ERRORS[code as keyof typeof REPORT_ERRORS]).toBe(status);
  });

  it.each([
    ['the last day JavaScript has', 8_640_000_000_000_000 - DAY, 8_640_000_000_000_000],
    ['the first day JavaScript has', -8_640_000_000_000_000, -8_640_000_000_000_000 + DAY],
    ['the turn of the year 10000', Date.UTC(9999, 11, 31), Date.UTC(9999, 11, 31) + 2 * DAY],
    ['the turn of the year 0000', Date.parse('0000-01-01T00:00:00Z') - DAY, Date.parse('0000-01-01T00:00:00Z') + DAY],
  ])('answers a window at %s with no rows, in every report, never a 503', async (_name, since, until) => {
    for (const report of ['attribution', 'revenue', 'cohorts', 'events']) {
      const response = await get(`/api/v1/reports/${report}?since_ms=${since}&until_ms=${until}`, bearer(a));
      expect({ report, status: response.status, rows: response.body?.rows }).toEqual({ report, status: 200, rows: [] });
      expect(response.body?.meta).toMatchObject({ since_ms: since, until_ms: until });
    }
  });

  it.each(['POST', 'PUT', 'DELETE', 'PATCH'])('answers %s on a report 405 method_not_allowed before authentication', async (method) => {
    const response = await get('/api/v1/reports/cohorts', {}, method);
    expect({ status: response.status, body: response.body }).toEqual({ status: 405, body: { error: 'method_not_allowed' } });
    expect(response.headers.get('allow')).toBe('GET');
  });

  it('stops taking a revoked key within the key cache time (at most 60 s)', async () => {
    const tenant = await createTenant();
    expect((await get('/api/v1/reports/cohorts', bearer(tenant))).status).toBe(200);
    await new TenantStore(resourceName.table('tenants')).revokeServerKey(tenant.serverKey);
    const revokedAt = Date.now();
    let status = 200;
    while (status === 200 && Date.now() - revokedAt < 60_000) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await get('/api/v1/reports/cohorts', bearer(tenant))).status;
    }
    expect(status).toBe(401);
    expect(Date.now() - revokedAt).toBeLessThan(3_000);
  });
});

describe('the report rows', () => {
  const day = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * DAY).toISOString().slice(0, 10);
  const written = new Map<string, Map<string, { sk: string; day: string; partner: string; installs: number }>>();

  beforeAll(async () => {
    // Rows written directly through the aggregator's own adapter: a year of two apps.
    for (const [tenant, partners] of [
      [a, ['meta', 'google', 'tiktok']],
      [b, ['meta', 'snap']],
    ] as const) {
      const mine = new Map<string, { sk: string; day: string; partner: string; installs: number }>();
      for (let n = 0; n < 365; n += 3) {
        for (const partner of partners.slice(0, 1 + ((n / 3) % partners.length))) {
          const installs = 1 + ((n * 7 + partner.length) % 13);
          await rows().add(
            tenant.app.app_id,
            { family: 'attribution', day: day(n), group: [partner, 'deterministic'], add: { installs } },
            freshStamp(),
          );
          mine.set(sortKeyOf({ day: day(n), group: [partner, 'deterministic'] }), {
            sk: sortKeyOf({ day: day(n), group: [partner, 'deterministic'] }),
            day: day(n),
            partner,
            installs,
          });
        }
      }
      written.set(tenant.app.app_id, mine);
      // As the aggregator does after its row writes: the day pages the attribution report reads.
      await rows().refreshPages(tenant.app.app_id, 'attribution', [...new Set([...mine.values()].map((row) => row.day))]);
    }
  }, 60_000);

  const expected = (tenant: Tenant, sinceMs: number, untilMs: number) => {
    const first = new Date(sinceMs).toISOString().slice(0, 10);
    const last = new Date(untilMs - 1).toISOString().slice(0, 10);
    return [...written.get(tenant.app.app_id)!.values()]
      .filter((r) => r.day >= first && r.day <= last)
      .sort((x, y) => (x.sk < y.sk ? -1 : 1));
  };

  it('never returns a row of another app, whatever the window, limit, offset or extra parameters', async () => {
    const start = Date.UTC(2026, 0, 1);
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: -20, max: 380 }),
        fc.integer({ min: 1, max: 365 * DAY }),
        fc.integer({ min: 1, max: 1000 }),
        fc.integer({ min: 0, max: 400 }),
        fc.dictionary(
          fc.constantFrom('app_id', 'app', 'pk', 'appKey', 'partner', 'x'),
          fc.constantFrom(b.app.app_id, b.app.app_key, `${b.app.app_id}#attribution`, '*'),
        ),
        async (startDay, span, limit, offset, extra) => {
          const sinceMs = start + startDay * DAY + 3_600_000;
          const untilMs = sinceMs + span;
          const query = new URLSearchParams({
            ...extra,
            since_ms: String(sinceMs),
            until_ms: String(untilMs),
            limit: String(limit),
            offset: String(offset),
          });
          const response = await get(`/api/v1/reports/attribution?${query}`, bearer(a));
          expect(response.status).toBe(200);
          const want = expected(a, sinceMs, untilMs).slice(offset, offset + limit);
          expect(
            (response.body!.rows as { day: string; partner: string; installs: number }[]).map((r) => [r.day, r.partner, r.installs]),
          ).toEqual(want.map((r) => [r.day, r.partner, r.installs]));
          expect(response.body!.meta).toEqual({ since_ms: sinceMs, until_ms: untilMs, limit, offset, elapsed_ms: expect.any(Number) });
          expect(Number.isInteger((response.body!.meta as { elapsed_ms: number }).elapsed_ms)).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  }, 60_000);

  it('pages through a window with limit 7, every row exactly once and in order', async () => {
    const sinceMs = Date.UTC(2026, 2, 1);
    const untilMs = Date.UTC(2026, 5, 1);
    const seen: string[] = [];
    for (let offset = 0; ; offset += 7) {
      const response = await get(`/api/v1/reports/attribution?since_ms=${sinceMs}&until_ms=${untilMs}&limit=7&offset=${offset}`, bearer(a));
      const page = response.body!.rows as { day: string; partner: string; attribution_type: string }[];
      seen.push(...page.map((r) => sortKeyOf({ day: r.day, group: [r.partner, r.attribution_type] })));
      if (page.length < 7) break;
    }
    expect(seen.length).toBeGreaterThan(50);
    expect(seen).toEqual(expected(a, sinceMs, untilMs).map((r) => r.sk));
  });

  it('carries Cache-Control and an ETag, and answers 304 to If-None-Match while the rows are the same', async () => {
    const path = `/api/v1/reports/attribution?since_ms=${Date.UTC(2026, 0, 1)}&until_ms=${Date.UTC(2026, 1, 1)}`;
    const first = await get(path, bearer(a));
    expect(first.headers.get('cache-control')).toBe('private, max-age=60');
    const etag = first.headers.get('etag')!;
    expect(etag).toMatch(/^W\/".+"$/);
    const again = await get(path, { ...bearer(a), 'if-none-match': etag });
    expect(again.status).toBe(304);
    expect(again.body).toBeUndefined();
    expect(again.headers.get('etag')).toBe(etag);
    await rows().add(
      a.app.app_id,
      { family: 'attribution', day: '2026-01-10', group: ['meta', 'deterministic'], add: { installs: 1 } },
      freshStamp(),
    );
    await rows().refreshPages(a.app.app_id, 'attribution', ['2026-01-10']);
    const changed = await get(path, { ...bearer(a), 'if-none-match': etag });
    expect(changed.status).toBe(200);
    expect(changed.headers.get('etag')).not.toBe(etag);
    written.get(a.app.app_id)!.get(sortKeyOf({ day: '2026-01-10', group: ['meta', 'deterministic'] }))!.installs += 1;
  });
});

describe('the reports of aggregated traffic', () => {
  it('serve, through every report, the rows the aggregator made from events sent to POST /event', async () => {
    const tenant = await createTenant();
    const client = new EventClient({
      baseUrl: stack.baseUrl,
      companyKey: tenant.company.company_key,
      appKey: tenant.app.app_key,
      signingSecret: tenant.app.signing_secret,
    });
    const now = Date.now();
    const installAt = Date.UTC(
      new Date(now - 3 * DAY).getUTCFullYear(),
      new Date(now - 3 * DAY).getUTCMonth(),
      new Date(now - 3 * DAY).getUTCDate(),
      12,
    );
    const uuid = (n: number) => `0000000${n}-1111-4222-8333-444444444444`;
    await client.sendEvents([
      { event_id: 'i1', event_name: 'install', install_uuid: uuid(1), ts_ms: installAt, platform: 'ios' },
      { event_id: 'i2', event_name: 'install', install_uuid: uuid(2), ts_ms: installAt + 60_000, platform: 'android' },
      { event_id: 'p1', event_name: 'purchase', install_uuid: uuid(1), ts_ms: installAt + DAY + 60_000, revenue_usd: 4.99 },
      { event_id: 'p2', event_name: 'purchase', install_uuid: uuid(1), ts_ms: installAt + DAY + 120_000, revenue_usd: 5.01 },
      { event_id: 's1', event_name: 'session', install_uuid: uuid(2), ts_ms: installAt + DAY + 60_000 },
    ]);
    await stack.pollers.drain();
    const installDay = new Date(installAt).toISOString().slice(0, 10);
    const nextDay = new Date(installAt + DAY).toISOString().slice(0, 10);
    const report = async (name: string) => (await get(`/api/v1/reports/${name}`, bearer(tenant))).body!.rows;
    expect(await report('attribution')).toEqual([
      { day: installDay, partner: 'organic', attribution_type: 'organic', installs: 2, organic: 2, reinstalls: 0, fraud_flagged: 0 },
    ]);
    expect(await report('cohorts')).toEqual([{ day: installDay, installs: 2, d1: 2, d7: 0, d30: 0, d1_rate: 1, d7_rate: 0, d30_rate: 0 }]);
    expect(await report('revenue')).toEqual([{ day: nextDay, partner: 'organic', purchases: 2, revenue_usd: 10, arppu_usd: 10 }]);
    expect(await report('events')).toEqual([
      { day: installDay, event_name: 'install', events: 2, unique_installs: 2, revenue_usd: 0 },
      { day: nextDay, event_name: 'purchase', events: 2, unique_installs: 1, revenue_usd: 10 },
      { day: nextDay, event_name: 'session', events: 1, unique_installs: 1, revenue_usd: 0 },
    ]);
  });
});
