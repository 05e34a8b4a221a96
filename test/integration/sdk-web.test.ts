// The web SDK in Debian's Chromium (playwright-core, as the console tests) against the local
// runtime: examples/web/index.html, served by a static server on another origin that the app
// lists (`admin app update --web-origin`), tracks events through offline periods
// (context.setOffline), a reload in the middle of a send and two tabs; the events report then
// counts each tracked event exactly once. A page of an origin the app does not list is refused
// by CORS, and sends nothing.

import { execFile } from 'node:child_process';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { runAdmin } from '../../bin/admin';
import { serveExample } from '../support/example-site';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { waitFor } from '../support/wait-for';

const ROOT = join(__dirname, '..', '..');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Events per phase: 6 phases, 1,002 events, as the issue asks (about 15 s on a quiet 2-core machine). */
const PER_PHASE = 167;

let stack: LocalStack;
let tenant: Tenant;
let site: Server;
let siteOrigin: string;
let browser: Browser;
let context: BrowserContext;
const pageErrors: string[] = [];

/** What the example page puts on its window (the test project type-checks without the DOM). */
interface PageGlobals {
  document?: { getElementById(id: string): { textContent: string | null } | null };
  sdk?: {
    leading: boolean;
    track(name: string, options: object): Promise<string | undefined>;
    flush(): Promise<void>;
    diagnostics(): { queued: number };
  };
}

beforeAll(async () => {
  await promisify(execFile)(process.execPath, [join(ROOT, 'packages/sdk-web/build.mjs'), '--script-tag-only']);
  stack = await startLocalStack();
  tenant = await createTenant({ plan: 'paid' });
  ({ server: site, origin: siteOrigin } = await serveExample());
  await runAdmin(['app', 'update', '--app-key', tenant.app.app_key, '--web-origin', siteOrigin]);
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-sync'],
  });
  context = await browser.newContext();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => site?.close(resolve));
  await stack?.stop();
});

const pageUrl = (origin: string, extra: Record<string, string> = {}) =>
  `${origin}/examples/web/?${new URLSearchParams({
    base_url: stack.baseUrl,
    company_key: tenant.company.company_key,
    app_key: tenant.app.app_key,
    signing_secret: tenant.app.signing_secret,
    flush_ms: '300',
    ...extra,
  })}`;

async function open(url: string): Promise<Page> {
  const page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(url);
  await page.waitForFunction(() => (globalThis as unknown as PageGlobals).sdk !== undefined);
  return page;
}

/** Tracks `count` events in the page, one after the other as an app would; the ids of those that resolved. */
function track(page: Page, count: number, phase: string): Promise<string[]> {
  return page.evaluate(
    async ({ count, phase }) => {
      const sdk = (globalThis as unknown as PageGlobals).sdk;
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const id = await sdk?.track('web_check', { params: { phase, i } });
        if (id) ids.push(id);
      }
      return ids;
    },
    { count, phase },
  );
}

async function eventsCounted(name: string): Promise<number> {
  await stack.pollers.drain();
  const since = Date.now() - 2 * 86_400_000;
  const response = await fetch(`${stack.baseUrl}/api/v1/reports/events?since_ms=${since}&until_ms=${Date.now() + 86_400_000}&limit=1000`, {
    headers: { authorization: `Bearer ${tenant.serverKey}` },
  });
  const { rows } = (await response.json()) as { rows: { event_name: string; events: number }[] };
  return rows.filter((row) => row.event_name === name).reduce((sum, row) => sum + row.events, 0);
}

/** Every event_id of the tenant's event stream, read whole, a page of 1,000 at a time. */
async function streamedIds(): Promise<string[]> {
  const ids: string[] = [];
  for (let cursor: string | undefined; ; ) {
    const response = await fetch(`${stack.baseUrl}/api/v1/stream/events?limit=1000${cursor ? `&cursor=${cursor}` : ''}`, {
      headers: { authorization: `Bearer ${tenant.serverKey}` },
    });
    expect(response.status).toBe(200);
    const page = (await response.json()) as { events: { event_id: string }[]; next_cursor: string; has_more: boolean };
    ids.push(...page.events.map((event) => event.event_id));
    if (!page.has_more) return ids;
    cursor = page.next_cursor;
  }
}

