// The console API's one operation (functions/commands/console-call.ts) against the emulators: each role runs
// what its row of functions/commands/command-roles.ts allows and is refused the rest with the documented 403,
// a member of company A reaches nothing of company B, and every change lands in the change log.

import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ChangeLogStore } from '../../functions/adapters/change-log-store';
import { consoleUsersPath, LOCAL_POOL_PREFIX } from '../../functions/adapters/console-users-file';
import { storeLookup } from '../../functions/commands/command-scope';
import { runConsoleCommand } from '../../functions/commands/console-call';
import { errorAnswer } from '../../functions/commands/errors';
import { DEPLOYMENT_SCOPE } from '../../functions/domain/team/changes';
import type { CompanyRole, Member } from '../../functions/domain/team/members';
import { resourceName } from '../../functions/shared/config';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';

let stack: LocalStack;
let a: Tenant;
let b: Tenant;
let usersDir: string;
const previousPool = process.env.CONSOLE_USER_POOL_ID;

beforeAll(async () => {
  stack = await startLocalStack();
  [a, b] = [await createTenant(), await createTenant()];
  // The local user store (functions/adapters/console-users-file.ts), named as the local console API names it.
  usersDir = mkdtempSync(join(tmpdir(), 'console-users-'));
  process.env.CONSOLE_USER_POOL_ID = `${LOCAL_POOL_PREFIX}${consoleUsersPath(usersDir)}`;
});
afterAll(async () => {
  if (previousPool === undefined) delete process.env.CONSOLE_USER_POOL_ID;
  else process.env.CONSOLE_USER_POOL_ID = previousPool;
  rmSync(usersDir, { recursive: true, force: true });
  await stack?.stop();
});

const of = (tenant: Tenant, role: CompanyRole): Member => ({
  kind: 'company',
  sub: `${role}-${tenant.company.company_id}`,
  email: `${role}@${tenant.company.company_id}.test`,
  companyId: tenant.company.company_id,
  role,
});
const operator: Member = { kind: 'operator', sub: 'op', email: 'op@deployment.test' };
const changes = () => new ChangeLogStore(resourceName.table('changes'));

function run(member: Member, command: string, flags: Record<string, unknown>) {
  return runConsoleCommand({ member, command, flags }, { target: { baseUrl: stack.baseUrl }, lookUp: storeLookup(), changes: changes() });
}

/** The status and body the console API answers for a refused call. */
async function refusal(member: Member, command: string, flags: Record<string, unknown>) {
  const error = await run(member, command, flags).then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (error === undefined) throw new Error(`${command} was not refused`);
  const answer = errorAnswer(error);
  return { status: answer.status, error: answer.message };
}

const report = (tenant: Tenant) => ({ 'app-key': tenant.app.app_key, report: 'attribution' });

