// `admin install show` and `admin rebuild` on data made the way production makes it: clicks over
// HTTP on tracking links, signed event batches through the event client, and aggregation by the
// running runtime's queue poller calling the real aggregator. TRUST_PROXY lets each click and
// batch come from an address the test chooses (X-Forwarded-For).

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { runAdmin, UsageError } from '../../bin/admin';
import type { SdkEvent } from '../../client/event-client';
import { AggregateStore } from '../../functions/adapters/aggregate-store';
import { ClickStore } from '../../functions/adapters/click-store';
import { LinkStore } from '../../functions/adapters/link-store';
import type { InstallReport } from '../../functions/domain/aggregation/install-report';
import type { RowDifference } from '../../functions/domain/aggregation/rebuild';
import { sortKeyOf } from '../../functions/domain/aggregation/rows';
import type { NewLink } from '../../functions/domain/links/link-config';
import { clickTables } from '../../functions/shared/click-tables';
import { dynamoClient } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import { eventClientFrom } from '../support/event-client';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { DESKTOP, MOBILE } from '../unit/links/user-agents';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');
const HOUR = 3_600_000;

let stack: LocalStack;
let tenant: Tenant;
let probabilisticTenant: Tenant;

type RebuildOutput = {
  app_id: string;
  objects: number;
  events: number;
  unreadable: string[];
  rows_compared: number;
  differences: RowDifference[];
  applied: boolean;
};

const UUID = {
  deterministic: '3f0c6a3e-1d2b-4c5d-8e9f-0a1b2c3d4e51',
  organic: '3f0c6a3e-1d2b-4c5d-8e9f-0a1b2c3d4e52',
  fraud: '3f0c6a3e-1d2b-4c5d-8e9f-0a1b2c3d4e53',
  waiting: '3f0c6a3e-1d2b-4c5d-8e9f-0a1b2c3d4e54',
  probabilistic: '3f0c6a3e-1d2b-4c5d-8e9f-0a1b2c3d4e55',
  unknown: '3f0c6a3e-1d2b-4c5d-8e9f-0a1b2c3d4e56',
};
// Each address in its own /24, so that no click spends another's rate-limit allowance.
const IP = { iosClick: '10.1.0.1', organic: '10.2.0.1', honeypot: '10.3.0.1', androidClick: '10.4.0.1', probabilistic: '10.5.0.1' };

const linkOf = (owner: Tenant, input: Partial<NewLink>) =>
  new LinkStore(resourceName.table('links')).create(owner.app, { partner: 'meta', ...input });

/** GET /l/{link_id} from an address; the click id from the redirect (inside the Play referrer on Android) and the stored click. */
async function click(linkId: string, ip: string, ua: string, query = '') {
  const response = await fetch(`${stack.baseUrl}/l/${linkId}${query}`, {
    redirect: 'manual',
    headers: { 'user-agent': ua, 'x-forwarded-for': ip },
  });
  const location = new URL(response.headers.get('location') ?? '');
  const referrer = location.searchParams.get('referrer') ?? undefined;
  const clickId = referrer ? new URLSearchParams(referrer).get('click_id') : location.searchParams.get('click_id');
  const appId = (await new LinkStore(resourceName.table('links')).byId(linkId))?.app_id ?? '';
  const record = clickId ? await new ClickStore(clickTables()).byId(appId, clickId) : undefined;
  if (!clickId || !record) throw new Error(`no click recorded for ${linkId}: ${response.status} ${location}`);
  return { clickId, referrer, tsMs: record.ts_ms };
}

/** Sends one batch (one audit object) of an app's events from an address. */
async function send(owner: Tenant, ip: string, events: SdkEvent[]) {
  const client = eventClientFrom(stack.baseUrl, owner, ip);
  const result = await client.sendEvents(events);
  expect(result.rejected).toBe(0);
}

const install = (installUuid: string, eventId: string, tsMs: number, extra: Partial<SdkEvent> = {}): SdkEvent => ({
  event_id: eventId,
  event_name: 'install',
  install_uuid: installUuid,
  ts_ms: tsMs,
  platform: 'ios',
  ...extra,
});

