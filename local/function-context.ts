import { AsyncLocalStorage } from 'node:async_hooks';
import { type ConsoleSignIn, type EnvironmentSource, environmentOf } from '../lib/function-environment';
import { type FunctionSpec, functions } from '../lib/manifest';
import { type PolicyStatement, policyOf } from '../lib/permissions';
import { LOCAL_MAX_CONCURRENCY } from './invoke-store';
import { LOCAL_ONLY_VARIABLES } from './skan-test-key';

/**
 * Each handler runs locally as it runs in Lambda: with exactly the environment the stack gives
 * its function, and the IAM policy of its role (local/iam-guard.ts). All handlers share one
 * process here, so both follow the invocation: `runAsFunction` holds the function in an
 * AsyncLocalStorage for the invocation (and for the cold start of its module), and
 * `process.env` is a view that shows code running there only its function's variables.
 *
 * A function sees:
 * - the variables of lib/function-environment.ts for its manifest entry (TEMPLATE), with the
 *   local physical names, URLs and the origin secret's ARN in the local Secrets Manager;
 * - the variables Lambda itself sets (region, credentials, function name, memory, PATH...);
 * - the variables that point the SDK at the emulators (AWS_ENDPOINT_URL_*, checksum modes);
 * - local settings an operator or a test may set for a run (LOCAL_SETTINGS), each read with a
 *   default by the code that uses it and never set by the stack.
 * Code outside a function (the runtime itself, the admin CLI, a test's own set-up) sees the
 * whole process environment, as an operator's shell does.
 */

/** Set by Lambda itself in every function; credentials and region come from the local run. */
export const LAMBDA_PLATFORM_VARIABLES = [
  'AWS_REGION',
  'AWS_DEFAULT_REGION',
  'AWS_ACCESS_KEY_ID',
  'AWS_SECRET_ACCESS_KEY',
  'AWS_SESSION_TOKEN',
  'AWS_LAMBDA_FUNCTION_NAME',
  'AWS_LAMBDA_FUNCTION_MEMORY_SIZE',
  'AWS_LAMBDA_FUNCTION_VERSION',
  'AWS_LAMBDA_LOG_GROUP_NAME',
  // Set by Lambda Managed Instances, where one process runs many invocations at once, as here.
  'AWS_LAMBDA_MAX_CONCURRENCY',
  'TZ',
  'LANG',
  'PATH',
] as const;

/** Point the SDK at the emulators (local/environment.ts and local/runtime.ts set them). */
export const LOCAL_EMULATOR_VARIABLES = [
  'AWS_ENDPOINT_URL_DYNAMODB',
  'AWS_ENDPOINT_URL_S3',
  'AWS_ENDPOINT_URL_SQS',
  'AWS_ENDPOINT_URL_SECRETS_MANAGER',
  'AWS_REQUEST_CHECKSUM_CALCULATION',
  'AWS_RESPONSE_CHECKSUM_VALIDATION',
  'AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED',
] as const;

/**
 * Settings of a local run, documented where they are read; the stack sets none of them (the
 * stack tests check that no function has one), so in AWS each takes its default.
 */
export const LOCAL_SETTINGS = [
  'POWERTOOLS_LOG_LEVEL',
  'POWERTOOLS_METRICS_DISABLED',
  'POWERTOOLS_DEV',
  'POSTBACK_ALLOW_LOOPBACK',
  'POSTBACK_RETRY_DELAYS_SECONDS',
  'LINK_RATE_LIMIT',
  'LINK_RATE_WINDOW_SECONDS',
  'LINK_CACHE_TTL_MS',
  'KEY_CACHE_TTL_MS',
  'HEALTH_TIMEOUT_MS',
  // Set by the runtime itself at each start: the aggregator takes over the lane leases of other runs (local/runtime.ts).
  'LOCAL_RUN_ID',
  // Set by the runtime itself at each start: its control port, where the health view reads the runtime's metrics
  // (functions/adapters/health-sources.ts; CloudWatch's part in AWS).
  'LOCAL_CONTROL_URL',
] as const;

