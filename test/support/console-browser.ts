// The marketer console's browser tests share this harness (docs/console-analytics.md, "Tests"): a
// local stack that takes client addresses from X-Forwarded-For (as the simulator's test runs
// it), a realistic app made by the traffic simulator (partners, campaigns, countries, both
// platforms, cost, revenue in three currencies, retention, SKAN postbacks, an app in
// America/New_York), the console on it, and Debian's chromium. Console errors are collected;
// screenshots go where the README says.

import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { localTarget } from '../../admin/target';
import { type ConsoleServer, startConsole } from '../../console/server';
import { type AdServicesStub, startAdServicesStub } from '../../local/adservices-stub';
import { type AppResult, type SimulationResult, simulate } from '../../sim/run';
import { type LocalStack, startLocalStack } from './local-stack';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const ROOT = join(__dirname, '..', '..');
export const SCREENSHOTS =
  process.env.UPDATE_SCREENSHOTS === '1' ? join(ROOT, 'docs', 'screenshots') : join(ROOT, 'test-results', 'screenshots');

/** Calendar arithmetic on YYYY-MM-DD, the tests' own (not the console's). */
export const shiftDay = (day: string, n: number): string =>
  new Date(Date.parse(`${day}T00:00:00Z`) + n * 86_400_000).toISOString().slice(0, 10);

export const DESKTOP = { width: 1440, height: 900 } as const;
export const PHONE = { width: 390, height: 844 } as const;

export interface MarketerConsole {
  readonly stack: LocalStack;
  readonly server: ConsoleServer;
  readonly browser: Browser;
  readonly context: BrowserContext;
  readonly page: Page;
  /** The simulated run: its company, window, and the app the console is opened on. */
  readonly simulation: SimulationResult;
  readonly app: AppResult;
  /** Messages the page logged as errors, and its uncaught exceptions, since the start. */
  readonly consoleErrors: string[];
  /** `#/<route>?company=..&app=..` plus the given parameters: the page opened on the simulated app. */
  url(route: string, params?: Record<string, string>): string;
  /** Opens a route and waits for its heading. */
  open(route: string, params?: Record<string, string>): Promise<void>;
  /** A full-page screenshot, `<name>.png`, in SCREENSHOTS. */
  shoot(name: string): Promise<void>;
  /**
   * Until the returned function is called, the page's `report show` requests are answered as the
   * console server answers a refused one (400 with the given error): a failed read, for the tests
   * that check a page clears its numbers.
   */
  failReportReads(error: string): Promise<() => Promise<void>>;
  /** GET /api/v1/reports/{report} with the app's server key (the API the console must agree with). */
  api(report: string, query: Record<string, string | number>): Promise<Record<string, unknown>[]>;
  stop(): Promise<void>;
}

export interface MarketerConsoleOptions {
  /** Simulated installs per app (the simulator's --installs); small keeps the test quick. */
  readonly installs?: number;
  readonly days?: number;
  readonly viewport?: { width: number; height: number };
  readonly seed?: string;
}

/** Starts everything; call in beforeAll with a timeout of about 240 s. */
export async function startMarketerConsole(options: MarketerConsoleOptions = {}): Promise<MarketerConsole> {
  const adServices: AdServicesStub = await startAdServicesStub();
  const stack = await startLocalStack({ trustProxy: true, internet: { ADSERVICES_API_URL: adServices.url } });
  const simulation = await simulate({
    seed: options.seed ?? 'console',
    apps: 1,
    installs: options.installs ?? 24,
    days: options.days ?? 40,
    check: false,
  });
  const [app] = simulation.apps;
  if (!app) throw new Error('the simulator made no app');
  const server = await startConsole({ target: await localTarget(), port: 0 });
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-sync'],
  });
  const context = await browser.newContext({ viewport: options.viewport ?? DESKTOP, deviceScaleFactor: 1, acceptDownloads: true });
  const page = await context.newPage();
  const consoleErrors: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error') consoleErrors.push(message.text());
  });
  page.on('pageerror', (error) => consoleErrors.push(`uncaught: ${error.message}`));
  mkdirSync(SCREENSHOTS, { recursive: true });

  const url = (route: string, params: Record<string, string> = {}) =>
    `${server.url}#/${route}?${new URLSearchParams({ company: simulation.company_key, app: app.app_key, ...params })}`;
  return {
    stack,
    server,
    browser,
    context,
    page,
    simulation,
    app,
    consoleErrors,
    url,
    async open(route, params) {
      await page.goto(url(route, params));
      await page.locator('main h1').waitFor();
    },
    async shoot(name) {
      await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
    },
    async failReportReads(error) {
      await page.route('**/api/command', async (route) => {
        const body = route.request().postDataJSON() as { command?: string };
        if (body.command === 'report show')
          await route.fulfill({ status: 400, contentType: 'application/json', body: JSON.stringify({ error }) });
        else await route.continue();
      });
      return () => page.unroute('**/api/command');
    },
    async api(report, query) {
      const search = new URLSearchParams(Object.entries(query).map(([k, v]): [string, string] => [k, String(v)]));
      const response = await fetch(`${simulation.base_url}/api/v1/reports/${report}?${search}`, {
        headers: { authorization: `Bearer ${app.server_key}` },
      });
      const body = (await response.json()) as { rows?: Record<string, unknown>[]; error?: string };
      if (!response.ok || !body.rows) throw new Error(`GET /api/v1/reports/${report}: ${response.status} ${body.error ?? ''}`);
      return body.rows;
    },
    async stop() {
      await browser.close().catch(() => undefined);
      await server.close();
      await stack.stop();
      await adServices.close();
    },
  };
}
