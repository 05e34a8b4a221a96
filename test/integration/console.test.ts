// The admin console in a real headless browser (Debian's chromium driven by playwright-core)
// against the local runtime: a company, an app, a server key and a link made through the pages,
// events sent with the event client, and the reports' charts and tables showing them. The
// companies, install look-up and postbacks pages are photographed (the others by their own tests,
// on the simulator's data) into test-results/screenshots/ (ignored by git, so `npm test` leaves the tree
// clean), or into docs/screenshots/ with UPDATE_SCREENSHOTS=1. Then the console's own guards over
// plain HTTP: no request without the run's token, from another origin, or under a foreign Host
// header.

import { existsSync, mkdirSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { localTarget } from '../../admin/target';
import { EventClient, type SdkEvent } from '../../client/event-client';
import { type ConsoleServer, startConsole, TOKEN_HEADER } from '../../console/server';
import { CostStore } from '../../functions/adapters/cost-store';
import { SigningSecretStore } from '../../functions/adapters/signing-secret-store';
import { TenantStore } from '../../functions/adapters/tenant-store';
import { resourceName } from '../../functions/shared/config';
import { type LocalStack, startLocalStack } from '../support/local-stack';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ROOT = join(__dirname, '..', '..');
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'screenshots') : join(ROOT, 'test-results', 'screenshots');
const DAY = 86_400_000;
const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';

// Postbacks go to a receiver in this test, on 127.0.0.1 (the local runtime allows it when told so).
process.env.POSTBACK_ALLOW_LOOPBACK = '1';

let stack: LocalStack;
let server: ConsoleServer;
let receiver: Server;
const received: string[] = [];
let browser: Browser;
let page: Page;