const passedThrough = new Set<string>([...LAMBDA_PLATFORM_VARIABLES, ...LOCAL_EMULATOR_VARIABLES, ...LOCAL_SETTINGS]);

/** The physical names of one local deployment of the manifest. */
export interface LocalDeployment {
  readonly tables: Readonly<Record<string, string>>;
  readonly bucket: string;
  /** The export bucket's local name. */
  readonly exportBucket: string;
  readonly queues: Readonly<Record<string, string>>;
  /** Each queue's dead-letter queue URL (local/provision.ts), for the health view's grant (FunctionSpec.healthView). */
  readonly deadLetterQueues: Readonly<Record<string, string>>;
  /** The origin secret's ARN in the local Secrets Manager (local/origin-secret.ts). */
  readonly originSecretArn: string;
  /** Replaces a function's policy (tests take a grant away to see what AWS would refuse). */
  readonly policies?: Readonly<Record<string, readonly PolicyStatement[]>>;
  /**
   * The local values of the manifest's internet addresses (FunctionSpec.internet): the runtime
   * never reaches the internet, so each is '' unless a run gives one (a test's stub on 127.0.0.1).
   */
  readonly internet?: Readonly<Record<string, string>>;
  /** The console's sign-in stand-in when the run has one (local/console-site.ts); else every console variable is ''. */
  readonly console?: ConsoleSignIn;
}

export interface FunctionContext {
  readonly name: string;
  /** The template's variables, resolved for this deployment. */
  readonly template: Readonly<Record<string, string>>;
  /** What Lambda sets that differs per function. */
  readonly platform: Readonly<Record<string, string>>;
  readonly policy: readonly PolicyStatement[];
  readonly deployment: LocalDeployment;
  /** Variables the function's own code set (Lambda keeps them for the life of the instance). */
  readonly own: Record<string, string>;
}

const storage = new AsyncLocalStorage<FunctionContext>();
let deployment: LocalDeployment | undefined;
const contexts = new Map<string, FunctionContext>();

/** The function whose code is running now, if any. */
export const currentFunction = (): FunctionContext | undefined => storage.getStore();

/** The runtime registers its deployment once its resources exist; functions then run as in Lambda. */
export function registerDeployment(next: LocalDeployment): void {
  installEnvironmentView();
  deployment = next;
  contexts.clear();
}

/** The console's sign-in, once the runtime has started its stand-in (after the deployment: it needs the edge's URL). */
export function registerConsoleSignIn(signIn: ConsoleSignIn): void {
  if (!deployment) throw new Error('register the deployment before its console');
  deployment = { ...deployment, console: signIn };
  contexts.clear();
}

/** The deployment the runtime registered last, for the IAM check's name look-ups. */
export const registeredDeployment = (): LocalDeployment | undefined => deployment;

/**
 * Runs `body` as the named function. Without a registered deployment (a unit test of the
 * scheduler, say) it runs as plain code.
 */
export function runAsFunction<T>(name: string, body: () => T): T {
  if (!deployment) return body();
  return storage.run(contextOf(name, deployment), body);
}

/** The template's variables of a function for a deployment, with their local values. */
export function templateEnvironment(
  name: string,
  spec: FunctionSpec,
  target: Pick<
    LocalDeployment,
    'tables' | 'bucket' | 'exportBucket' | 'queues' | 'deadLetterQueues' | 'originSecretArn' | 'internet' | 'console'
  >,
): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [variable, source] of Object.entries(environmentOf(spec))) {
    const value = localValue(variable, source, target);
    if (value === undefined) throw new Error(`${name}: no local ${source.kind} for ${variable}`);
    values[variable] = value;
  }
  return values;
}

function localValue(variable: string, source: EnvironmentSource, target: Parameters<typeof templateEnvironment>[2]): string | undefined {
  switch (source.kind) {
    case 'constant':
      return source.value;
    case 'table':
      return target.tables[source.table];
    case 'bucket':
      return target.bucket;
    case 'export-bucket':
      return target.exportBucket;
    case 'queue':
      return target.queues[source.queue];
    case 'dead-letter-queue':
      return target.deadLetterQueues[source.queue];
    // The runtime has no alarms: the health view reads its own figures (LOCAL_CONTROL_URL) instead.
    case 'alarm-topic':
      return '';
    case 'internet':
      return target.internet?.[variable] ?? '';
    case 'console':
      return target.console?.[source.value] ?? '';
    case 'origin-secret-arn':
      return target.originSecretArn;
  }
}

