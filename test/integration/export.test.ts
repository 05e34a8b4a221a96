// The warehouse export end to end against the local runtime: events sent through POST /event (a
// batch re-sent among them, an event before its install), a click through a tracking link and a
// SKAN postback; the aggregator's poller writes the stream objects; `admin export run` (and the
// hourly schedule's function, under its own grants) writes Parquet files that hyparquet and DuckDB
// read back: every accepted event once, installs with their decisions and why, the click without
// its address, the postback verified; exporting again replaces the files with the same ones.

import { randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { DuckDBInstance } from '@duckdb/node-api';
import { runAdmin } from '../../bin/admin';
import type { EventClient } from '../../client/event-client';
import { LinkStore } from '../../functions/adapters/link-store';
import type { SdkEvent } from '../../functions/domain/ingest/event-validation';
import { checkpointKey } from '../../functions/domain/raw-data/export-layout';
import { decodeTable } from '../../functions/domain/raw-data/export-parquet';
import type { ExportRow } from '../../functions/domain/raw-data/export-rows';
import { UNMATCHED_APP_ID } from '../../functions/domain/raw-data/tables';
import { s3Client } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import { eventClientFrom } from '../support/event-client';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { MOBILE } from '../unit/links/user-agents';
import { SKADNETWORK_EXAMPLES } from '../unit/skan/postbacks';

const DEVICE_IP = '198.51.100.77';
const OTHER_IP = '198.51.100.78';

let stack: LocalStack;
let a: Tenant;
let b: Tenant;
/** Each event a's app accepted, once, by event_id. */
const sent = new Map<string, SdkEvent>();
let clickId: string;
let installId: string;
let organicInstallId: string;
let heldPurchaseId: string;
let firstRun: Record<string, unknown>;

async function send(client: EventClient, events: SdkEvent[]) {
  const result = await client.sendEvents(events);
  expect(result.results.map((r) => r.status)).toEqual(events.map(() => 'accepted'));
  for (const event of events) sent.set(event.event_id, event);
}

/** Every object under a prefix of the export bucket: key and bytes. */
async function objects(prefix: string): Promise<Map<string, Uint8Array>> {
  const found = new Map<string, Uint8Array>();
  const bucket = resourceName.exportBucket();
  let token: string | undefined;
  do {
    const page = await s3Client().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken: token }));
    for (const { Key } of page.Contents ?? []) {
      if (!Key) continue;
      const object = await s3Client().send(new GetObjectCommand({ Bucket: bucket, Key }));
      found.set(Key, await (object.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray());
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return found;
}

/** The rows of every file of a table and app. */
async function rows(table: string, appId: string): Promise<ExportRow[]> {
  const all: ExportRow[] = [];
  for (const bytes of (await objects(`${table}/app_id=${appId}/`)).values()) all.push(...(await decodeTable(bytes)));
  return all;
}

beforeAll(async () => {
  stack = await startLocalStack({ trustProxy: true });
  [a, b] = [await createTenant(), await createTenant()];
  const client = eventClientFrom(stack.baseUrl, a, DEVICE_IP);
  const uuid1 = randomUUID();
  const uuid2 = randomUUID();

  // A purchase of uuid2 counted before any install of it: exported with install_event_id null.
  heldPurchaseId = `purchase-early-${randomUUID()}`;
  await send(client, [
    { event_id: heldPurchaseId, event_name: 'purchase', install_uuid: uuid2, ts_ms: Date.now(), revenue_usd: 1.25, platform: 'android' },
  ]);
  await stack.pollers.drain();

  const linkId = (await new LinkStore(resourceName.table('links')).create(a.app, { partner: 'acme_ads', campaign: 'spring' })).link_id;
  const response = await fetch(`${stack.baseUrl}/l/${linkId}?click_id=ext-export&sub1=creative_a`, {
    redirect: 'manual',
    headers: { 'user-agent': MOBILE.iosSafari, 'x-forwarded-for': DEVICE_IP },
  });
  clickId = new URL(response.headers.get('location') ?? 'http://x/').searchParams.get('click_id') ?? '';
  expect(clickId).not.toBe('');

  installId = `install-${randomUUID()}`;
  const first: SdkEvent[] = [
    {
      event_id: installId,
      event_name: 'install',
      install_uuid: uuid1,
      ts_ms: Date.now() + 30_000,
      platform: 'ios',
      attribution: { click_id: clickId },
    },
    {
      event_id: `purchase-${randomUUID()}`,
      event_name: 'purchase',
      install_uuid: uuid1,
      ts_ms: Date.now() + 31_000,
      revenue_usd: 4.99,
      platform: 'ios',
      properties: { sku: 'gold' },
    },
  ];
  await send(client, first);
  await client.sendEvents(first); // the SDK did not hear the answer: the same events again
  organicInstallId = `install-${randomUUID()}`;
  await send(eventClientFrom(stack.baseUrl, a, OTHER_IP), [
    { event_id: organicInstallId, event_name: 'install', install_uuid: uuid2, ts_ms: Date.now(), platform: 'android' },
    ...Array.from({ length: 8 }, (_, n) => ({
      event_id: `level-${n}-${randomUUID()}`,
      event_name: 'level_up',
      install_uuid: uuid2,
      ts_ms: Date.now() + n,
      platform: 'android' as const,
    })),
  ]);
  await eventClientFrom(stack.baseUrl, b, OTHER_IP).sendEvents([
    { event_id: `b-install-${randomUUID()}`, event_name: 'install', install_uuid: randomUUID(), ts_ms: Date.now(), platform: 'ios' },
  ]);
  const postback = await fetch(`${stack.baseUrl}/skan-postback`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(SKADNETWORK_EXAMPLES[0]?.postback),
  });
  expect(postback.status).toBe(200);
  await stack.pollers.drain();

  // Every app and the SKAN postbacks; it waits for the stream to be final up to now.
  firstRun = await runAdmin(['export', 'run']);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

describe('admin export run against the local runtime', () => {
  it('writes every accepted event of the app once, the batch sent twice included, and the count the run printed', async () => {
    const events = await rows('events', a.app.app_id);
    expect(events.map((row) => row.event_id).sort()).toEqual([...sent.keys()].sort());
    const tables = firstRun.tables as Record<string, { files: string[]; rows: number }>;
    expect(tables.events?.rows).toBe(sent.size + 1); // b's install too
    expect(tables.events?.files.every((key) => key.startsWith('events/app_id=') && key.endsWith('/part-00000.parquet'))).toBe(true);
    const held = events.find((row) => row.event_id === heldPurchaseId);
    expect(held).toMatchObject({ revenue_usd: 1.25, revenue_micros: 1_250_000, partner: null, install_event_id: null });
    expect((await rows('events', b.app.app_id)).length).toBe(1);
  });

  it('writes each counted install with its decision and why', async () => {
    const installs = await rows('installs', a.app.app_id);
    expect(installs.map((row) => row.install_event_id).sort()).toEqual([installId, organicInstallId].sort());
    const clicked = installs.find((row) => row.install_event_id === installId);
    expect(clicked).toMatchObject({
      partner: 'acme_ads',
      campaign: 'spring',
      attribution_type: 'deterministic',
      rule: 'click_id',
      click_id: clickId,
      ext_click_id: 'ext-export',
      sub1: 'creative_a',
      first_install: true,
      fraud_reasons: '[]',
    });
    expect(String(clicked?.explanation)).toContain(`click ${clickId}`);
    expect(JSON.parse(String(clicked?.decision))).toMatchObject({ click_id: clickId, rule: 'click_id' });
    expect(installs.find((row) => row.install_event_id === organicInstallId)).toMatchObject({
      partner: 'organic',
      explanation: 'organic: no click matched',
    });
  });

  it('writes the click without its address: no IP anywhere in the file’s bytes', async () => {
    const files = await objects(`clicks/app_id=${a.app.app_id}/`);
    expect(files.size).toBeGreaterThan(0);
    for (const bytes of files.values()) {
      const text = Buffer.from(bytes).toString('latin1');
      expect(text).not.toContain(DEVICE_IP);
      expect(text).not.toContain('198.51.100.');
    }
    expect(await rows('clicks', a.app.app_id)).toEqual([
      expect.objectContaining({ click_id: clickId, partner: 'acme_ads', ext_click_id: 'ext-export', sub1: 'creative_a', platform: 'ios' }),
    ]);
  });

  it('writes the SKAN postback, verified, under app_id=_unmatched', async () => {
    expect(await rows('skan_postbacks', UNMATCHED_APP_ID)).toEqual([
      expect.objectContaining({ kind: 'skadnetwork', verified: true, transaction_id: SKADNETWORK_EXAMPLES[0]?.postback['transaction-id'] }),
    ]);
  });

  it('keeps a checkpoint per app', async () => {
    const checkpoint = await objects(checkpointKey(a.app.app_id));
    expect(JSON.parse(Buffer.from([...checkpoint.values()][0] ?? []).toString())).toMatchObject({
      stream_after: expect.stringMatching(/\.jsonl\.gz$/),
    });
  });

  it('reads back with DuckDB over the same files: one row per accepted event, partitions from the path', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'export-duckdb-'));
    try {
      for (const [key, bytes] of await objects('events/')) {
        mkdirSync(dirname(join(dir, key)), { recursive: true });
        writeFileSync(join(dir, key), bytes);
      }
      const duckdb = await (await DuckDBInstance.create(':memory:')).connect();
      const read = await duckdb.runAndReadAll(
        `SELECT app_id, count(*) AS events, count(DISTINCT event_id) AS ids FROM read_parquet('${dir}/events/*/*/*/*.parquet', hive_partitioning = true) GROUP BY app_id ORDER BY app_id`,
      );
      expect(read.getRowObjectsJS()).toEqual(
        [
          { app_id: a.app.app_id, events: BigInt(sent.size), ids: BigInt(sent.size) },
          { app_id: b.app.app_id, events: 1n, ids: 1n },
        ].sort((x, y) => x.app_id.localeCompare(y.app_id)),
      );
      duckdb.closeSync();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('replaces the files with the same ones when an hour is exported again, by --hour or by the hourly schedule', async () => {
    const before = await objects('events/');
    const hours = [...before.keys()].map((key) => {
      const [, day, hour] = /dt=([\d-]+)\/hour=(\d\d)\//.exec(key) ?? [];
      return `${day}T${hour}`;
    });
    for (const hour of new Set(hours)) {
      const again = await runAdmin(['export', 'run', '--app-key', a.app.app_key, '--hour', hour]);
      expect((again.tables as Record<string, { rows: number }>).events?.rows).toBeGreaterThan(0);
    }
    expect(await objects('events/')).toEqual(before);
    // Nothing new since: the hourly function, under its own grants, changes no event file.
    await runAdmin(['schedule', 'run', 'export']);
    expect(await objects('events/')).toEqual(before);
  });

  it('adds an event received after the last run to its hour’s file in the next run', async () => {
    const late = {
      event_id: `late-${randomUUID()}`,
      event_name: 'level_up',
      install_uuid: randomUUID(),
      ts_ms: Date.now(),
      platform: 'ios' as const,
    };
    await send(eventClientFrom(stack.baseUrl, a, OTHER_IP), [late]);
    await stack.pollers.drain();
    const run = await runAdmin(['export', 'run', '--app-key', a.app.app_key]);
    expect(run.app_id).toBe(a.app.app_id);
    expect((await rows('events', a.app.app_id)).map((row) => row.event_id).sort()).toEqual([...sent.keys()].sort());
  });

  it('refuses an hour that is not one', async () => {
    await expect(runAdmin(['export', 'run', '--hour', '2026-02-30T10'])).rejects.toThrow('--hour must be a UTC hour, YYYY-MM-DDTHH');
  });
});
