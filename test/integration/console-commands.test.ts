// The admin commands the console's pages read (listings, link try, report show), through the CLI
// entry point: what they print, what they never print, and that a report page is the API's page.

import { runAdmin } from '../../bin/admin';
import { EventClient } from '../../client/event-client';
import { AggregateStore } from '../../functions/adapters/aggregate-store';
import { IpBlockStore } from '../../functions/adapters/ip-block-store';
import { resourceName } from '../../functions/shared/config';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { freshStamp } from '../support/row-stamps';

let stack: LocalStack;
let tenant: Tenant;

beforeAll(async () => {
  stack = await startLocalStack();
  tenant = await createTenant();
});
afterAll(async () => {
  await stack?.stop();
});

type Json = Record<string, unknown>;

describe('the listings the console reads', () => {
  it('lists companies, and apps without their signing secrets; app show has the keys and store URLs', async () => {
    const { companies } = (await runAdmin(['company', 'list'])) as { companies: Json[] };
    expect(companies).toContainEqual(
      expect.objectContaining({ company_key: tenant.company.company_key, name: 'Test Co', suspended: false }),
    );
    const { apps } = (await runAdmin(['app', 'list', '--company-key', tenant.company.company_key])) as { apps: Json[] };
    expect(apps).toEqual([expect.objectContaining({ app_key: tenant.app.app_key, ios_url: tenant.app.ios_url })]);
    expect(JSON.stringify(apps)).not.toContain(tenant.app.signing_secret);
    expect(await runAdmin(['app', 'show', '--app-key', tenant.app.app_key])).toMatchObject({
      app_id: tenant.app.app_id,
      company_key: tenant.company.company_key,
      signing_secret: tenant.app.signing_secret,
      android_url: tenant.app.android_url,
    });
    await expect(runAdmin(['app', 'list', '--company-key', 'co_live_nope'])).rejects.toThrow(/company not found/);
  });

  it('lists server keys by the SHA-256 only, and revokes one by it', async () => {
    const { server_key } = (await runAdmin(['server-key', 'create', '--app-key', tenant.app.app_key])) as { server_key: string };
    const listed = (await runAdmin(['server-key', 'list', '--app-key', tenant.app.app_key])) as {
      server_keys: { key_id: string; revoked: boolean }[];
    };
    expect(listed.server_keys).toHaveLength(2);
    expect(JSON.stringify(listed)).not.toContain(server_key.slice(4));
    expect(JSON.stringify(listed)).not.toContain(tenant.serverKey.slice(4));
    const newest = listed.server_keys[1];
    expect(await runAdmin(['server-key', 'revoke', '--key-id', newest.key_id])).toEqual({ ok: true });
    const after = (await runAdmin(['server-key', 'list', '--app-key', tenant.app.app_key])) as { server_keys: { revoked: boolean }[] };
    expect(after.server_keys.map((k) => k.revoked)).toEqual([false, true]);
    await expect(runAdmin(['server-key', 'revoke', '--key-id', '0'.repeat(64)])).rejects.toThrow(/server key not found/);
    await expect(runAdmin(['server-key', 'revoke'])).rejects.toThrow(/exactly one of --server-key and --key-id/);
  });
});

describe('link try', () => {
  it("gives the partner URL and each platform's redirect, recording no click", async () => {
    const { link_id } = (await runAdmin([
      'link',
      'create',
      '--app-key',
      tenant.app.app_key,
      '--partner',
      'meta',
      '--countries-allow',
      'US,CA',
    ])) as { link_id: string };
    const trial = (await runAdmin(['link', 'try', '--link-id', link_id, '--sub1', 'a b', '--mobile-only', '--country', 'us'])) as {
      url: string;
      clicks: { platform: string; status: number; location?: string; dropped?: string }[];
    };
    expect(trial.url).toBe(`${stack.baseUrl}/l/${link_id}?sub1=a%20b&mobile_only=1`);
    expect(trial.clicks.map((c) => [c.platform, c.status, c.dropped])).toEqual([
      ['ios', 302, undefined],
      ['android', 302, undefined],
      ['desktop', 302, 'desktop_on_mobile_only'],
    ]);
    expect(trial.clicks[0].location).toMatch(/^https:\/\/apps\.apple\.com\/app\/id1234567890\?click_id=[\w-]+&link_id=/);
    const outside = (await runAdmin(['link', 'try', '--link-id', link_id, '--country', 'FR'])) as { clicks: { dropped?: string }[] };
    expect(outside.clicks.map((c) => c.dropped)).toEqual(['country_not_allowed', 'country_not_allowed', 'country_not_allowed']);
  });

  it("answers a honeypot's test click 404 and blocks no one", async () => {
    const { link_id } = (await runAdmin(['link', 'create', '--app-key', tenant.app.app_key, '--partner', 'trap', '--honeypot'])) as {
      link_id: string;
    };
    const trial = (await runAdmin(['link', 'try', '--link-id', link_id])) as { clicks: { status: number }[] };
    expect(trial.clicks.map((c) => c.status)).toEqual([404, 404, 404]);
    expect(await new IpBlockStore(resourceName.table('ip_blocks')).isBlocked(tenant.company.company_id, '203.0.113.7', Date.now())).toBe(
      false,
    );
    const { links } = (await runAdmin(['link', 'list', '--app-key', tenant.app.app_key])) as {
      links: { link_id: string; honeypot: boolean; url: string }[];
    };
    expect(links.map((l) => [l.honeypot, l.url])).toContainEqual([true, `${stack.baseUrl}/l/${link_id}`]);
  });
});