describe('roles on the console API', () => {
  it('lets a viewer read reports and refuses them links, keys and users with 403 role_not_allowed', async () => {
    const viewer = of(a, 'viewer');
    await expect(run(viewer, 'report show', report(a))).resolves.toHaveProperty('rows');
    for (const [command, flags] of [
      ['link create', { 'app-key': a.app.app_key, partner: 'meta' }],
      ['server-key create', { 'app-key': a.app.app_key }],
      ['user list', { 'company-key': a.company.company_key }],
    ] as const) {
      await expect(refusal(viewer, command, flags)).resolves.toEqual({ status: 403, error: 'role_not_allowed' });
    }
  });

  it("refuses a viewer and a marketer the deployment's health view with 403 role_not_allowed", async () => {
    for (const role of ['viewer', 'marketer'] as const)
      await expect(refusal(of(a, role), 'health', {})).resolves.toEqual({ status: 403, error: 'role_not_allowed' });
  });

  it("lets a marketer make a link, recorded in the change log with who and after, and refuses them an app's keys", async () => {
    const marketer = of(a, 'marketer');
    const link = (await run(marketer, 'link create', { 'app-key': a.app.app_key, partner: 'meta', campaign: 'spring' })) as {
      link_id: string;
    };
    const [latest] = await changes().recent(a.company.company_id, 1);
    expect(latest).toMatchObject({
      companyId: a.company.company_id,
      command: 'link create',
      who: { sub: marketer.sub, email: marketer.email, role: 'marketer' },
      before: expect.objectContaining({ app_key: a.app.app_key }),
      flags: { 'app-key': a.app.app_key, partner: 'meta', campaign: 'spring' },
      after: expect.objectContaining({ link_id: link.link_id }),
    });
    await expect(refusal(marketer, 'server-key list', { 'app-key': a.app.app_key })).resolves.toEqual({
      status: 403,
      error: 'role_not_allowed',
    });
  });

  it('lets an admin make a server key, logs it without the key, and reads the change log', async () => {
    const admin = of(a, 'admin');
    const made = (await run(admin, 'server-key create', { 'app-key': a.app.app_key, name: 'BI' })) as { server_key: string };
    const { changes: log } = (await run(admin, 'audit log', { 'company-key': a.company.company_key })) as {
      changes: { command: string }[];
    };
    expect(log[0]).toMatchObject({ command: 'server-key create', after: expect.objectContaining({ server_key: '(secret)' }) });
    expect(JSON.stringify(log)).not.toContain(made.server_key);
    await expect(refusal(admin, 'company create', { name: 'Mine' })).resolves.toEqual({ status: 403, error: 'role_not_allowed' });
  });

  it("lets an admin invite and remove their company's users, never another company's or an operator", async () => {
    const admin = of(a, 'admin');
    const invited = (await run(admin, 'user invite', { email: 'Mia@A.test', role: 'viewer', 'company-key': a.company.company_key })) as {
      user: { email: string; company_id: string };
      temporary_password: string;
    };
    expect(invited.user).toEqual({ email: 'mia@a.test', role: 'viewer', company_id: a.company.company_id, status: 'CONFIRMED' });
    expect(invited.temporary_password).toMatch(/^[\w-]{16}$/);
    const { users } = (await run(admin, 'user list', { 'company-key': a.company.company_key })) as { users: { email: string }[] };
    expect(users.map((u) => u.email)).toEqual(['mia@a.test']);
    await expect(
      refusal(admin, 'user invite', { email: 'x@b.test', role: 'admin', 'company-key': b.company.company_key }),
    ).resolves.toEqual({
      status: 403,
      error: 'company_scope',
    });
    await expect(refusal(admin, 'user invite', { email: 'root@a.test', role: 'operator' })).resolves.toEqual({
      status: 403,
      error: 'company_scope',
    });
    await expect(refusal(of(b, 'admin'), 'user remove', { email: 'mia@a.test', 'company-key': b.company.company_key })).resolves.toEqual({
      status: 404,
      error: 'user not found',
    });
    await expect(run(admin, 'user remove', { email: 'mia@a.test', 'company-key': a.company.company_key })).resolves.toMatchObject({
      removed: { email: 'mia@a.test' },
    });
  });
});

describe('company scoping on the console API', () => {
  it("refuses a member of company A every read and change of company B's app, link, company and change log", async () => {
    const linkOfB = (await run(operator, 'link create', { 'app-key': b.app.app_key, partner: 'tiktok' })) as { link_id: string };
    const admin = of(a, 'admin');
    for (const [command, flags] of [
      ['report show', report(b)],
      ['link list', { 'app-key': b.app.app_key }],
      ['link update', { 'link-id': linkOfB.link_id, campaign: 'taken' }],
      ['app list', { 'company-key': b.company.company_key }],
      ['audit log', { 'company-key': b.company.company_key }],
      ['server-key revoke', { 'server-key': b.serverKey }],
    ] as const) {
      await expect(refusal(admin, command, flags)).resolves.toEqual({ status: 403, error: 'company_scope' });
    }
  });

  it("answers a member's company list with their own company alone, and an operator's with every company", async () => {
    const mine = (await run(of(a, 'viewer'), 'company list', {})) as { companies: { company_id: string }[] };
    expect(mine.companies.map((c) => c.company_id)).toEqual([a.company.company_id]);
    const all = (await run(operator, 'company list', {})) as { companies: { company_id: string }[] };
    expect(all.companies.map((c) => c.company_id)).toEqual(expect.arrayContaining([a.company.company_id, b.company.company_id]));
  });

  it("files an operator's change with no company under the deployment", async () => {
    await run(operator, 'company create', { name: 'Newco' });
    const [latest] = await changes().recent(DEPLOYMENT_SCOPE, 1);
    expect(latest).toMatchObject({
      command: 'company create',
      who: { role: 'operator' },
      flags: { name: 'Newco' },
      after: expect.objectContaining({ company_id: expect.any(String) }),
    });
  });
});
