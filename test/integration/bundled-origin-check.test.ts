import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { build } from 'esbuild';
import { envName, originVerifyHeader, queues, tables } from '../../lib/manifest';
import { newLocalOriginSecret } from '../../local/origin-secret';
import { type SecretsManagerEmulator, startSecretsManagerEmulator } from '../../local/secrets-manager-emulator';
import { fromCloudFront } from '../support/edge';

// The origin check as Lambda runs it: the handler bundled by esbuild the way ServiceFunction
// bundles it (lib/constructs/service-function.ts), not the TypeScript source under ts-jest.
const ROOT = join(__dirname, '..', '..');
let outdir: string;
let secretsManager: SecretsManagerEmulator;
type Bundled = { handler: (event: APIGatewayProxyEventV2, context: Context) => Promise<APIGatewayProxyStructuredResultV2> };
const bundled: Record<string, Bundled> = {};

beforeAll(async () => {
  for (const name of Object.keys(tables)) process.env[envName.table(name)] = name;
  for (const name of Object.keys(queues)) process.env[envName.queue(name)] = `http://127.0.0.1:1/000000000000/${name}`;
  process.env[envName.bucket()] = 'audit';
  process.env[envName.exportBucket()] = 'exports';
  // The handlers read the origin secret from Secrets Manager by its ARN, as in Lambda, with the
  // role's credentials Lambda gives them (the local Secrets Manager takes any).
  process.env.AWS_ACCESS_KEY_ID ??= 'ASIAEXAMPLE';
  process.env.AWS_SECRET_ACCESS_KEY ??= 'example';
  secretsManager = await startSecretsManagerEmulator();
  process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = secretsManager.url;
  process.env[envName.originVerifySecretArn()] = newLocalOriginSecret(secretsManager).arn;
  outdir = mkdtempSync(join(tmpdir(), 'bundled-origin-'));
  const entries = {
    health: 'functions/health.ts',
    ingest: 'functions/ingest.ts',
    fallback: 'functions/fallback.ts',
    'origin-authorizer': 'functions/origin-authorizer.ts',
  };
  await build({
    entryPoints: Object.fromEntries(Object.entries(entries).map(([name, entry]) => [name, join(ROOT, entry)])),
    outdir,
    bundle: true,
    platform: 'node',
    format: 'cjs',
    target: 'node20',
    minify: true,
    logLevel: 'silent',
  });
  for (const name of Object.keys(entries)) {
    // require, not import: the bundle's path is known only when the test runs.
    bundled[name] = require(join(outdir, `${name}.js`)) as Bundled;
  }
}, 60_000);

afterAll(async () => {
  rmSync(outdir, { recursive: true, force: true });
  await secretsManager?.close();
});

const event = (path: string, headers: Record<string, string>) =>
  ({
    rawPath: path,
    headers,
    isBase64Encoded: false,
    requestContext: { http: { method: 'GET', path, sourceIp: '203.0.113.9' } },
  }) as unknown as APIGatewayProxyEventV2;
const context = { functionName: 'bundled', awsRequestId: 'r' } as Context;

async function answer(name: string, path: string, headers: Record<string, string>) {
  const result = await bundled[name].handler(event(path, headers), context);
  return { status: result.statusCode, body: JSON.parse(result.body as string) as unknown };
}

describe('a bundled HTTP function', () => {
  it.each([
    ['health', '/health'],
    ['ingest', '/event'],
  ])('%s answers 403 forbidden to a request sent without, or with a wrong, origin secret', async (name, path) => {
    expect(await answer(name, path, {})).toEqual({ status: 403, body: { error: 'forbidden' } });
    expect(await answer(name, path, { [originVerifyHeader]: 'guess' })).toEqual({ status: 403, body: { error: 'forbidden' } });
  });

  it('serves a request that carries the origin secret', async () => {
    expect(await answer('fallback', '/nowhere', fromCloudFront())).toEqual({ status: 404, body: { error: 'not_found' } });
    expect(await answer('fallback', '/nowhere', {})).toEqual({ status: 403, body: { error: 'forbidden' } });
  });
});

describe('the bundled origin authorizer', () => {
  const authorize = (headers: Record<string, string>) =>
    (bundled['origin-authorizer'].handler as unknown as (event: unknown, context: Context) => Promise<unknown>)({ headers }, context);

  it('authorizes the origin secret and refuses a wrong value', async () => {
    expect(await authorize(fromCloudFront())).toEqual({ isAuthorized: true });
    expect(await authorize({ [originVerifyHeader]: 'guess' })).toEqual({ isAuthorized: false });
  });
});
