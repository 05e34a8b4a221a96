// The daily AppLovin MAX pull through the local runtime (issue 40 item 3): installs counted through
// POST /event, then yesterday's user-level report of the app served by a stand-in that follows
// MAX's documented JSON and CSV (local/max-report-stub.ts), the report key in the local Secrets
// Manager. The function sees only its environment and IAM policy. The performance report's ad
// revenue equals an oracle's; rows of unknown users are rejected and reported; a second app whose
// pull fails holds back nothing; the same day pulled again counts nothing twice.

import { randomUUID } from 'node:crypto';
import { eventBatchRequest } from '../../client/event-client';
import { TenantStore } from '../../functions/adapters/tenant-store';
import type { MaxPullSummary } from '../../functions/domain/ingest/max-pull';
import { resourceName } from '../../functions/shared/config';
import { MAX_REPORT_KEY_SECRET_PREFIX } from '../../lib/function-constants';
import { type MaxImpression, type MaxReportStub, startMaxReportStub } from '../../local/max-report-stub';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { waitFor } from '../support/wait-for';
import { credentialsOf, post } from './ingest-support';

let stub: MaxReportStub;
let stack: LocalStack;
let tenant: Tenant;
let broken: Tenant;

beforeAll(async () => {
  stub = await startMaxReportStub();
  stack = await startLocalStack({ internet: { MAX_REPORT_URL: stub.url } });
  tenant = await createTenant();
  broken = await createTenant();
});

afterAll(async () => {
  await stack?.stop();
  await stub?.close();
});

const DAY_MS = 86_400_000;

async function performanceAdRevenue(since: number): Promise<number | undefined> {
  const response = await fetch(`${stack.baseUrl}/api/v1/reports/performance?since_ms=${since}&until_ms=${Date.now() + 60_000}`, {
    headers: { authorization: `Bearer ${tenant.serverKey}` },
  });
  const rows = ((await response.json()) as { rows: { ad_revenue_usd: number }[] }).rows;
  return rows.length === 0 ? undefined : rows.reduce((sum, row) => sum + row.ad_revenue_usd, 0);
}

describe('the daily MAX pull', () => {
  it("takes yesterday's report rows of known installs once, rejects the others with their reasons, and goes on past an app that fails", async () => {
    const yesterdayStart = Math.floor((Date.now() - DAY_MS) / DAY_MS) * DAY_MS;
    const day = new Date(yesterdayStart).toISOString().slice(0, 10);
    const users = [randomUUID(), randomUUID()];
    const installed = await post(
      stack.baseUrl,
      '/event',
      eventBatchRequest(credentialsOf(tenant), {
        events: users.map((user, i) => ({
          event_id: randomUUID(),
          event_name: 'install',
          install_uuid: user,
          ts_ms: yesterdayStart + 60_000 * (i + 1),
          platform: 'ios',
        })),
        sent_at_ms: Date.now(),
      }),
    );
    expect(installed.body).toMatchObject({ accepted: 2 });
    await stack.pollers.drain();

    const impression = (userId: string, minute: number, revenue: number, adFormat = 'REWARD'): MaxImpression => ({
      tsMs: yesterdayStart + 3_600_000 + minute * 60_000,
      adUnitId: 'f1e2d3c4b5a69788',
      adFormat,
      placement: minute % 2 === 0 ? 'level_end' : 'shop, "daily"',
      userId,
      revenue,
      network: 'APPLOVIN_NETWORK',
    });
    const known = [
      impression(users[0] as string, 1, 0.0125),
      impression(users[0] as string, 2, 0.00042, 'BANNER'),
      impression(users[1] as string, 3, 0.031, 'INTER'),
      impression(users[1] as string, 4, 0.0009, 'APPOPEN'),
    ];
    const unknown = [impression(randomUUID(), 5, 0.5), impression('', 6, 0.25)];
    const query = { apiKey: `key-${randomUUID()}`, platform: 'ios', application: 'com.example.game', day };
    stub.report(query, [...known, ...unknown]);
    const secretName = `${MAX_REPORT_KEY_SECRET_PREFIX}game`;
    stack.secrets.put(secretName, query.apiKey);
    const tenants = new TenantStore(resourceName.table('tenants'));
    const settings = { on: true, report_key_secret: secretName, application: query.application, platform: 'ios' as const };
    await tenants.updateApp(tenant.app.app_key, { max_pull: settings });
    // The other app names a secret nobody made: its pull fails, alone.
    await tenants.updateApp(broken.app.app_key, { max_pull: { ...settings, report_key_secret: `${MAX_REPORT_KEY_SECRET_PREFIX}none` } });

    await expect(stack.scheduler.run('max-revenue-pull')).rejects.toThrow(`${broken.app.app_id} (secret_unreadable)`);
    await stack.pollers.drain();
    const oracle = known.reduce((sum, row) => sum + Math.round(row.revenue * 1e6), 0) / 1e6;
    await waitFor(async () => (await performanceAdRevenue(yesterdayStart)) === oracle, { timeoutMs: 30_000 });

    // Pulled again, with the broken app off: the same rows, nothing more counted; the rejected rows said with their reasons.
    await tenants.updateApp(broken.app.app_key, { max_pull: { ...settings, on: false } });
    const again = (await stack.scheduler.run('max-revenue-pull')) as { day: string; apps: MaxPullSummary[]; failed: unknown[] };
    expect(again).toEqual({
      day,
      apps: [{ app_id: tenant.app.app_id, day, rows: 6, accepted: 4, rejected: 2, reasons: { no_user_id: 1, unknown_install: 1 } }],
      failed: [],
    });
    await stack.pollers.drain();
    expect(await performanceAdRevenue(yesterdayStart)).toBe(oracle);
    // The broken app never reached MAX: its key was never read.
    expect(stub.requests()).toBe(2);
  });
});
