// Re-engagement through the local stack (docs/deep-links.md, "Re-engagement"): POST /event with a
// deep_link_open by an existing install, then purchases inside and outside the app's window,
// aggregated by the runtime's poller (the aggregator reads the links table under the grants
// lib/manifest.ts gives it); the performance report and the revenue report read over HTTP.

import { EventClient } from '../../client/event-client';
import { LinkStore } from '../../functions/adapters/link-store';
import { SigningSecretStore } from '../../functions/adapters/signing-secret-store';
import { TenantStore } from '../../functions/adapters/tenant-store';
import { resourceName } from '../../functions/shared/config';
import { createTenant, type LocalStack, startLocalStack } from '../support/local-stack';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack();
});
afterAll(async () => {
  await stack?.stop();
});

const DAY = 86_400_000;
const UUID = '22222222-0000-4000-8000-000000000001';
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe('a deep_link_open by an existing install', () => {
  it('counts one re-engagement and moves the revenue within the window to the link, then back; the revenue report stays', async () => {
    const tenant = await createTenant();
    const tenants = new TenantStore(resourceName.table('tenants'), new SigningSecretStore(resourceName.table('signing_secrets')));
    await tenants.updateApp(tenant.app.app_key, { reengagement_window_days: 2 });
    const link = await new LinkStore(resourceName.table('links')).create(tenant.app, { partner: 'retarget_co', campaign: 'winback' });
    const client = new EventClient({
      baseUrl: stack.baseUrl,
      companyKey: tenant.company.company_key,
      appKey: tenant.app.app_key,
      signingSecret: tenant.app.signing_secret,
    });

    // An organic install five days ago, opened by the link (twice, one day) four days ago.
    const now = Date.now();
    const installTs = now - 5 * DAY;
    const openTs = now - 4 * DAY;
    const sent = await client.sendEvents([
      { event_id: 'install-1', event_name: 'install', install_uuid: UUID, ts_ms: installTs, platform: 'android' },
      { event_id: 'open-1', event_name: 'deep_link_open', install_uuid: UUID, ts_ms: openTs, properties: { link_id: link.link_id } },
      {
        event_id: 'open-2',
        event_name: 'deep_link_open',
        install_uuid: UUID,
        ts_ms: openTs + 60_000,
        properties: { link_id: link.link_id },
      },
    ] as never);
    expect(sent.results.map((r) => r.status)).toEqual(['accepted', 'accepted', 'accepted']);
    await stack.pollers.drain();
    // Inside the 2-day window, then after it.
    const inside = openTs + DAY;
    const outside = openTs + 3 * DAY;
    const purchases = await client.sendEvents([
      { event_id: 'buy-1', event_name: 'purchase', install_uuid: UUID, ts_ms: inside, revenue_usd: 5 },
      { event_id: 'buy-2', event_name: 'purchase', install_uuid: UUID, ts_ms: outside, revenue_usd: 7 },
    ] as never);
    expect(purchases.results.map((r) => r.status)).toEqual(['accepted', 'accepted']);
    await stack.pollers.drain();

    const report = async (name: string, params: string) => {
      const response = await fetch(`${stack.baseUrl}/api/v1/reports/${name}?${params}`, {
        headers: { authorization: `Bearer ${tenant.serverKey}` },
      });
      expect(response.status).toBe(200);
      return ((await response.json()) as { rows: Record<string, unknown>[] }).rows;
    };
    const performance = await report('performance', 'group_by=day,partner');
    const pick = (row: Record<string, unknown>) => [row.day, row.partner, row.reengagements, row.revenue_usd, row.recent_revenue_usd];
    expect(performance.map(pick)).toEqual([
      [dayOf(installTs), 'organic', 0, 0, 0],
      [dayOf(openTs), 'retarget_co', 1, 0, 0],
      [dayOf(inside), 'organic', 0, 5, 0],
      [dayOf(inside), 'retarget_co', 0, 0, 5],
      [dayOf(outside), 'organic', 0, 7, 7],
    ]);
    // The interface's revenue report keeps the install's partner, and the attribution report its one organic install.
    expect((await report('revenue', '')).map((row) => [row.day, row.partner, row.revenue_usd])).toEqual([
      [dayOf(inside), 'organic', 5],
      [dayOf(outside), 'organic', 7],
    ]);
    expect((await report('attribution', '')).map((row) => [row.partner, row.installs])).toEqual([['organic', 1]]);
  }, 60_000);
});
