// `admin server-key create --scope` and `admin cost import` against the local runtime: keys with
// the scopes asked for (and the old default, read); a CSV of ad spend stored as POST /api/v1/cost
// stores it (same checks, same replace rule), in requests of 1,000 rows, its refusals naming the
// CSV line; the console's form posts the CSV text itself with --csv.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAdmin, UsageError } from '../../bin/admin';
import { CostStore } from '../../functions/adapters/cost-store';
import { TenantStore } from '../../functions/adapters/tenant-store';
import { resourceName } from '../../functions/shared/config';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';

let stack: LocalStack;
let tenant: Tenant;
let dir: string;
let days: CostStore;

beforeAll(async () => {
  stack = await startLocalStack();
  tenant = await createTenant();
  dir = mkdtempSync(join(tmpdir(), 'cost-import-'));
  days = new CostStore(resourceName.table('aggregates'));
});

afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await stack?.stop();
});

function csvFile(name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

describe('admin server-key create --scope', () => {
  it.each([
    [[], ['read']],
    [['--scope', 'cost'], ['cost']],
    [
      ['--scope', 'read,cost'],
      ['read', 'cost'],
    ],
    [
      ['--scope', 'cost, read'],
      ['read', 'cost'],
    ],
  ])('with %j makes a key of scopes %j, stored and listed', async (flags, scopes) => {
    const created = await runAdmin(['server-key', 'create', '--app-key', tenant.app.app_key, ...flags]);
    expect(created.scopes).toEqual(scopes);
    const stored = await new TenantStore(resourceName.table('tenants')).serverKey(created.server_key as string);
    expect(stored?.scopes).toEqual(scopes);
    const { server_keys } = (await runAdmin(['server-key', 'list', '--app-key', tenant.app.app_key])) as {
      server_keys: { scopes: string[] }[];
    };
    expect(server_keys.at(-1)?.scopes).toEqual(scopes);
  });

  it('refuses a scope it does not know', async () => {
    await expect(runAdmin(['server-key', 'create', '--app-key', tenant.app.app_key, '--scope', 'write'])).rejects.toThrow(
      /--scope must be a comma list of read, cost/,
    );
  });
});

describe('admin cost import', () => {
  it('stores every row of a CSV in requests of 1,000, replacing rows sent before', async () => {
    const header = 'date,partner,campaign,country,platform,cost,currency,clicks,impressions';
    const lines = Array.from({ length: 1500 }, (_, i) => `2026-04-01,meta,c${i},us,IOS,1.5,,${i},`);
    const answer = await runAdmin([
      'cost',
      'import',
      '--app-key',
      tenant.app.app_key,
      '--file',
      csvFile('a.csv', [header, ...lines].join('\n')),
    ]);
    expect(answer).toEqual({ app_id: tenant.app.app_id, accepted: 1500, requests: 2 });
    const day = await days.readDay(tenant.app.app_id, '2026-04-01');
    expect(day.rows).toHaveLength(1500);
    expect(day.rows[7]).toMatchObject({ dims: ['meta', 'c7', 'US', 'ios'], cost_micros: 1_500_000, network_clicks: 7, impressions: 0 });

    // The same rows again, one restated: still 1,500 rows.
    const restated = [header, ...lines.slice(0, 1), '2026-04-01,meta,c1,US,ios,9,USD,1,'].join('\r\n');
    await runAdmin(['cost', 'import', '--app-key', tenant.app.app_key, '--file', csvFile('b.csv', restated)]);
    const after = await days.readDay(tenant.app.app_id, '2026-04-01');
    expect(after.rows).toHaveLength(1500);
    expect(after.rows[1]).toMatchObject({ dims: ['meta', 'c1', 'US', 'ios'], cost_micros: 9_000_000 });
  });

  it('refuses a CSV naming the line of the first bad row, and stores none of it', async () => {
    const text = ['partner,date,cost', 'meta,2026-04-02,1', 'meta,2026-04-02,2', 'meta,2026-04-02,abc'].join('\n');
    await expect(runAdmin(['cost', 'import', '--app-key', tenant.app.app_key, '--file', csvFile('c.csv', text)])).rejects.toThrow(
      /^line 4: bad_cost_row \(cost\): cost must be a number/,
    );
    expect((await days.readDay(tenant.app.app_id, '2026-04-02')).ver).toBe(0);
    // A day past 2099 (issue 36: 9999-12-27 made weeks ending in "+010000-01" that stopped the compactor).
    await expect(
      runAdmin(['cost', 'import', '--app-key', tenant.app.app_key, '--csv', 'date,partner,cost\n9999-12-27,meta,1\n']),
    ).rejects.toThrow(/^line 2: bad_cost_row \(date\): date must be a calendar day from 2000-01-01 to 2099-12-31/);
    await expect(
      runAdmin(['cost', 'import', '--app-key', tenant.app.app_key, '--file', csvFile('d.csv', 'date,partner,cots\n2026-04-02,meta,1\n')]),
    ).rejects.toThrow(/^line 2: bad_cost_row: unknown member "cots"/);
    await expect(
      runAdmin(['cost', 'import', '--app-key', tenant.app.app_key, '--file', csvFile('e.csv', 'date,partner,cost\n"2026-04-02,meta,1\n')]),
    ).rejects.toThrow(/the CSV cannot be read/);
  });

  it('takes the CSV itself with --csv, its lines numbered from --first-line (the console sends a large file in parts)', async () => {
    const csv = 'date,partner,cost\n2026-04-03,google,3\n2026-04-03,google,-3\n';
    await expect(runAdmin(['cost', 'import', '--app-key', tenant.app.app_key, '--csv', csv, '--first-line', '40'])).rejects.toThrow(
      /^line 42: /,
    );
    const answer = await runAdmin(['cost', 'import', '--app-key', tenant.app.app_key, '--csv', 'date,partner,cost\n2026-04-03,google,3\n']);
    expect(answer).toMatchObject({ accepted: 1 });
  });

  it('refuses both --file and --csv, neither, an unreadable file and an unknown app', async () => {
    await expect(runAdmin(['cost', 'import', '--app-key', tenant.app.app_key])).rejects.toBeInstanceOf(UsageError);
    await expect(runAdmin(['cost', 'import', '--app-key', tenant.app.app_key, '--file', 'x.csv', '--csv', 'a'])).rejects.toBeInstanceOf(
      UsageError,
    );
    await expect(runAdmin(['cost', 'import', '--app-key', tenant.app.app_key, '--file', join(dir, 'missing.csv')])).rejects.toBeInstanceOf(
      UsageError,
    );
    await expect(runAdmin(['cost', 'import', '--app-key', 'app_nope', '--csv', 'a'])).rejects.toThrow(/app not found/);
  });
});
