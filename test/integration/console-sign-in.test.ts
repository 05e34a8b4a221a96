// The console with sign-in under the local runtime (local/console-site.ts, local/sign-in-stand-in.ts):
// real ID tokens from the stand-in of the user pool, checked as API Gateway's JWT authorizer checks
// them, then the console-api function with its own environment and policy; each role gets what its
// row of functions/commands/command-roles.ts allows and a documented 403 for the rest, a member of company A
// reaches nothing of company B, and a change made through the API is in the change log.

import { runAdmin } from '../../bin/admin';
import { signInThroughStandIn } from '../support/console-sign-in';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';

let stack: LocalStack;
let a: Tenant;
let b: Tenant;
const tokens = new Map<string, string>();

/** Invites a user with the admin CLI (the stand-in's store in DATA_DIR) and signs them in through the stand-in. */
async function member(email: string, role: string, tenant?: Tenant): Promise<string> {
  const company = tenant ? ['--company-key', tenant.company.company_key] : [];
  const { temporary_password } = (await runAdmin(['user', 'invite', '--email', email, '--role', role, ...company])) as {
    temporary_password: string;
  };
  const signedIn = await signInThroughStandIn(stack.console!, email, temporary_password);
  if (!('idToken' in signedIn)) throw new Error(`${email} was refused (${signedIn.refused})`);
  return signedIn.idToken;
}

