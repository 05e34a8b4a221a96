// Consent in the console, in Chromium against the local runtime: the install look-up shows an
// install's latest consent (the GDPR, the TC string's purposes and vendors as the IAB library reads
// them, Google's DMA flags, third_party_sharing, measurement, when it was set), and the postbacks
// page counts per partner, and lists, the postbacks withheld for consent, equal to what
// `admin postback withheld` answers and leaving out one withheld for fraud.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { runCommand } from '../../admin/commands';
import { localTarget } from '../../admin/target';
import { type ConsoleServer, startConsole } from '../../console/server';
import { LinkStore } from '../../functions/adapters/link-store';
import { resourceName } from '../../functions/shared/config';
import { eventClientFrom } from '../support/event-client';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { tcString } from '../support/tcf';
import { waitFor } from '../support/wait-for';
import { MOBILE } from '../unit/links/user-agents';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
// Every postback here is withheld, never sent: a loopback template the local runtime allows when told so.
process.env.POSTBACK_ALLOW_LOOPBACK = '1';
const SCREENSHOTS =
  process.env.UPDATE_SCREENSHOTS === '1'
    ? join(__dirname, '..', '..', 'docs', 'screenshots')
    : join(__dirname, '..', '..', 'test-results', 'screenshots');

let stack: LocalStack;
let server: ConsoleServer;
let browser: Browser;
let page: Page;
let tenant: Tenant;
let network = 0;
const freshIp = () => `203.0.113.${++network}`;
const uuid = (n: number) => `${String(n).padStart(8, '0')}-1d2a-4c3b-9e8f-0a1b2c3d4e5f`;

/** An install through a partner's link, with a purchase, carrying the consent given (if any). */
async function install(linkId: string, n: number, consent: Record<string, unknown> | undefined, ctitMs = 40_000): Promise<void> {
  const ip = freshIp();
  const response = await fetch(`${stack.baseUrl}/l/${linkId}`, {
    redirect: 'manual',
    headers: { 'user-agent': MOBILE.iosSafari, 'x-forwarded-for': ip, 'cloudfront-viewer-country': 'DE' },
  });
  const clickId = new URL(response.headers.get('location') ?? 'http://x/').searchParams.get('click_id');
  if (!clickId) throw new Error(`no click id (status ${response.status})`);
  const ts = Date.now() + ctitMs;
  const result = await eventClientFrom(stack.baseUrl, tenant, ip).sendEvents([
    {
      event_id: 'i',
      event_name: 'install',
      install_uuid: uuid(n),
      ts_ms: ts,
      platform: 'ios',
      attribution: { click_id: clickId },
      ...(consent ? { consent } : {}),
    },
    { event_id: 'p', event_name: 'purchase', install_uuid: uuid(n), ts_ms: ts + 1000, revenue_usd: 1.99 },
  ] as never);
  expect(result.results.map((r) => r.status)).toEqual(['accepted', 'accepted']);
}

beforeAll(async () => {
  stack = await startLocalStack({ trustProxy: true });
  tenant = await createTenant();
  const links = new LinkStore(resourceName.table('links'));
  const gads = await links.create(tenant.app, { partner: 'gads', campaign: 'eu' });
  const meta = await links.create(tenant.app, { partner: 'meta', campaign: 'eu' });
  const target = { baseUrl: stack.baseUrl };
  for (const [partner, vendor] of [
    ['gads', 755],
    ['meta', undefined],
  ] as const)
    await runCommand(
      'postback set',
      {
        'app-key': tenant.app.app_key,
        partner,
        url: `http://127.0.0.1:9/${partner}?id={postback_id}`,
        events: 'install,purchase',
        ...(vendor ? { 'tcf-vendor-id': vendor } : {}),
      },
      target,
    );
  const eu = { gdpr_applies: true, ad_user_data: true, ad_personalization: false };
  // gads: no vendor consent for 755 (two postbacks withheld), and measurement withdrawn: its install's
  // postback withheld, its purchase not measured at all (docs/privacy.md), so owed no postback.
  await install(gads.link_id, 1, { ...eu, tcf_string: tcString([91, 1024], [1, 7]) });
  await install(gads.link_id, 2, { measurement: false });
  // meta: third_party_sharing refused (two withheld); a fraud-flagged install (2 s CTIT) with no consent: withheld for fraud only.
  await install(meta.link_id, 3, { third_party_sharing: false });
  await install(meta.link_id, 4, undefined, 2_000);
  await stack.pollers.drain();
  await waitFor(
    async () =>
      ((await runCommand('postback log', { 'app-key': tenant.app.app_key }, target)) as { attempts: unknown[] }).attempts.length >= 7,
    { timeoutMs: 30_000, what: 'seven withheld postbacks' },
  );

  server = await startConsole({ target: await localTarget(), port: 0 });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
  page = await (await browser.newContext({ viewport: { width: 1280, height: 900 }, deviceScaleFactor: 1 })).newPage();
  page.on('pageerror', (error) => process.stderr.write(`console page error: ${error.message}\n`));
  mkdirSync(SCREENSHOTS, { recursive: true });
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await stack?.stop();
});