describe('the web SDK in Chromium', () => {
  it('counts every event tracked through offline periods, a reload mid-send and two tabs exactly once', async () => {
    const tracked: string[] = [];
    const first = await open(pageUrl(siteOrigin, { click_id: 'clk_web_1', link_id: 'AbC123xYz0', deep_link_value: 'sale_42' }));
    // Web-to-app: the landing URL's click and deep link reach the page's onLanding callback.
    await first.waitForFunction(() =>
      (globalThis as unknown as PageGlobals).document?.getElementById('log')?.textContent?.includes('landed'),
    );
    expect(await first.evaluate(() => (globalThis as unknown as PageGlobals).document?.getElementById('log')?.textContent)).toContain(
      '{"clickId":"clk_web_1","linkId":"AbC123xYz0","deepLink":{"value":"sale_42"}}',
    );
    tracked.push(...(await track(first, PER_PHASE, 'online')));

    await context.setOffline(true);
    tracked.push(...(await track(first, PER_PHASE, 'offline')));
    await context.setOffline(false);

    // A second tab: it does not lead, so what it tracks goes through the outbox to the first.
    const second = await open(pageUrl(siteOrigin));
    expect(await second.evaluate(() => (globalThis as unknown as PageGlobals).sdk?.leading)).toBe(false);
    const [fromFirst, fromSecond] = await Promise.all([track(first, PER_PHASE, 'tab 1'), track(second, PER_PHASE, 'tab 2')]);
    tracked.push(...fromFirst, ...fromSecond);

    // Offline again with both tabs tracking, then the leader reloaded while its sends are under way.
    await context.setOffline(true);
    tracked.push(...(await track(second, PER_PHASE, 'offline, tab 2')));
    await context.setOffline(false);
    await first.evaluate(() => void (globalThis as unknown as PageGlobals).sdk?.flush());
    await first.reload();
    await first.waitForFunction(() => (globalThis as unknown as PageGlobals).sdk !== undefined);
    // The second tab leads now (the lock passed when the first unloaded); the reloaded one follows.
    await second.waitForFunction(() => (globalThis as unknown as PageGlobals).sdk?.leading);
    tracked.push(...(await track(first, PER_PHASE, 'after reload')));

    expect(new Set(tracked).size).toBe(tracked.length);
    expect(tracked).toHaveLength(6 * PER_PHASE);
    await waitFor(async () => (await eventsCounted('web_check')) >= tracked.length, {
      timeoutMs: 40_000,
      intervalMs: 500,
      what: 'every event counted',
    });
    expect(await eventsCounted('web_check')).toBe(tracked.length);
    // The landing URL's click, read once: one deep_link_open although the page was loaded again.
    expect(await eventsCounted('deep_link_open')).toBe(1);
    // The stream holds each tracked event once (it serves a counted event some seconds later).
    let streamed: string[] = [];
    const wanted = new Set(tracked);
    await waitFor(
      async () => {
        streamed = (await streamedIds()).filter((id) => wanted.has(id));
        return streamed.length >= tracked.length;
      },
      { timeoutMs: 40_000, intervalMs: 1_000, what: 'every event in the stream' },
    );
    expect(streamed.length).toBe(tracked.length);
    expect(new Set(streamed).size).toBe(tracked.length);
    await first.close();
    await second.close();
    expect(pageErrors).toEqual([]);
  });

  it('is refused by CORS on a page of an origin the app does not list', async () => {
    // localhost and 127.0.0.1 are two origins to a browser: the same server, unlisted.
    const unlisted = siteOrigin.replace('127.0.0.1', 'localhost');
    const page = await open(pageUrl(unlisted));
    const outcome = await page.evaluate(async (baseUrl) => {
      try {
        await fetch(`${baseUrl}/event`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-service-app-key': 'k' },
          body: '{}',
        });
        return 'sent';
      } catch {
        return 'refused';
      }
    }, stack.baseUrl);
    expect(outcome).toBe('refused');
    await track(page, 3, 'unlisted');
    await page.evaluate(() => (globalThis as unknown as PageGlobals).sdk?.flush());
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).sdk?.diagnostics().queued)).toBeGreaterThanOrEqual(3);
    await page.close();
  });
});
