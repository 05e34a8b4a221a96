import { parseArgs } from 'node:util';
import { z } from 'zod';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { envName, outputKey, queues, tables } from '../lib/manifest';
import { resourceName } from '../functions/shared/config';
import { NotFoundError, TenantStore } from '../functions/adapters/tenant-store';
import { LinkStore } from '../functions/adapters/link-store';
import { LinkConfigError } from '../functions/domain/links/link-config';
import { AggregateStore } from '../functions/adapters/aggregate-store';
import { attributionLookups } from '../functions/adapters/attribution-lookups';
import { AuditReader } from '../functions/adapters/audit-reader';
import { ClickStore } from '../functions/adapters/click-store';
import { DynamoInstallStore } from '../functions/adapters/install-store';
import { IpBlockStore } from '../functions/adapters/ip-block-store';
import { liveRows, rebuildSource } from '../functions/adapters/rebuild-source';
import { installReport } from '../functions/domain/aggregation/install-report';
import { differences, rebuildRows, type RebuiltRow } from '../functions/domain/aggregation/rebuild';
import { rowId, ROW_GROUPS } from '../functions/domain/aggregation/rows';
import { dayOf } from '../functions/domain/common/days';
import { UUID_PATTERN } from '../functions/domain/common/uuid';
import { installHash } from '../functions/domain/privacy/privacy';
import { PrivacyReceipts } from '../functions/adapters/privacy-store';
import { applyLocalEnvironment, dataDirFromEnv, readEndpoints } from '../local/environment';

/**
 * The admin CLI (DESIGN section 3). Every command prints exactly one JSON object on stdout;
 * errors go to stderr with a non-zero exit. It targets the running local runtime through
 * DATA_DIR/endpoints.json, or a deployed stack with --stack NAME and the usual AWS credentials.
 */

export class UsageError extends Error {}
class TargetError extends Error {}

interface Target {
  baseUrl: string;
  /** Local runtime only: its private control port. */
  control?: string;
}

const USAGE = `usage: npm run --silent admin -- <command> [flags] [--stack NAME]

  company create --name N [--plan free|paid] [--monthly-cap N]
  company suspend --company-key K
  company resume --company-key K
  app create --company-key K --name N [--ios-url U] [--android-url U] [--web-url U] [--probabilistic]
  server-key create --app-key K
  server-key revoke --server-key S
  link create --app-key K --partner P [--campaign C] [--honeypot] [--ios-url U] [--android-url U] [--web-url U]
              [--countries-allow US,CA] [--countries-block XX] [--lookback-days N]
  install show --app-key K --install-uuid U    (how the install was attributed, and why)
  privacy show --app-key K --install-uuid U    (the deletion receipts of an install and their state)
  rebuild --app-key K [--apply]                (recomputes the app's report rows from the audit store and
                                                lists the rows that differ; --apply writes the recomputed ones)
  schedule run NAME          (local runtime: fires a schedule now and waits for it)`;

const url = z.url({ protocol: /^https?$/ });
const name = z.string().trim().min(1).max(200);
const countries = z
  .string()
  .transform((s) => s.split(',').map((c) => c.trim().toUpperCase()).filter(Boolean))
  .pipe(z.array(z.string().regex(/^[A-Z]{2}$/, 'country codes are two letters (ISO 3166-1 alpha-2)')).min(1));
const intFlag = z.coerce.number().int().positive();

const schemas = {
  'company create': z.object({ name, plan: z.enum(['free', 'paid']).optional(), 'monthly-cap': intFlag.optional() }),
  'company suspend': z.object({ 'company-key': z.string().min(1) }),
  'company resume': z.object({ 'company-key': z.string().min(1) }),
  'app create': z.object({
    'company-key': z.string().min(1),
    name,
    'ios-url': url.optional(),
    'android-url': url.optional(),
    'web-url': url.optional(),
    probabilistic: z.boolean().optional(),
  }),
  'server-key create': z.object({ 'app-key': z.string().min(1) }),
  'server-key revoke': z.object({ 'server-key': z.string().min(1) }),
  'link create': z.object({
    'app-key': z.string().min(1),
    partner: z.string().trim().min(1).max(100),
    campaign: z.string().trim().min(1).max(200).optional(),
    honeypot: z.boolean().optional(),
    'ios-url': url.optional(),
    'android-url': url.optional(),
    'web-url': url.optional(),
    'countries-allow': countries.optional(),
    'countries-block': countries.optional(),
    'lookback-days': intFlag.max(30).optional(),
  }),
  'install show': z.object({
    'app-key': z.string().min(1),
    // Stored lower-case, as the audit record keeps it.
    'install-uuid': z.string().regex(UUID_PATTERN, 'not a UUID').transform((uuid) => uuid.toLowerCase()),
  }),
  rebuild: z.object({ 'app-key': z.string().min(1), apply: z.boolean().optional() }),
  'privacy show': z.object({
    'app-key': z.string().min(1),
    'install-uuid': z.string().regex(UUID_PATTERN, 'not a UUID').transform((uuid) => uuid.toLowerCase()),
  }),
} as const;