beforeAll(async () => {
  stack = await startLocalStack();
  receiver = createServer((request, response) => {
    received.push(request.url ?? '');
    response.end('ok');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  server = await startConsole({ target: await localTarget(), port: 0 });
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, deviceScaleFactor: 1 });
  page = await context.newPage();
  page.on('dialog', (dialog) => void dialog.accept());
  page.on('pageerror', (error) => process.stderr.write(`console page error: ${error.message}\n`));
  mkdirSync(SCREENSHOTS, { recursive: true });
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await stack?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

const shoot = (name: string) => page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
const go = async (route: string) => {
  await page.goto(`${server.url}#/${route}`);
  await page.locator('main h1').waitFor();
};
const value = (testId: string) => page.getByTestId(testId).inputValue();

describe('the admin console in a browser', () => {
  it('creates a company, an app, a server key and a link through the pages, and shows the reports of the events sent', async () => {
    await page.goto(`${server.url}#/companies`);
    await page.getByRole('heading', { name: 'Companies and apps' }).waitFor();
    // Keyboard: the first Tab reaches the skip link; a page chosen with Enter takes focus at its heading.
    await page.keyboard.press('Tab');
    expect(await page.evaluate('document.activeElement?.textContent')).toBe('Skip to the page');
    await page.getByRole('link', { name: 'Install look-up' }).focus();
    await page.keyboard.press('Enter');
    await page.waitForFunction("document.activeElement?.tagName === 'H1' && document.activeElement.textContent === 'Install look-up'");
    await go('companies');

    // Companies and apps.
    const newCompany = page.getByTestId('new-company');
    await newCompany.getByLabel('Name').fill('Console Games');
    await newCompany.getByRole('button', { name: 'Create company' }).click();
    await page
      .getByTestId('flash')
      .getByText(/Created company Console Games: co_live_[0-9a-f]{32}/)
      .waitFor();
    const newApp = page.getByTestId('new-app');
    await newApp.getByLabel('Name').fill('Space Miner');
    await newApp.getByLabel('App Store URL').fill('https://apps.apple.com/app/id1234567890');
    await newApp.getByLabel('Google Play URL').fill('https://play.google.com/store/apps/details?id=com.example.miner');
    await newApp.getByLabel('Web URL').fill('https://example.com/miner');
    await newApp.getByRole('button', { name: 'Create app' }).click();
    await page
      .getByTestId('flash')
      .getByText(/Created app Space Miner: app_live_/)
      .waitFor();
    await page.getByRole('heading', { name: 'App: Space Miner' }).waitFor();
    const appKey = await value('app-key');
    await page.getByRole('button', { name: 'Reveal signing secret' }).click();
    const signingSecret = await value('signing-secret');
    expect(signingSecret).toMatch(/^[0-9a-f]{64}$/);
    const app = (await new TenantStore(
      resourceName.table('tenants'),
      new SigningSecretStore(resourceName.table('signing_secrets')),
    ).appWithSecret(appKey))!;
    expect(app).toMatchObject({ name: 'Space Miner', ios_url: 'https://apps.apple.com/app/id1234567890', signing_secret: signingSecret });
    await shoot('companies');

    // Settings, Server Keys: New Key is shown once with the interface's warning; another is revoked.
    await go('settings');
    await page.getByRole('button', { name: 'New Key' }).click();
    const serverKey = await page.getByTestId('new-server-key').inputValue({ timeout: 10_000 });
    expect(serverKey).toMatch(/^srv_[0-9a-f]{48}$/);
    await page.getByText('Keep this key on the server side, never in browser or mobile client code.').waitFor();
    await page.getByRole('button', { name: 'Copy' }).click();
    await page.getByText(/Copied|Selected/).waitFor();
    await page.getByRole('button', { name: 'New Key' }).click();
    await page
      .getByRole('button', { name: /^Revoke key/ })
      .nth(1)
      .waitFor();
    await page
      .getByRole('button', { name: /^Revoke key/ })
      .nth(1)
      .click();
    await page.locator('.badge', { hasText: 'revoked' }).waitFor();
    expect(await page.getByRole('button', { name: /^Revoke key/ }).count()).toBe(1);

    // Ad spend: a CSV uploaded through `cost import`, in parts the console server takes, stored as POST /api/v1/cost stores it.
    const costRows = Array.from({ length: 1200 }, (_, i) => `2026-03-01,meta,campaign-${i},US,ios,2.5`);
    await page.locator('#cost-file').setInputFiles({
      name: 'cost.csv',
      mimeType: 'text/csv',
      buffer: Buffer.from(['date,partner,campaign,country,platform,cost', ...costRows].join('\n')),
    });
    await page.getByRole('button', { name: 'Upload cost' }).click();
    await page.getByTestId('cost-result').getByText('1200 cost rows stored for Space Miner.').waitFor({ timeout: 20_000 });
    expect((await new CostStore(resourceName.table('aggregates')).readDay(app.app_id, '2026-03-01')).rows).toHaveLength(1200);
    await page
      .locator('#cost-file')
      .setInputFiles({ name: 'bad.csv', mimeType: 'text/csv', buffer: Buffer.from('date,partner,cost\n2026-03-01,meta,-1\n') });
    await page.getByRole('button', { name: 'Upload cost' }).click();
    await page
      .getByTestId('cost-result')
      .getByText(/line 2: bad_cost_row \(cost\)/)
      .waitFor();

    // Tracking links: the builder creates the link and shows its URL and each platform's test click.
    await go('links');
    const builder = page.getByTestId('link-builder');
    await builder.getByLabel('Partner').fill('meta');
    await builder.getByLabel('Campaign').fill('spring_sale');
    await builder.getByLabel('sub1').fill('creative_a');
    await builder.getByLabel(/^mobile_only=1/).check();
    await builder.getByRole('button', { name: 'Create link' }).click();
    const preview = page.getByTestId('link-preview');
    const linkUrl = await preview.getByTestId('final-url').inputValue({ timeout: 10_000 });
    expect(linkUrl).toMatch(new RegExp(`^${stack.baseUrl}/l/[A-Za-z0-9_-]+\\?sub1=creative_a&mobile_only=1$`));
    const clickRows = preview.locator('tbody tr');
    expect(await clickRows.nth(0).innerText()).toMatch(/ios\s+302\s+https:\/\/apps\.apple\.com\/app\/id1234567890\?click_id=.+&link_id=/);
    expect(await clickRows.nth(1).innerText()).toMatch(
      /android\s+302\s+https:\/\/play\.google\.com\/store\/apps\/details\?id=com\.example\.miner&referrer=.*utm_source%3Dmeta/,
    );
    expect(await clickRows.nth(2).innerText()).toMatch(/desktop\s+302\s+https:\/\/example\.com\/miner\s+desktop_on_mobile_only/);
    await page
      .locator('section', { has: page.getByRole('heading', { name: 'Links of Space Miner' }) })
      .getByRole('cell', { name: 'spring_sale' })
      .waitFor();

    // Postbacks: meta's template, from the macro list, to this test's receiver.
    await go('postbacks');
    await page.getByText('{click_id}').first().waitFor();
    const template = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/pb?click={click_id}&event={event_name}&sub1={sub1}`;
    const form = page.getByTestId('set-postback');
    await form.getByLabel('Partner').fill('meta');
    await form.getByLabel('URL template').fill(template);
    await form.getByLabel('Events').fill('install,purchase');
    await form.getByRole('button', { name: 'Save postback' }).click();
    await form.getByText('Saved the postback of meta.').waitFor();
    await page.getByRole('cell', { name: template }).waitFor();

    // Traffic: two people click the link and install, four install organically; purchases and sessions follow.
    const clickIds: string[] = [];
    for (const sub of ['creative_a', 'creative_b']) {
      const response = await fetch(linkUrl.replace('creative_a', sub), { redirect: 'manual', headers: { 'user-agent': IPHONE } });
      expect(response.status).toBe(302);
      clickIds.push(new URL(response.headers.get('location')!).searchParams.get('click_id')!);
    }
    const client = new EventClient({ baseUrl: stack.baseUrl, companyKey: app.company_key, appKey, signingSecret });
    const now = Date.now();
    const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    const events: SdkEvent[] = [];
    clickIds.forEach((clickId, i) => {
      const installAt = now + 60_000 * (i + 1);
      events.push({
        event_id: `mi${i}`,
        event_name: 'install',
        install_uuid: uuid(i),
        ts_ms: installAt,
        platform: 'ios',
        attribution: { click_id: clickId },
      });
      events.push({
        event_id: `mp${i}`,
        event_name: 'purchase',
        install_uuid: uuid(i),
        ts_ms: installAt + 60_000,
        revenue_usd: 4.99 * (i + 1),
      });
    });
    for (let day = 1; day <= 4; day += 1) {
      const installAt = now - day * DAY;
      events.push({
        event_id: `oi${day}`,
        event_name: 'install',
        install_uuid: uuid(10 + day),
        ts_ms: installAt,
        platform: day % 2 ? 'ios' : 'android',
      });
      events.push({ event_id: `os${day}`, event_name: 'session', install_uuid: uuid(10 + day), ts_ms: installAt + DAY + 1000 });
      if (day % 2 === 0)
        events.push({
          event_id: `op${day}`,
          event_name: 'purchase',
          install_uuid: uuid(10 + day),
          ts_ms: installAt + 3_600_000,
          revenue_usd: 1.99,
        });
    }
    const sent = await client.sendEvents(events);
    expect(sent.accepted).toBe(events.length);
    await stack.pollers.drain();
    for (const started = Date.now(); received.length < 4 && Date.now() - started < 15_000; )
      await new Promise((resolve) => setTimeout(resolve, 100));
    await stack.pollers.drain();
    expect(received.filter((url) => url.includes('sub1=creative_')).length).toBe(4);

    // Reports: each chart and table shows them, over the header's period (in the URL). The period
    // ends tomorrow (UTC, the app's zone), so installs sent a minute or two ahead are in it even at midnight.
    const since = new Date(Date.now() - 9 * DAY).toISOString().slice(0, 10);
    const until = new Date(Date.now() + DAY).toISOString().slice(0, 10);
    await page.goto(`${server.url}#/reports?period=custom&since=${since}&until=${until}`);
    await page.getByRole('heading', { name: /^Reports: / }).waitFor();
    const attribution = page.getByTestId('table-attribution');
    await attribution.getByRole('cell', { name: 'meta' }).first().waitFor({ timeout: 15_000 });
    const attributionText = await attribution.innerText();
    expect(attributionText).toContain('deterministic');
    expect(attributionText).toContain('organic');
    await page.getByTestId('table-events').getByRole('cell', { name: 'session' }).first().waitFor();
    const chartLabel = async (chart: string) => {
      await page.locator(`[data-testid="chart-${chart}"][aria-label]`).waitFor();
      return page.getByTestId(`chart-${chart}`).getAttribute('aria-label');
    };
    expect(await chartLabel('attribution')).toMatch(
      /^Installs per day by partner, stacked, from \d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}\. Totals: meta 2, organic 4\.$/,
    );
    expect(await chartLabel('revenue')).toMatch(/meta \$14\.97/);
    expect(await chartLabel('arppu')).toMatch(/meta \$7\.4[89] \(revenue \$14\.97/);
    expect(await chartLabel('events')).toMatch(/install 6, purchase 4, session 4/);
    expect(await chartLabel('cohorts')).toContain('6 installs');
    // Every day of the period on each date axis (11 days), and in the chart's numbers.
    for (const chart of ['attribution', 'revenue', 'events', 'cohorts'])
      expect(await page.getByTestId(`chart-${chart}`).getAttribute('data-points')).toBe('11');
    expect(await page.getByTestId('chart-numbers-attribution').locator('tbody tr').count()).toBe(11);
    // The charts were drawn: their canvases hold pixels.
    const painted = await page
      .getByTestId('chart-attribution')
      .evaluate((canvas) => (canvas as unknown as { toDataURL(): string }).toDataURL().length);
    expect(painted).toBeGreaterThan(2000);
    // Paged as the API pages: 10 rows a page, then the next.
    await page.getByLabel('Rows per page').selectOption('10');
    const eventsSection = page.locator('section[data-report="events"]');
    await eventsSection.getByText('Rows 1–10').waitFor();
    await eventsSection.getByRole('button', { name: 'Next page' }).click();
    await eventsSection.getByText(/^Rows 11–\d+$/).waitFor();
    await eventsSection.getByRole('button', { name: 'Previous page' }).click();
    await eventsSection.getByText('Rows 1–10').waitFor();
    // The CSV is the whole period, not the page shown: every row the API has, plus display columns.
    const csv = page.waitForEvent('download');
    await eventsSection.getByRole('button', { name: 'Download CSV (whole period)' }).click();
    const text = await (await (await csv).createReadStream()).toArray();
    const lines = Buffer.concat(text).toString().trimEnd().split('\r\n');
    expect(lines[0]).toBe('day,event_name,events,unique_installs,revenue_usd,revenue_usd_display');
    const span = `since_ms=${Date.parse(`${since}T00:00:00Z`)}&until_ms=${Date.parse(`${until}T00:00:00Z`) + DAY}&limit=1000`;
    const apiEvents = await fetch(`${stack.baseUrl}/api/v1/reports/events?${span}`, {
      headers: { authorization: `Bearer ${serverKey}` },
    });
    const apiRows = ((await apiEvents.json()) as { rows: unknown[] }).rows;
    expect(apiRows.length).toBeGreaterThan(10);
    expect(lines.length - 1).toBe(apiRows.length);

    // The server key from Settings reads the same rows through the Reporting API.
    const api = await fetch(`${stack.baseUrl}/api/v1/reports/attribution`, { headers: { authorization: `Bearer ${serverKey}` } });
    expect(((await api.json()) as { rows: { partner: string }[] }).rows.map((r) => r.partner).sort()).toEqual(
      expect.arrayContaining(['meta', 'organic']),
    );

    // Install look-up: the decision and why.
    await go('install');
    const lookup = page.getByTestId('install-lookup');
    await lookup.getByLabel('install_uuid').fill(uuid(0));
    await lookup.getByRole('button', { name: 'Look up' }).click();
    const report = page.getByTestId('install-report');
    await report.waitFor();
    expect(await report.locator('.verdict').innerText()).toMatch(/^Attributed to meta \(deterministic\)/);
    await shoot('install');

    // Postbacks: the delivery log of what the installs and purchases above sent to meta.
    await go('postbacks');
    await page.getByRole('cell', { name: 'delivered' }).first().waitFor();
    expect(await page.getByRole('cell', { name: 'delivered' }).count()).toBe(4);
    await shoot('postbacks');
  }, 90_000);
});

/** A raw HTTP request, so the test chooses the Host header (fetch may not). */
function raw(
  path: string,
  options: { method?: string; host?: string; headers?: Record<string, string>; body?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      {
        host: '127.0.0.1',
        port: server.port,
        path,
        method: options.method ?? 'GET',
        headers: { host: options.host ?? `127.0.0.1:${server.port}`, ...options.headers },
      },
      (response) => {
        let body = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (body += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body }));
      },
    );
    request.on('error', reject);
    request.end(options.body);
  });
}

