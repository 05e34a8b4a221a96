import { randomUUID } from 'node:crypto';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SQSClient } from '@aws-sdk/client-sqs';
import { LOCAL_CONTROL_VARIABLE } from '../functions/adapters/health-sources';
import { SigningSecretStore } from '../functions/adapters/signing-secret-store';
import { TenantStore } from '../functions/adapters/tenant-store';
import { policyFromEnv } from '../functions/domain/partner-postbacks/destination';
import { envName, type TableName } from '../lib/manifest';
import { authorizerFromManifest } from './api-gateway';
import { type LocalConsoleSite, startConsoleSite } from './console-site';
import { type Emulators, startEmulators } from './emulators';
import { applyLocalEnvironment, type EndpointsFile, endpointsPath } from './environment';
import { type LocalDeployment, registerConsoleSignIn, registerDeployment } from './function-context';
import { startEdge } from './http-server';
import { installIamGuard } from './iam-guard';
import { abandonInvocations, acceptInvocations } from './invocations';
import { invoke } from './lambda';
import { recordedHours, recordMetrics } from './metric-recorder';
import { newLocalOriginSecret } from './origin-secret';
import { localCredentials, provision } from './provision';
import { type Pollers, startQueuePollers } from './queue-pollers';
import { type Scheduler, startScheduler } from './scheduler';
import { type SecretsManagerEmulator, startSecretsManagerEmulator } from './secrets-manager-emulator';
import { type Demo, seedDemo } from './seed';

export interface RuntimeOptions {
  dataDir: string;
  port: number;
  host?: string;
  trustProxy?: boolean;
  /** Seed the demo tenant on an empty data directory (npm start does; most tests do not need to). */
  seed?: boolean;
  onError?: (error: unknown) => void;
  /** Replaces functions' IAM policies (tests take a grant away to see what AWS would refuse). */
  policies?: LocalDeployment['policies'];
  /** Local values of the manifest's internet addresses (a test's stub server); none by default. */
  internet?: LocalDeployment['internet'];
  /** Fire the manifest's schedules on their times (default); false: only when run (local/scheduler.ts). */
  schedules?: boolean;
  /** Serve the deployed console with its sign-in stand-in (local/console-site.ts) on this port (0: any free one); npm start does. */
  consolePort?: number;
}

export interface Runtime {
  baseUrl: string;
  /** API Gateway alone, as a client calling the execute-api URL directly reaches it (no CloudFront, no origin secret). */
  apiUrl: string;
  controlUrl: string;
  endpoints: EndpointsFile;
  emulators: Emulators;
  demo?: Demo;
  demoCreated: boolean;
  pollers: Pollers;
  scheduler: Scheduler;
  /** The console with sign-in once it has started, when RuntimeOptions.consolePort asked for it. */
  consoleReady: Promise<LocalConsoleSite | undefined>;
  /** The local Secrets Manager, where an operator's secrets go (a MAX report key: docs/ad-revenue.md). */
  secrets: Pick<SecretsManagerEmulator, 'put'>;
  close(): Promise<void>;
}

/**
 * The whole service in one process: emulators, resources from the manifest, every route, the
 * queue consumers and the schedules, running the same handlers as Lambda.
 */
