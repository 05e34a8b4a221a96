import { ADMIN_COMMANDS } from '../../../admin/commands';
import {
  accessOf,
  authorizeCommand,
  COMMAND_ROLES,
  CompanyScopeError,
  RoleNotAllowedError,
  type ScopeFlag,
  type TargetLookup,
} from '../../../functions/commands/command-roles';
import { CONSOLE_COMMANDS } from '../../../functions/commands/registry';
import { changeRecord, DEPLOYMENT_SCOPE } from '../../../functions/domain/team/changes';
import { type CompanyRole, type Member, memberOfClaims, NotAMemberError } from '../../../functions/domain/team/members';

const member = (role: CompanyRole, companyId = 'co_a'): Member => ({
  kind: 'company',
  sub: `sub-${role}`,
  email: `${role}@a.test`,
  companyId,
  role,
});
const operator: Member = { kind: 'operator', sub: 'sub-op', email: 'op@deploy.test' };

/** Company A owns company key ka, app key app-a, link link-a; company B the same with b. */
const owners: Record<string, string> = { ka: 'co_a', 'app-a': 'co_a', 'link-a': 'co_a', kb: 'co_b', 'app-b': 'co_b', 'link-b': 'co_b' };
const lookUp: TargetLookup = async (_flag: ScopeFlag, value: string) => {
  const companyId = owners[value];
  return companyId ? { companyId, record: { id: value } } : undefined;
};

/** One command of each class, with the flags that scope it to company A. */
const classes = {
  report: ['report show', { 'app-key': 'app-a', report: 'installs' }],
  link: ['link create', { 'app-key': 'app-a', partner: 'p' }],
  cost: ['cost import', { 'app-key': 'app-a', csv: 'x' }],
  app: ['app update', { 'app-key': 'app-a' }],
  key: ['server-key create', { 'app-key': 'app-a' }],
  postback: ['postback set', { 'app-key': 'app-a' }],
  user: ['user invite', { 'company-key': 'ka', email: 'x@a.test', role: 'viewer' }],
  audit: ['audit log', { 'company-key': 'ka' }],
  deployment: ['company create', { name: 'c' }],
  // The deployment's health view: no company named, none answered by name.
  health: ['health', {}],
  // Its verdict and problems alone: every member's.
  status: ['status', {}],
} as const;

const allowed: Record<CompanyRole | 'operator', readonly (keyof typeof classes)[]> = {
  viewer: ['report', 'status'],
  marketer: ['report', 'link', 'cost', 'status'],
  admin: ['report', 'link', 'cost', 'app', 'key', 'postback', 'user', 'audit', 'status'],
  operator: Object.keys(classes) as (keyof typeof classes)[],
};

describe('the console role table', () => {
  it('names every command the console serves and no other', () => {
    expect(Object.keys(COMMAND_ROLES).sort()).toEqual(CONSOLE_COMMANDS.map((c) => c.name).sort());
  });

  it("leaves the operator's own commands (export run, sql on DuckDB, rebuild) to the CLI, which runs every console command too", () => {
    const cli = ADMIN_COMMANDS.map((c) => c.name);
    expect(cli.filter((name) => !COMMAND_ROLES[name]).sort()).toEqual(['export run', 'rebuild', 'sql']);
    // health is the one the CLI runs on its own sources (admin/health-sources.ts): the same name, flags and usage.
    for (const command of CONSOLE_COMMANDS) {
      const own = ADMIN_COMMANDS.find((c) => c.name === command.name);
      if (command.name === 'health' || command.name === 'status') expect(own).toMatchObject({ name: command.name, usage: command.usage });
      else expect(own).toBe(command);
    }
  });

  it('keeps a command missing from the table to operators, as a change', () => {
    expect(accessOf('a command added later')).toEqual({ role: 'operator', changes: true });
  });

  it('names as a change read only commands of the registry', () => {
    const names = new Set(CONSOLE_COMMANDS.map((c) => c.name));
    for (const access of Object.values(COMMAND_ROLES)) if (access.before) expect(names.has(access.before)).toBe(true);
  });

  for (const [role, classesAllowed] of Object.entries(allowed)) {
    const who = role === 'operator' ? operator : member(role as CompanyRole);
    for (const [name, [command, flags]] of Object.entries(classes)) {
      const may = classesAllowed.includes(name as keyof typeof classes);
      it(`${may ? 'lets' : 'refuses'} a ${role} ${may ? 'run' : 'with 403 role_not_allowed'} ${command} (${name})`, async () => {
        const run = authorizeCommand(who, command, flags, lookUp);
        if (may) await expect(run).resolves.toMatchObject({ access: COMMAND_ROLES[command] });
        else await expect(run).rejects.toThrow(RoleNotAllowedError);
      });
    }
  }
});

