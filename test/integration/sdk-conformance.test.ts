// The conformance kit (issue 39, item 6) against real SDKs and deliberately broken ones: the core
// of packages/sdk-core on Node passes every scenario; the core made to keep sent_at_ms across
// retries fails P-STAMP-1 and nothing else, the core that sends 10 events uncompressed is warned
// of P-GZIP-1 (a SHOULD) and nothing else, each report naming the rule and the offending request;
// the web SDK's script-tag build in Chromium passes the baseline (warned of P-GZIP-1: it never gzips).

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { gunzipSync, gzipSync } from 'node:zlib';
import { chromium } from 'playwright-core';
import { runAdmin } from '../../bin/admin';
import { sdkCoreHarness } from '../../conformance/harnesses/sdk-core-node';
import { type ConformanceReport, formatReport, runConformance, type SdkUnderTest } from '../../conformance/kit';
import { scenariosNamed } from '../../conformance/scenarios';
import { signature } from '../../packages/sdk-core/src';
import { reactNativeHarness } from '../../packages/sdk-react-native/test/conformance-harness';
import { serveExample } from '../support/example-site';
import { type LocalStack, startLocalStack } from '../support/local-stack';

let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack();
});

afterAll(async () => {
  await stack?.stop();
});

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** What the example page puts on its window (the test project type-checks without the DOM). */
interface PageGlobals {
  sdk?: { track(name: string, options: object): Promise<string | undefined>; diagnostics(): { queued: number } };
}

/**
 * The web SDK's script-tag build on examples/web/ in Chromium as an SDK under test: a fresh
 * browser profile per run, the page's origin listed for the scenario's app, the page pointed at
 * the kit's proxy. No restarts (a reload mid-send is sdk-web.test.ts's).
 */
const webSdkHarness: SdkUnderTest = {
  name: '@attribution/sdk-web (script tag) in Chromium',
  run: async (ctx) => {
    const served = await serveExample();
    await runAdmin(['app', 'update', '--app-key', ctx.appKey, '--web-origin', served.origin]);
    const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
    try {
      const page = await (await browser.newContext()).newPage();
      const query = new URLSearchParams({
        base_url: ctx.baseUrl,
        company_key: ctx.companyKey,
        app_key: ctx.appKey,
        signing_secret: ctx.signingSecret,
        flush_ms: '200',
      });
      await page.goto(`${served.origin}/examples/web/?${query}`);
      await page.waitForFunction(() => (globalThis as unknown as PageGlobals).sdk !== undefined);
      await page.evaluate(async (events) => {
        for (let seq = 0; seq < events; seq++)
          await (globalThis as unknown as PageGlobals).sdk?.track('conformance_event', { params: { seq } });
      }, ctx.events);
      await page.waitForFunction(() => (globalThis as unknown as PageGlobals).sdk?.diagnostics().queued === 0, undefined, { polling: 50 });
    } finally {
      await browser.close();
      await new Promise((resolve) => served.server.close(resolve));
    }
  },
};

/** Each scenario's broken rules (MUST and SHOULD), by scenario name (skipped scenarios: 'skipped'). */
function failures(report: Awaited<ReturnType<typeof runConformance>>): Record<string, string[] | 'skipped'> {
  return Object.fromEntries(
    report.scenarios.map((result) => [
      result.scenario,
      result.status === 'skipped'
        ? 'skipped'
        : [...(result.note ? [result.note] : []), ...result.rules.filter((r) => !r.passed).map((r) => r.rule)],
    ]),
  );
}

/**
 * Runs every scenario against an SDK and expects none to fail (a scenario needing a capability the
 * harness lacks is skipped), printing the whole report when one does. Another SDK's harness is
 * one more line: `it('passes <name>', () => expectConformant(harness), 120_000);`
 */
async function expectConformant(sdk: SdkUnderTest): Promise<ConformanceReport> {
  const report = await runConformance(sdk, { runtime: stack });
  expect({
    sdk: sdk.name,
    failed: report.scenarios.filter((result) => result.status === 'failed').map((result) => result.scenario),
  }).toEqual({ sdk: sdk.name, failed: [] });
  expect(report.passed ? '' : formatReport(report)).toBe('');
  return report;
}

