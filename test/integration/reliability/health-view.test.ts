// The operators' health view (`admin health` and the console's Health page, docs/operations.md,
// "The health view") against a local stack: the events a batch had accepted and rejected by reason
// in the hour's figures, the probe, queues and dead-letter queues read from the runtime; then the
// object store stopped (as test/support/faults.ts stops s3rver), and both the command and the page
// in Chromium, left open as an operator would leave it, say something is broken and name the
// binding within a minute. In the serial project: it stops an emulator.

import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { type Browser, chromium, type Page } from 'playwright-core';
import { runCommand } from '../../../admin/commands';
import { localTarget } from '../../../admin/target';
import { type ConsoleServer, startConsole } from '../../../console/server';
import type { OperatorHealth } from '../../../functions/domain/health/operator-health';
import { DESKTOP, SCREENSHOTS } from '../../support/console-browser';
import { eventClientFrom } from '../../support/event-client';
import { type EmulatorFaults, watchEmulators } from '../../support/faults';
import { createTenant, type LocalStack, startLocalStack } from '../../support/local-stack';
import { validEvent } from '../ingest-support';

let stack: LocalStack;
let faults: EmulatorFaults;
let server: ConsoleServer;
let browser: Browser;
let page: Page;

beforeAll(async () => {
  const watch = watchEmulators();
  stack = await startLocalStack();
  faults = watch.faultsOf(stack);
  server = await startConsole({ target: await localTarget(), port: 0 });
  browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
  });
  page = await browser.newPage({ viewport: DESKTOP });
}, 120_000);

afterAll(async () => {
  await browser?.close().catch(() => undefined);
  await faults?.restore();
  await server?.close();
  await stack?.stop();
});

const health = async () => (await runCommand('health', {}, await localTarget())) as OperatorHealth;
const verdict = () => page.getByTestId('health-verdict');

it('shows the hour of ingestion, then an object store that stopped, in the command and on the open page within a minute', async () => {
  const tenant = await createTenant();
  const client = eventClientFrom(stack.baseUrl, tenant, '203.0.113.9');
  const sent = await client.sendEvents([validEvent(), validEvent(), validEvent({ event_id: `evt-${randomUUID()}`, ts_ms: 'yesterday' })]);
  expect(sent).toMatchObject({ accepted: 2, rejected: 1 });
  await stack.pollers.drain();

  const healthy = await health();
  expect(healthy).toMatchObject({ status: 'ok', problems: [], environment: 'local', alarms: { source: 'none' } });
  if ('error' in healthy.ingestion) throw new Error(`ingestion unreadable: ${healthy.ingestion.error}`);
  const hours = healthy.ingestion.hours;
  expect(hours).toHaveLength(24);
  expect(hours.reduce((sum, h) => sum + h.accepted, 0)).toBe(2);
  expect(hours.reduce((sum, h) => sum + (h.rejected_by_reason.bad_timestamp ?? 0), 0)).toBe(1);
  expect(healthy.dead_letter_queues).toEqual(expect.arrayContaining([{ queue: 'aggregation', messages: 0 }]));
  expect(healthy.aggregation).toMatchObject({ messages: 0, oldest_message_age_seconds: 0, alarm_after_seconds: 900 });

  await page.goto(`${server.url}#/health`);
  await expect(verdict().getAttribute('data-status')).resolves.toBe('ok');
  await expect(page.getByTestId('health-ingestion').locator('tbody tr').first().textContent()).resolves.toContain('bad_timestamp 1');

  const stoppedAt = Date.now();
  await faults.stop('s3');
  const broken = await health();
  expect(broken.status).toBe('broken');
  // The reason is the probe's (functions/domain/health/health.ts); only the binding is failing.
  expect(broken.problems).toEqual([expect.stringMatching(/^health probe: object_store is failing \(.+\)$/)]);

  // The page is not reloaded: its own refresh (every 30 s) must show the fault within a minute.
  await page.locator('[data-testid="health-verdict"][data-status="broken"]').waitFor({ timeout: 60_000 });
  expect(Date.now() - stoppedAt).toBeLessThan(60_000);
  await expect(verdict().textContent()).resolves.toContain('object_store is failing');
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, 'health.png'), fullPage: true });

  await faults.start('s3');
  await expect(health()).resolves.toMatchObject({ status: 'ok' });
}, 150_000);
