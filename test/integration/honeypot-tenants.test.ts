// A honeypot block is its company's own (issue 19): tenant A's honeypot, followed from an address
// (a CGNAT address is shared by thousands of phones), must leave tenant B's clicks, installs and
// postbacks from that address untouched, while A's own links and installs from it stay blocked.
// Over real HTTP against the local runtime; TRUST_PROXY lets the test choose each request's address.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runCommand } from '../../admin/commands';
import type { SdkEvent } from '../../client/event-client';
import { LinkStore } from '../../functions/adapters/link-store';
import { resourceName } from '../../functions/shared/config';
import { eventClientFrom } from '../support/event-client';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { waitFor } from '../support/wait-for';
import { MOBILE } from '../unit/links/user-agents';

// Read by the runtime at start and by the sender at its cold start: a local receiver on 127.0.0.1.
process.env.POSTBACK_ALLOW_LOOPBACK = '1';

let stack: LocalStack;
let receiver: Server;
const received: URL[] = [];

/** A CGNAT address (RFC 6598), the kind many unrelated phones share. */
const SHARED_IP = '100.64.12.34';
const OTHER_IP = '198.51.100.23';

beforeAll(async () => {
  stack = await startLocalStack({ trustProxy: true });
  receiver = createServer((request, response) => {
    received.push(new URL(request.url ?? '/', 'http://receiver'));
    response.end('ok');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
});

afterAll(async () => {
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
  await stack?.stop();
});

async function click(linkId: string, ip: string) {
  const response = await fetch(`${stack.baseUrl}/l/${linkId}`, {
    redirect: 'manual',
    headers: { 'user-agent': MOBILE.iosSafari, 'x-forwarded-for': ip },
  });
  const location = response.headers.get('location');
  return { status: response.status, clickId: location ? new URL(location).searchParams.get('click_id') : null };
}

const install = (installUuid: string, tsMs: number, clickId?: string): SdkEvent => ({
  event_id: `install-${installUuid}`,
  event_name: 'install',
  install_uuid: installUuid,
  ts_ms: tsMs,
  platform: 'ios',
  ...(clickId ? { attribution: { click_id: clickId } } : {}),
});

async function send(tenant: Tenant, ip: string, events: SdkEvent[]) {
  const result = await eventClientFrom(stack.baseUrl, tenant, ip).sendEvents(events);
  expect(result.rejected).toBe(0);
}

interface ShownInstall {
  installs: { partner: string; attribution_type: string; fraud_reasons: string[] }[];
}
const show = async (tenant: Tenant, installUuid: string) =>
  (
    (await runCommand(
      'install show',
      { 'app-key': tenant.app.app_key, 'install-uuid': installUuid },
      { baseUrl: stack.baseUrl },
    )) as ShownInstall
  ).installs[0];
const postbackLog = async (tenant: Tenant) =>
  (
    (await runCommand('postback log', { 'app-key': tenant.app.app_key }, { baseUrl: stack.baseUrl })) as {
      attempts: { outcome: string; error?: string }[];
    }
  ).attempts;

describe("a honeypot hit on one tenant's link", () => {
  it("leaves another tenant's links, installs and postbacks from that address untouched, and keeps its own company's blocked", async () => {
    const links = new LinkStore(resourceName.table('links'));
    const a = await createTenant();
    const b = await createTenant();
    const trap = await links.create(a.app, { partner: 'trap', honeypot: true });
    const aLink = await links.create(a.app, { partner: 'alpha' });
    const bLink = await links.create(b.app, { partner: 'beta' });
    const base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
    // Configurations first: the aggregator keeps an app's configurations for up to a minute.
    await runCommand(
      'postback set',
      { 'app-key': a.app.app_key, partner: 'alpha', url: `${base}/alpha?fraud={fraud_reasons}` },
      { baseUrl: stack.baseUrl },
    );
    await runCommand(
      'postback set',
      { 'app-key': b.app.app_key, partner: 'beta', url: `${base}/beta?fraud={fraud_reasons}` },
      { baseUrl: stack.baseUrl },
    );

    expect((await click(trap.link_id, SHARED_IP)).status).toBe(404);

    // Tenant A: its own links give the address no click id.
    expect(await click(aLink.link_id, SHARED_IP)).toEqual({ status: 302, clickId: null });
    // Tenant B: the same address clicks as anyone else.
    const bClick = await click(bLink.link_id, SHARED_IP);
    expect(bClick.status).toBe(302);
    expect(bClick.clickId).toMatch(/^[A-Za-z0-9_-]{36}$/);

    // Installs from the address 40 s after the clicks (no fast-CTIT flag): one attributed, one organic per tenant.
    const aClick = await click(aLink.link_id, OTHER_IP);
    const installTs = Date.now() + 40_000;
    const uuid = {
      aAttributed: 'a1000000-0000-4000-8000-000000000001',
      aOrganic: 'a1000000-0000-4000-8000-000000000002',
      bAttributed: 'b1000000-0000-4000-8000-000000000001',
      bOrganic: 'b1000000-0000-4000-8000-000000000002',
    };
    await send(a, SHARED_IP, [install(uuid.aAttributed, installTs, aClick.clickId!), install(uuid.aOrganic, installTs)]);
    await send(b, SHARED_IP, [install(uuid.bAttributed, installTs, bClick.clickId!), install(uuid.bOrganic, installTs)]);
    // A drain between looks: the pollers finish the work in flight before the next one.
    const sent = async () => received.some((url) => url.pathname === '/beta') && (await postbackLog(a)).length > 0;
    await waitFor(
      async () => {
        if (await sent()) return true;
        await stack.pollers.drain();
        return sent();
      },
      { timeoutMs: 20_000, intervalMs: 200, what: "tenant b's postback and tenant a's postback log" },
    );

    expect(await show(b, uuid.bAttributed)).toMatchObject({ partner: 'beta', attribution_type: 'deterministic', fraud_reasons: [] });
    expect(await show(b, uuid.bOrganic)).toMatchObject({ partner: 'organic', fraud_reasons: [] });
    expect(received.filter((url) => url.pathname === '/beta').map((url) => url.searchParams.get('fraud'))).toEqual(['']);
    expect((await postbackLog(b)).map((attempt) => attempt.outcome)).toEqual(['delivered']);

    expect(await show(a, uuid.aAttributed)).toMatchObject({ partner: 'alpha', fraud_reasons: ['honeypot_ip'] });
    expect(await show(a, uuid.aOrganic)).toMatchObject({ partner: 'organic', fraud_reasons: ['honeypot_ip'] });
    expect(await postbackLog(a)).toEqual([expect.objectContaining({ outcome: 'withheld', error: 'fraud: honeypot_ip' })]);
    expect(received.filter((url) => url.pathname === '/alpha')).toEqual([]);
  }, 60_000);
});