describe('the conformance kit', () => {
  it('passes packages/sdk-core on Node in every scenario, each rule reported by id', async () => {
    const report = await expectConformant(sdkCoreHarness());
    expect(report.scenarios.map((result) => result.status)).toEqual(['passed', 'passed', 'passed', 'passed', 'passed', 'passed']);
    // Not even a SHOULD broken: the core gzips from 10 events and sends one request at a time.
    expect(failures(report)).toEqual({ baseline: [], unavailable: [], throttled: [], restarts: [], consent: [], 'expired-secret': [] });
    const text = formatReport(report);
    expect(text).toMatch(/PASS P-STAMP-1 /);
    expect(text).toMatch(/PASS P-ONCE-1 /);
    expect(text).toMatch(/PASS P-AUTH-1 /);
  }, 120_000);

  it('fails a core that keeps sent_at_ms across retries on P-STAMP-1 alone, naming the retried request', async () => {
    const firstStamp = new Map<string, number>();
    const broken = sdkCoreHarness({
      name: 'sdk-core keeping sent_at_ms',
      network: (network, ctx) => async (request) => {
        if (!request.url.endsWith('/event') || !request.body) return network(request);
        const gzipped = request.headers['content-encoding'] === 'gzip';
        const payload = JSON.parse((gzipped ? gunzipSync(request.body) : Buffer.from(request.body)).toString()) as {
          events: { event_id: string }[];
          sent_at_ms: number;
        };
        const key = payload.events[0]!.event_id;
        payload.sent_at_ms = firstStamp.get(key) ?? payload.sent_at_ms;
        firstStamp.set(key, payload.sent_at_ms);
        const json = Buffer.from(JSON.stringify(payload));
        const body = gzipped ? gzipSync(json) : json;
        return network({ ...request, body, headers: { ...request.headers, 'x-service-signature': signature(ctx.signingSecret, body) } });
      },
    });
    const report = await runConformance(broken, { runtime: stack, scenarios: scenariosNamed('unavailable') });
    expect(failures(report)).toEqual({ unavailable: ['P-STAMP-1'] });
    expect(report.passed).toBe(false);
    expect(formatReport(report)).toMatch(
      /FAIL P-STAMP-1 sent_at_ms is stamped anew for each attempt\n\s+retry of #\d+ with sent_at_ms \d+, not after its \d+: #\d+ POST \/event \(\d+ events, sent_at_ms \d+\)/,
    );
  }, 60_000);

  it('warns of a core that sends 10 events uncompressed on P-GZIP-1 alone, a SHOULD that fails no scenario', async () => {
    const report = await runConformance(sdkCoreHarness({ name: 'sdk-core without gzip', config: { gzipFrom: 11 } }), {
      runtime: stack,
      scenarios: scenariosNamed('baseline'),
    });
    expect(failures(report)).toEqual({ baseline: ['P-GZIP-1'] });
    expect(report.passed).toBe(true);
    expect(formatReport(report)).toMatch(/WARN P-GZIP-1 .*\n\s+10 events sent without Content-Encoding: gzip: #\d+ POST \/event/);
  }, 60_000);

  it('passes the React Native SDK on its in-memory module fakes in every scenario', () => expectConformant(reactNativeHarness), 120_000);

  it("passes the web SDK's script-tag build in Chromium in the baseline, warned of P-GZIP-1 (it never gzips)", async () => {
    await promisify(execFile)(process.execPath, [join(__dirname, '..', '..', 'packages/sdk-web/build.mjs'), '--script-tag-only']);
    const report = await runConformance(webSdkHarness, { runtime: stack, scenarios: scenariosNamed('baseline') });
    expect({ failures: failures(report), passed: report.passed }).toEqual({ failures: { baseline: ['P-GZIP-1'] }, passed: true });
  }, 60_000);
});
