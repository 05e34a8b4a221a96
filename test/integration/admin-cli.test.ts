import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { runAdmin, UsageError } from '../../bin/admin';
import { LinkStore } from '../../functions/adapters/link-store';
import { TenantStore } from '../../functions/adapters/tenant-store';
import { hashServerKey } from '../../functions/domain/tenants/keys';
import { dynamoClient } from '../../functions/shared/clients';
import { type LocalStack, startLocalStack } from '../support/local-stack';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

describe('the admin CLI', () => {
  let stack: LocalStack;
  let tenants: TenantStore;

  beforeAll(async () => {
    stack = await startLocalStack();
    tenants = new TenantStore(stack.endpoints.tables.tenants);
  });

  afterAll(async () => {
    await stack.stop();
  });

  it('prints exactly one JSON object on stdout for company create, and the company is stored', async () => {
    const { stdout, stderr } = await run('npm', ['run', '--silent', 'admin', '--', 'company', 'create', '--name', 'Acme'], {
      cwd: root,
      env: { ...process.env, DATA_DIR: stack.dataDir },
    });
    const lines = stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    const created = JSON.parse(lines[0]) as { company_id: string; company_key: string };
    expect(Object.keys(created).sort()).toEqual(['company_id', 'company_key']);
    expect(created.company_key).toMatch(/^co_live_[0-9a-f]{32}$/);
    expect(stderr.replace(/npm warn.*\n/g, '')).toBe('');
    const company = await tenants.companyByKey(created.company_key);
    expect(company).toMatchObject({ name: 'Acme', plan: 'free', monthly_cap: 10_000, suspended: false });
  }, 30_000);

  it('creates an app, a server key and a link, and stores the server key only as its hash', async () => {
    const { company_key } = (await runAdmin(['company', 'create', '--name', 'Paid Co', '--plan', 'paid'])) as { company_key: string };
    expect((await tenants.companyByKey(company_key))?.monthly_cap).toBeNull();

    const app = (await runAdmin([
      'app',
      'create',
      '--company-key',
      company_key,
      '--name',
      'Game',
      '--ios-url',
      'https://apps.apple.com/app/id42',
      '--android-url',
      'https://play.google.com/store/apps/details?id=x.y',
      '--probabilistic',
    ])) as { app_id: string; app_key: string; signing_secret: string };
    expect(app.app_key).toMatch(/^app_live_[0-9a-f]{32}$/);
    expect(app.signing_secret).toMatch(/^[0-9a-f]{64}$/);
    expect(await tenants.appByKey(app.app_key)).toMatchObject({ app_id: app.app_id, probabilistic: true, name: 'Game' });

    const { server_key } = (await runAdmin(['server-key', 'create', '--app-key', app.app_key])) as { server_key: string };
    expect(server_key).toMatch(/^srv_[0-9a-f]{48}$/);
    const stored = await dynamoClient().send(
      new GetCommand({ TableName: stack.endpoints.tables.tenants, Key: { pk: `server_key#${hashServerKey(server_key)}` } }),
    );
    expect(stored.Item).toMatchObject({ app_id: app.app_id, revoked: false });
    expect(JSON.stringify(stored.Item)).not.toContain(server_key);

    expect(await runAdmin(['server-key', 'revoke', '--server-key', server_key])).toEqual({ ok: true });
    expect((await tenants.serverKey(server_key))?.revoked).toBe(true);

    const link = (await runAdmin(['link', 'create', '--app-key', app.app_key, '--partner', 'meta', '--campaign', 'spring'])) as {
      link_id: string;
      url: string;
    };
    expect(link.url).toBe(`${stack.baseUrl}/l/${link.link_id}`);
    expect(await new LinkStore(stack.endpoints.tables.links).byId(link.link_id)).toMatchObject({
      partner: 'meta',
      campaign: 'spring',
      app_id: app.app_id,
    });
  });

  it('suspends and resumes a company', async () => {
    const { company_key } = (await runAdmin(['company', 'create', '--name', 'S', '--monthly-cap', '500'])) as { company_key: string };
    expect((await tenants.companyByKey(company_key))?.monthly_cap).toBe(500);
    expect(await runAdmin(['company', 'suspend', '--company-key', company_key])).toEqual({ ok: true });
    expect((await tenants.companyByKey(company_key))?.suspended).toBe(true);
    expect(await runAdmin(['company', 'resume', '--company-key', company_key])).toEqual({ ok: true });
    expect((await tenants.companyByKey(company_key))?.suspended).toBe(false);
  });

  it('fires a schedule on the local runtime and returns its result', async () => {
    const result = (await runAdmin(['schedule', 'run', 'health-check'])) as { result: { status: string } };
    expect(result.result.status).toBe('ok');
    await expect(runAdmin(['schedule', 'run', 'no-such-schedule'])).rejects.toThrow(/no schedule named/);
  });

  it('refuses bad flags, unknown commands and unknown keys', async () => {
    await expect(runAdmin(['company', 'create'])).rejects.toBeInstanceOf(UsageError);
    await expect(runAdmin(['company', 'create', '--name', 'x', '--plan', 'gold'])).rejects.toBeInstanceOf(UsageError);
    await expect(runAdmin(['company', 'create', '--name', 'x', '--monthly-cap', '-3'])).rejects.toBeInstanceOf(UsageError);
    await expect(runAdmin(['company', 'create', '--name', 'x', '--bogus', '1'])).rejects.toBeInstanceOf(UsageError);
    await expect(runAdmin(['company', 'explode'])).rejects.toBeInstanceOf(UsageError);
    await expect(
      runAdmin(['app', 'create', '--company-key', 'co_live_x', '--name', 'x', '--ios-url', 'javascript:alert(1)']),
    ).rejects.toBeInstanceOf(UsageError);
    await expect(runAdmin(['app', 'create', '--company-key', 'co_live_nope', '--name', 'x'])).rejects.toThrow(/company not found/);
    await expect(runAdmin(['company', 'suspend', '--company-key', 'co_live_nope'])).rejects.toThrow(/company not found/);
    await expect(runAdmin(['server-key', 'revoke', '--server-key', 'srv_nope'])).rejects.toThrow(/server key not found/);
  });

  it('takes a value that begins with a dash, as one in six base64url link ids does', async () => {
    const { company_key } = (await runAdmin(['company', 'create', '--name', '-Dash Co'])) as { company_key: string };
    expect((await tenants.companyByKey(company_key))?.name).toBe('-Dash Co');
    await expect(runAdmin(['link', 'try', '--link-id', '-AbCdEfGhIjKl'])).rejects.toThrow(/link not found/);
    // A flag of ours is never taken as the value before it, and a negative number is refused by its rule.
    await expect(runAdmin(['company', 'create', '--name', '--plan', 'paid'])).rejects.toBeInstanceOf(UsageError);
    await expect(runAdmin(['company', 'create', '--name', 'x', '--monthly-cap', '-3'])).rejects.toThrow(/monthly-cap/);
  });
});

