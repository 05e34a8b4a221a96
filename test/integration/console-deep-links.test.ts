// The console's deep-link parts through its own API (console/server.ts) against the local runtime:
// the link form's deep link fields (link create/update), an app's link settings with its link
// domains' well-known files as the route serves them, and the "try a click" first-launch dry run.

import { request } from 'node:http';
import { localTarget } from '../../admin/target';
import { type ConsoleServer, startConsole, TOKEN_HEADER } from '../../console/server';
import { ClickStore } from '../../functions/adapters/click-store';
import { clickTables } from '../../functions/shared/click-tables';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';

let stack: LocalStack;
let tenant: Tenant;
let server: ConsoleServer;

beforeAll(async () => {
  stack = await startLocalStack();
  tenant = await createTenant();
  server = await startConsole({ target: await localTarget(), port: 0 });
});
afterAll(async () => {
  await server?.close();
  await stack?.stop();
});

type Json = Record<string, unknown>;

/** A console API call as its page makes it: POST, JSON, the run's token. */
async function api(path: string, body: Json): Promise<{ status: number; body: Json }> {
  const response = await fetch(new URL(path, server.url), {
    method: 'POST',
    headers: { 'content-type': 'application/json', [TOKEN_HEADER]: server.token },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Json };
}
const command = (name: string, flags: Json) => api('/api/command', { command: name, flags });

/** The well-known route as a device on the link domain reaches it: fetch cannot set Host, node:http can. */
function wellKnown(path: string, host: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(new URL(path, stack.baseUrl), { headers: { host } }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

describe('the link form', () => {
  it('creates and updates a link with deep link data and a web URL, and refuses a bad field by its flag', async () => {
    const created = await command('link create', {
      'app-key': tenant.app.app_key,
      partner: 'meta',
      'web-url': 'https://example.com/promo',
      'deep-link-value': 'product/42',
      'deep-link-sub10': 'ten',
    });
    expect(created.status).toBe(200);
    const linkId = created.body.link_id as string;
    const updated = await command('link update', { 'link-id': linkId, 'deep-link-value': '', 'deep-link-sub3': 'three' });
    expect(updated.status).toBe(200);
    const { links } = (await command('link list', { 'app-key': tenant.app.app_key })).body as { links: Json[] };
    expect(links.find((link) => link.link_id === linkId)).toMatchObject({
      web_url: 'https://example.com/promo',
      deep_link: { sub3: 'three', sub10: 'ten' },
    });

    const tooLong = await command('link update', { 'link-id': linkId, 'deep-link-sub3': 'x'.repeat(101) });
    expect(tooLong).toEqual({
      status: 400,
      body: { error: expect.stringMatching(/--deep-link-sub3 must be 1 to 100/), flag: 'deep-link-sub3' },
    });
    const control = await command('link create', { 'app-key': tenant.app.app_key, partner: 'meta', 'deep-link-value': 'a\nb' });
    expect(control.status).toBe(400);
    expect(control.body.flag).toBe('deep-link-value');
  });
});

describe("an app's link domains", () => {
  it('saves the settings through app update and shows each domain its files byte for byte as the route serves them', async () => {
    const cert = Array.from({ length: 32 }, (_, i) => (i + 16).toString(16).toUpperCase()).join(':');
    const refused = await command('app update', { 'app-key': tenant.app.app_key, 'ios-app-id': 'team.com.example' });
    expect(refused.status).toBe(400);
    expect(refused.body.flag).toBe('ios-app-id');
    const saved = await command('app update', {
      'app-key': tenant.app.app_key,
      'ios-app-id': 'ABCDE12345.com.example.test',
      'android-package': 'com.example.test',
      'android-cert-sha256': cert,
      'link-domain': 'go.console-test.example',
    });
    expect(saved.status).toBe(200);

    const view = await api('/api/app-links', { 'app-key': tenant.app.app_key });
    expect(view.status).toBe(200);
    expect(view.body.settings).toEqual({
      ios_app_id: 'ABCDE12345.com.example.test',
      android_package: 'com.example.test',
      android_cert_sha256: [cert],
      link_domains: ['go.console-test.example'],
    });
    const [domain] = view.body.domains as { domain: string; files: Record<string, string | null> }[];
    expect(domain.domain).toBe('go.console-test.example');
    for (const path of ['/.well-known/apple-app-site-association', '/.well-known/assetlinks.json']) {
      const served = await wellKnown(path, 'go.console-test.example');
      expect(served.status).toBe(200);
      expect(domain.files[path]).toBe(served.body);
    }
    expect(JSON.parse(domain.files['/.well-known/apple-app-site-association'] as string).applinks.details[0].appIDs).toEqual([
      'ABCDE12345.com.example.test',
    ]);
    expect((await api('/api/app-links', { 'app-key': 'app_live_nope' })).status).toBe(404);
  });
});

describe('try a click', () => {
  it("answers Android by the store URL's referrer, iOS not_found unless the app matches probabilistically, and records no click", async () => {
    const { link_id } = (await command('link create', { 'app-key': tenant.app.app_key, partner: 'tiktok', 'deep-link-value': 'cart' }))
      .body as { link_id: string };
    const android = await api('/api/try-first-launch', { 'link-id': link_id, platform: 'android' });
    expect(android.status).toBe(200);
    expect(android.body.install_referrer).toMatch(/click_id=/);
    expect(android.body.answer).toMatchObject({
      status: 'found',
      attribution: { partner: 'tiktok', link_id, match: 'deterministic' },
      deep_link: { value: 'cart', sub1: null },
    });

    const ios = await api('/api/try-first-launch', { 'link-id': link_id, platform: 'ios' });
    expect(ios.body).toMatchObject({ probabilistic: false, answer: { status: 'not_found', reason: 'no_click_named', deep_link: null } });

    const probabilistic = await createTenant({ app: { probabilistic: true } });
    const other = (await command('link create', { 'app-key': probabilistic.app.app_key, partner: 'meta', 'deep-link-value': 'home' }))
      .body as { link_id: string };
    const matched = await api('/api/try-first-launch', { 'link-id': other.link_id, platform: 'ios' });
    expect(matched.body.answer).toMatchObject({ status: 'found', attribution: { match: 'probabilistic' }, deep_link: { value: 'home' } });

    // The click the answers name was made, not recorded.
    const clicks = new ClickStore(clickTables());
    for (const [trial, appId] of [
      [android, tenant.app.app_id],
      [matched, probabilistic.app.app_id],
    ] as const) {
      const clickId = (trial.body.answer as { attribution: { click_id: string } }).attribution.click_id;
      expect(clickId).toMatch(/^[\w-]{36}$/);
      expect(await clicks.byId(appId, clickId)).toBeUndefined();
    }
    expect((await api('/api/try-first-launch', { 'link-id': link_id, platform: 'desktop' })).body).toEqual({
      error: 'platform must be ios or android',
      flag: 'platform',
    });
    expect((await api('/api/try-first-launch', { 'link-id': 'nope', platform: 'ios' })).status).toBe(404);
    expect((await api('/api/try-first-launch', { 'link-id': 'x'.repeat(3000), platform: 'ios' })).body.flag).toBe('link-id');
    expect((await api('/api/app-links', { 'app-key': 'x'.repeat(3000) })).body.flag).toBe('app-key');
  });
});
