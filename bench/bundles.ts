import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { type BuildOptions, build } from 'esbuild';
import { BUNDLING } from '../lib/constructs/service-function';
import { type ConsoleSignIn, type EnvironmentSource, environmentOf } from '../lib/function-environment';
import { bucket, exportBucket, type FunctionSpec, functions } from '../lib/manifest';
import type { Report } from './support';

/**
 * Each function's bundle, built with the stack's own bundling options (BUNDLING in
 * lib/constructs/service-function.ts: the pinned AWS SDK inside, minified), its size, and its
 * cold module load: `require` of the bundle in a fresh node, the best of a few, which is the part
 * of a cold start the code decides (the SDK clients it loads count here).
 *
 * A function bundles only the SDK clients it uses (functions/shared/clients/): the run fails if
 * the link-redirect bundle holds the S3 or SQS client, since a click pays for every module loaded.
 */
const ROOT = path.resolve(__dirname, '..');
/** Fresh processes per bundle, the best reported; `--quick` takes fewer. */
const LOADS = 5;
const FORBIDDEN_IN_LINK_REDIRECT = ['@aws-sdk/client-s3', '@aws-sdk/client-sqs'];

export type BundleFigure = {
  readonly name: string;
  readonly bytes: number;
  readonly load_ms: number;
};

/** BUNDLING as esbuild's own options: what the CDK passes to the esbuild command line. */
export function esbuildOptionsOf(entry: string, outfile: string): BuildOptions {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: BUNDLING.format,
    target: BUNDLING.target,
    minify: BUNDLING.minify,
    sourcemap: BUNDLING.sourceMap,
    sourcesContent: BUNDLING.sourcesContent,
    external: [...BUNDLING.externalModules],
    mainFields: [...BUNDLING.mainFields],
    define: BUNDLING.define,
    metafile: true,
    logLevel: 'error',
  };
}

export async function bundleFigures(report: Report, loads = LOADS): Promise<void> {
  const out = mkdtempSync(path.join(tmpdir(), 'attribution-bundles-'));
  try {
    const bundles: BundleFigure[] = [];
    for (const [name, spec] of Object.entries(functions)) {
      const outfile = path.join(out, name, 'index.js');
      const { metafile } = await build(esbuildOptionsOf(path.join(ROOT, spec.entry), outfile));
      const load = loadTimes(outfile, spec, loads);
      if (name === 'link-redirect') {
        const inputs = Object.keys(metafile?.inputs ?? {});
        const loaded = FORBIDDEN_IN_LINK_REDIRECT.filter((client) => inputs.some((input) => input.includes(`node_modules/${client}/`)));
        if (loaded.length > 0) throw new Error(`the link-redirect bundle holds ${loaded.join(' and ')}, which it never uses`);
      }
      const figure = { name, bytes: statSync(outfile).size, load_ms: load.ms };
      bundles.push(figure);
      report(`bundle ${name} (bytes / cold module load ms)`, `${figure.bytes.toLocaleString('en-US')} / ${figure.load_ms.toFixed(1)}`, {});
    }
    report('link-redirect bundle loads the S3 or SQS client', 'no', { bundles, link_redirect_loads_s3_or_sqs: 0 });
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/**
 * The best of `loads` fresh processes, each timing its own require of the bundle. The environment
 * names every resource (a handler reads its configuration at load and fails fast without it), and
 * nothing outside the bundle can be found: no NODE_PATH, no node_modules above it.
 */
function loadTimes(bundle: string, spec: FunctionSpec, loads: number): { ms: number } {
  const script = `const t = process.hrtime.bigint(); require(${JSON.stringify(bundle)});
    process.stdout.write(JSON.stringify({ ms: Number(process.hrtime.bigint() - t) / 1e6 }));`;
  let best = Infinity;
  for (let i = 0; i < loads; i++) {
    // The bundle's own directory, under the system's temporary one: no node_modules to fall back on.
    const child = spawnSync(process.execPath, ['-e', script], {
      env: bundleEnvironment(spec),
      cwd: path.dirname(bundle),
      encoding: 'utf8',
    });
    if (child.status !== 0) throw new Error(`loading ${bundle} failed: ${child.stderr}`);
    best = Math.min(best, (JSON.parse(child.stdout) as { ms: number }).ms);
  }
  return { ms: Number(best.toFixed(1)) };
}

/**
 * What the stack gives the function (environmentOf, the same list the CDK construct and the local
 * runtime set), each resource as a plausible deployed name, plus what Lambda sets itself. A copy
 * of the list here went stale once (no EXPORT_BUCKET: the privacy-drain bundle failed its load).
 */
function bundleEnvironment(spec: FunctionSpec): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, AWS_REGION: 'eu-west-1' };
  for (const [variable, source] of Object.entries(environmentOf(spec))) env[variable] = deployedValue(source);
  return env;
}

const DEPLOYED_CONSOLE: ConsoleSignIn = {
  issuer: 'https://cognito-idp.eu-west-1.amazonaws.com/eu-west-1_Example1',
  clientId: '1example23456789',
  userPoolId: 'eu-west-1_Example1',
  baseUrl: 'https://d111111abcdef8.cloudfront.net',
};

function deployedValue(source: EnvironmentSource): string {
  switch (source.kind) {
    case 'constant':
    case 'internet':
      return source.value;
    case 'table':
      return `attribution-${source.table}`;
    case 'bucket':
      return `attribution-${bucket.name}`;
    case 'export-bucket':
      return `attribution-${exportBucket.name}`;
    case 'queue':
      return `https://sqs.eu-west-1.amazonaws.com/123456789012/${source.queue}`;
    case 'dead-letter-queue':
      return `https://sqs.eu-west-1.amazonaws.com/123456789012/${source.queue}-dlq`;
    case 'alarm-topic':
      return 'arn:aws:sns:eu-west-1:123456789012:attribution-alarms';
    case 'origin-secret-arn':
      return 'arn:aws:secretsmanager:eu-west-1:123456789012:secret:origin-verify-a1b2c3';
    case 'console':
      return DEPLOYED_CONSOLE[source.value];
  }
}