const show = (owner: Tenant, installUuid: string) =>
  runAdmin(['install', 'show', '--app-key', owner.app.app_key, '--install-uuid', installUuid]) as Promise<InstallReport>;
const rebuild = (owner: Tenant, ...flags: string[]) =>
  runAdmin(['rebuild', '--app-key', owner.app.app_key, ...flags]) as Promise<RebuildOutput>;

/** Runs the CLI as a user does; resolves with its exit code and output either way. */
async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return run('npm', ['run', '--silent', 'admin', '--', ...args], { cwd: root, env: { ...process.env, DATA_DIR: stack.dataDir } }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code: number; stdout: string; stderr: string }) => ({ code: error.code, stdout: error.stdout, stderr: error.stderr }),
  );
}

const clicks: Record<string, { clickId: string; tsMs: number; linkId: string }> = {};

beforeAll(async () => {
  stack = await startLocalStack({ trustProxy: true });
  tenant = await createTenant();
  probabilisticTenant = await createTenant({ app: { probabilistic: true } });

  const meta = await linkOf(tenant, { partner: 'meta', campaign: 'spring' });
  const honeypot = await linkOf(tenant, { partner: 'trap', honeypot: true });
  const google = await linkOf(probabilisticTenant, { partner: 'google' });

  // Deterministic: the install names an iOS click a minute after it.
  const ios = await click(meta.link_id, IP.iosClick, MOBILE.iosSafari, '?click_id=ext-1&sub1=creative_a');
  clicks.deterministic = { ...ios, linkId: meta.link_id };
  await send(tenant, IP.iosClick, [
    install(UUID.deterministic, 'i-det', ios.tsMs + 60_000, { attribution: { click_id: ios.clickId } }),
    { event_id: 'p-det', event_name: 'purchase', install_uuid: UUID.deterministic, ts_ms: ios.tsMs + 61_000, revenue_usd: 4.99 },
  ]);

  // Organic: the click it names does not exist. Installed 25 h ago, back today: retained on day 1.
  const now = Date.now();
  await send(tenant, IP.organic, [
    install(UUID.organic, 'i-org', now - 25 * HOUR, { attribution: { click_id: 'no-such-click' } }),
    { event_id: 's-org', event_name: 'session', install_uuid: UUID.organic, ts_ms: now },
  ]);

  // Fraud: an address a honeypot link blocked installs 3 s after an Android click (named by the
  // Play referrer) made from another address.
  const trapped = await fetch(`${stack.baseUrl}/l/${honeypot.link_id}`, {
    redirect: 'manual',
    headers: { 'user-agent': DESKTOP.chromeWindows, 'x-forwarded-for': IP.honeypot },
  });
  expect(trapped.status).toBe(404);
  const android = await click(meta.link_id, IP.androidClick, MOBILE.chromeAndroid);
  clicks.fraud = { ...android, linkId: meta.link_id };
  await send(tenant, IP.honeypot, [
    install(UUID.fraud, 'i-fraud', android.tsMs + 3000, { platform: 'android', attribution: { referrer: android.referrer } }),
  ]);

  // An event whose install has not arrived.
  await send(tenant, IP.organic, [
    { event_id: 'p-wait', event_name: 'purchase', install_uuid: UUID.waiting, ts_ms: Date.now(), revenue_usd: 1 },
  ]);

  // Probabilistic: no click id, same address and platform as a click two minutes before.
  const probable = await click(google.link_id, IP.probabilistic, MOBILE.chromeAndroid);
  clicks.probabilistic = { ...probable, linkId: google.link_id };
  await send(probabilisticTenant, IP.probabilistic, [
    install(UUID.probabilistic, 'i-prob', probable.tsMs + 120_000, { platform: 'android' }),
  ]);

  await stack.pollers.drain();
}, 60_000);

afterAll(async () => {
  await stack?.stop();
});

