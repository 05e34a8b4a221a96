// The web SDK in Debian's Chromium (playwright-core, as the console tests) against the local
// runtime: examples/web/index.html, served by a static server on another origin that the app
// lists (`admin app update --web-origin`), tracks events through offline periods
// (context.setOffline), a reload in the middle of a send and two tabs; the events report then
// counts each tracked event exactly once, also through a phase where the company's cap answers
// every send 429. Without Web Locks two tabs still send from one, through the localStorage lease,
// and the page's flush when it is hidden goes with fetch keepalive. A page of an origin the app
// does not list is refused by CORS, and sends nothing.

import { execFile } from 'node:child_process';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { type Browser, type BrowserContext, chromium, type Page, type Request } from 'playwright-core';
import { runAdmin } from '../../bin/admin';
import { dynamoClient } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import { serveExample } from '../support/example-site';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { sleep, waitFor } from '../support/wait-for';

const ROOT = join(__dirname, '..', '..');
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Events per phase: 7 phases, 1,001 events, as the issue asks. */
const PER_PHASE = 143;
/** How long the handlers cache a company (its cap with it): the cap phase waits it out. */
const KEY_CACHE_TTL_MS = 500;
/** How long the cap answers 429 (time passing is the point: the SDK must back off, not hammer). */
const CAPPED_MS = 2_000;

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
  /** What the fetch-recording init script saw (the lease test's context). */
  sentFetches?: SentFetch[];
  sdk?: {
    leading: boolean;
    track(name: string, options: object): Promise<string | undefined>;
    flush(): Promise<void>;
    diagnostics(): { queued: number } | undefined;
    optOut(): Promise<void>;
  };
}

interface SentFetch {
  readonly url: string;
  readonly keepalive: boolean;
  readonly bytes: number;
}