describe('report show', () => {
  it('prints the page GET /api/v1/reports/{report} answers for the same app, window and paging', async () => {
    const client = new EventClient({
      baseUrl: stack.baseUrl,
      companyKey: tenant.company.company_key,
      appKey: tenant.app.app_key,
      signingSecret: tenant.app.signing_secret,
    });
    const now = Date.now();
    const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    await client.sendEvents(
      [1, 2, 3].flatMap((n) => [
        { event_id: `i${n}`, event_name: 'install', install_uuid: uuid(n), ts_ms: now - n * 86_400_000, platform: 'ios' as const },
        { event_id: `p${n}`, event_name: 'purchase', install_uuid: uuid(n), ts_ms: now - n * 86_400_000 + 1000, revenue_usd: n },
      ]),
    );
    await stack.pollers.drain();
    const window = { since_ms: String(now - 10 * 86_400_000), until_ms: String(now), limit: '2', offset: '1' };
    for (const report of ['attribution', 'revenue', 'cohorts', 'events']) {
      const response = await fetch(`${stack.baseUrl}/api/v1/reports/${report}?${new URLSearchParams(window)}`, {
        headers: { authorization: `Bearer ${tenant.serverKey}` },
      });
      const api = (await response.json()) as { rows: unknown[]; meta: Json };
      const shown = (await runAdmin([
        'report',
        'show',
        '--app-key',
        tenant.app.app_key,
        '--report',
        report,
        '--since-ms',
        window.since_ms,
        '--until-ms',
        window.until_ms,
        '--limit',
        window.limit,
        '--offset',
        window.offset,
      ])) as { rows: unknown[]; meta: Json };
      expect(shown.rows).toEqual(api.rows);
      expect(shown.rows).toHaveLength(2);
      expect({ ...shown.meta, elapsed_ms: 0 }).toEqual({ ...api.meta, elapsed_ms: 0 });
    }
    await expect(runAdmin(['report', 'show', '--app-key', tenant.app.app_key, '--report', 'cohorts', '--limit', '1001'])).rejects.toThrow(
      'invalid_limit',
    );
    await expect(runAdmin(['report', 'show', '--app-key', tenant.app.app_key, '--report', 'installs'])).rejects.toThrow(/--report/);
  });
});

describe('report pages', () => {
  it('pages the rows an older version wrote without day pages, so the attribution report shows them', async () => {
    const upgraded = await createTenant();
    const aggregates = new AggregateStore(resourceName.table('aggregates'));
    const day = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
    await aggregates.add(
      upgraded.app.app_id,
      { family: 'attribution', day, group: ['meta', 'deterministic'], add: { installs: 3 } },
      freshStamp(),
    );
    const attribution = async () =>
      ((await runAdmin(['report', 'show', '--app-key', upgraded.app.app_key, '--report', 'attribution'])) as { rows: Json[] }).rows;
    expect(await attribution()).toEqual([]);
    expect(await runAdmin(['report', 'pages', '--app-key', upgraded.app.app_key])).toEqual({
      app_id: upgraded.app.app_id,
      days_refreshed: { attribution: 1 },
    });
    expect(await attribution()).toEqual([
      { day, partner: 'meta', attribution_type: 'deterministic', installs: 3, organic: 0, reinstalls: 0, fraud_flagged: 0 },
    ]);
    await expect(runAdmin(['report', 'pages', '--app-key', 'app_live_nope'])).rejects.toThrow(/app not found/);
  });
});
