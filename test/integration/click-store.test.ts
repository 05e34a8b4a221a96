// The click log (docs/adr/0008, section 2 revised: one click log table, no index) against dynalite,
// its tables made from the manifest as the local runtime makes them: the latest click of an (app,
// IP, platform) across hours and shards held to an independent answer, safe when two addresses
// share a hash, and every read falling back to the old clicks table for the clicks recorded there.

import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import dynalite from 'dynalite';
import fc from 'fast-check';
import { ClickStore } from '../../functions/adapters/click-store';
import { appHourKey, appIpPlatform, type ClickRecord } from '../../functions/domain/links/click';
import { clickLogKey, encodeClickId, ipPlatformHash, newClickId } from '../../functions/domain/links/click-log-key';
import type { Platform } from '../../functions/domain/links/platform';
import { dynamoClient } from '../../functions/shared/clients';
import { tables } from '../../lib/manifest';
import { createTable, localCredentials } from '../../local/provision';

const HOUR = 3_600_000;
const T0 = Date.parse('2026-11-28T12:00:00Z');
const TABLES = { log: 'click_log', legacy: 'clicks' };
/** The old clicks table of a deployment made after click_log: never written. */
const EMPTY_LEGACY = 'clicks_never_written';

let server: Server;
let dir: string;
const saved = { ...process.env };

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'click-store-'));
  server = dynalite({ path: dir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  Object.assign(process.env, {
    AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${port}`,
    AWS_ACCESS_KEY_ID: localCredentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: localCredentials.secretAccessKey,
  });
  const admin = new DynamoDBClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, credentials: localCredentials });
  await createTable(admin, TABLES.log, tables.click_log);
  await createTable(admin, TABLES.legacy, tables.clicks);
  await createTable(admin, EMPTY_LEGACY, tables.clicks);
  admin.destroy();
});
afterAll(async () => {
  process.env = saved;
  await new Promise((resolve) => server?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

let apps = 0;
const freshApp = () => `app_cs${++apps}`;

/** A click as the redirect records it, its id made by `makeId` (newClickId unless a test forces a hash). */
function clickOf(
  appId: string,
  ip: string,
  platform: Platform,
  tsMs: number,
  makeId: (tsMs: number, key: string) => string = (ts, key) => newClickId({ tsMs: ts, appIpPlatform: key }),
): ClickRecord {
  const key = appIpPlatform(appId, ip, platform);
  return {
    click_id: makeId(tsMs, key),
    link_id: 'lnk_1',
    app_id: appId,
    company_id: 'co_1',
    partner: 'meta',
    ip,
    ip_block: `${ip}/32`,
    user_agent: 'ua',
    platform,
    ts_ms: tsMs,
    app_ip_platform: key,
    lookback_days: 7,
    count_day: new Date(tsMs).toISOString().slice(0, 10),
    expires_at: Math.floor(tsMs / 1000) + 100 * 86_400,
  };
}

/** A click an earlier release wrote to the old clicks table: a 22-character id, its by_app_hour key. */
async function legacyClick(appId: string, ip: string, platform: Platform, tsMs: number): Promise<ClickRecord> {
  const click = { ...clickOf(appId, ip, platform, tsMs), click_id: `old${String(tsMs).slice(-8)}${appId.slice(-4)}xxxxxxx`.slice(0, 22) };
  const appHour = appHourKey(appId, new Date(tsMs).toISOString().slice(0, 13), '3');
  await dynamoClient().send(new PutCommand({ TableName: TABLES.legacy, Item: { ...click, app_hour: appHour } }));
  return click;
}

const ADDRESSES = ['203.0.113.1', '203.0.113.2', '2001:db8::7'] as const;
const PLATFORMS: readonly Platform[] = ['ios', 'android'];

describe('the latest click of an (app, IP, platform) in click_log', () => {
  it('is the newest live one of the window, across hours and shards, as an independent search of the clicks finds it', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(
          fc.record({
            offsetMs: fc.integer({ min: -30 * HOUR, max: 0 }),
            ip: fc.constantFrom(...ADDRESSES),
            platform: fc.constantFrom(...PLATFORMS),
            expired: fc.boolean(),
          }),
          { selector: (draw) => draw.offsetMs, maxLength: 12 },
        ),
        fc.constantFrom(...ADDRESSES),
        fc.constantFrom(...PLATFORMS),
        fc.integer({ min: 0, max: 26 * HOUR }),
        fc.boolean(),
        async (draws, ip, platform, spanMs, oneHash) => {
          const appId = freshApp();
          // oneHash: every address and platform of the app hashes alike, so they share a partition and a range.
          const iphOf = oneHash ? () => 'abcd' : ipPlatformHash;
          const store = new ClickStore(TABLES, { iphOf });
          const makeId = (tsMs: number, key: string) =>
            encodeClickId({ tsMs, iph: iphOf(key), random: new Uint8Array(18).fill(tsMs % 251) });
          const clicks = draws.map((draw) => {
            const click = clickOf(appId, draw.ip, draw.platform, T0 + draw.offsetMs, makeId);
            return draw.expired ? { ...click, expires_at: Math.floor(T0 / 1000) - 1 } : click;
          });
          for (const click of clicks) await store.record(click);
          const toMs = T0;
          const fromMs = T0 - spanMs;
          const expected = clicks
            .filter((c) => c.ip === ip && c.platform === platform && c.ts_ms >= fromMs && c.ts_ms <= toMs && c.expires_at * 1000 > T0)
            .sort((a, b) => b.ts_ms - a.ts_ms)[0];
          expect(await store.latest({ appId, ip, platform, fromMs, toMs }, T0)).toEqual(expected);
          // Another app never sees them.
          expect(await store.latest({ appId: freshApp(), ip, platform, fromMs, toMs }, T0)).toBeUndefined();
        },
      ),
      { numRuns: 12 },
    );
  });

  it('finds a click by its app and id with one read of the key the id names, and not by another app', async () => {
    const appId = freshApp();
    const store = new ClickStore(TABLES);
    const click = clickOf(appId, '198.51.100.4', 'android', T0 - 5 * HOUR);
    await store.record(click);
    const key = clickLogKey(appId, click.click_id);
    expect((await dynamoClient().send(new GetCommand({ TableName: TABLES.log, Key: key }))).Item).toEqual({ ...click, ...key });
    expect(await store.byId(appId, click.click_id, 0)).toEqual(click);
    expect(await store.byId('app_other', click.click_id, 0)).toBeUndefined();
    // Expired by the store's own filter (DynamoDB's TTL deletes it some time later).
    expect(await store.byId(appId, click.click_id, (click.expires_at + 1) * 1000)).toBeUndefined();
    await expect(store.record({ ...click, click_id: 'not-a-click-log-id' })).rejects.toThrow(/does not encode/);
  });
});

describe('a click an earlier release recorded in the old clicks table', () => {
  it('is found by id, by the latest look-up when click_log has none, in its hour, by the lane when asked, and deleted', async () => {
    const appId = freshApp();
    const store = new ClickStore(TABLES);
    const old = await legacyClick(appId, '192.0.2.8', 'ios', T0 - 3 * HOUR);
    const window = { appId, ip: '192.0.2.8', platform: 'ios' as const, fromMs: T0 - 24 * HOUR, toMs: T0 };
    expect(await store.byId(appId, old.click_id, 0)).toEqual(old);
    expect(await store.latest(window, 0)).toEqual(old);

    // A click_log click of the same address is taken first: the new table is read first.
    const fresh = clickOf(appId, '192.0.2.8', 'ios', T0 - 4 * HOUR);
    await store.record(fresh);
    expect(await store.latest(window, 0)).toEqual(fresh);

    const hour = new Date(old.ts_ms).toISOString().slice(0, 13);
    expect(await store.ofHour(appId, hour)).toEqual([old]);
    const freshHour = new Date(fresh.ts_ms).toISOString().slice(0, 13);
    expect(await store.ofHour(appId, freshHour)).toEqual([fresh]);
    expect((await store.clicksAfter(appId, hour, 0, true)).map((c) => [c.click_id, c.legacy])).toEqual([[old.click_id, true]]);
    expect(await store.clicksAfter(appId, hour, 0, false)).toEqual([]);
    expect((await store.clicksAfter(appId, freshHour, fresh.ts_ms, false)).map((c) => c.click_id)).toEqual([fresh.click_id]);
    expect(await store.clicksAfter(appId, freshHour, fresh.ts_ms + 1, true)).toEqual([]);

    expect(await store.deleteMany(appId, [old.click_id, fresh.click_id])).toBe(2);
    expect(await store.byId(appId, old.click_id, 0)).toBeUndefined();
    expect(await store.byId(appId, fresh.click_id, 0)).toBeUndefined();
    expect(await store.latest(window, 0)).toBeUndefined();
  });

  it('tells the click-count lane whether the old table holds any click (legacyHolds)', async () => {
    const fresh = new ClickStore({ log: TABLES.log, legacy: EMPTY_LEGACY });
    await fresh.record(clickOf(freshApp(), '192.0.2.9', 'ios', T0));
    expect(await fresh.legacyHolds()).toBe(false);
    await legacyClick(freshApp(), '192.0.2.10', 'android', T0 - HOUR);
    expect(await new ClickStore(TABLES).legacyHolds()).toBe(true);
  });
});
