import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { type SimulateOptions, simulate } from './run';
import { failed, summaryJson, summaryText } from './summary';

/**
 * `npm run simulate -- [--apps N] [--days N] [--installs N] [--seed S] [--check] [--json]
 * [--stack NAME] [--base-url URL]`: realistic traffic through the public endpoints, a summary of
 * what was sent, and with --check the reports compared with it (exit 1 on any difference).
 * docs/simulator.md says what it sends and why.
 */

const USAGE = `usage: npm run simulate -- [flags]

  --apps N        apps to simulate (default 2)
  --days N        days of history, 1 to 85 (default 45)
  --installs N    people who install, per app (default 100; reinstalls come on top)
  --seed S        same seed, same traffic (default: a random one, printed)
  --check         wait for aggregation and compare the four reports, the performance report
                  and (locally) the SKAN report with what was sent;
                  every difference is printed and the exit code is 1 if there is any
  --json          print the summary as JSON
  --stack NAME    a deployed stack (AWS credentials from the usual chain) instead of the local runtime
  --base-url URL  the service's public URL, when not the one the stack or runtime reports
  --concurrency N requests in flight (default 8)

Locally, start the runtime with TRUST_PROXY=1 so people can click from many addresses.`;

export function parseOptions(argv: string[]): SimulateOptions & { json: boolean } {
  const { values } = parseArgs({
    args: argv,
    strict: true,
    options: {
      apps: { type: 'string' },
      days: { type: 'string' },
      installs: { type: 'string' },
      seed: { type: 'string' },
      check: { type: 'boolean' },
      json: { type: 'boolean' },
      stack: { type: 'string' },
      'base-url': { type: 'string' },
      concurrency: { type: 'string' },
    },
  });
  const int = (name: string, value: string | undefined, fallback: number, min: number, max: number) => {
    if (value === undefined) return fallback;
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) throw new Error(`--${name} must be an integer from ${min} to ${max}`);
    return n;
  };
  if (values['base-url'] !== undefined && !/^https?:\/\//.test(values['base-url'])) throw new Error('--base-url must be an http(s) URL');
  return {
    apps: int('apps', values.apps, 2, 1, 20),
    // Corrected times may be at most 90 days old: 85 leaves room for a slow run.
    days: int('days', values.days, 45, 1, 85),
    installs: int('installs', values.installs, 100, 1, 5000),
    seed: values.seed ?? randomBytes(4).toString('hex'),
    check: values.check ?? false,
    json: values.json ?? false,
    stack: values.stack,
    baseUrl: values['base-url'],
    concurrency: int('concurrency', values.concurrency, 8, 1, 64),
  };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  let options: ReturnType<typeof parseOptions>;
  try {
    options = parseOptions(argv);
  } catch (error) {
    process.stderr.write(`error: ${(error as Error).message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  const started = Date.now();
  const result = await simulate({
    ...options,
    log: (line) => process.stderr.write(`[${((Date.now() - started) / 1000).toFixed(1)} s] ${line}\n`),
  });
  if (options.json) process.stdout.write(`${JSON.stringify(summaryJson(result), null, 2)}\n`);
  else process.stdout.write(`${summaryText(result)}\n\n(${((Date.now() - started) / 1000).toFixed(1)} s)\n`);
  process.exit(failed(result) ? 1 : 0);
}

if (require.main === module) {
  main().catch((error: unknown) => {
    process.stderr.write(`error: ${(error as Error).message ?? String(error)}\n`);
    process.exit(1);
  });
}