describe('admin install show', () => {
  it('explains a deterministic install: the click and link it named, the partner, the time to install and the lookback', async () => {
    const report = await show(tenant, UUID.deterministic.toUpperCase());
    const { clickId, linkId, tsMs } = clicks.deterministic;
    expect(report).toMatchObject({
      app_id: tenant.app.app_id,
      install_uuid: UUID.deterministic,
      found: true,
      current: { member: 'i-det', partner: 'meta', attribution_type: 'deterministic', platform: 'ios' },
      events: { counted: 1, waiting_for_install: 0 },
    });
    expect(report.installs).toHaveLength(1);
    const [only] = report.installs;
    expect(only).toMatchObject({
      event_id: 'i-det',
      partner: 'meta',
      attribution_type: 'deterministic',
      rule: 'click_id',
      reinstall: false,
      click_id: clickId,
      link_id: linkId,
      campaign: 'spring',
      ext_click_id: 'ext-1',
      sub1: 'creative_a',
      click_ms: tsMs,
      ctit_seconds: 60,
      window: { lookback_days: 7 },
      fraud_reasons: [],
    });
    expect(only.explanation).toBe(
      `deterministic: click ${clickId} on link ${linkId} (partner meta, campaign spring) 60 s before the install, within the 7-day lookback, named by the install's attribution.click_id`,
    );
  });

  it('explains a probabilistic install by the click from the same address and platform', async () => {
    const report = await show(probabilisticTenant, UUID.probabilistic);
    const { clickId, linkId } = clicks.probabilistic;
    expect(report.installs).toEqual([
      expect.objectContaining({
        partner: 'google',
        attribution_type: 'probabilistic',
        rule: 'same_ip_platform_24h',
        click_id: clickId,
        link_id: linkId,
        ctit_seconds: 120,
        platform: 'android',
      }),
    ]);
    expect(report.installs[0].explanation).toBe(
      `probabilistic: latest click ${clickId} on link ${linkId} (partner google) from the same address and platform in the 24 h before the install, 120 s before it`,
    );
  });

  it('explains an organic install, names the click it refused, and shows its day-1 retention', async () => {
    const report = await show(tenant, UUID.organic);
    expect(report.installs).toEqual([
      expect.objectContaining({
        event_id: 'i-org',
        partner: 'organic',
        attribution_type: 'organic',
        rule: 'no_match',
        refused_click: { click_id: 'no-such-click', reason: 'unknown_or_expired' },
      }),
    ]);
    expect(report.installs[0].explanation).toBe('organic: no click matched (click no-such-click refused: unknown_or_expired)');
    expect(report.retention).toEqual({ 'i-org': ['d1'] });
  });

  it('explains a fraud-flagged install: a click named by the Play referrer 3 s before, from an address a honeypot blocked', async () => {
    const report = await show(tenant, UUID.fraud);
    const { clickId, linkId } = clicks.fraud;
    const [only] = report.installs;
    expect(only).toMatchObject({
      partner: 'meta',
      attribution_type: 'deterministic',
      rule: 'referrer_click_id',
      click_id: clickId,
      link_id: linkId,
      ctit_seconds: 3,
    });
    expect(only.fraud_reasons).toEqual(['ctit_under_10s', 'honeypot_ip']);
    expect(only.explanation).toContain(`click ${clickId} on link ${linkId} (partner meta, campaign spring) 3 s before the install`);
    expect(only.explanation).toContain('named by the Play install referrer');
    expect(only.explanation).toContain('flagged as fraud: ctit_under_10s (3 s from click to install, under 10 s), honeypot_ip');
  });

  it('shows an event waiting for its install, and an install_uuid never seen as not found', async () => {
    expect(await show(tenant, UUID.waiting)).toMatchObject({
      found: true,
      current: null,
      installs: [],
      events: { counted: 1, waiting_for_install: 1 },
    });
    expect(await show(tenant, UUID.unknown)).toEqual({
      app_id: tenant.app.app_id,
      install_uuid: UUID.unknown,
      found: false,
      current: null,
      installs: [],
      events: { counted: 0, waiting_for_install: 0 },
      retention: {},
      first_launch: null,
      consent: null,
    });
  });
});

