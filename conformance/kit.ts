import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SigningSecretStore } from '../functions/adapters/signing-secret-store';
import { TenantStore } from '../functions/adapters/tenant-store';
import { resourceName } from '../functions/shared/config';
import { type Runtime, startRuntime } from '../local/runtime';
import { acceptedSeqs, CONFORMANCE_EVENT, check, type Finding } from './checks';
import { CheckingProxy } from './proxy';
import { CHECKED_RULES, type RuleId, SHOULD_RULES } from './rules';
import { type Capability, rulesOf, SCENARIOS, type Scenario } from './scenarios';

/** A scenario's app and what the SDK is to do in it: printed for an external SDK, and its harness's context. */
export interface ScenarioInfo {
  readonly scenario: string;
  readonly description: string;
  /** The checking proxy: the SDK's base URL. */
  readonly baseUrl: string;
  readonly companyKey: string;
  readonly appKey: string;
  readonly signingSecret: string;
  /** Track this many events named `conformance_event`, with params { seq: i } for i from 0. */
  readonly events: number;
  /** Kill the SDK in the middle of a send and relaunch it over the same storage this many times. */
  readonly restarts: number;
  /** Start the SDK requiring consent; mark('consent') just before granting it (capability 'consent'). */
  readonly requireConsent: boolean;
}

/** What a scenario gives the SDK under test (docs/sdk-protocol.md, "The conformance kit"). */
export interface HarnessContext extends ScenarioInfo {
  readonly fetch?: typeof fetch;
  /** Tells the kit the moment something happens: 'consent' (before granting it), 'restart' (at a relaunch). */
  mark(name: 'consent' | 'restart'): void;
  /** Aborted when the scenario ends without the queue emptying (capability 'abort'): stop the SDK then. */
  readonly signal: AbortSignal;
}

/** An SDK under test: run() starts it fresh at ctx.baseUrl, tracks, restarts, and resolves once its queue is empty. */
export interface SdkUnderTest {
  readonly name: string;
  run(ctx: HarnessContext): Promise<void>;
  /** What it can do beyond tracking and restarting; a scenario needing more is reported skipped. */
  readonly capabilities?: Partial<Record<Capability, boolean>>;
}

export interface RuleResult {
  readonly rule: RuleId;
  readonly title: string;
  readonly level: 'MUST' | 'SHOULD';
  readonly passed: boolean;
  readonly findings: readonly Finding[];
}

export interface ScenarioResult {
  readonly scenario: string;
  readonly status: 'passed' | 'failed' | 'skipped';
  /** Why it was skipped, or what went wrong beyond the rules (the SDK timed out, its run threw). */
  readonly note?: string;
  readonly rules: readonly RuleResult[];
  readonly requests: number;
  readonly seconds: number;
}

export interface ConformanceReport {
  readonly sdk: string;
  readonly passed: boolean;
  readonly scenarios: readonly ScenarioResult[];
}

export interface KitOptions {
  readonly scenarios?: readonly Scenario[];
  /** The proxy's port; 0 for any free one. */
  readonly port?: number;
  /** A runtime already started (a test's); otherwise the kit starts one in a temporary directory. */
  readonly runtime?: Runtime;
  /** How long a scenario may take before it fails. Default 60 s. */
  readonly scenarioTimeoutMs?: number;
  /** Called with the proxy's URL and each scenario's app before it runs (the CLI prints them). */
  readonly onScenario?: (info: ScenarioInfo) => void;
}

/** How long an SDK whose secret expired must stay silent before the scenario ends. */
const QUIET_AFTER_401_MS = 1_500;

/** Runs the scenarios against one SDK behind the checking proxy and reports every rule of each. */
export async function runConformance(sdk: SdkUnderTest, options: KitOptions = {}): Promise<ConformanceReport> {
  const own = options.runtime ? undefined : await ownRuntime();
  const runtime = options.runtime ?? (own as OwnRuntime).runtime;
  const proxy = new CheckingProxy({ upstream: runtime.baseUrl, port: options.port ?? 0 });
  const baseUrl = await proxy.start();
  try {
    const results: ScenarioResult[] = [];
    for (const scenario of options.scenarios ?? SCENARIOS) {
      results.push(await runScenario(sdk, scenario, { proxy, baseUrl, runtime, options }));
    }
    return { sdk: sdk.name, passed: results.every((result) => result.status !== 'failed'), scenarios: results };
  } finally {
    await proxy.close();
    await own?.close();
  }
}