type Command = keyof typeof schemas;
const booleanFlags = new Set(['probabilistic', 'honeypot', 'apply']);

/** Every flag any command takes, declared so that `--name Acme` is read as a flag with a value. */
const flagOptions = Object.fromEntries(
  [...new Set(Object.values(schemas).flatMap((schema) => Object.keys(schema.shape)))].map((flag) => [
    flag,
    { type: booleanFlags.has(flag) ? ('boolean' as const) : ('string' as const) },
  ]),
);

export async function runAdmin(argv: string[]): Promise<Record<string, unknown>> {
  let parsedArgs;
  try {
    parsedArgs = parseArgs({ args: argv, allowPositionals: true, strict: true, options: { ...flagOptions, stack: { type: 'string' } } });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsedArgs;
  const stack = values.stack as string | undefined;
  const flags = Object.fromEntries(Object.entries(values).filter(([key]) => key !== 'stack'));

  if (positionals[0] === 'schedule' && positionals[1] === 'run') {
    if (!positionals[2]) throw new UsageError('schedule run needs a schedule name');
    if (stack) throw new UsageError('schedule run drives the local runtime; in AWS, invoke the function from the Lambda console or CLI');
    return runSchedule(await localTarget(), positionals[2]);
  }

  const command = positionals.slice(0, 2).join(' ') as Command;
  if (!(command in schemas) || positionals.length > 2) throw new UsageError(`unknown command: ${positionals.join(' ') || '(none)'}`);
  const parsed = schemas[command].safeParse(flags);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new UsageError(`--${String(issue.path[0] ?? '')}: ${issue.message}`);
  }
  const known = Object.keys(schemas[command].shape);
  const unknown = Object.keys(flags).filter((key) => !known.includes(key));
  if (unknown.length) throw new UsageError(`unknown flag for ${command}: --${unknown[0]}`);

  const target = stack ? await stackTarget(stack) : await localTarget();
  return execute(command, parsed.data as unknown as Flags, target);
}

/** The parsed flags of whichever command runs; each case reads only its own, already validated. */
type Flags = Record<string, string & boolean & number & string[]>;

