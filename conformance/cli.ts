import { parseArgs } from 'node:util';
import { sdkCoreHarness } from './harnesses/sdk-core-node';
import { externalSdk, formatReport, runConformance, type ScenarioInfo } from './kit';
import { type Scenario, scenariosNamed } from './scenarios';

/**
 * npm run sdk-conformance -- --port N [--scenario all|<name>] [--events N] [--sdk external|sdk-core]
 *   [--timeout-s S] [--json]
 *
 * Starts the local runtime behind the checking proxy on port N, runs each scenario against the
 * SDK, prints a pass/fail line per rule (docs/sdk-protocol.md) and exits 1 when a MUST failed.
 * `--sdk external` (the default) waits for an SDK its author starts against the printed base URL
 * and keys (docs/sdk-protocol.md, "The conformance kit"); `--sdk sdk-core` runs packages/sdk-core.
 */
const USAGE =
  'usage: npm run sdk-conformance -- --port N [--scenario all|<name>] [--events N] [--sdk external|sdk-core] [--timeout-s S] [--json]';

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: 'string' },
      scenario: { type: 'string', default: 'all' },
      events: { type: 'string' },
      'expect-events': { type: 'string' },
      sdk: { type: 'string', default: 'external' },
      'timeout-s': { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return 0;
  }
  const port = wholeNumber(values.port, 'port', 0, 65_535);
  const eventsOption = values.events ?? values['expect-events'];
  const events = eventsOption === undefined ? undefined : wholeNumber(eventsOption, 'events', 1, 10_000);
  const timeoutS = values['timeout-s'] === undefined ? undefined : wholeNumber(values['timeout-s'], 'timeout-s', 1, 86_400);
  if (values.sdk !== 'external' && values.sdk !== 'sdk-core') throw new Error(`--sdk is external or sdk-core\n${USAGE}`);
  const external = values.sdk === 'external';
  const scenarios: Scenario[] = scenariosNamed(values.scenario).map((scenario) => ({ ...scenario, events: events ?? scenario.events }));
  const report = await runConformance(external ? externalSdk() : sdkCoreHarness(), {
    port,
    scenarios,
    // A person starting an SDK by hand needs longer than a harness.
    scenarioTimeoutMs: (timeoutS ?? (external ? 600 : 60)) * 1000,
    onScenario: (info) => (external || !values.json ? console.log(instructions(info, external)) : undefined),
  });
  console.log(values.json ? JSON.stringify(report, null, 2) : formatReport(report));
  return report.passed ? 0 : 1;
}

function instructions(info: ScenarioInfo, external: boolean): string {
  const lines = [`scenario ${info.scenario}: ${info.description}`];
  if (!external) return lines.join('\n');
  lines.push(
    `  base URL        ${info.baseUrl}`,
    `  company key     ${info.companyKey}`,
    `  app key         ${info.appKey}`,
    `  signing secret  ${info.signingSecret}`,
    `  Start the SDK fresh (no stored state) with these, track ${info.events} events named conformance_event with params {"seq": i} for i = 0 to ${info.events - 1}` +
      (info.restarts > 0
        ? `, kill and relaunch the app ${info.restarts} times while it sends (POST ${info.baseUrl}/_conformance/mark/restart at each relaunch)`
        : '') +
      (info.requireConsent ? `, require consent and POST ${info.baseUrl}/_conformance/mark/consent just before granting it` : '') +
      '.',
    `  The same as JSON: GET ${info.baseUrl}/_conformance/scenario. The scenario ends at POST ${info.baseUrl}/_conformance/done,`,
    '  or once every event is accepted and the SDK has been quiet for 2 s.',
  );
  return lines.join('\n');
}

function wholeNumber(value: string | undefined, name: string, min: number, max: number): number {
  if (value === undefined || !/^\d{1,6}$/.test(value) || Number(value) < min || Number(value) > max)
    throw new Error(`--${name} is a whole number from ${min} to ${max}\n${USAGE}`);
  return Number(value);
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(2);
  },
);
