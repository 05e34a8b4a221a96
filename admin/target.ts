import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { consoleUsersPath, LOCAL_POOL_PREFIX } from '../functions/adapters/console-users-file';
import { type Target, TargetError } from '../functions/commands/command';
import { envName, outputKey, queues, tables } from '../lib/manifest';
import { applyLocalEnvironment, dataDirFromEnv, readEndpoints } from '../local/environment';

/**
 * The CLI's and the console's way to the service (docs/architecture.md section 3): the running local runtime
 * through DATA_DIR/endpoints.json, or a deployed stack by name. Either way the process
 * environment ends up naming the tables, bucket and queues, so the adapters reach them as the
 * functions do.
 */
export function resolveTarget(stack: string | undefined): Promise<Target> {
  return stack ? stackTarget(stack) : localTarget();
}

/**
 * The target as the console asks for it, at each request: `npm start` may have been stopped, or
 * stopped and started again on other ports, since the last one, so a local runtime is looked up
 * again every time (endpoints.json and a ping). A stack's outputs stay put while the console runs,
 * so it is looked up once (again only after a failed look-up).
 */
export function targetLookup(stack: string | undefined): () => Promise<Target> {
  if (!stack) return localTarget;
  let found: Promise<Target> | undefined;
  return () =>
    (found ??= stackTarget(stack).catch((error: unknown) => {
      found = undefined;
      throw error;
    }));
}

export async function localTarget(): Promise<Target> {
  const dataDir = dataDirFromEnv();
  const endpoints = readEndpoints(dataDir);
  const alive =
    endpoints &&
    (await fetch(`${endpoints.control}/ping`).then(
      (r) => r.ok,
      () => false,
    ));
  if (!endpoints || !alive) {
    throw new TargetError(`no local runtime is running for DATA_DIR=${dataDir}: start one with \`npm start\`, or pass --stack NAME`);
  }
  applyLocalEnvironment(endpoints);
  // Console users (`user invite|remove|list`) are the sign-in stand-in's store (docs/console.md, "Locally").
  process.env.CONSOLE_USER_POOL_ID = `${LOCAL_POOL_PREFIX}${consoleUsersPath(dataDir)}`;
  return { baseUrl: endpoints.base_url, control: endpoints.control, postbackAllowLoopback: endpoints.postback_allow_loopback === true };
}

/** A deployed stack: physical names from its CloudFormation outputs, credentials from the usual chain. */
export async function stackTarget(stackName: string): Promise<Target> {
  const cloudFormation = new CloudFormationClient({});
  const { Stacks } = await cloudFormation.send(new DescribeStacksCommand({ StackName: stackName }));
  const outputs = Object.fromEntries((Stacks?.[0]?.Outputs ?? []).map((o) => [o.OutputKey, o.OutputValue]));
  const need = (key: string) => {
    const value = outputs[key];
    if (!value) throw new TargetError(`stack ${stackName} has no output ${key}; is it this service's stack?`);
    return value;
  };
  for (const table of Object.keys(tables)) process.env[envName.table(table)] = need(outputKey.table(table));
  for (const queue of Object.keys(queues)) process.env[envName.queue(queue)] = need(outputKey.queue(queue));
  process.env[envName.bucket()] = need(outputKey.bucket());
  process.env[envName.exportBucket()] = need(outputKey.exportBucket());
  // Console users (`user invite|remove|list`) are the console's user pool's; a stack from before it has none.
  const pool = outputs[outputKey.consoleUserPool()];
  if (pool) process.env.CONSOLE_USER_POOL_ID = pool;
  return { baseUrl: need(outputKey.baseUrl()), stack: stackName };
}

/** Local runtime only: fires a schedule now and waits for its handler. */
export async function runSchedule(target: Target, schedule: string): Promise<Record<string, unknown>> {
  if (!target.control)
    throw new TargetError('schedule run drives the local runtime; in AWS, invoke the function from the Lambda console or CLI');
  const response = await fetch(`${target.control}/schedules/${encodeURIComponent(schedule)}`, { method: 'POST' });
  const body = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new TargetError(String(body.error ?? `schedule ${schedule} failed`));
  return body;
}