const open = async (route: string) => {
  await page.goto(`${server.url}#/${route}?${new URLSearchParams({ company: tenant.company.company_key, app: tenant.app.app_key })}`);
  await page.locator('main h1').waitFor();
};

describe('consent in the console', () => {
  it("shows an install's latest consent in the install look-up, its TC string read into purposes and vendors", async () => {
    await open('install');
    const lookup = page.getByTestId('install-lookup');
    await lookup.getByLabel('install_uuid').fill(uuid(1));
    await lookup.getByRole('button', { name: 'Look up' }).click();
    const section = page.getByTestId('install-consent');
    await section.waitFor();
    const lines = await section
      .locator('dl')
      .evaluate((dl) => [...dl.querySelectorAll('dt')].map((dt) => [dt.textContent ?? '', dt.nextElementSibling?.textContent ?? '']));
    expect(Object.fromEntries(lines)).toEqual({
      'GDPR applies': 'yes',
      'TCF purposes with consent': '1, 7',
      'TCF purposes with legitimate interest': 'none',
      'TCF vendors with consent': '2 (91, 1024)',
      'TCF vendors with legitimate interest': '0',
      'DMA: ad_user_data': 'granted',
      'DMA: ad_personalization': 'denied',
      third_party_sharing: 'not said',
      measurement: 'not said',
    });
    expect(await section.innerText()).toMatch(/Latest, set \d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC by event i\./);
    await page.screenshot({ path: join(SCREENSHOTS, 'install-consent.png'), fullPage: true });

    // An install whose app sent no consent says so.
    await lookup.getByLabel('install_uuid').fill(uuid(4));
    await lookup.getByRole('button', { name: 'Look up' }).click();
    await page.getByTestId('install-consent').getByText('The app sent no consent for this install').waitFor();
  });

  it('counts and lists the postbacks withheld for consent per partner, as admin postback withheld does, without the fraud-withheld ones', async () => {
    const answer = (await runCommand('postback withheld', { 'app-key': tenant.app.app_key, days: '7' }, { baseUrl: stack.baseUrl })) as {
      withheld: number;
      partners: { partner: string; withheld: number }[];
    };
    expect(answer.withheld).toBe(5);
    expect(answer.partners.map((p) => [p.partner, p.withheld])).toEqual([
      ['gads', 3],
      ['meta', 2],
    ]);

    await open('postbacks');
    const view = page.getByTestId('withheld-for-consent');
    const perPartner = view.getByRole('region', { name: 'Withheld for consent per partner' });
    await perPartner.waitFor();
    const cells = await perPartner
      .locator('tbody tr')
      .evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent ?? '')));
    expect(cells).toEqual([
      ['gads', '3', 'no TCF consent for vendor 755 (2); measurement withdrawn (1)'],
      ['meta', '2', 'third_party_sharing refused (2)'],
    ]);
    const listed = view.getByRole('region', { name: 'Postbacks withheld for consent' }).locator('tbody tr');
    expect(await listed.count()).toBe(5);
    expect(await view.getByTestId('withheld-total').innerText()).toMatch(/^5 withheld for consent from /);
    await page.screenshot({ path: join(SCREENSHOTS, 'postbacks-withheld.png'), fullPage: true });

    // One partner: the filter is the command's --partner.
    await page.getByRole('form', { name: 'Withheld for consent filter' }).getByLabel('Partner').fill('meta');
    await page.getByRole('button', { name: 'Show withheld' }).click();
    await view.getByText(/^2 withheld for consent/).waitFor();
    expect(await listed.count()).toBe(2);
  });
});
