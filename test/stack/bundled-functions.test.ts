import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { createApp } from '../../bin/app';
import { BUNDLING, LOCAL_ONLY_SWITCHES } from '../../lib/constructs/service-function';
import {
  bucket,
  envName,
  exportBucket,
  functions,
  originVerifyHeader,
  type QueueSpec,
  queues,
  schedules,
  tables,
} from '../../lib/manifest';
import { type SecretsManagerEmulator, startSecretsManagerEmulator } from '../../local/secrets-manager-emulator';
import { cdkJsonContext } from './synthesize';

/**
 * Every function as Lambda starts it: the synthesized asset (index.js, bundled by esbuild exactly
 * as `cdk deploy` bundles it) loaded in a process of its own whose environment is only what the
 * template gives the function plus what Lambda itself sets. Nothing outside the asset can be
 * required (no NODE_PATH, no node_modules above the assembly): the pinned AWS SDK is in the bundle,
 * not the runtime's. A function that reads a variable its template lacks fails here, as its cold
 * start would in AWS (the health function's QUEUE_POSTBACKS_URL did). The origin secret is not in
 * any template: a routed function reads it from Secrets Manager by the ARN it has, here from the
 * local one, which plays the region's endpoint.
 *
 * Then what the bundles hold: the SDK version package-lock.json pins, no local-only switch
 * (LOCAL_ONLY_SWITCHES), and none of the manifest's text, so that a documentation change to the
 * manifest changes no bundle and redeploys no function (lib/function-constants.ts).
 */
const ROOT = join(__dirname, '..', '..');
const run = promisify(execFile);
const BUILTINS = new Set(builtinModules);

type Resource = { Type: string; Properties: Record<string, any>; Metadata?: Record<string, unknown> };
let outdir: string;
let resources: Record<string, Resource>;
let secretsManager: SecretsManagerEmulator;
const ORIGIN_SECRET = 'origin-secret-of-the-bundled-functions-test';
let originSecretArn: string;

beforeAll(async () => {
  outdir = mkdtempSync(join(tmpdir(), 'bundled-functions-'));
  const { app } = createApp({ outdir, context: cdkJsonContext() });
  const assembly = app.synth();
  resources = (assembly.stacks[0].template as { Resources: Record<string, Resource> }).Resources;
  secretsManager = await startSecretsManagerEmulator();
  originSecretArn = secretsManager.put('origin-verify', ORIGIN_SECRET);
  // The synth bundles every function with esbuild, the SDK inside: minutes on a busy 2-core machine.
}, 360_000);

afterAll(async () => {
  if (outdir) rmSync(outdir, { recursive: true, force: true });
  await secretsManager?.close();
});

/** The Lambda resource of a manifest function: its description is the manifest's. */
function lambdaOf(name: string): Resource {
  const description = (functions as Record<string, { description: string }>)[name].description;
  const found = Object.values(resources).filter(
    (resource) => resource.Type === 'AWS::Lambda::Function' && resource.Properties.Description === description,
  );
  if (found.length !== 1) throw new Error(`expected one Lambda function described as ${name}'s, found ${found.length}`);
  return found[0];
}

/**
 * A template value as a deployed function would see it: references become plausible strings, the
 * origin secret's the ARN of the local Secrets Manager's, and a join (the console's issuer, a URL of
 * the region and a user pool) the join of its parts. A value CloudFormation would resolve from a
 * secret is none of these, and fails here.
 */