describe('company scoping', () => {
  it.each([
    ['an app of company B', 'report show', { 'app-key': 'app-b' }],
    ['a link of company B', 'link update', { 'link-id': 'link-b' }],
    ['company B', 'app list', { 'company-key': 'kb' }],
    ['an app that does not exist (answered as another company, so nothing is learnt)', 'report show', { 'app-key': 'nope' }],
    ['its own company and an app of company B together', 'user list', { 'company-key': 'ka', 'app-key': 'app-b' }],
    ['no company at all (a command that spans every company)', 'user list', {}],
  ])('refuses an admin of company A a command naming %s with 403 company_scope', async (_what, command, flags) => {
    const refusal = await authorizeCommand(member('admin'), command, flags, lookUp).catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(CompanyScopeError);
    expect(refusal).toMatchObject({ statusCode: 403, code: 'company_scope' });
  });

  it("finds the company of the member's own app, with its record for the change log", async () => {
    await expect(authorizeCommand(member('viewer'), 'report show', { 'app-key': 'app-a' }, lookUp)).resolves.toMatchObject({
      scopeFlag: 'app-key',
      target: { companyId: 'co_a', record: { id: 'app-a' } },
    });
  });

  it('lets a member list companies and read exchange rates without naming a company', async () => {
    await expect(authorizeCommand(member('viewer'), 'company list', {}, lookUp)).resolves.toBeDefined();
    await expect(authorizeCommand(member('viewer'), 'fx show', { date: '2026-11-01' }, lookUp)).resolves.toBeDefined();
  });

  it("lets an operator name any company's app", async () => {
    await expect(authorizeCommand(operator, 'report show', { 'app-key': 'app-b' }, lookUp)).resolves.toMatchObject({
      target: { companyId: 'co_b' },
    });
  });
});

describe('members from token claims', () => {
  const claims = { sub: 's1', email: 'a@a.test', 'custom:role': 'marketer', 'custom:company_id': 'co_a' };

  it('reads a company member and an operator', () => {
    expect(memberOfClaims(claims)).toEqual({ kind: 'company', sub: 's1', email: 'a@a.test', companyId: 'co_a', role: 'marketer' });
    expect(memberOfClaims({ sub: 's2', 'custom:role': 'operator' })).toEqual({ kind: 'operator', sub: 's2', email: '' });
  });

  it.each([
    ['no role', { ...claims, 'custom:role': undefined }],
    ['an unknown role', { ...claims, 'custom:role': 'owner' }],
    ['a company role without a company', { ...claims, 'custom:company_id': undefined }],
    ['a malformed company', { ...claims, 'custom:company_id': 'co a/../b' }],
    ['no subject', { ...claims, sub: '' }],
  ])('refuses a token with %s as 403 not_a_member', (_what, given) => {
    expect(() => memberOfClaims(given)).toThrow(NotAMemberError);
  });
});

describe('change records', () => {
  it('keeps who, what and when, and leaves secrets and file bodies out', () => {
    const record = changeRecord(
      member('admin'),
      {
        companyId: 'co_a',
        command: 'server-key create',
        flags: { 'app-key': 'app-a', csv: 'a,b\n1,2' },
        before: null,
        after: { server_key: 'sk_live_secret', key_id: 'abc' },
      },
      1_700_000_000_000,
    );
    expect(record).toEqual({
      companyId: 'co_a',
      atMs: 1_700_000_000_000,
      who: { sub: 'sub-admin', email: 'admin@a.test', role: 'admin' },
      command: 'server-key create',
      flags: { 'app-key': 'app-a', csv: '(7 characters)' },
      before: null,
      after: { server_key: '(secret)', key_id: 'abc' },
    });
  });

  it('files a change with no company under the deployment, and cuts a large state', () => {
    const record = changeRecord(operator, { companyId: undefined, command: 'fx set', flags: {}, before: 'x'.repeat(10_000), after: {} }, 1);
    expect(record.companyId).toBe(DEPLOYMENT_SCOPE);
    expect(record.who.role).toBe('operator');
    expect(record.before).toMatchObject({ truncated: true });
    expect(JSON.stringify(record.before).length).toBeLessThan(4_200);
  });
});
