// The nightly privacy drain over the emulators: a deleted install leaves nothing in any table, in
// the audit store or in the export bucket (lines whose install_uuid holds its UUID malformed,
// device ids of any type, its partner postbacks and their attempts, its stream lines and its rows
// in the export's Parquet files included), other installs and the reports stay as they were, the
// stream serves the other installs' events exactly once to a reader the drain met mid-object,
// `admin sql` and a re-export find nothing of it, requests go 25 a batch, and an install with more
// than 1,000 rows takes a second run.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command, type ListObjectsV2CommandOutput } from '@aws-sdk/client-s3';
import { BatchWriteCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { runCommand } from '../../admin/commands';
import { runAdmin } from '../../bin/admin';
import { AuditReader } from '../../functions/adapters/audit-reader';
import { LinkStore } from '../../functions/adapters/link-store';
import { sha256Hex } from '../../functions/domain/common/hashing';
import type { DrainReport } from '../../functions/domain/privacy/drain';
import { installHash } from '../../functions/domain/privacy/privacy';
import { hourOf } from '../../functions/domain/raw-data/export-layout';
import { decodeTable } from '../../functions/domain/raw-data/export-parquet';
import type { StreamEvent } from '../../functions/domain/raw-data/stream-objects';
import { dynamoClient, s3Client } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import { type TableName, tables } from '../../lib/manifest';
import { eventClientFrom } from '../support/event-client';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { MOBILE } from '../unit/links/user-agents';

// Read by the runtime at start: postbacks may go to the partner receiver below, on 127.0.0.1.
process.env.POSTBACK_ALLOW_LOOPBACK = '1';

let stack: LocalStack;
let tenant: Tenant;
/** A partner's postback endpoint: answers 200 and remembers each request. */
let partner: Server;
const postbacksReceived: string[] = [];
beforeAll(async () => {
  process.env.KEY_CACHE_TTL_MS = '0';
  stack = await startLocalStack({ trustProxy: true });
  tenant = await createTenant();
  partner = createServer((request, response) => {
    postbacksReceived.push(request.url ?? '');
    response.end('ok');
  });
  await new Promise<void>((resolve) => partner.listen(0, '127.0.0.1', resolve));
});
afterAll(async () => {
  partner?.closeAllConnections();
  await new Promise((resolve) => partner?.close(resolve));
  await stack?.stop();
});

const uuid = (n: number) => `${String(n).padStart(8, '0')}-aaaa-4bbb-8ccc-dddddddddddd`;
const client = (ip = '198.51.100.30') => eventClientFrom(stack.baseUrl, tenant, ip);
const drain = async () => (await stack.scheduler.run('privacy-drain')) as DrainReport;

async function scan(table: string): Promise<Record<string, unknown>[]> {
  const { Items = [] } = await dynamoClient().send(new ScanCommand({ TableName: resourceName.table(table as never) }));
  return Items;
}

async function auditTexts(): Promise<Map<string, string>> {
  const reader = new AuditReader(resourceName.bucket());
  const { Contents = [] } = await s3Client().send(new ListObjectsV2Command({ Bucket: resourceName.bucket(), Prefix: 'audit/' }));
  const texts = new Map<string, string>();
  for (const { Key } of Contents) texts.set(Key!, JSON.stringify(await reader.lines(Key!)));
  return texts;
}

/** Every key of a bucket, a LIST page at a time. */
async function keysOf(bucket: string): Promise<string[]> {
  const keys: string[] = [];
  let token: string | undefined;
  do {
    const page: ListObjectsV2CommandOutput = await s3Client().send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
    for (const { Key } of page.Contents ?? []) if (Key) keys.push(Key);
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return keys;
}

/** An object's key, metadata and content as text: gzip unpacked, a Parquet file's rows as JSON. */
async function objectText(bucket: string, key: string): Promise<string> {
  const object = await s3Client().send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  const bytes = Buffer.from(await object.Body!.transformToByteArray());
  const content = key.endsWith('.gz')
    ? gunzipSync(bytes).toString('utf8')
    : key.endsWith('.parquet')
      ? JSON.stringify(await decodeTable(bytes))
      : bytes.toString('utf8');
  return `${key} ${JSON.stringify(object.Metadata)} ${content}`;
}

/**
 * Where any of the needles (compared lower-cased) is found: every item of every table but the
 * anonymous aggregates, and every object of the audit bucket and of the export bucket (stream
 * objects, Parquet files, checkpoints), its metadata and its content.
 */
async function traces(needles: readonly string[]): Promise<string[]> {
  const wanted = needles.map((needle) => needle.toLowerCase());
  const found: string[] = [];
  const look = (where: string, text: string) => {
    const lower = text.toLowerCase();
    for (const needle of wanted) if (lower.includes(needle)) found.push(`${where}: ${needle}`);
  };
  for (const table of Object.keys(tables) as TableName[]) {
    if (table === 'aggregates') continue;
    for (const item of await scan(table)) look(`table ${table}`, JSON.stringify(item));
  }
  for (const bucket of [resourceName.bucket(), resourceName.exportBucket()])
    for (const key of await keysOf(bucket)) look(`object ${key}`, await objectText(bucket, key));
  return found;
}

/** The app's export files now, by key, as bytes. */
async function exportFiles(): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  for (const key of await keysOf(resourceName.exportBucket())) {
    if (!key.endsWith('.parquet')) continue;
    const object = await s3Client().send(new GetObjectCommand({ Bucket: resourceName.exportBucket(), Key: key }));
    files.set(key, Buffer.from(await object.Body!.transformToByteArray()).toString('base64'));
  }
  return files;
}

/** The warehouse export of the app as an operator runs it (it waits for the stream to be final up to now). */
const exportRun = (of: Tenant, hour?: string) =>
  runAdmin(['export', 'run', '--app-key', of.app.app_key, ...(hour ? ['--hour', hour] : [])]);

/** One page of the app's event stream. */
async function streamPage(
  of: Tenant,
  limit: number,
  cursor?: string,
): Promise<{ events: StreamEvent[]; next_cursor: string; has_more: boolean }> {
  const query = `?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`;
  const response = await fetch(`${stack.baseUrl}/api/v1/stream/events${query}`, { headers: { authorization: `Bearer ${of.serverKey}` } });
  expect(response.status).toBe(200);
  return (await response.json()) as { events: StreamEvent[]; next_cursor: string; has_more: boolean };
}

/** The rest of a read, from its cursor, a page of `limit` at a time. */
async function streamRest(of: Tenant, limit: number, cursor?: string): Promise<StreamEvent[]> {
  const events: StreamEvent[] = [];
  for (let next = cursor; ; ) {
    const page = await streamPage(of, limit, next);
    events.push(...page.events);
    if (!page.has_more) return events;
    next = page.next_cursor;
  }
}

/** What `admin sql` finds of the install in each of the app's raw tables. */
async function sqlRows(of: Tenant, installUuid: string, clickId: string): Promise<unknown[]> {
  const rows: unknown[] = [];
  for (const query of [
    `SELECT event_id FROM events WHERE lower(install_uuid) = '${installUuid}'`,
    `SELECT install_event_id FROM installs WHERE lower(install_uuid) = '${installUuid}' OR click_id = '${clickId}'`,
    `SELECT click_id FROM clicks WHERE click_id = '${clickId}'`,
  ])
    rows.push(...((await runAdmin(['sql', '--app-key', of.app.app_key, query])).rows as unknown[]));
  return rows;
}

const reports = async (of: Tenant = tenant) => {
  const out: Record<string, unknown> = {};
  for (const name of ['attribution', 'revenue', 'cohorts', 'events']) {
    const response = await fetch(`${stack.baseUrl}/api/v1/reports/${name}`, { headers: { authorization: `Bearer ${of.serverKey}` } });
    out[name] = ((await response.json()) as { rows: unknown }).rows;
  }
  return out;
};

describe('the privacy drain', () => {
  it('removes every row, click and audit line of the install and touches nothing else', async () => {
    const link = await new LinkStore(resourceName.table('links')).create(tenant.app, { partner: 'meta' });
    const clickOf = async (ip: string) => {
      const response = await fetch(`${stack.baseUrl}/l/${link.link_id}`, {
        redirect: 'manual',
        headers: { 'user-agent': MOBILE.iosSafari, 'x-forwarded-for': ip },
      });
      return new URL(response.headers.get('location')!).searchParams.get('click_id')!;
    };
    const matched = await clickOf('203.0.113.1');
    const unrelated = await clickOf('203.0.113.2');
    const [gone, kept] = [uuid(1), uuid(2)];
    const now = Date.now();
    // An object of the deleted install only, one shared with another install, one with a rejected line of it.
    const alone = await client().sendEvents([
      {
        event_id: 'i',
        event_name: 'install',
        install_uuid: gone,
        ts_ms: now,
        platform: 'ios',
        device_id: 'idfv-gone',
        attribution: { click_id: matched },
      },
      { event_id: 'p', event_name: 'purchase', install_uuid: gone, ts_ms: now + 1000, revenue_usd: 9.99 },
    ]);
    const shared = await client().sendEvents([
      { event_id: 's', event_name: 'session', install_uuid: gone, ts_ms: now + 2000 },
      { event_id: 'i', event_name: 'install', install_uuid: kept, ts_ms: now, platform: 'android' },
      { event_id: 's2', event_name: 'session', install_uuid: kept, ts_ms: now + 3000 },
    ]);
    const rejected = await client().sendEvents([
      { event_id: 'bad', event_name: 'purchase', install_uuid: gone, ts_ms: now, revenue_usd: -5 },
      { event_id: 's3', event_name: 'session', install_uuid: kept, ts_ms: now + 4000 },
    ]);
    expect(rejected.rejected).toBe(1);
    await stack.pollers.drain();
    const before = await reports();
    expect((before.attribution as unknown[]).length).toBeGreaterThan(0);
    const installsBefore = (await scan('installs')).filter((item) => String(item.pk).endsWith(kept));
    expect((await scan('installs')).some((item) => String(item.pk).endsWith(gone))).toBe(true);

    // Exported before the deletion: the install is in the stream and in the events, installs and clicks files.
    await exportRun(tenant);
    const exported = (await traces([gone, matched])).filter((where) => !where.startsWith('table') && !where.includes('audit/'));
    for (const table of ['stream', 'events', 'installs', 'clicks'])
      expect(
        exported.some((where) => where.startsWith(`object ${table}/app_id=`) || where.startsWith(`object ${table}/${tenant.app.app_id}/`)),
      ).toBe(true);
    expect(await sqlRows(tenant, gone, matched)).not.toEqual([]);
    const streamBefore = await streamRest(tenant, 100);
    const others = streamBefore.filter((event) => event.install_uuid !== gone);
    expect(others.map((event) => event.event_id).sort()).toEqual(['i', 's2', 's3']);
    expect(
      streamBefore
        .filter((event) => event.install_uuid === gone)
        .map((event) => event.event_id)
        .sort(),
    ).toEqual(['i', 'p', 's']);
    // A reader one event into the stream when the drain runs.
    const firstPage = await streamPage(tenant, 1);
    expect(firstPage.has_more).toBe(true);

    await client().deleteInstall(gone.toUpperCase());
    const report = await drain();
    expect(report).toMatchObject({ failed: [] });
    expect(report.done).toHaveLength(1);
    expect(report.stopped).toBe('queue_empty');

    // Nothing keyed to the install is left: no item, no matched click, no audit line, no stream line, no exported row.
    expect(await traces([gone, 'idfv-gone', matched])).toEqual([]);
    expect(await sqlRows(tenant, gone, matched)).toEqual([]);
    // The reader goes on where it was: every other install's event exactly once, none of the install's.
    const rest = await streamRest(tenant, 1, firstPage.next_cursor);
    expect(rest.filter((event) => event.install_uuid === gone)).toEqual([]);
    expect([...firstPage.events, ...rest].filter((event) => event.install_uuid !== gone)).toEqual(others);
    expect(await streamRest(tenant, 100)).toEqual(others);
    // Exported again, as the schedule does and hour by hour: nothing of it comes back, no file changes.
    const drainedFiles = await exportFiles();
    await exportRun(tenant);
    const hours = [...drainedFiles.keys()].flatMap((key) => {
      const partition = new RegExp(`^\\w+/app_id=${tenant.app.app_id}/dt=([\\d-]+)/hour=(\\d\\d)/`).exec(key);
      return partition ? [`${partition[1]}T${partition[2]}`] : [];
    });
    for (const hour of new Set([...hours, hourOf(now)])) await exportRun(tenant, hour);
    expect(await exportFiles()).toEqual(drainedFiles);
    expect(await traces([gone, 'idfv-gone', matched])).toEqual([]);
    const clickIds = (await scan('click_log')).map((click) => click.click_id);
    expect(clickIds).not.toContain(matched);
    expect(clickIds).toContain(unrelated);
    const texts = await auditTexts();
    expect([...texts.values()].filter((text) => text.includes(gone))).toEqual([]);
    expect(texts.has(alone.audit_key)).toBe(false);
    expect(JSON.parse(texts.get(shared.audit_key)!).map((line: { event: { event_id: string } }) => line.event.event_id)).toEqual([
      'i',
      's2',
    ]);
    expect(JSON.parse(texts.get(rejected.audit_key)!).map((line: { event: { event_id: string } }) => line.event.event_id)).toEqual(['s3']);

    // The other install and the anonymous counts are as they were.
    expect((await scan('installs')).filter((item) => String(item.pk).endsWith(kept))).toEqual(installsBefore);
    expect(await reports()).toEqual(before);

    const shown = await runAdmin(['privacy', 'show', '--app-key', tenant.app.app_key, '--install-uuid', gone]);
    expect(shown.receipts).toEqual([
      expect.objectContaining({
        state: 'done',
        started_ms: expect.any(Number),
        finished_ms: expect.any(Number),
        deleted_clicks: 1,
        deleted_audit_objects_deleted: 1,
        deleted_audit_objects_rewritten: 2,
        deleted_audit_lines: 4,
        deleted_stream_lines: 3,
        // Its three events, its install, its click.
        deleted_export_rows: 5,
      }),
    ]);
    expect(JSON.stringify(shown)).not.toContain(gone);
  }, 120_000);

  it('leaves nothing of the install anywhere: lines whose install_uuid holds its UUID malformed, device ids of any type, its partner postbacks', async () => {
    const app = await createTenant();
    const gone = uuid(30);
    const kept = uuid(31);
    const [installIp, junkIp, keptIp, clickIp] = ['198.51.100.131', '198.51.100.132', '198.51.100.133', '203.0.113.134'];
    const idfa = '6D92078A-8246-4BA4-AE5B-76104861E7DC';
    const from = (ip: string) => eventClientFrom(stack.baseUrl, app, ip);

    await runCommand(
      'postback set',
      {
        'app-key': app.app.app_key,
        partner: 'acme',
        url: `http://127.0.0.1:${(partner.address() as AddressInfo).port}/pb?c={click_id}&s={sub1}&id={postback_id}`,
        events: 'install,purchase',
      },
      { baseUrl: stack.baseUrl },
    );
    const link = await new LinkStore(resourceName.table('links')).create(app.app, { partner: 'acme' });
    const clicked = await fetch(`${stack.baseUrl}/l/${link.link_id}?click_id=PARTNER-CLICK-4711&sub1=SUB-VALUE-4711`, {
      redirect: 'manual',
      headers: { 'user-agent': MOBILE.iosSafari, 'x-forwarded-for': clickIp },
    });
    const clickId = new URL(clicked.headers.get('location')!).searchParams.get('click_id')!;
    const now = Date.now();
    // The install, attributed to acme, and a purchase: two postbacks, each with its attempt.
    await from(installIp).sendEvents([
      {
        event_id: 'i',
        event_name: 'install',
        install_uuid: gone,
        ts_ms: now + 40_000,
        platform: 'ios',
        device_id: 'idfv-gone-4711',
        attribution: { click_id: clickId },
      },
      { event_id: 'p', event_name: 'purchase', install_uuid: gone, ts_ms: now + 41_000, revenue_usd: 4.99 },
    ]);
    // Rejected lines only, none with a well-formed install_uuid: the UUID padded, braced, in an
    // array; device ids that are no string (a number, an array, an object holding the IDFA).
    const junk = (await from(junkIp).sendEvents([
      { event_id: 'j1', event_name: 'session', install_uuid: ` ${gone}`, ts_ms: now, device_id: 4815162342 },
      { event_id: 'j2', event_name: 'session', install_uuid: `{${gone.toUpperCase()}}`, ts_ms: now, device_id: [idfa] },
      { event_id: 'j3', event_name: 'session', install_uuid: [gone], ts_ms: now, device_id: { idfa } },
    ] as never)) as { rejected: number; audit_key: string };
    expect(junk.rejected).toBe(3);
    // A line of it, malformed, beside another install's accepted events.
    const shared = (await from(keptIp).sendEvents([
      { event_id: 'k', event_name: 'install', install_uuid: kept, ts_ms: now, platform: 'android' },
      { event_id: 'j4', event_name: 'session', install_uuid: `urn:uuid:${gone}`, ts_ms: now, device_id: { idfa } },
    ] as never)) as { audit_key: string };
    // An event of it with a device id that is no string, under its well-formed install_uuid.
    await from(installIp).sendEvents([
      { event_id: 'j5', event_name: 'session', install_uuid: gone, ts_ms: now, device_id: { idfa } },
    ] as never);
    await stack.pollers.drain();
    for (let wait = 0; postbacksReceived.length < 2 && wait < 50; wait++) await new Promise((resolve) => setTimeout(resolve, 200));
    await stack.pollers.drain();
    const postbackIds = postbacksReceived.map((url) => new URL(url, 'http://partner').searchParams.get('id')!);
    expect(postbackIds).toHaveLength(2);
    await exportRun(app);
    expect(postbacksReceived.every((url) => url.includes('PARTNER-CLICK-4711') && url.includes('SUB-VALUE-4711'))).toBe(true);

    const deviceHash = sha256Hex(`${app.app.app_id}:idfv-gone-4711`);
    const needles = [
      gone,
      'idfv-gone-4711',
      deviceHash,
      idfa,
      '4815162342',
      installIp,
      junkIp,
      clickIp,
      clickId,
      'PARTNER-CLICK-4711',
      'SUB-VALUE-4711',
      ...postbackIds,
    ];
    // Before the drain the install is all over the stores (its postback records and attempts too).
    const before = await traces(needles);
    for (const where of [`table postbacks: ${postbackIds[0]}`, 'table postbacks: partner-click-4711', `object ${junk.audit_key}: ${gone}`])
      expect(before).toContain(where);
    for (const table of ['stream', 'events', 'installs', 'clicks'])
      expect(
        before.some((where) => where.startsWith(`object ${table}/`) && where.endsWith(table === 'clicks' ? 'partner-click-4711' : gone)),
      ).toBe(true);
    const reportsBefore = await reports(app);

    await from(installIp).deleteInstall(gone);
    const report = await drain();
    expect(report).toMatchObject({ failed: [], done: [expect.any(String)] });

    expect(await traces(needles)).toEqual([]);
    expect(await sqlRows(app, gone, clickId)).toEqual([]);
    await exportRun(app);
    expect(await traces(needles)).toEqual([]);
    // Its receipt names it by the hash of its install_uuid, and nothing else does.
    expect(await traces([installHash(gone)])).toEqual([expect.stringMatching(/^table privacy_requests: /)]);
    const texts = await auditTexts();
    expect(texts.has(junk.audit_key)).toBe(false);
    expect(JSON.parse(texts.get(shared.audit_key)!).map((line: { event: { event_id: string } }) => line.event.event_id)).toEqual(['k']);
    expect(await reports(app)).toEqual(reportsBefore);
    const shown = await runAdmin(['privacy', 'show', '--app-key', app.app.app_key, '--install-uuid', gone]);
    expect((shown.receipts as Record<string, unknown>[])[0]).toMatchObject({ state: 'done', deleted_postbacks: 4 });
  }, 120_000);

  it('takes requests 25 a batch until the queue is empty: 60 requests in 3 batches', async () => {
    for (let n = 100; n < 160; n++) await client().deleteInstall(uuid(n));
    const report = await drain();
    expect(report.batches).toEqual([25, 25, 10]);
    expect(report.done).toHaveLength(60);
    expect((await drain()).batches).toEqual([]);
  });

  it('deletes at most 1,000 rows of a table per request and run, and finishes the rest on the next run', async () => {
    const big = uuid(7);
    const now = Date.now();
    const events = (from: number) =>
      Array.from({ length: 600 }, (_, i) => ({
        event_id: `e${from + i}`,
        event_name: 'level_up',
        install_uuid: big,
        ts_ms: now + from + i,
      }));
    await client().sendEvents([{ event_id: 'i', event_name: 'install', install_uuid: big, ts_ms: now, platform: 'ios' }]);
    const objects = [await client().sendEvents(events(0)), await client().sendEvents(events(600))];
    await stack.pollers.drain();
    // The claim log keeps this install in a handful of items; a partition written before it kept
    // an e# item per event and an a# item per audit object, as here (the drain handles both).
    const pk = `${tenant.app.app_id}#${big}`;
    const legacy = [
      ...[...events(0), ...events(600)].map((event) => ({
        pk,
        sk: `e#${event.event_id}`,
        owner: 'legacy0123456789abcdef01',
        event_name: event.event_name,
        ts_ms: event.ts_ms,
        day: new Date(event.ts_ms).toISOString().slice(0, 10),
        revenue_micros: 0,
        held: false,
      })),
      ...objects.map(({ audit_key }) => ({ pk, sk: `a#${audit_key}`, owner: 'legacy0123456789abcdef01', audit_key })),
    ];
    for (let start = 0; start < legacy.length; start += 25) {
      const RequestItems = {
        [resourceName.table('installs')]: legacy.slice(start, start + 25).map((Item) => ({ PutRequest: { Item } })),
      };
      await dynamoClient().send(new BatchWriteCommand({ RequestItems }));
    }
    const rowsOf = async () => (await scan('installs')).filter((item) => String(item.pk).endsWith(big)).length;
    expect(await rowsOf()).toBeGreaterThan(1200);

    await client().deleteInstall(big);
    const first = await drain();
    expect(first.carried).toHaveLength(1);
    const left = await rowsOf();
    expect(left).toBeGreaterThan(200);
    expect(left).toBeLessThan(1000);
    const receipt = async () =>
      (
        (await runAdmin(['privacy', 'show', '--app-key', tenant.app.app_key, '--install-uuid', big])).receipts as Record<string, unknown>[]
      )[0];
    expect(await receipt()).toMatchObject({ state: 'in_progress', deleted_install_items: 1000 });

    const second = await drain();
    expect(second.done).toEqual(first.carried);
    expect(await rowsOf()).toBe(0);
    expect(await receipt()).toMatchObject({ state: 'done', deleted_install_items: 1000 + left });
    expect([...(await auditTexts()).values()].filter((text) => text.includes(big))).toEqual([]);
    expect(await traces([big])).toEqual([]);
  }, 90_000);
});
