import { z } from 'zod';
import { ChangeLogStore } from '../adapters/change-log-store';
import { CognitoUsers } from '../adapters/cognito-users';
import { LOCAL_POOL_PREFIX, LocalUserDirectory } from '../adapters/console-users-file';
import { NotFoundError, TenantStore } from '../adapters/tenant-store';
import { DEPLOYMENT_SCOPE } from '../domain/team/changes';
import { ROLES } from '../domain/team/members';
import type { TeamUser, UserDirectory } from '../domain/team/users';
import { resourceName } from '../shared/config';
import { defineCommand, TargetError } from './command';
import { intFlag, key } from './flags';

/**
 * Console users and the change log (docs/console.md, "Users and roles"). In AWS the users are the
 * console's Cognito user pool's (CONSOLE_USER_POOL_ID, set by `--stack` and in the console API's
 * function); under `npm start` the local stand-in's store in DATA_DIR, which the local target and
 * the local console API name as `local:<path>` (admin/target.ts, local/console-site.ts).
 */
export function userDirectory(): UserDirectory {
  const pool = process.env.CONSOLE_USER_POOL_ID;
  if (!pool) throw new TargetError('this target has no console user pool (a stack from before the deployed console?)');
  if (pool.startsWith(LOCAL_POOL_PREFIX)) return new LocalUserDirectory(pool.slice(LOCAL_POOL_PREFIX.length));
  return new CognitoUsers(pool);
}

const email = z
  .string()
  .trim()
  .max(254)
  .pipe(z.email({ error: 'must be an e-mail address' }));

/** The company a --company-key names, or null without one (an operator, or the deployment's records). */
async function companyIdOf(companyKey: string | undefined): Promise<string | null> {
  if (companyKey === undefined) return null;
  const company = await new TenantStore(resourceName.table('tenants')).companyByKey(companyKey);
  if (!company) throw new NotFoundError('company');
  return company.company_id;
}

const listed = (user: TeamUser) => ({ email: user.email, role: user.role, company_id: user.companyId, status: user.status });

export const userCommands = [
  defineCommand({
    name: 'user invite',
    usage:
      "user invite --email E --role viewer|marketer|admin --company-key K   (or --role operator, no company: the deployment's operators)",
    flags: z
      .object({ email, role: z.enum(ROLES), 'company-key': key.optional() })
      .refine((f) => (f.role === 'operator') === (f['company-key'] === undefined), {
        message: 'give --company-key with a company role (viewer, marketer, admin), and none with --role operator',
        path: ['company-key'],
      }),
    async execute(f) {
      const companyId = await companyIdOf(f['company-key']);
      const { user, temporaryPassword } = await userDirectory().invite({ email: f.email, companyId, role: f.role });
      return { user: listed(user), ...(temporaryPassword === undefined ? {} : { temporary_password: temporaryPassword }) };
    },
  }),
  defineCommand({
    name: 'user remove',
    usage: "user remove --email E [--company-key K]   (the user's company; none for an operator)",
    flags: z.object({ email, 'company-key': key.optional() }),
    async execute(f) {
      const directory = userDirectory();
      const companyId = await companyIdOf(f['company-key']);
      // The user must be of the company named: the console API checked that company is the caller's.
      const user = await directory.find(f.email);
      if (!user || user.companyId !== companyId) throw new NotFoundError('user');
      await directory.remove(f.email);
      return { removed: listed(user) };
    },
  }),
  defineCommand({
    name: 'user list',
    usage: "user list [--company-key K]               (a company's users; without: every user)",
    flags: z.object({ 'company-key': key.optional() }),
    async execute(f) {
      const users = await userDirectory().list(f['company-key'] === undefined ? undefined : await companyIdOf(f['company-key']));
      return { users: users.map(listed) };
    },
  }),
  defineCommand({
    name: 'audit log',
    usage: "audit log [--company-key K] [--limit N]   (the console's change log, newest first; without a company: the deployment's)",
    flags: z.object({ 'company-key': key.optional(), limit: intFlag.min(1).max(500).optional() }),
    async execute(f) {
      const companyId = (await companyIdOf(f['company-key'])) ?? DEPLOYMENT_SCOPE;
      const records = await new ChangeLogStore(resourceName.table('changes')).recent(companyId, f.limit ?? 100);
      return { changes: records };
    },
  }),
];