interface OwnRuntime {
  runtime: Runtime;
  close(): Promise<void>;
}

async function ownRuntime(): Promise<OwnRuntime> {
  const dataDir = mkdtempSync(join(tmpdir(), 'sdk-conformance-'));
  process.env.DATA_DIR = dataDir;
  const runtime = await startRuntime({ port: 0, dataDir, seed: false, schedules: false, onError: () => undefined });
  return {
    runtime,
    close: async () => {
      await runtime.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

async function runScenario(
  sdk: SdkUnderTest,
  scenario: Scenario,
  { proxy, baseUrl, runtime, options }: { proxy: CheckingProxy; baseUrl: string; runtime: Runtime; options: KitOptions },
): Promise<ScenarioResult> {
  const started = Date.now();
  const rules = rulesOf(scenario);
  const missing = scenario.needs.filter((capability) => !sdk.capabilities?.[capability]);
  if (missing.length > 0) {
    return {
      scenario: scenario.name,
      status: 'skipped',
      note: `the harness lacks ${missing.join(', ')}`,
      rules: [],
      requests: 0,
      seconds: 0,
    };
  }
  const app = await newApp(scenario.name);
  const info: ScenarioInfo = {
    scenario: scenario.name,
    description: scenario.description,
    baseUrl,
    companyKey: app.companyKey,
    appKey: app.appKey,
    signingSecret: app.signingSecret,
    events: scenario.events,
    restarts: scenario.restarts,
    requireConsent: scenario.requireConsent,
  };
  proxy.begin((exchange, attempt) => scenario.fault(exchange, attempt), info);
  proxy.status = () => ({
    scenario: scenario.name,
    requests: proxy.exchanges.length,
    accepted_events: acceptedSeqs(proxy.exchanges).size,
    events: scenario.events,
    last_request_ms: proxy.exchanges.at(-1)?.receivedMs ?? null,
    done: proxy.marks.some((mark) => mark.name === 'done'),
  });
  options.onScenario?.(info);
  const abort = new AbortController();
  let note: string | undefined;
  const run = sdk.run({ ...info, fetch: globalThis.fetch, mark: (name) => proxy.mark(name), signal: abort.signal }).then(
    () => 'finished' as const,
    (error: unknown) => {
      note = `the harness failed: ${error instanceof Error ? error.message : String(error)}`;
      return 'failed' as const;
    },
  );
  const timeoutMs = options.scenarioTimeoutMs ?? 60_000;
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<'timeout'>((resolve) => {
    timer = setTimeout(() => resolve('timeout'), timeoutMs);
  });
  const ending = scenario.delivers ? run : Promise.race([run, quietAfter401(proxy)]);
  const end = await Promise.race([ending, timeout]);
  clearTimeout(timer);
  abort.abort();
  if (end === 'timeout') note = `the SDK did not ${scenario.delivers ? 'empty its queue' : 'stop'} within ${timeoutMs / 1000} s`;
  // Nothing more is recorded once the scenario has ended: a late request belongs to no check.
  const exchanges = [...proxy.exchanges];
  const marks = [...proxy.marks];
  const countedByRuntime =
    scenario.delivers && end !== 'timeout' ? await countedEvents(runtime, app.serverKey, scenario.events) : undefined;
  const findings = check({
    exchanges,
    marks,
    companyKey: app.companyKey,
    appKey: app.appKey,
    signingSecret: app.signingSecret,
    events: scenario.events,
    requireConsent: scenario.requireConsent,
    delivers: scenario.delivers,
    countedByRuntime,
  });
  const results = rules.map((rule) => {
    const own = findings.filter((finding) => finding.rule === rule);
    const level = SHOULD_RULES.has(rule) ? ('SHOULD' as const) : ('MUST' as const);
    return { rule, title: CHECKED_RULES[rule], level, passed: own.length === 0, findings: own };
  });
  const passed = note === undefined && results.every((result) => result.passed || result.level === 'SHOULD');
  return {
    scenario: scenario.name,
    status: passed ? 'passed' : 'failed',
    ...(note !== undefined && { note }),
    rules: results,
    requests: exchanges.length,
    seconds: Math.round((Date.now() - started) / 100) / 10,
  };
}

/** Resolves once the proxy has answered 401 and the SDK has then sent nothing for QUIET_AFTER_401_MS. */
async function quietAfter401(proxy: CheckingProxy): Promise<'quiet'> {
  for (;;) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const refused = proxy.exchanges.some((exchange) => exchange.heardStatus === 401);
    const last = proxy.exchanges.at(-1)?.answeredMs ?? 0;
    if (refused && Date.now() - last >= QUIET_AFTER_401_MS) return 'quiet';
  }
}

interface ConformanceApp {
  companyKey: string;
  appKey: string;
  signingSecret: string;
  serverKey: string;
}

/** A company on the paid plan (no monthly cap in the way) with one app for the scenario. */
async function newApp(scenario: string): Promise<ConformanceApp> {
  const tenants = new TenantStore(resourceName.table('tenants'), new SigningSecretStore(resourceName.table('signing_secrets')));
  const company = await tenants.createCompany({ name: `Conformance ${scenario}`, plan: 'paid' });
  const app = await tenants.createApp({
    companyKey: company.company_key,
    name: `Conformance ${scenario}`,
    ios_url: 'https://apps.apple.com/app/id1234567890',
    android_url: 'https://play.google.com/store/apps/details?id=com.example.conformance',
    web_url: 'https://example.com/app',
  });
  const { serverKey } = await tenants.createServerKey(app.app_key);
  return { companyKey: company.company_key, appKey: app.app_key, signingSecret: app.signing_secret, serverKey };
}

/**
 * The conformance events the runtime's own events report counts for the app, once the queues are
 * drained: polled until it reaches `expected` or stops changing for a second.
 */
async function countedEvents(runtime: Runtime, serverKey: string, expected: number): Promise<number> {
  let last = -1;
  let steadySince = Date.now();
  for (;;) {
    await runtime.pollers.drain();
    const response = await fetch(`${runtime.baseUrl}/api/v1/reports/events?limit=1000`, {
      headers: { authorization: `Bearer ${serverKey}` },
    });
    const { rows = [] } = (await response.json()) as { rows?: { event_name: string; events: number }[] };
    const counted = rows.filter((row) => row.event_name === CONFORMANCE_EVENT).reduce((sum, row) => sum + row.events, 0);
    if (counted !== last) steadySince = Date.now();
    last = counted;
    if (counted >= expected || Date.now() - steadySince > 1_000) return counted;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The report as text: one line per rule of each scenario, each failure with its offending requests. */
export function formatReport(report: ConformanceReport): string {
  const lines = [`SDK conformance: ${report.sdk}`];
  for (const result of report.scenarios) {
    lines.push('', `scenario ${result.scenario}: ${result.status.toUpperCase()} (${result.requests} requests, ${result.seconds} s)`);
    if (result.note) lines.push(`  ${result.note}`);
    for (const rule of result.rules) {
      lines.push(`  ${rule.passed ? 'PASS' : rule.level === 'MUST' ? 'FAIL' : 'WARN'} ${rule.rule} ${rule.title}`);
      for (const finding of rule.findings.slice(0, 5))
        lines.push(`       ${finding.detail}${finding.request ? `: ${finding.request}` : ''}`);
      if (rule.findings.length > 5) lines.push(`       and ${rule.findings.length - 5} more`);
    }
  }
  lines.push('', report.passed ? 'PASSED' : 'FAILED');
  return lines.join('\n');
}

/** How long an external SDK must be quiet, once every event was accepted, before its scenario ends. */
const EXTERNAL_QUIET_MS = 2_000;

/**
 * An SDK the kit does not start (a native one on a device or simulator, pointed at the proxy by its
 * author): run() waits until the SDK's app posts /_conformance/done, or until the runtime has
 * accepted every event of the scenario and the SDK has then been quiet for two seconds.
 */
export function externalSdk(name = 'external SDK'): SdkUnderTest {
  return {
    name,
    capabilities: { consent: true, abort: true },
    run: async (ctx) => {
      while (!ctx.signal.aborted) {
        await new Promise((resolve) => setTimeout(resolve, 200));
        const status = (await (await fetch(`${ctx.baseUrl}/_conformance/status`)).json()) as {
          accepted_events: number;
          last_request_ms: number | null;
          done: boolean;
        };
        if (status.done) return;
        if (status.accepted_events >= ctx.events && Date.now() - (status.last_request_ms ?? 0) >= EXTERNAL_QUIET_MS) return;
      }
    },
  };
}