function api_(console_: ConsoleServer, path: string, body: object, headers: Record<string, string> = {}) {
  return fetch(`${console_.url.replace(/\/$/, '')}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [TOKEN_HEADER]: console_.token, ...headers },
    body: JSON.stringify(body),
  });
}

describe('the console refuses what its own page would not send', () => {
  const create = JSON.stringify({ command: 'company create', flags: { name: 'Forged Co' } });
  const json = { 'content-type': 'application/json' };
  const companies = async () => (await new TenantStore(resourceName.table('tenants')).listCompanies()).map((c) => c.name);

  it("refuses a state-changing request without the run's token, or with another token, and changes nothing", async () => {
    expect((await raw('/api/command', { method: 'POST', headers: json, body: create })).status).toBe(403);
    expect((await raw('/api/command', { method: 'POST', headers: { ...json, [TOKEN_HEADER]: 'x'.repeat(43) }, body: create })).status).toBe(
      403,
    );
    expect(await companies()).not.toContain('Forged Co');
  });

  it('refuses a request from another origin, or cross-site, even with the token', async () => {
    const withToken = { ...json, [TOKEN_HEADER]: server.token };
    expect(
      (await raw('/api/command', { method: 'POST', headers: { ...withToken, origin: 'https://evil.example' }, body: create })).status,
    ).toBe(403);
    expect(
      (await raw('/api/command', { method: 'POST', headers: { ...withToken, 'sec-fetch-site': 'cross-site' }, body: create })).status,
    ).toBe(403);
    // A form post (no custom header possible, so no token, and not JSON) is refused too.
    expect(
      (
        await raw('/api/command', {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'command=company+create',
        })
      ).status,
    ).toBe(403);
    expect(await companies()).not.toContain('Forged Co');
  });

  it('refuses a foreign Host header on every route (no DNS rebinding), and answers its own', async () => {
    const foreign = 'attacker.example:' + server.port;
    expect((await raw('/', { host: foreign })).status).toBe(421);
    expect((await raw('/assets/console.js', { host: foreign })).status).toBe(421);
    expect(
      (await raw('/api/command', { method: 'POST', host: foreign, headers: { ...json, [TOKEN_HEADER]: server.token }, body: create }))
        .status,
    ).toBe(421);
    expect((await raw('/', { host: `127.0.0.1:${server.port + 1}` })).status).toBe(421);
    expect(await companies()).not.toContain('Forged Co');

    const own = await raw('/', { host: `localhost:${server.port}` });
    expect(own.status).toBe(200);
    expect(own.body).toContain(`<meta name="console-token" content="${server.token}">`);
    expect((await raw('/api/command', { method: 'POST', headers: { ...json, [TOKEN_HEADER]: server.token }, body: create })).status).toBe(
      200,
    );
    expect(await companies()).toContain('Forged Co');
  });

  it('answers the API only to POST, and an unknown command as the CLI would', async () => {
    expect((await raw('/api/meta', {})).status).toBe(405);
    const unknown = await api_(server, '/api/command', { command: 'company explode', flags: {} });
    expect({ status: unknown.status, body: await unknown.json() }).toEqual({
      status: 400,
      body: { error: 'unknown command: company explode' },
    });
    const badFlag = await api_(server, '/api/command', { command: 'company create', flags: { name: 'x', plan: 'gold' } });
    expect(badFlag.status).toBe(400);
  });
});

if (!existsSync(CHROMIUM)) {
  // A clear failure rather than a timeout: .ci/run installs Debian's chromium when it is missing.
  throw new Error(`no chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
}
