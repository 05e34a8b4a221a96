import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { runAdmin } from '../../bin/admin';
import { newAppId, newAppKey, newSigningSecret } from '../../functions/domain/tenants/keys';
import { dynamoClient } from '../../functions/shared/clients';
import { runAsFunction } from '../../local/function-context';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { post, signedBytes, validEvent } from './ingest-support';

/**
 * Signing secrets live in a table of their own (signing_secrets), which only the functions that
 * verify signatures may read: the tenants table, which the report functions and the aggregator
 * read, holds none. Apps made before the table existed are moved to it by
 * `admin signing-secrets migrate` (and by npm start on a local data directory).
 */
let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack();
});
afterAll(async () => {
  await stack?.stop();
});

const tenantsItem = async (appKey: string) =>
  (await dynamoClient().send(new GetCommand({ TableName: stack.endpoints.tables.tenants, Key: { pk: `app#${appKey}` } }))).Item;
const secretItem = async (appId: string) =>
  (await dynamoClient().send(new GetCommand({ TableName: stack.endpoints.tables.signing_secrets, Key: { app_id: appId } }))).Item;
const batch = () => Buffer.from(JSON.stringify({ sent_at_ms: Date.now(), events: [validEvent()] }));

/** An app as versions before the signing_secrets table wrote it: its secret in its tenants item. */
async function legacyApp(owner: Tenant): Promise<Tenant> {
  const app = { ...owner.app, app_id: newAppId(), app_key: newAppKey(), name: 'Legacy App', created_ms: Date.now() };
  const signingSecret = newSigningSecret();
  await dynamoClient().send(
    new PutCommand({
      TableName: stack.endpoints.tables.tenants,
      Item: { ...app, signing_secret: signingSecret, pk: `app#${app.app_key}`, id: app.app_id, kind: 'app' },
    }),
  );
  return { ...owner, app: { ...app, signing_secret: signingSecret } };
}