function contextOf(name: string, target: LocalDeployment): FunctionContext {
  let context = contexts.get(name);
  if (!context) {
    const spec = (functions as Record<string, FunctionSpec>)[name];
    if (!spec) throw new Error(`no function named ${name} in the manifest`);
    context = {
      name,
      template: templateEnvironment(name, spec, target),
      platform: {
        AWS_LAMBDA_FUNCTION_NAME: name,
        AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(spec.memoryMb ?? 512),
        AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
        AWS_LAMBDA_LOG_GROUP_NAME: `/aws/lambda/${name}`,
        AWS_LAMBDA_MAX_CONCURRENCY: LOCAL_MAX_CONCURRENCY,
        // Local stand-ins the stack never sets (skan-postback's test keys: local/skan-test-key.ts).
        ...LOCAL_ONLY_VARIABLES[name],
      },
      policy: target.policies?.[name] ?? policyOf(spec),
      deployment: target,
      own: {},
    };
    contexts.set(name, context);
  }
  return context;
}

/** What a function sees of one variable. */
function visible(context: FunctionContext, real: NodeJS.ProcessEnv, variable: string): string | undefined {
  if (variable in context.own) return context.own[variable];
  // A local setting overrides the template's constant (POWERTOOLS_LOG_LEVEL: WARN locally, INFO in AWS).
  if (LOCAL_SETTINGS.includes(variable as (typeof LOCAL_SETTINGS)[number]) && real[variable] !== undefined) return real[variable];
  if (variable in context.template) return context.template[variable];
  if (variable in context.platform) return context.platform[variable];
  if (variable === 'AWS_DEFAULT_REGION') return real.AWS_DEFAULT_REGION ?? real.AWS_REGION;
  return passedThrough.has(variable) ? real[variable] : undefined;
}

function visibleNames(context: FunctionContext, real: NodeJS.ProcessEnv): string[] {
  const names = new Set([
    ...Object.keys(context.own),
    ...Object.keys(context.template),
    ...Object.keys(context.platform),
    ...passedThrough,
  ]);
  return [...names].filter((name) => visible(context, real, name) !== undefined);
}

const VIEW = Symbol.for('attribution.local.function-environment');

/**
 * Replaces process.env, once per process, with a view: inside a function, that function's
 * variables; elsewhere, the process environment itself (reads and writes go straight through).
 */
function installEnvironmentView(): void {
  const current = process.env as NodeJS.ProcessEnv & { [VIEW]?: boolean };
  if (current[VIEW]) return;
  const real = current;
  const view = new Proxy(real, {
    get(target, property) {
      if (property === VIEW) return true;
      const context = storage.getStore();
      if (!context || typeof property !== 'string') return Reflect.get(target, property);
      return visible(context, target, property);
    },
    set(target, property, value) {
      const context = storage.getStore();
      if (!context || typeof property !== 'string') return Reflect.set(target, property, String(value));
      context.own[property] = String(value);
      return true;
    },
    deleteProperty(target, property) {
      const context = storage.getStore();
      if (!context || typeof property !== 'string') return Reflect.deleteProperty(target, property);
      delete context.own[property];
      return true;
    },
    has(target, property) {
      const context = storage.getStore();
      if (!context || typeof property !== 'string') return Reflect.has(target, property);
      return visible(context, target, property) !== undefined;
    },
    ownKeys(target) {
      const context = storage.getStore();
      return context ? visibleNames(context, target) : Reflect.ownKeys(target);
    },
    getOwnPropertyDescriptor(target, property) {
      const context = storage.getStore();
      if (!context || typeof property !== 'string') return Reflect.getOwnPropertyDescriptor(target, property);
      const value = visible(context, target, property);
      return value === undefined ? undefined : { value, writable: true, enumerable: true, configurable: true };
    },
  });
  process.env = view;
}
