// The console's Raw data page in a real headless browser (Debian's chromium driven by
// playwright-core) against the local runtime: traffic sent with the event client, exported with
// the page's Export now (admin export run), the last export per table read back, a free SQL query
// on DuckDB whose count is the accepted events, a statement other than SELECT refused with its
// reason shown, and a report query's rows. The page is photographed as console.test.ts does
// (test-results/screenshots/, or docs/screenshots/ with UPDATE_SCREENSHOTS=1).

import { existsSync, mkdirSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { localTarget } from '../../admin/target';
import { EventClient, type SdkEvent } from '../../client/event-client';
import { type ConsoleServer, startConsole, TOKEN_HEADER } from '../../console/server';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ROOT = join(__dirname, '..', '..');
const SCREENSHOTS = process.env.UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'screenshots') : join(ROOT, 'test-results', 'screenshots');

let stack: LocalStack;
let tenant: Tenant;
let server: ConsoleServer;
let browser: Browser;
let page: Page;
let accepted: number;
/** The UTC hour (YYYY-MM-DDTHH) just before and just after the batch was sent. */
let receivedHours: string[];

beforeAll(async () => {
  stack = await startLocalStack();
  tenant = await createTenant();
  const { app } = tenant;
  const client = new EventClient({
    baseUrl: stack.baseUrl,
    companyKey: app.company_key,
    appKey: app.app_key,
    signingSecret: app.signing_secret,
  });
  const now = Date.now();
  const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
  const events: SdkEvent[] = [];
  for (let i = 0; i < 5; i += 1) {
    events.push({ event_id: `i${i}`, event_name: 'install', install_uuid: uuid(i), ts_ms: now - 3_600_000, platform: 'ios' });
    events.push({ event_id: `s${i}`, event_name: 'session', install_uuid: uuid(i), ts_ms: now - 1_800_000 });
    if (i % 2 === 0)
      events.push({ event_id: `p${i}`, event_name: 'purchase', install_uuid: uuid(i), ts_ms: now - 600_000, revenue_usd: 1.99 });
  }
  const before = Date.now();
  const sent = await client.sendEvents(events);
  receivedHours = [before, Date.now()].map((ms) => new Date(ms).toISOString().slice(0, 13));
  accepted = sent.accepted;
  expect(accepted).toBe(events.length);
  await stack.pollers.drain();

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
  page.on('pageerror', (error) => process.stderr.write(`console page error: ${error.message}\n`));
  mkdirSync(SCREENSHOTS, { recursive: true });
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await stack?.stop();
});

describe('the Raw data page', () => {
  it('exports the traffic, shows the last export per table, runs a SELECT on the app tables and shows a refusal plainly', async () => {
    await page.goto(`${server.url}#/raw-data`);
    await page.getByRole('heading', { name: `Raw data: ${tenant.app.name}` }).waitFor();
    await page.getByText('The export has not run for this app yet').waitFor();

    // Export now: admin export run, then each table's newest file.
    await page.getByRole('button', { name: 'Export now' }).click();
    const status = page.getByTestId('export-status');
    await status.getByRole('cell', { name: 'events', exact: true }).waitFor({ timeout: 30_000 });
    const rowOf = async (name: string) =>
      (
        await status
          .locator('tbody tr', { has: page.getByRole('cell', { name, exact: true }) })
          .locator('td')
          .allInnerTexts()
      ).map((t) => t.trim());
    await page
      .getByTestId('last-run')
      .getByText(/^The export last ran for this app at /)
      .waitFor();
    // One batch, so one receive hour: its partition holds every accepted event.
    const events = await rowOf('events');
    expect(receivedHours.map((hour) => `dt=${hour.slice(0, 10)} hour=${hour.slice(11, 13)}`)).toContain(events[2]);
    expect(Number(events[3])).toBe(accepted);
    expect(Number((await rowOf('installs'))[3])).toBe(5);
    expect((await rowOf('clicks'))[1]).toBe('none yet');

    // A free query: its count is the accepted events.
    const sql = page.getByTestId('sql-form');
    await sql.getByLabel('Query').fill('SELECT count(*) AS n FROM events');
    await sql.getByRole('button', { name: 'Run query' }).click();
    const result = page.getByTestId('sql-result');
    await result.getByRole('columnheader', { name: 'n' }).waitFor({ timeout: 30_000 });
    expect(await result.locator('tbody td').allInnerTexts()).toEqual([String(accepted)]);
    await page.screenshot({ path: join(SCREENSHOTS, 'raw-data.png'), fullPage: true });

    // Anything but one SELECT is refused, and the page says why.
    await sql.getByLabel('Query').fill('DELETE FROM events');
    await sql.getByRole('button', { name: 'Run query' }).click();
    const refusal = result.getByRole('alert');
    await refusal.waitFor();
    expect(await refusal.innerText()).toMatch(/only a single SELECT/);

    // A report as SQL: the events report's rows by name.
    await page.getByRole('button', { name: 'Events report' }).click();
    await result.getByRole('columnheader', { name: 'event_name' }).waitFor({ timeout: 30_000 });
    const names = await result.locator('tbody tr td:nth-child(2)').allInnerTexts();
    expect([...new Set(names)].sort()).toEqual(['install', 'purchase', 'session']);
  }, 120_000);

  it('answers sql and the export status to its own page only: the token, the Origin and the Host header are checked', async () => {
    const sql = JSON.stringify({ command: 'sql', flags: { 'app-key': tenant.app.app_key, query: 'SELECT 1 AS one' } });
    const status = JSON.stringify({ 'app-key': tenant.app.app_key });
    const json = { 'content-type': 'application/json' };
    const withToken = { ...json, [TOKEN_HEADER]: server.token };
    for (const [path, body] of [
      ['/api/command', sql],
      ['/api/export-status', status],
    ] as const) {
      expect((await raw(path, { headers: json, body })).status).toBe(403);
      expect((await raw(path, { headers: { ...withToken, origin: 'https://evil.example' }, body })).status).toBe(403);
      expect((await raw(path, { host: `attacker.example:${server.port}`, headers: withToken, body })).status).toBe(421);
      expect((await raw(path, { method: 'GET', headers: withToken })).status).toBe(405);
      expect((await raw(path, { headers: withToken, body })).status).toBe(200);
    }
    const answer = await raw('/api/command', { headers: withToken, body: sql });
    expect(JSON.parse(answer.body)).toEqual({ rows: [{ one: 1 }] });
  });
});

/** A raw HTTP request to the console, so the test chooses the Host header (fetch may not). */
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
        method: options.method ?? 'POST',
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

if (!existsSync(CHROMIUM)) {
  // A clear failure rather than a timeout: .ci/run installs Debian's chromium when it is missing.
  throw new Error(`no chromium at ${CHROMIUM}: apt-get install -y chromium (or set CHROMIUM_PATH)`);
}