describe('admin rebuild', () => {
  it('finds the live rows equal to the audit store, reports a corrupted row, repairs it with --apply, and then finds none', async () => {
    const clean = await rebuild(tenant);
    expect(clean).toMatchObject({ app_id: tenant.app.app_id, objects: 4, events: 6, unreadable: [], differences: [], applied: false });
    expect(clean.rows_compared).toBeGreaterThanOrEqual(8);
    expect(await rebuild(probabilisticTenant)).toMatchObject({ objects: 1, events: 1, differences: [] });

    const { current } = await show(tenant, UUID.deterministic);
    const day = current!.day;
    const key = { pk: `${tenant.app.app_id}#attribution`, sk: sortKeyOf({ day, group: ['meta', 'deterministic'] }) };
    await dynamoClient().send(
      new UpdateCommand({
        TableName: resourceName.table('aggregates'),
        Key: key,
        UpdateExpression: 'SET installs = installs + :n ADD v :one',
        ExpressionAttributeValues: { ':n': 5, ':one': 1 },
      }),
    );
    // The drift reached the day page the reports read, as a write through the store would.
    const store = new AggregateStore(resourceName.table('aggregates'));
    const metaOnPage = async () =>
      (await store.page(tenant.app.app_id, 'attribution', { firstDay: day, lastDay: day }, 100)).find(
        (row) => row.partner === 'meta' && row.attribution_type === 'deterministic',
      );
    await store.refreshPages(tenant.app.app_id, 'attribution', [day]);
    expect(await metaOnPage()).toMatchObject({ installs: 7 });

    const expected: RowDifference = {
      family: 'attribution',
      day,
      group: { partner: 'meta', attribution_type: 'deterministic' },
      live: { installs: 7, organic: 0, reinstalls: 0, fraud_flagged: 1 },
      rebuilt: { installs: 2, organic: 0, reinstalls: 0, fraud_flagged: 1 },
    };
    expect((await rebuild(tenant)).differences).toEqual([expected]);
    expect(await rebuild(tenant, '--apply')).toMatchObject({ differences: [expected], applied: true });
    expect(await rebuild(tenant)).toMatchObject({ differences: [], applied: false });
    const rows = await new AggregateStore(resourceName.table('aggregates')).rows(tenant.app.app_id, 'attribution');
    expect(rows.find((row) => row.sk === key.sk)).toMatchObject({ installs: 2, fraud_flagged: 1 });
    expect(await metaOnPage()).toMatchObject({ installs: 2, fraud_flagged: 1 });
  });
});

describe('the admin CLI on aggregation', () => {
  it('prints exactly one JSON object for rebuild', async () => {
    const { code, stdout } = await cli('rebuild', '--app-key', tenant.app.app_key);
    expect(code).toBe(0);
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toMatchObject({ app_id: tenant.app.app_id, differences: [], applied: false });
  }, 30_000);

  it('refuses an unknown app key and a malformed uuid with a non-zero exit and nothing on stdout', async () => {
    const unknownApp = await cli('install', 'show', '--app-key', 'app_live_nope', '--install-uuid', UUID.deterministic);
    expect(unknownApp).toMatchObject({ code: 1, stdout: '' });
    expect(unknownApp.stderr).toMatch(/app not found/);

    const badUuid = await cli('install', 'show', '--app-key', tenant.app.app_key, '--install-uuid', 'not-a-uuid');
    expect(badUuid).toMatchObject({ code: 2, stdout: '' });
    expect(badUuid.stderr).toMatch(/--install-uuid must be a UUID\n$/);

    await expect(runAdmin(['rebuild', '--app-key', 'app_live_nope'])).rejects.toThrow(/app not found/);
    await expect(runAdmin(['rebuild', '--app-key', tenant.app.app_key, '--install-uuid', UUID.deterministic])).rejects.toBeInstanceOf(
      UsageError,
    );
  }, 60_000);
});
