// A partner's click macro, from the URL the admin CLI and the console hand out to the install the
// partner's click leads to: the partner can only substitute a macro it finds literally in the URL.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runAdmin } from '../../bin/admin';
import { type ConsoleServer, startConsole, TOKEN_HEADER } from '../../console/server';
import { eventClientFrom } from '../support/event-client';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { waitFor } from '../support/wait-for';
import { MOBILE } from '../unit/links/user-agents';

// Read by the runtime at start and by the sender at its cold start: a receiver on 127.0.0.1.
process.env.POSTBACK_ALLOW_LOOPBACK = '1';

let stack: LocalStack;
let consoleServer: ConsoleServer;
let receiver: Server;
let tenant: Tenant;
const postbacks: URL[] = [];

beforeAll(async () => {
  stack = await startLocalStack({ trustProxy: true });
  // The console's API only; no page is loaded, so its bundle is not built.
  consoleServer = await startConsole({ target: { baseUrl: stack.baseUrl }, port: 0, bundle: { js: '', css: '' } });
  receiver = createServer((request, response) => {
    postbacks.push(new URL(request.url ?? '/', 'http://receiver'));
    response.end('ok');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  tenant = await createTenant();
});

afterAll(async () => {
  receiver?.closeAllConnections();
  await new Promise((resolve) => receiver?.close(resolve));
  await consoleServer?.close();
  await stack?.stop();
});

/** A command as the console's page runs it: POST /api/command with the run's token. */
async function consoleCommand(command: string, flags: Record<string, unknown>): Promise<Record<string, unknown>> {
  const response = await fetch(`${consoleServer.url}api/command`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [TOKEN_HEADER]: consoleServer.token },
    body: JSON.stringify({ command, flags }),
  });
  expect(response.status).toBe(200);
  return (await response.json()) as Record<string, unknown>;
}

describe('partner macros in the tracking-link URL', () => {
  it('hands the partner {click_id} literally, and the id the partner puts there reaches install show and the postback', async () => {
    const port = (receiver.address() as AddressInfo).port;
    // Configurations first: the aggregator keeps an app's configurations for up to a minute.
    await runAdmin([
      'postback',
      'set',
      '--app-key',
      tenant.app.app_key,
      '--partner',
      'acme',
      '--url',
      `http://127.0.0.1:${port}/pb?click={click_id}&s1={sub1}&s2={sub2}`,
      '--events',
      'install',
    ]);
    const { link_id } = (await runAdmin(['link', 'create', '--app-key', tenant.app.app_key, '--partner', 'acme'])) as { link_id: string };

    // sub1 carries a macro inside other text (its text still encoded); sub2 has no macro at all,
    // only characters that must be encoded, braces that name no macro among them.
    const clickParams = { 'click-id': '{click_id}', sub1: 'creative a/{ad.id}', sub2: '{not a macro}&x=ü' };
    const viaCli = (await runAdmin([
      'link',
      'try',
      '--link-id',
      link_id,
      ...Object.entries(clickParams).flatMap(([flag, value]) => [`--${flag}`, value]),
    ])) as { url: string };
    const viaConsole = (await consoleCommand('link try', { ...clickParams, 'link-id': link_id })) as { url: string };
    expect(viaCli.url).toBe(
      `${stack.baseUrl}/l/${link_id}?click_id={click_id}&sub1=creative%20a%2F{ad.id}&sub2=%7Bnot%20a%20macro%7D%26x%3D%C3%BC`,
    );
    expect(viaConsole.url).toBe(viaCli.url);

    // The partner's ad server fills its macros in, then a person taps the ad.
    const partnerClick = viaConsole.url.replace('{click_id}', 'abc123').replace('{ad.id}', '42');
    const ip = '198.51.100.23';
    const redirect = await fetch(partnerClick, { redirect: 'manual', headers: { 'user-agent': MOBILE.iosSafari, 'x-forwarded-for': ip } });
    expect(redirect.status).toBe(302);
    const clickId = new URL(redirect.headers.get('location')!).searchParams.get('click_id')!;
    expect(clickId).toMatch(/^[\w-]{36}$/);

    const installUuid = '7a0c6b9e-1d2a-4c3b-9e8f-0a1b2c3d4e5f';
    const sent = await eventClientFrom(stack.baseUrl, tenant, ip).sendEvents([
      {
        event_id: 'install-1',
        event_name: 'install',
        install_uuid: installUuid,
        ts_ms: Date.now() + 40_000,
        platform: 'ios',
        attribution: { click_id: clickId },
      },
    ]);
    expect(sent.results.map((r) => r.status)).toEqual(['accepted']);
    // A drain between looks: the pollers finish the work in flight before the next one.
    await waitFor(
      async () => {
        if (postbacks.length >= 1) return true;
        await stack.pollers.drain();
        return postbacks.length >= 1;
      },
      { timeoutMs: 15_000, intervalMs: 200, what: 'the install postback' },
    );

    const shown = (await runAdmin(['install', 'show', '--app-key', tenant.app.app_key, '--install-uuid', installUuid])) as {
      installs: { click_id: string; partner: string; ext_click_id?: string; sub1?: string; sub2?: string }[];
    };
    expect(shown.installs).toEqual([
      expect.objectContaining({
        click_id: clickId,
        partner: 'acme',
        ext_click_id: 'abc123',
        sub1: 'creative a/42',
        sub2: '{not a macro}&x=ü',
      }),
    ]);
    expect(postbacks).toHaveLength(1);
    expect(postbacks[0].search).toContain('click=abc123&');
    expect(Object.fromEntries(postbacks[0].searchParams)).toEqual({ click: 'abc123', s1: 'creative a/42', s2: '{not a macro}&x=ü' });
  }, 60_000);
});