async function execute(command: Command, f: Flags, target: Target) {
  const tenants = new TenantStore(resourceName.table('tenants'));
  const appByKey = async (key: string) => {
    const app = await tenants.appByKey(key);
    if (!app) throw new NotFoundError('app');
    return app;
  };
  switch (command) {
    case 'company create': {
      const company = await tenants.createCompany({ name: f.name, plan: f.plan as 'free' | 'paid', monthlyCap: f['monthly-cap'] });
      return { company_id: company.company_id, company_key: company.company_key };
    }
    case 'company suspend':
    case 'company resume': {
      const found = await tenants.setCompanySuspended(f['company-key'], command === 'company suspend');
      if (!found) throw new NotFoundError('company');
      return { ok: true };
    }
    case 'app create': {
      const app = await tenants.createApp({
        companyKey: f['company-key'],
        name: f.name,
        ios_url: f['ios-url'],
        android_url: f['android-url'],
        web_url: f['web-url'],
        probabilistic: f.probabilistic,
      });
      return { app_id: app.app_id, app_key: app.app_key, signing_secret: app.signing_secret };
    }
    case 'server-key create': {
      const { serverKey } = await tenants.createServerKey(f['app-key']);
      return { server_key: serverKey };
    }
    case 'server-key revoke': {
      if (!(await tenants.revokeServerKey(f['server-key']))) throw new NotFoundError('server key');
      return { ok: true };
    }
    case 'link create': {
      const app = await appByKey(f['app-key']);
      const link = await new LinkStore(resourceName.table('links')).create(app, {
        partner: f.partner,
        campaign: f.campaign,
        honeypot: f.honeypot,
        ios_url: f['ios-url'],
        android_url: f['android-url'],
        web_url: f['web-url'],
        countries_allow: f['countries-allow'],
        countries_block: f['countries-block'],
        lookback_days: f['lookback-days'],
      });
      return { link_id: link.link_id, url: `${target.baseUrl}/l/${link.link_id}` };
    }
    case 'install show': {
      const app = await appByKey(f['app-key']);
      const items = await new DynamoInstallStore(resourceName.table('installs')).installItems(app.app_id, f['install-uuid']);
      return installReport(app.app_id, f['install-uuid'], items);
    }
    case 'privacy show': {
      const app = await appByKey(f['app-key']);
      const receipts = await new PrivacyReceipts(resourceName.table('privacy_requests')).ofInstall(app.app_id, installHash(f['install-uuid']));
      // The receipt names the install by its hash only; the CLI was given the uuid and says which.
      return { app_id: app.app_id, install_hash: installHash(f['install-uuid']), receipts: receipts.map(({ app_install: _key, ...receipt }) => receipt) };
    }
    case 'rebuild': {
      const app = await appByKey(f['app-key']);
      const installs = new DynamoInstallStore(resourceName.table('installs'));
      const lookups = attributionLookups({ clicks: new ClickStore(resourceName.table('clicks')), ipBlocks: new IpBlockStore(resourceName.table('ip_blocks')), installs });
      const source = rebuildSource(app, { audit: new AuditReader(resourceName.bucket()), installs, lookups });
      const rebuilt = await rebuildRows(source, dayOf(app.created_ms), dayOf(Date.now()));
      const aggregates = new AggregateStore(resourceName.table('aggregates'));
      const live = await liveRows(aggregates, app.app_id);
      const found = differences(live, rebuilt.rows);
      // Rows the live side has and the rebuild does not are set to zero, as if never written.
      for (const row of f.apply ? found : []) {
        await aggregates.setCounters(app.app_id, { family: row.family, day: row.day, group: ROW_GROUPS[row.family].map((column) => row.group[column]), add: row.rebuilt ?? {} });
      }
      const rowKey = (row: RebuiltRow) => rowId({ family: row.family, day: row.day, group: Object.values(row.group) });
      return {
        app_id: app.app_id,
        objects: rebuilt.objects,
        events: rebuilt.events,
        unreadable: rebuilt.unreadable,
        rows_compared: new Set([...live, ...rebuilt.rows].map(rowKey)).size,
        differences: found,
        applied: Boolean(f.apply),
      };
    }
  }
}

async function localTarget(): Promise<Target> {
  const dataDir = dataDirFromEnv();
  const endpoints = readEndpoints(dataDir);
  const alive = endpoints && (await fetch(`${endpoints.control}/ping`).then((r) => r.ok, () => false));
  if (!endpoints || !alive) {
    throw new TargetError(`no local runtime is running for DATA_DIR=${dataDir}: start one with \`npm start\`, or pass --stack NAME`);
  }
  applyLocalEnvironment(endpoints);
  return { baseUrl: endpoints.base_url, control: endpoints.control };
}

/** A deployed stack: physical names from its CloudFormation outputs, credentials from the usual chain. */
async function stackTarget(stackName: string): Promise<Target> {
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
  return { baseUrl: need(outputKey.baseUrl()) };
}

async function runSchedule(target: Target, schedule: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${target.control}/schedules/${encodeURIComponent(schedule)}`, { method: 'POST' });
  const body = (await response.json()) as Record<string, unknown>;
  if (!response.ok) throw new TargetError(String(body.error ?? `schedule ${schedule} failed`));
  return body;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.length === 0 || argv[0] === '--help' || argv[0] === 'help') {
    process.stderr.write(`${USAGE}\n`);
    process.exit(argv.length === 0 ? 2 : 0);
  }
  try {
    const result = await runAdmin(argv);
    process.stdout.write(`${JSON.stringify(result)}\n`);
  } catch (error) {
    const err = error as Error;
    const expected = error instanceof NotFoundError || error instanceof TargetError || error instanceof LinkConfigError;
    const message = error instanceof UsageError ? `${err.message}\n\n${USAGE}` : expected ? err.message : `${err.name}: ${err.message}`;
    process.stderr.write(`error: ${message}\n`);
    process.exit(error instanceof UsageError ? 2 : 1);
  }
}

if (require.main === module) void main();