function resolved(variable: string, value: unknown): string {
  if (typeof value === 'string') return value;
  const join = (value as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (join) return join[1].map((part) => resolved(variable, part)).join(join[0]);
  const attribute = (value as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt'];
  if (attribute) return `${attribute[0].toLowerCase()}-${attribute[1].toLowerCase()}.example`;
  const ref = (value as { Ref?: string }).Ref;
  if (ref === 'AWS::Region') return 'us-east-1';
  if (ref === 'AWS::URLSuffix') return 'amazonaws.com';
  if (ref && variable === envName.originVerifySecretArn()) return originSecretArn;
  if (ref && variable.endsWith('_URL')) return `https://sqs.us-east-1.amazonaws.com/000000000000/${ref}`;
  if (ref) return `${ref.toLowerCase()}-physical-name`;
  throw new Error(`${variable}: a template value this test cannot resolve: ${JSON.stringify(value)}`);
}

function lambdaEnvironment(name: string, secretsManagerUrl: string): Record<string, string> {
  const resource = lambdaOf(name);
  const template = Object.fromEntries(
    Object.entries(resource.Properties.Environment.Variables as Record<string, unknown>).map(([variable, value]) => [
      variable,
      resolved(variable, value),
    ]),
  );
  return {
    ...template,
    // What Lambda sets itself, but not NODE_PATH: the bundle must not need the runtime's own SDK.
    AWS_REGION: 'us-east-1',
    AWS_DEFAULT_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'ASIAEXAMPLE',
    AWS_SECRET_ACCESS_KEY: 'example',
    AWS_SESSION_TOKEN: 'example',
    AWS_LAMBDA_FUNCTION_NAME: name,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(resource.Properties.MemorySize),
    AWS_EXECUTION_ENV: 'AWS_Lambda_nodejs22.x',
    LAMBDA_TASK_ROOT: '/var/task',
    PATH: '/usr/local/bin:/usr/bin:/bin',
    TZ: ':UTC',
    // Lambda's runtime is Node 22; the machine's may be 20, where the SDK only warns.
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
    // Where the region's Secrets Manager is, for the origin secret.
    AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsManagerUrl,
  };
}

/** Starts the asset in a fresh process (the cold start) and, for a routed function, sends one request with the headers given. */
const probe = `
const [index, path, headers] = process.argv.slice(1);
const module = require(index);
if (typeof module.handler !== 'function') throw new Error('no handler');
if (!path) {
  console.log(JSON.stringify({ started: true }));
} else {
  const event = { version: '2.0', rawPath: path, rawQueryString: '', headers: JSON.parse(headers), isBase64Encoded: false,
    requestContext: { http: { method: 'GET', path, sourceIp: '203.0.113.9' }, requestId: 'r' } };
  module.handler(event, { functionName: 'probe', awsRequestId: 'r', getRemainingTimeInMillis: () => 3000 })
    .then((result) => console.log(JSON.stringify({ started: true, status: result.statusCode, body: JSON.parse(result.body) })),
          (error) => { console.error(error); process.exit(3); });
}
`;

/** The asset directory of a function: the code's S3 key is the asset's hash, and the cloud assembly keeps the asset as asset.<hash>. */
function assetOf(name: string): string {
  const key: unknown = lambdaOf(name).Properties.Code?.S3Key;
  if (typeof key !== 'string' || !key.endsWith('.zip')) throw new Error(`${name} has no bundled asset`);
  return join(outdir, `asset.${key.replace(/\.zip$/, '')}`);
}

async function coldStart(
  name: string,
  request?: { path: string; headers?: Record<string, string>; secretsManagerUrl?: string },
): Promise<{ started: boolean; status?: number; body?: unknown }> {
  const args = ['-e', probe, join(assetOf(name), 'index.js'), ...(request ? [request.path, JSON.stringify(request.headers ?? {})] : [])];
  const env = lambdaEnvironment(name, request?.secretsManagerUrl ?? secretsManager.url);
  const { stdout } = await run(process.execPath, args, { env, cwd: outdir, timeout: 30_000 });
  return JSON.parse(stdout.trim().split('\n').pop() ?? '{}');
}

describe('each bundled function started with only its template environment', () => {
  it.each(Object.keys(functions))('%s starts', async (name) => {
    expect(await coldStart(name)).toEqual({ started: true });
  });

  it('answers GET /health from the health function with 403 forbidden when the origin header is missing', async () => {
    expect(await coldStart('health', { path: '/health' })).toEqual({ started: true, status: 403, body: { error: 'forbidden' } });
  });

  it('reads the origin secret from Secrets Manager by its ARN: a request carrying it is served, one with another value is 403', async () => {
    expect(await coldStart('fallback', { path: '/nowhere', headers: { [originVerifyHeader]: ORIGIN_SECRET } })).toEqual({
      started: true,
      status: 404,
      body: { error: 'not_found' },
    });
    expect(await coldStart('fallback', { path: '/nowhere', headers: { [originVerifyHeader]: 'guess' } })).toEqual({
      started: true,
      status: 403,
      body: { error: 'forbidden' },
    });
  });

  it('fails closed, a 500, when it cannot read the origin secret', async () => {
    const unreachable = { path: '/nowhere', headers: { [originVerifyHeader]: ORIGIN_SECRET }, secretsManagerUrl: 'http://127.0.0.1:1' };
    expect(await coldStart('fallback', unreachable)).toEqual({ started: true, status: 500, body: { error: 'internal_error' } });
  });
});

/** Every piece of prose the manifest holds: descriptions, purposes and alarm meanings. */
function manifestTexts(): string[] {
  const texts: string[] = [bucket.purpose, exportBucket.purpose];
  for (const spec of Object.values(functions)) texts.push(spec.description);
  for (const spec of Object.values(tables)) texts.push(spec.purpose);
  for (const spec of Object.values(schedules)) texts.push(spec.purpose);
  for (const spec of Object.values(queues) as QueueSpec[]) texts.push(spec.purpose, ...(spec.ageAlarm ? [spec.ageAlarm.meaning] : []));
  return texts;
}

/**
 * The longest stretch of a text that a minified bundle writes unchanged: no quote or backslash
 * (which esbuild may escape), none of the text's own line ends.
 */
function needleOf(text: string): string {
  const longest = text.split(/['"`\\\n]/).reduce((a, b) => (b.length > a.length ? b : a), '');
  if (longest.length < 24) throw new Error(`no distinctive stretch in ${JSON.stringify(text)}`);
  return longest;
}

function manifestTextIn(code: string): string[] {
  return manifestTexts()
    .map(needleOf)
    .filter((needle) => code.includes(needle));
}

describe('what each synthesized bundle holds', () => {
  const bundle = (name: string) => readFileSync(join(assetOf(name), 'index.js'), 'utf8');
  const pinned = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).dependencies['@aws-sdk/client-dynamodb'] as string;

  it.each(Object.keys(functions))('%s holds the AWS SDK clients it uses at the version package.json pins, and no other', (name) => {
    const versions = [...bundle(name).matchAll(/name:"@aws-sdk\/(client-[a-z-]+)",version:"([^"]+)"/g)].map((m) => `${m[1]}@${m[2]}`);
    expect(versions.length).toBeGreaterThan(0);
    expect(versions.filter((version) => !version.endsWith(`@${pinned}`))).toEqual([]);
  });

  it.each(Object.keys(functions))('%s requires no package from outside the bundle but the SDK optional CRT signer', (name) => {
    // @aws-sdk/signature-v4-crt: required inside a try by the SDK only for SigV4a, which no function uses; not in Lambda's runtime either.
    const required = [...bundle(name).matchAll(/require\("([^".][^"]*)"\)/g)].map((m) => m[1]);
    expect(
      required.filter((module) => !module.startsWith('node:') && !BUILTINS.has(module) && module !== '@aws-sdk/signature-v4-crt'),
    ).toEqual([]);
  });

  it.each(Object.keys(functions))('%s holds none of the local-only switches: each is compiled to undefined', (name) => {
    const code = bundle(name);
    expect(LOCAL_ONLY_SWITCHES.filter((variable) => code.includes(variable))).toEqual([]);
  });

  it.each(Object.keys(functions))('%s holds none of the manifest text, and its source map names no lib/manifest.ts', (name) => {
    expect(manifestTextIn(bundle(name))).toEqual([]);
    const map = JSON.parse(readFileSync(join(assetOf(name), 'index.js.map'), 'utf8')) as { sources: string[] };
    expect(map.sources.filter((source) => source.endsWith('lib/manifest.ts'))).toEqual([]);
    expect(map.sources.some((source) => source.endsWith('lib/function-constants.ts') || source.includes('node_modules/'))).toBe(true);
  });

  it('finds the manifest text and the switches in a bundle of code that reads them, as the checks above would', async () => {
    // The control: the same options on an entry that imports the manifest and reads a switch.
    const entry = join(outdir, 'control.ts');
    writeFileSync(
      entry,
      `import * as manifest from ${JSON.stringify(join(ROOT, 'lib', 'manifest'))};\n` +
        'export const handler = () => [manifest, process.env.SKAN_TEST_KEYS, process.env.LOCAL_RUN_ID];\n',
    );
    const bundled = async (define?: Record<string, string>) => {
      const outfile = join(outdir, 'control', define ? 'defined.js' : 'plain.js');
      await build({
        entryPoints: [entry],
        outfile,
        bundle: true,
        platform: 'node',
        format: 'cjs',
        minify: true,
        define,
        logLevel: 'silent',
      });
      return readFileSync(outfile, 'utf8');
    };
    const plain = await bundled();
    expect(manifestTextIn(plain)).toHaveLength(manifestTexts().length);
    expect(LOCAL_ONLY_SWITCHES.filter((variable) => plain.includes(variable))).toEqual(['SKAN_TEST_KEYS', 'LOCAL_RUN_ID']);
    // The stack's define turns exactly those reads into undefined.
    const defined = await bundled(BUNDLING.define);
    expect(LOCAL_ONLY_SWITCHES.filter((variable) => defined.includes(variable))).toEqual([]);
  });
});