describe('the admin CLI without a running local runtime', () => {
  it('says so on stderr and exits non-zero', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'admin-none-'));
    const failure = await run('npm', ['run', '--silent', 'admin', '--', 'company', 'create', '--name', 'X'], {
      cwd: root,
      env: { ...process.env, DATA_DIR: dataDir },
    }).then(
      () => undefined,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(failure?.code).toBe(1);
    expect(failure?.stdout).toBe('');
    expect(failure?.stderr).toMatch(/no local runtime is running/);
  }, 30_000);
});

describe('the admin CLI on a flag error', () => {
  // Flags are checked before the target is looked for: no runtime is needed to be refused.
  const dataDir = mkdtempSync(join(tmpdir(), 'admin-flags-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));
  const cli = (...argv: string[]) =>
    run('npm', ['run', '--silent', 'admin', '--', ...argv], { cwd: root, env: { ...process.env, DATA_DIR: dataDir } }).then(
      () => undefined,
      (error: { code: number; stdout: string; stderr: string }) => ({
        ...error,
        lines: error.stderr
          .replace(/npm warn.*\n/g, '')
          .trimEnd()
          .split('\n'),
      }),
    );

  it("prints the command's usage, then the error in plain words as the last line, and exits 2", async () => {
    const failure = await cli('install', 'show', '--app-key', 'app_live_x');
    expect(failure).toMatchObject({ code: 2, stdout: '' });
    expect(failure?.lines.at(-1)).toBe('error: --install-uuid is required');
    expect(failure?.stderr).toContain('install show --app-key K --install-uuid U');
    // Only this command's usage, not every command's.
    expect(failure?.stderr).not.toContain('company create');
    expect(failure?.lines.length).toBeLessThan(8);
  }, 30_000);

  it('prints the help of the program, a group or a command on stderr, and exits 0', async () => {
    for (const [argv, shown] of [
      [['--help'], 'company create --name N'],
      [['company', '--help'], 'resume'],
      [['link', 'try', '--help'], '--link-id <L>'],
      [['help', 'rebuild'], '--apply'],
    ] as const) {
      const { stdout, stderr } = await run('npm', ['run', '--silent', 'admin', '--', ...argv], {
        cwd: root,
        env: { ...process.env, DATA_DIR: dataDir },
      });
      expect(stdout).toBe('');
      expect(stderr).toContain(shown);
    }
  }, 60_000);

  it('lists every command above the error when the command is unknown', async () => {
    const failure = await cli('company', 'explode');
    expect(failure).toMatchObject({ code: 2, stdout: '' });
    expect(failure?.lines.at(-1)).toBe('error: unknown command: company explode');
    expect(failure?.stderr).toContain('company create');
  }, 30_000);
});
