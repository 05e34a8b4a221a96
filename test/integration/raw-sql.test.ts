// admin sql on the local runtime (docs/raw-data.md, "SQL: DuckDB locally, Athena in AWS"): the
// app's export files are fetched from the local export bucket (s3rver) and queried with DuckDB;
// another app's files stay out; an app without exports has its tables, empty; the CLI prints
// {"rows": [...]} and refuses anything but one SELECT with exit 2, as other usage errors.

import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { runAdmin, UsageError } from '../../bin/admin';
import { exportFileKey } from '../../functions/domain/raw-data/export-layout';
import { encodeTable } from '../../functions/domain/raw-data/export-parquet';
import { s3Client } from '../../functions/shared/clients/s3';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';

const run = promisify(execFile);
const root = join(__dirname, '..', '..');

let stack: LocalStack;
let app: Tenant;
let other: Tenant;

// The report SQL takes a row's day from corrected_ts in the app's zone (UTC here); the hour a
// file is under is when the event was received, which may be later than the event itself.
const event = (id: string, uuid: string, day: string, time = '10:00:00') => ({
  event_id: id,
  event_name: 'open',
  install_uuid: uuid,
  event_day: day,
  corrected_ts: Date.parse(`${day}T${time}Z`),
  revenue_micros: 0,
});

beforeAll(async () => {
  stack = await startLocalStack();
  [app, other] = [await createTenant(), await createTenant()];
  const put = (key: string, body: Uint8Array) =>
    s3Client().send(new PutObjectCommand({ Bucket: stack.endpoints.export_bucket, Key: key, Body: body }));
  await put(
    exportFileKey('events', app.app.app_id, '2026-03-01T10'),
    encodeTable('events', [event('e1', 'u1', '2026-03-01'), event('e2', 'u1', '2026-03-01')]),
  );
  await put(exportFileKey('events', app.app.app_id, '2026-03-02T00'), encodeTable('events', [event('e3', 'u2', '2026-03-01', '23:59:00')]));
  await put(exportFileKey('events', other.app.app_id, '2026-03-01T10'), encodeTable('events', [event('x1', 'u9', '2026-03-01')]));
  // Not an export file (a checkpoint-like object under the prefix): never loaded.
  await put(`events/app_id=${app.app.app_id}/_notes.json`, new TextEncoder().encode('{}'));
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

describe('admin sql on the local runtime', () => {
  it("queries the app's export files, and only its own", async () => {
    expect(
      await runAdmin([
        'sql',
        '--app-key',
        app.app.app_key,
        'SELECT dt, hour, count(*) AS events FROM events GROUP BY dt, hour ORDER BY dt, hour',
      ]),
    ).toEqual({
      rows: [
        { dt: '2026-03-01', hour: '10', events: 2 },
        { dt: '2026-03-02', hour: '00', events: 1 },
      ],
    });
    expect(await runAdmin(['sql', '--app-key', other.app.app_key, '--query', 'SELECT event_id FROM events'])).toEqual({
      rows: [{ event_id: 'x1' }],
    });
  });

  it('answers an app without exports with its tables, empty', async () => {
    const fresh = await createTenant();
    expect(
      await runAdmin([
        'sql',
        '--app-key',
        fresh.app.app_key,
        'SELECT (SELECT count(*) FROM events) + (SELECT count(*) FROM installs) + (SELECT count(*) FROM clicks) + (SELECT count(*) FROM skan_postbacks) AS n',
      ]),
    ).toEqual({ rows: [{ n: 0 }] });
    expect(await runAdmin(['sql', '--app-key', fresh.app.app_key, '--report', 'cohorts'])).toEqual({ rows: [] });
  });

  it("runs a report's SQL over the window", async () => {
    const since = String(Date.parse('2026-03-01T00:00:00Z'));
    const until = String(Date.parse('2026-03-02T00:00:00Z'));
    expect(await runAdmin(['sql', '--app-key', app.app.app_key, '--report', 'events', '--since-ms', since, '--until-ms', until])).toEqual({
      rows: [{ day: '2026-03-01', event_name: 'open', events: 3, unique_installs: 2, revenue_usd: 0 }],
    });
  });

  it.each([
    ["SELECT * FROM read_parquet('/etc/passwd')", 'sql: the query calls the table function read_parquet()'],
    ["SELECT * FROM read_csv('/etc/passwd')", 'sql: the query calls the table function read_csv()'],
    ["COPY events TO '/tmp/events.csv'", 'sql: only a single SELECT (or WITH ... SELECT) query is allowed'],
    ["ATTACH '/tmp/other.duckdb'", 'sql: only a single SELECT (or WITH ... SELECT) query is allowed'],
    ['INSTALL httpfs', 'sql: only a single SELECT (or WITH ... SELECT) query is allowed'],
    ['PRAGMA database_list', 'sql: only a single SELECT (or WITH ... SELECT) query is allowed'],
    ['SELECT 1; SELECT 2', 'sql: only a single SELECT (or WITH ... SELECT) query is allowed; this is 2 statements'],
  ])('refuses %s as a usage error of sql', async (query, message) => {
    const refused = runAdmin(['sql', '--app-key', app.app.app_key, query]);
    await expect(refused).rejects.toBeInstanceOf(UsageError);
    await expect(refused).rejects.toThrow(message);
  });

  it('prints {"rows": [...]} on stdout, and a refusal on stderr with exit 2', async () => {
    const options = { cwd: root, env: { ...process.env, DATA_DIR: stack.dataDir } };
    const { stdout } = await run(
      'npm',
      ['run', '--silent', 'admin', '--', 'sql', '--app-key', app.app.app_key, 'SELECT count(*) AS n FROM events'],
      options,
    );
    expect(JSON.parse(stdout)).toEqual({ rows: [{ n: 3 }] });

    const refused = await run(
      'npm',
      ['run', '--silent', 'admin', '--', 'sql', '--app-key', app.app.app_key, "SELECT * FROM read_parquet('/etc/hostname')"],
      options,
    ).then(
      () => undefined,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(refused?.code).toBe(2);
    expect(refused?.stdout).toBe('');
    expect(refused?.stderr).toContain("error: sql: the query calls the table function read_parquet(): it may read only the app's tables");
  }, 60_000);
});