export async function startRuntime(options: RuntimeOptions): Promise<Runtime> {
  const host = options.host ?? '127.0.0.1';
  const onError = options.onError ?? ((error: unknown) => console.error(error));
  mkdirSync(options.dataDir, { recursive: true });
  // Locally the runtime is Node 20; in Lambda it is Node 22, so the SDK's upgrade notice is noise here.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';

  const emulators = await startEmulators(options.dataDir);
  const names = await provision(emulators);
  const tableName = (table: TableName): string => {
    const name = names.tables[table];
    if (name === undefined) throw new Error(`provisioning made no ${table} table`);
    return name;
  };
  applyLocalEnvironment({
    ...emulators,
    tables: names.tables,
    bucket: names.bucket,
    export_bucket: names.exportBucket,
    queues: names.queues,
  });
  // A data directory made before the signing_secrets table holds apps' secrets in the tenants
  // table: they move before any function runs (in AWS, `admin signing-secrets migrate` does it).
  const moved = await new TenantStore(tableName('tenants'), new SigningSecretStore(tableName('signing_secrets'))).migrateSigningSecrets();
  if (moved > 0) console.log(`Moved the signing secrets of ${moved} apps out of the local tenants table, into signing_secrets`);
  process.env.POWERTOOLS_LOG_LEVEL ??= 'WARN';
  process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
  // Metrics go nowhere locally; the control port's /metrics serves their hourly sums (local/metric-recorder.ts).
  recordMetrics();
  // No invocation of an earlier run is alive (the data directory admits one runtime at a time), so
  // the aggregator takes over a lane lease another run left (a kill -9, an invocation abandoned at
  // shutdown) rather than wait 75 s for it: functions/adapters/aggregate-store.ts.
  process.env.LOCAL_RUN_ID = randomUUID();
  // The local edge adds the origin secret to every request; routed handlers read it from a local
  // Secrets Manager by its ARN, as they read it in AWS. The process keeps both, for code that
  // calls a handler directly (tests, the bench).
  const secretsManager = await startSecretsManagerEmulator({ host, region: emulators.region });
  const { value: originSecret, arn: originSecretArn } = newLocalOriginSecret(secretsManager);
  process.env.AWS_ENDPOINT_URL_SECRETS_MANAGER = secretsManager.url;
  process.env[envName.originVerifySecretArn()] = originSecretArn;
  // From here each handler runs with its function's environment and IAM policy only.
  registerDeployment({
    tables: names.tables,
    bucket: names.bucket,
    exportBucket: names.exportBucket,
    queues: names.queues,
    deadLetterQueues: names.deadLetterQueues,
    originSecretArn,
    policies: options.policies,
    internet: options.internet,
  });
  installIamGuard();
  // An earlier runtime in this process (tests restart one) may have abandoned its invocations.
  acceptInvocations();

  // One HTTP API behind both URLs, so one authorizer and one cache of its answers, as in AWS. The
  // invoke is looked up at each call, as the routes' is (tests count invocations through it).
  const authorize = authorizerFromManifest((name, event) => invoke(name, event));
  const edge = await startEdge({
    host,
    port: options.port,
    trustProxy: options.trustProxy ?? false,
    originSecret,
    authorize,
    onError,
  });
  // The execute-api URL's stand-in: API Gateway with no CloudFront in front, on a free port, for
  // tests of what a client calling it directly gets (the origin authorizer's 401 and 403).
  const api = await startEdge({ host, port: 0, trustProxy: false, authorize, onError });
  // Not waited for: its bundle and the stand-in's start take seconds the service's own start should not. It registers
  // the console API's environment (the stand-in's issuer) before it takes a request.
  const consoleStop = new AbortController();
  const consoleReady =
    options.consolePort === undefined
      ? Promise.resolve(undefined)
      : startConsoleSite({
          host,
          port: options.consolePort,
          dataDir: options.dataDir,
          baseUrl: edge.url,
          invoke,
          register: registerConsoleSignIn,
          signal: consoleStop.signal,
        });
  // Its failure is thrown where it is awaited (npm start, the tests); meanwhile it is not an unhandled rejection.
  consoleReady.catch(() => undefined);
  const seeded = options.seed
    ? await seedDemo(
        options.dataDir,
        { tenants: tableName('tenants'), signing_secrets: tableName('signing_secrets'), links: tableName('links') },
        edge.url,
      )
    : undefined;

  const sqs = new SQSClient({ region: emulators.region, endpoint: emulators.sqs });
  const pollers = startQueuePollers({ sqs, queueUrls: names.queues, onError });
  const scheduler = startScheduler(onError, options.schedules ?? true);
  const control = await startControl(host, scheduler, pollers);
  // The health view in the signed-in console reads the runtime's metrics there (functions/adapters/health-sources.ts).
  process.env[LOCAL_CONTROL_VARIABLE] = control.url;

  const endpoints: EndpointsFile = {
    region: emulators.region,
    credentials: { access_key_id: localCredentials.accessKeyId, secret_access_key: localCredentials.secretAccessKey },
    dynamodb: emulators.dynamodb,
    s3: emulators.s3,
    sqs: emulators.sqs,
    tables: names.tables,
    bucket: names.bucket,
    export_bucket: names.exportBucket,
    queues: names.queues,
    dead_letter_queues: names.deadLetterQueues,
    base_url: edge.url,
    control: control.url,
    pid: process.pid,
    postback_allow_loopback: policyFromEnv().allowLoopback,
  };
  writeFileSync(endpointsPath(options.dataDir), `${JSON.stringify(endpoints, null, 2)}\n`);
  // Only now, with endpoints.json and demo.json written, does the edge answer (held requests too).
  edge.open();
  api.open();

  let closing: Promise<void> | undefined;
  const close = () =>
    (closing ??= (async () => {
      // Stop taking work: no new request, message or schedule (keep-alive clients are told to go,
      // not waited for). Work in flight gets a short grace; whatever still runs then is abandoned
      // as a crash (local/invocations.ts): its next AWS call never starts, its messages stay held
      // and come back. Only once the calls it had in flight have landed do the emulators close,
      // last, flushing to disk. A backlog behind the aggregator delays none of it.
      scheduler.stop();
      // A console still starting gives up (its stand-in killed); one that started closes below.
      consoleStop.abort(new Error('the runtime stopped before the console had started'));
      const controlClosed = new Promise<void>((resolve) => control.server.close(() => resolve()));
      control.server.closeAllConnections();
      await Promise.all([
        edge.shutdown(SHUTDOWN_GRACE_MS),
        api.shutdown(SHUTDOWN_GRACE_MS),
        pollers.stop(SHUTDOWN_GRACE_MS),
        consoleReady.then((site) => site?.close()).catch(() => undefined),
      ]);
      await abandonInvocations();
      await controlClosed;
      sqs.destroy();
      await Promise.all([emulators.close(), secretsManager.close()]);
      rmSync(endpointsPath(options.dataDir), { force: true });
    })());

  return {
    baseUrl: edge.url,
    apiUrl: api.url,
    controlUrl: control.url,
    endpoints,
    emulators,
    demo: seeded?.demo,
    demoCreated: seeded?.created ?? false,
    pollers,
    scheduler,
    consoleReady,
    secrets: { put: (name, value) => secretsManager.put(name, value) },
    close,
  };
}