describe('signing secrets', () => {
  it("are kept in the signing_secrets table by app id, never in the app's tenants item", async () => {
    const tenant = await createTenant();
    expect(await tenantsItem(tenant.app.app_key)).not.toHaveProperty('signing_secret');
    expect(await secretItem(tenant.app.app_id)).toMatchObject({ app_id: tenant.app.app_id, signing_secret: tenant.app.signing_secret });
    expect(await post(stack.baseUrl, '/event', signedBytes(tenant, batch()))).toMatchObject({ status: 200 });
  });

  it('are printed by app create and app show, and by no listing', async () => {
    const tenant = await createTenant();
    const created = (await runAdmin(['app', 'create', '--company-key', tenant.company.company_key, '--name', 'Shown'])) as {
      app_key: string;
      app_id: string;
      signing_secret: string;
    };
    expect(created.signing_secret).toMatch(/^[0-9a-f]{64}$/);
    expect(await runAdmin(['app', 'show', '--app-key', created.app_key])).toMatchObject({
      app_id: created.app_id,
      signing_secret: created.signing_secret,
    });
    expect(JSON.stringify(await runAdmin(['app', 'list', '--company-key', tenant.company.company_key]))).not.toContain(
      created.signing_secret,
    );
  });

  it('rotated with a grace: new and old builds both verify until it ends, and a rotation without one refuses the old at once', async () => {
    // Rotated before the app's first request, so no warm cache holds the secrets from before
    // (a rotation reaches a warm function within KEY_CACHE_TTL_MS, docs/secrets.md).
    const rotateWith = async (graceDays: number) => {
      const tenant = await createTenant();
      const rotated = (await runAdmin([
        'app',
        'rotate-signing-secret',
        '--app-key',
        tenant.app.app_key,
        '--grace-days',
        String(graceDays),
      ])) as { signing_secret: string; retired: { verifies_until: string }[] };
      const status = async (secret: string) =>
        (await post(stack.baseUrl, '/event', signedBytes({ ...tenant, app: { ...tenant.app, signing_secret: secret } }, batch()))).status;
      return { old: tenant.app.signing_secret, rotated, status };
    };
    const graced = await rotateWith(30);
    expect(graced.rotated.signing_secret).toMatch(/^[0-9a-f]{64}$/);
    expect(graced.rotated.signing_secret).not.toBe(graced.old);
    const until = Date.parse(graced.rotated.retired[0]?.verifies_until ?? '');
    expect(Math.abs(until - (Date.now() + 30 * 86_400_000))).toBeLessThan(60_000);
    expect([await graced.status(graced.rotated.signing_secret), await graced.status(graced.old)]).toEqual([200, 200]);

    const abrupt = await rotateWith(0);
    expect(abrupt.rotated.retired).toEqual([]);
    expect([await abrupt.status(abrupt.rotated.signing_secret), await abrupt.status(abrupt.old)]).toEqual([200, 401]);
    await expect(runAdmin(['app', 'rotate-signing-secret', '--app-key', newAppKey(), '--grace-days', '1'])).rejects.toThrow(/app/);
    await expect(
      runAdmin(['app', 'rotate-signing-secret', '--app-key', (await createTenant()).app.app_key, '--grace-days', '366']),
    ).rejects.toThrow(/grace-days/);
  });

  const otherReaders = [
    'health',
    'health-check',
    'report-attribution',
    'report-revenue',
    'report-cohorts',
    'report-events',
    'aggregator',
    'link-redirect',
  ];
  it.each(otherReaders)('cannot be read by %s', async (name) => {
    const tenant = await createTenant();
    const read = runAsFunction(name, () =>
      dynamoClient().send(new GetCommand({ TableName: stack.endpoints.tables.signing_secrets, Key: { app_id: tenant.app.app_id } })),
    );
    await expect(read).rejects.toMatchObject({
      name: 'AccessDeniedException',
      message: expect.stringContaining(`table/${stack.endpoints.tables.signing_secrets}`),
    });
  });

  it.each(['ingest', 'privacy-request'])('are read by %s, which verifies signatures', async (name) => {
    const tenant = await createTenant();
    const read = runAsFunction(name, () =>
      dynamoClient().send(new GetCommand({ TableName: stack.endpoints.tables.signing_secrets, Key: { app_id: tenant.app.app_id } })),
    );
    await expect(read).resolves.toMatchObject({ Item: { signing_secret: tenant.app.signing_secret } });
  });

  it('of apps made before the table existed still verify, and admin signing-secrets migrate moves them out of the tenants table', async () => {
    const legacy = await legacyApp(await createTenant());
    expect(await post(stack.baseUrl, '/event', signedBytes(legacy, batch()))).toMatchObject({ status: 200 });

    expect(await runAdmin(['signing-secrets', 'migrate'])).toEqual({ moved: 1 });
    expect(await tenantsItem(legacy.app.app_key)).not.toHaveProperty('signing_secret');
    expect(await secretItem(legacy.app.app_id)).toMatchObject({ signing_secret: legacy.app.signing_secret });
    expect(await post(stack.baseUrl, '/event', signedBytes(legacy, batch()))).toMatchObject({ status: 200 });
    expect(await runAdmin(['signing-secrets', 'migrate'])).toEqual({ moved: 0 });
  });
});

describe('npm start over a data directory made before the signing_secrets table', () => {
  it("moves every app's signing secret out of the tenants table before serving", async () => {
    const legacy = await legacyApp(await createTenant());
    await stack.close();
    stack = await startLocalStack({ dataDir: stack.dataDir });

    expect(await tenantsItem(legacy.app.app_key)).not.toHaveProperty('signing_secret');
    expect(await secretItem(legacy.app.app_id)).toMatchObject({ signing_secret: legacy.app.signing_secret });
    // (No event sent: handler modules loaded before the restart hold the first run's queue URLs; docs/local-runtime.md.)
  });
});