beforeAll(async () => {
  // The cap phase changes the company's cap under the running handlers: their tenant cache
  // (30 s by default, a documented local setting) would hide the change for that long.
  process.env.KEY_CACHE_TTL_MS = String(KEY_CACHE_TTL_MS);
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

async function open(url: string, into: BrowserContext = context): Promise<Page> {
  const page = await into.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(url);
  await page.waitForFunction(() => (globalThis as unknown as PageGlobals).sdk !== undefined);
  return page;
}

/** Tracks `count` events in the page, one after the other as an app would; the ids of those that resolved. */
function track(page: Page, count: number, phase: string, name = 'web_check'): Promise<string[]> {
  return page.evaluate(
    async ({ count, phase, name }) => {
      const sdk = (globalThis as unknown as PageGlobals).sdk;
      const ids: string[] = [];
      for (let i = 0; i < count; i++) {
        const id = await sdk?.track(name, { params: { phase, i } });
        if (id) ids.push(id);
      }
      return ids;
    },
    { count, phase, name },
  );
}

/**
 * The company's monthly cap, as an operator would set it in the tenants table (no admin command
 * changes a cap): 0 makes every batch 429 cap_exceeded, null lifts it (the paid plan's).
 */
async function setMonthlyCap(cap: 0 | null): Promise<void> {
  await dynamoClient().send(
    new UpdateCommand({
      TableName: resourceName.table('tenants'),
      Key: { pk: `company#${tenant.company.company_key}` },
      UpdateExpression: 'SET monthly_cap = :cap',
      ConditionExpression: 'attribute_exists(pk)',
      ExpressionAttributeValues: { ':cap': cap },
    }),
  );
}

interface Answer {
  readonly at: number;
  readonly status: number;
  /** Why a request that got no answer failed (status 0): a timeout, a reset connection. */
  readonly failure?: string;
}

/**
 * The statuses of the page's POST /event answers, with when each came (preflights left out), and
 * as status 0 each send that got no answer: a failure message then shows what the page saw.
 */
function eventAnswers(page: Page): Answer[] {
  const answers: Answer[] = [];
  const isSend = (request: Request) => request.method() === 'POST' && new URL(request.url()).pathname === '/event';
  page.on('response', (response) => {
    if (isSend(response.request())) answers.push({ at: Date.now(), status: response.status() });
  });
  page.on('requestfailed', (request) => {
    if (isSend(request)) answers.push({ at: Date.now(), status: 0, failure: request.failure()?.errorText ?? 'unknown' });
  });
  return answers;
}

/** The answers from `since` on, as a failure message shows them: "+120 ms 429". */
const answerLog = (answers: readonly Answer[], since: number) =>
  answers.map((answer) => `+${answer.at - since} ms ${answer.status}${answer.failure ? ` (${answer.failure})` : ''}`).join(', ') || 'none';

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
    // Web-to-app: the landing URL's click and deep link reach the page's onLanding and onDeepLink callbacks.
    await first.waitForFunction(() =>
      (globalThis as unknown as PageGlobals).document?.getElementById('log')?.textContent?.includes('landed'),
    );
    expect(await first.evaluate(() => (globalThis as unknown as PageGlobals).document?.getElementById('log')?.textContent)).toContain(
      '{"clickId":"clk_web_1","linkId":"AbC123xYz0","deepLink":{"value":"sale_42"}}',
    );
    expect(await first.evaluate(() => (globalThis as unknown as PageGlobals).document?.getElementById('log')?.textContent)).toContain(
      'deep link: {"value":"sale_42"}',
    );
    tracked.push(...(await track(first, PER_PHASE, 'online')));

    // The cap reached: every send answers 429 cap_exceeded for CAPPED_MS, then the cap is lifted
    // (also when this phase fails, so that the next test's tenant is not left capped).
    const answers = eventAnswers(first);
    const capped = Date.now();
    await setMonthlyCap(0);
    // Time passing: the handlers' tenant cache (KEY_CACHE_TTL_MS) runs out, so every send from
    // here on sees the cap. Without it the 143 events could all be taken in the half second the
    // old cap was still cached, leaving nothing to refuse (CI, stop 47).
    await sleep(KEY_CACHE_TTL_MS + 200);
    let whileCapped: Answer[];
    try {
      tracked.push(...(await track(first, PER_PHASE, 'capped')));
      const refused = () => answers.filter((answer) => answer.status === 429);
      // The refused batch is tried again (the first retry waits at most the 1 s base), not dropped.
      await waitFor(() => refused().length >= 2, { timeoutMs: 10_000, what: 'two 429s from the cap' }).catch((error: Error) => {
        throw new Error(`${error.message}; the page's sends since the cap: ${answerLog(answers, capped)}`);
      });
      const firstRefusal = refused()[0]!.at;
      await sleep(firstRefusal + CAPPED_MS - Date.now());
      whileCapped = answers.filter((answer) => answer.at >= firstRefusal);
    } finally {
      await setMonthlyCap(null);
    }
    // The next attempt, when the backoff ends, is taken: waited for so that the offline phase's
    // failures do not pile onto these (the backoff grows until a send succeeds).
    await waitFor(() => answers.at(-1)?.status === 200, {
      timeoutMs: 40_000,
      intervalMs: 200,
      what: 'a send taken once the cap is lifted',
    });
    // Backoff with full jitter from 1 s: a few attempts in 2 s (a seventh would need six waits summing
    // under 2 s, drawn from [0, 1], [0, 2], [0, 4]...), where retrying at once, at each track or at
    // each 300 ms flush would make dozens. Every one of them was refused (none slipped through).
    expect(whileCapped.length).toBeLessThanOrEqual(6);
    expect(whileCapped.map((answer) => answer.status)).toEqual(whileCapped.map(() => 429));

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
    expect(tracked).toHaveLength(7 * PER_PHASE);
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

  it('sends from one tab through the localStorage lease without Web Locks, flushes with keepalive when hidden, and tracks nothing in either tab after optOut', async () => {
    const leased = await browser.newContext();
    await leased.addInitScript(() => {
      const page = globalThis as unknown as { Navigator: { prototype: { locks?: unknown } }; sentFetches: SentFetch[] };
      // A browser without Web Locks: the SDK falls back to its lease in localStorage (leader.ts).
      delete page.Navigator.prototype.locks;
      // Every fetch the page makes, with what it asked of keepalive and its body's size.
      page.sentFetches = [];
      const send = globalThis.fetch;
      globalThis.fetch = (input, init) => {
        const body = init?.body as Uint8Array | undefined;
        page.sentFetches.push({ url: String(input), keepalive: init?.keepalive === true, bytes: body?.byteLength ?? 0 });
        return send(input, init);
      };
    });
    // No periodic send: what the leader sends is a full batch of 50, or the flush when it is hidden.
    const url = pageUrl(siteOrigin, { flush_ms: '600000' });
    const leader = await open(url, leased);
    const follower = await open(url, leased);
    const leading = (page: Page) => page.evaluate(() => (globalThis as unknown as PageGlobals).sdk?.leading);
    expect(await leading(leader)).toBe(true);
    expect(await leading(follower)).toBe(false);
    // Nothing waits or is in flight before the tracking (the install went at the page's start): a
    // send loops until the queue is empty, so one still running would take the tracked events too.
    await waitFor(async () => (await leader.evaluate(() => (globalThis as unknown as PageGlobals).sdk?.diagnostics()?.queued)) === 0, {
      timeoutMs: 20_000,
      intervalMs: 200,
      what: "the leader's queue empty",
    });

    // 40 in all, under the batch of 50: only hiding the leader sends them (a full batch would start
    // a send that also takes what comes while it runs, leaving nothing for the flush; CI, 080a139).
    const [fromLeader, fromFollower] = await Promise.all([
      track(leader, 20, 'lease', 'lease_check'),
      track(follower, 20, 'lease', 'lease_check'),
    ]);
    const tracked = [...fromLeader, ...fromFollower];
    const sends = (page: Page) =>
      page.evaluate(() =>
        ((globalThis as unknown as PageGlobals).sentFetches ?? []).filter((sent) => new URL(sent.url).pathname === '/event'),
      );
    const beforeHiding = (await sends(leader)).length;
    await leader.evaluate(() => (globalThis as unknown as EventTarget).dispatchEvent(new Event('pagehide')));
    await waitFor(async () => (await eventsCounted('lease_check')) >= tracked.length, {
      timeoutMs: 20_000,
      intervalMs: 300,
      what: 'the lease tabs counted',
    });
    expect(await eventsCounted('lease_check')).toBe(40);
    expect(new Set(tracked).size).toBe(40);
    // One sender: the follower never called POST /event. The leader's sends once hidden carry keepalive, each within 64 KiB.
    expect(await sends(follower)).toEqual([]);
    const hidden = (await sends(leader)).slice(beforeHiding);
    expect(hidden.length).toBeGreaterThan(0);
    expect(hidden.every((sent) => sent.keepalive && sent.bytes > 0 && sent.bytes <= 64 * 1024)).toBe(true);
    expect(await leading(follower)).toBe(false);

    // Opted out in the follower: neither tab gives an event id or queues anything, as docs/sdk.md says of track().
    await follower.evaluate(() => (globalThis as unknown as PageGlobals).sdk?.optOut());
    expect(await track(follower, 3, 'opted out', 'lease_check')).toEqual([]);
    await leader.evaluate(() => (globalThis as unknown as PageGlobals).sdk?.flush());
    expect(await track(leader, 3, 'opted out', 'lease_check')).toEqual([]);
    expect(await leader.evaluate(() => (globalThis as unknown as PageGlobals).sdk?.diagnostics()?.queued)).toBe(0);
    await leased.close();
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
    expect(await page.evaluate(() => (globalThis as unknown as PageGlobals).sdk?.diagnostics()?.queued)).toBeGreaterThanOrEqual(3);
    await page.close();
  });
});