beforeAll(async () => {
  stack = await startLocalStack({ consolePort: 0 });
  [a, b] = [await createTenant(), await createTenant()];
  tokens.set('viewer', await member('viewer@a.test', 'viewer', a));
  tokens.set('admin', await member('admin@a.test', 'admin', a));
  tokens.set('operator', await member('op@deployment.test', 'operator'));
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

async function api(path: string, token: string | undefined, body?: object) {
  const response = await fetch(`${stack.console!.url}${path}`, {
    method: body ? 'POST' : 'GET',
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body && JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}
const run = (role: string, command: string, flags: Record<string, unknown>) => api('/api/command', tokens.get(role), { command, flags });

describe('the console API under npm start, with tokens from the sign-in stand-in', () => {
  it('names the signed-in member from the ID token: role, company and the commands the role reaches', async () => {
    const me = await api('/api/me', tokens.get('viewer'));
    expect(me.status).toBe(200);
    expect(me.body.member).toEqual({ email: 'viewer@a.test', role: 'viewer', company_id: a.company.company_id });
    expect(me.body.commands).toEqual(expect.arrayContaining(['report show', 'link list']));
    expect(me.body.commands).not.toContain('link create');
    expect(me.body.target).toEqual({ base_url: stack.baseUrl, stack: null });
  });

  it('answers 401 as the JWT authorizer does without a token, with a forged role, or after a wrong password', async () => {
    expect(await api('/api/me', undefined)).toEqual({ status: 401, body: { message: 'Unauthorized' } });
    // The viewer's token with its payload rewritten to admin: the signature no longer holds.
    const [header, payload, signature] = (tokens.get('viewer') ?? '').split('.');
    const raised = { ...JSON.parse(Buffer.from(payload ?? '', 'base64url').toString()), 'custom:role': 'admin' };
    const forged = `${header}.${Buffer.from(JSON.stringify(raised)).toString('base64url')}.${signature}`;
    expect(await api('/api/me', forged)).toEqual({ status: 401, body: { message: 'Unauthorized' } });
    await expect(signInThroughStandIn(stack.console!, 'viewer@a.test', 'not-the-password')).resolves.toEqual({ refused: 401 });
  });

  it('lets a viewer read a report and refuses them a link with 403 role_not_allowed', async () => {
    const report = await run('viewer', 'report show', { 'app-key': a.app.app_key, report: 'attribution' });
    expect(report.status).toBe(200);
    expect(report.body).toHaveProperty('rows');
    expect(await run('viewer', 'link create', { 'app-key': a.app.app_key, partner: 'meta' })).toEqual({
      status: 403,
      body: { error: 'role_not_allowed' },
    });
  });

  it("refuses an admin of company A anything of company B with 403 company_scope, and lists A's company alone", async () => {
    expect(await run('admin', 'app show', { 'app-key': b.app.app_key })).toEqual({ status: 403, body: { error: 'company_scope' } });
    expect(await run('admin', 'link list', { 'app-key': b.app.app_key })).toEqual({ status: 403, body: { error: 'company_scope' } });
    const { body } = await run('admin', 'company list', {});
    expect((body.companies as { company_id: string }[]).map((company) => company.company_id)).toEqual([a.company.company_id]);
  });

  it("serves an operator the health view under the function's own policy, and refuses it to a company's admin and viewer with 403 role_not_allowed", async () => {
    expect((await api('/api/me', tokens.get('operator'))).body.commands).toContain('health');
    for (const role of ['admin', 'viewer']) expect((await api('/api/me', tokens.get(role))).body.commands).not.toContain('health');
    const health = await run('operator', 'health', {});
    expect(health).toMatchObject({ status: 200, body: { environment: 'local', alarms: { source: 'none', alarms: [] } } });
    // Every part read: the DLQs by their variables, the metrics from the runtime's control port.
    const unread = ['ingestion', 'aggregation', 'dead_letter_queues', 'postbacks', 'probe'].filter(
      (part) => 'error' in Object(health.body[part]),
    );
    expect(unread).toEqual([]);
    // Its sums hold every company's volumes: one company's admin reads none of them.
    for (const role of ['admin', 'viewer'])
      expect(await run(role, 'health', {})).toEqual({ status: 403, body: { error: 'role_not_allowed' } });
    // Whether anything is broken is every member's: the verdict and problems, nothing more.
    for (const role of ['viewer', 'admin', 'operator']) {
      const status = await run(role, 'status', {});
      expect(status).toEqual({
        status: 200,
        body: { status: health.body.status, problems: expect.any(Array), checked_at: expect.any(String) },
      });
    }
  });

  it("leaves the CLI's own commands out: an admin's sql, export run and rebuild answer 400 unknown command", async () => {
    const me = await api('/api/me', tokens.get('admin'));
    expect(me.body.commands).toEqual(expect.arrayContaining(['app create', 'postback withheld']));
    for (const command of ['sql', 'export run', 'rebuild']) {
      expect(me.body.commands).not.toContain(command);
      expect(await run('admin', command, { 'app-key': a.app.app_key })).toEqual({
        status: 400,
        body: { error: `unknown command: ${command}` },
      });
    }
  });

  it("runs an admin's install reads under the console API's own policy: install show and privacy show", async () => {
    const uuid = '00000000-0000-4000-8000-00000000a11e';
    const install = await run('admin', 'install show', { 'app-key': a.app.app_key, 'install-uuid': uuid });
    expect(install.status).toBe(200);
    expect(await run('admin', 'privacy show', { 'app-key': a.app.app_key, 'install-uuid': uuid })).toEqual({
      status: 200,
      body: expect.objectContaining({ app_id: a.app.app_id, receipts: [] }),
    });
  });

  it('records who made a link, and an invitation from the console signs in with its one-time password', async () => {
    const link = await run('admin', 'link create', { 'app-key': a.app.app_key, partner: 'meta', campaign: 'spring' });
    expect(link.status).toBe(200);
    const invited = await run('admin', 'user invite', { email: 'mia@a.test', role: 'marketer', 'company-key': a.company.company_key });
    expect(invited.status).toBe(200);
    const log = await run('admin', 'audit log', { 'company-key': a.company.company_key });
    const changes = log.body.changes as { command: string; who: { email: string; role: string } }[];
    expect(changes.map((change) => [change.command, change.who.email, change.who.role])).toEqual([
      ['user invite', 'admin@a.test', 'admin'],
      ['link create', 'admin@a.test', 'admin'],
    ]);
    const mia = await signInThroughStandIn(stack.console!, 'mia@a.test', String(invited.body.temporary_password));
    if (!('idToken' in mia)) throw new Error('the invited marketer was refused');
    const me = await api('/api/me', mia.idToken);
    expect(me.body.member).toEqual({ email: 'mia@a.test', role: 'marketer', company_id: a.company.company_id });
  });
});