/** How long a shutdown waits for requests and queue batches in flight before abandoning them. */
const SHUTDOWN_GRACE_MS = 1000;

/**
 * A private control port on 127.0.0.1 for local tools: `admin schedule run NAME` fires a schedule
 * here and gets the handler's result once it has finished; /drain waits for the queues to empty;
 * /metrics answers the functions' metrics per hour (local/metric-recorder.ts).
 */
async function startControl(host: string, scheduler: Scheduler, pollers: Pollers): Promise<{ server: Server; url: string }> {
  const server = createServer((request, response) => {
    const reply = (status: number, body: unknown) => {
      response.writeHead(status, { 'content-type': 'application/json' });
      response.end(JSON.stringify(body));
    };
    const url = new URL(request.url ?? '/', 'http://localhost');
    const schedule = /^\/schedules\/([\w-]+)$/.exec(url.pathname)?.[1];
    if (request.method === 'GET' && url.pathname === '/ping') return reply(200, { ok: true, pid: process.pid });
    if (request.method === 'GET' && url.pathname === '/metrics') {
      // The hourly sums of the functions' metrics, for `admin health` (CloudWatch's part in AWS).
      const [fromMs, toMs] = ['from_ms', 'to_ms'].map((name) => Number(url.searchParams.get(name) ?? Number.NaN));
      if (!Number.isSafeInteger(fromMs) || !Number.isSafeInteger(toMs)) return reply(400, { error: 'from_ms and to_ms are required' });
      return reply(200, { hours: [...recordedHours(Number(fromMs), Number(toMs))].map(([hour_ms, sums]) => ({ hour_ms, sums })) });
    }
    if (request.method === 'POST' && url.pathname === '/drain') {
      pollers.drain().then(
        () => reply(200, { ok: true }),
        (error: Error) => reply(500, { error: error.message }),
      );
      return;
    }
    if (request.method === 'POST' && schedule) {
      scheduler.run(schedule).then(
        (result) => reply(200, { ok: true, schedule, result: result ?? null }),
        (error: Error) => reply(/^no schedule named/.test(error.message) ? 404 : 500, { error: error.message }),
      );
      return;
    }
    reply(404, { error: 'not_found' });
  });
  await new Promise<void>((resolve) => server.listen(0, host, () => resolve()));
  return { server, url: `http://${host}:${(server.address() as AddressInfo).port}` };
}
