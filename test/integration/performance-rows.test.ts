// The perf rows through the local stack (docs/analytics.md, "Rows"): a real click through
// GET /l/{link_id} with a viewer country, an install naming it and a purchase through POST /event,
// an organic install whose request came with a viewer country, aggregated by the runtime's poller;
// the link redirect and the aggregator run under the grants lib/manifest.ts gives them.

import { EventClient } from '../../client/event-client';
import { AggregateStore } from '../../functions/adapters/aggregate-store';
import { ClickStore } from '../../functions/adapters/click-store';
import { LinkStore } from '../../functions/adapters/link-store';
import { clickTables } from '../../functions/shared/click-tables';
import { resourceName } from '../../functions/shared/config';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { MOBILE } from '../unit/links/user-agents';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack({ trustProxy: true });
});
afterAll(async () => {
  await stack?.stop();
});

const ZONE = 'Asia/Tokyo';
const localDay = (ms: number) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: ZONE, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms);

/** The app's client, its requests coming from `ip` with the edge's viewer country (as CloudFront sets it). */
function clientFrom(tenant: Tenant, ip: string, country: string): EventClient {
  return new EventClient({
    baseUrl: stack.baseUrl,
    companyKey: tenant.company.company_key,
    appKey: tenant.app.app_key,
    signingSecret: tenant.app.signing_secret,
    fetch: (input, init) => {
      const headers = new Headers(init?.headers);
      headers.set('x-forwarded-for', ip);
      headers.set('cloudfront-viewer-country', country);
      return fetch(input, { ...init, headers });
    },
  });
}

/** An app's rows of one family: "day|group..." to the non-zero counters. */
async function family(appId: string, name: 'perf' | 'perf_partner' | 'perf_stamp', columns: readonly string[]) {
  const out: Record<string, Record<string, number>> = {};
  for (const row of await new AggregateStore(resourceName.table('aggregates')).rows(appId, name)) {
    const counters: Record<string, number> = {};
    for (const [key, value] of Object.entries(row)) if (typeof value === 'number' && value !== 0) counters[key] = value;
    out[[row.day, ...columns.map((column) => String(row[column]))].join('|')] = counters;
  }
  return out;
}

describe('perf rows through the public endpoints', () => {
  it("count a click with its viewer country, the install that names it and its purchase under the click's dimensions, and an organic install under its request's country, on the app's local days", async () => {
    const tenant = await createTenant({ app: { timeZone: ZONE } });
    const appId = tenant.app.app_id;
    const link = await new LinkStore(resourceName.table('links')).create(tenant.app, { partner: 'acme_ads', campaign: 'spring' });

    const response = await fetch(`${stack.baseUrl}/l/${link.link_id}`, {
      redirect: 'manual',
      headers: { 'user-agent': MOBILE.iosSafari, 'x-forwarded-for': '10.77.0.9', 'cloudfront-viewer-country': 'JP' },
    });
    expect(response.status).toBe(302);
    const clickId = new URL(response.headers.get('location') ?? 'http://x/').searchParams.get('click_id');
    expect(clickId).toBeTruthy();
    const recorded = await new ClickStore(clickTables()).byId(appId, String(clickId));
    expect(recorded?.country).toBe('JP');
    const clickDay = localDay(recorded?.ts_ms ?? 0);

    // The install request comes from another country than the click: the click's wins. A minute
    // after the click (the install's clock may run ahead of the server's by up to an hour), so no
    // fast-CTIT flag.
    const installTs = (recorded?.ts_ms ?? 0) + 60_000;
    const paid = await clientFrom(tenant, '10.77.0.9', 'KR').sendEvents([
      {
        event_id: 'install-1',
        event_name: 'install',
        install_uuid: '11111111-0000-4000-8000-000000000001',
        ts_ms: installTs,
        platform: 'ios',
        attribution: { click_id: String(clickId) },
      },
      {
        event_id: 'purchase-1',
        event_name: 'purchase',
        install_uuid: '11111111-0000-4000-8000-000000000001',
        ts_ms: installTs + 1000,
        revenue_usd: 4.99,
      },
    ] as never);
    expect(paid.results.map((r) => r.status)).toEqual(['accepted', 'accepted']);
    const organic = await clientFrom(tenant, '10.77.1.9', 'BR').sendEvents([
      {
        event_id: 'install-1',
        event_name: 'install',
        install_uuid: '11111111-0000-4000-8000-000000000002',
        ts_ms: installTs,
        platform: 'android',
      },
    ] as never);
    expect(organic.results.map((r) => r.status)).toEqual(['accepted']);
    await stack.pollers.drain();

    const day = localDay(installTs);
    // No re-engagement: revenue by most recent attribution is the install's own (issue 37).
    const purchase = {
      revenue_micros: 4_990_000,
      recent_revenue_micros: 4_990_000,
      cohort_d0_micros: 4_990_000,
      cohort_d7_micros: 4_990_000,
      cohort_d30_micros: 4_990_000,
    };
    const expectedPerf: Record<string, Record<string, number>> = {
      [`${day}|acme_ads|spring|JP|ios`]: { installs: 1, ...purchase },
      [`${day}|organic|(none)|BR|android`]: { installs: 1, organic: 1 },
    };
    const clickKey = `${clickDay}|acme_ads|spring|JP|ios`;
    expectedPerf[clickKey] = { clicks: 1, ...expectedPerf[clickKey] };
    expect(await family(appId, 'perf', ['partner', 'campaign', 'country', 'platform'])).toEqual(expectedPerf);

    const expectedPartner: Record<string, Record<string, number>> = {
      [`${day}|acme_ads`]: { installs: 1, ...purchase },
      [`${day}|organic`]: { installs: 1, organic: 1 },
    };
    expectedPartner[`${clickDay}|acme_ads`] = { clicks: 1, ...expectedPartner[`${clickDay}|acme_ads`] };
    expect(await family(appId, 'perf_partner', ['partner'])).toEqual(expectedPartner);

    // The click and the aggregator each moved the day's stamp.
    const stamps = await family(appId, 'perf_stamp', []);
    expect(Object.keys(stamps).sort()).toEqual([...new Set([clickDay, day])].sort());
    expect(Object.values(stamps).reduce((sum, stamp) => sum + (stamp.v ?? 0), 0)).toBeGreaterThanOrEqual(2);
  }, 60_000);
});
