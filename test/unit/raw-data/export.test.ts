import fc from 'fast-check';
import { MemoryExportWorld } from '../../../functions/adapters/memory/export-stores';
import { type ExportRunInput, RECORD_SETTLE_MS, runExport, STEP_BYTES } from '../../../functions/domain/raw-data/export';
import { checkpointKey, exportFileKey, HOUR_MS, hourOf } from '../../../functions/domain/raw-data/export-layout';
import { decodeTable } from '../../../functions/domain/raw-data/export-parquet';
import type { ExportRow } from '../../../functions/domain/raw-data/export-rows';
import { type StreamLine, streamName } from '../../../functions/domain/raw-data/stream-objects';
import { RAW_TABLE_NAMES, type RawTableName, UNMATCHED_APP_ID } from '../../../functions/domain/raw-data/tables';
import { type LaneOpening, STREAM_SETTLE_MS } from '../../../functions/domain/raw-data/watermark';
import type { PostbackRecord } from '../../../functions/domain/skan/postback-record';
import { APP, click, OTHER_APP, streamLine } from './export-fixtures';

const H0 = Date.UTC(2026, 2, 10, 9); // 2026-03-10T09:00Z
const MIN = 60_000;

function run(world: MemoryExportWorld, nowMs: number, input: Partial<ExportRunInput> = {}) {
  return runExport(world.ports(), { apps: [{ app_id: APP, created_ms: H0 - HOUR_MS }], lanes: [], nowMs, skan: false, ...input });
}

let seq = 0;
/** A stream object of the app opened at `openedMs` on `lane`. */
function object(
  world: MemoryExportWorld,
  openedMs: number,
  lines: readonly StreamLine[],
  options: { appId?: string; lane?: number; size?: number } = {},
) {
  seq += 1;
  const name = streamName({ openedMs, lane: options.lane ?? 0, seq });
  world.putStream(options.appId ?? APP, name, lines, options.size);
  return name;
}

/** Every row of a table's files, each with the partition it was read from. */
async function rowsOf(world: MemoryExportWorld, table: RawTableName): Promise<(ExportRow & { partition: string })[]> {
  const rows: (ExportRow & { partition: string })[] = [];
  for (const [key, bytes] of [...world.files].sort(([a], [b]) => a.localeCompare(b))) {
    if (!key.startsWith(`${table}/`)) continue;
    const partition = /app_id=([^/]+)\/dt=([\d-]+)\/hour=(\d\d)\//.exec(key);
    for (const row of await decodeTable(bytes)) rows.push({ ...row, partition: `${partition?.[1]}/${partition?.[2]}T${partition?.[3]}` });
  }
  return rows;
}

const ids = (rows: readonly ExportRow[], column = 'event_id') => rows.map((row) => row[column]);

describe('the warehouse export', () => {
  it('writes each receive hour of events and installs as one file per table, and the checkpoint it reached', async () => {
    const world = new MemoryExportWorld();
    const last = object(world, H0 + 5 * MIN, [streamLine('i1', H0 + MIN, { name: 'install' }), streamLine('e1', H0 + 2 * MIN)]);
    object(world, H0 + HOUR_MS + MIN, [streamLine('e2', H0 + HOUR_MS + 30_000)], { lane: 1 });
    const summary = await run(world, H0 + HOUR_MS + 7 * MIN);

    expect(summary.tables.events).toMatchObject({
      rows: 3,
      files: [exportFileKey('events', APP, '2026-03-10T09'), exportFileKey('events', APP, '2026-03-10T10')],
    });
    expect(summary.tables.installs).toMatchObject({ rows: 1, files: [exportFileKey('installs', APP, '2026-03-10T09')] });
    expect(summary.tables.installs.deleted).toBe(1); // 10:00 has no install: no file
    const events = await rowsOf(world, 'events');
    expect(events.map((row) => [row.event_id, row.partition])).toEqual([
      ['i1', `${APP}/2026-03-10T09`],
      ['e1', `${APP}/2026-03-10T09`],
      ['e2', `${APP}/2026-03-10T10`],
    ]);
    expect(ids(await rowsOf(world, 'installs'), 'install_event_id')).toEqual(['i1']);
    expect(world.checkpoints.get(APP)).toEqual({
      stream_after: expect.any(String),
      watermark_ms: H0 + HOUR_MS + 7 * MIN - STREAM_SETTLE_MS,
      records_ms: H0 + HOUR_MS + 7 * MIN,
    });
    expect((world.checkpoints.get(APP)?.stream_after ?? '') > last).toBe(true);
  });

  it('exports a late event’s receive hour again in a later run, from all of the hour’s objects', async () => {
    const world = new MemoryExportWorld();
    object(world, H0 + 5 * MIN, [streamLine('e1', H0 + MIN)]);
    await run(world, H0 + HOUR_MS + 7 * MIN);
    object(world, H0 + 5 * HOUR_MS, [streamLine('late', H0 + 50 * MIN), streamLine('e9', H0 + 5 * HOUR_MS - MIN)]);
    const summary = await run(world, H0 + 5 * HOUR_MS + 7 * MIN);

    expect(summary.tables.events.files).toEqual([
      exportFileKey('events', APP, '2026-03-10T09'),
      exportFileKey('events', APP, '2026-03-10T13'),
    ]);
    expect((await rowsOf(world, 'events')).map((row) => [row.event_id, row.partition])).toEqual([
      ['e1', `${APP}/2026-03-10T09`],
      ['late', `${APP}/2026-03-10T09`],
      ['e9', `${APP}/2026-03-10T13`],
    ]);
  });

  it('reads nothing at or above the app’s watermark: an open apply of the app holds it back, another app’s does not', async () => {
    const stream = () => {
      const world = new MemoryExportWorld();
      object(world, H0 + MIN, [streamLine('e1', H0 + 30_000)]);
      object(world, H0 + 3 * MIN, [streamLine('e2', H0 + 2 * MIN)]);
      return world;
    };
    const open = (apps: string[]): LaneOpening[] => [{ seq: 5, applied: 4, openedMs: H0 + 3 * MIN, apps }];

    const world = stream();
    await run(world, H0 + 10 * MIN, { lanes: open([OTHER_APP]) });
    expect(ids(await rowsOf(world, 'events'))).toEqual(['e1', 'e2']);

    const held = stream();
    await run(held, H0 + 10 * MIN, { lanes: open([APP]) });
    expect(ids(await rowsOf(held, 'events'))).toEqual(['e1']);
    await run(held, H0 + 20 * MIN);
    expect(ids(await rowsOf(held, 'events'))).toEqual(['e1', 'e2']);
  });

  it('reads an event whose receive time is a little after its object’s opening time (two hosts’ clocks)', async () => {
    const world = new MemoryExportWorld();
    object(world, H0 - 1_000, [streamLine('early', H0 - 2_000)]);
    object(world, H0 - 500, [streamLine('skewed', H0 + 200)], { lane: 1 }); // opened 0.5 s before its event was received
    await run(world, H0 + MIN);
    object(world, H0 + 2 * MIN, [streamLine('e2', H0 + MIN)], { lane: 2 }); // 09:00 again: read from before its start
    await run(world, H0 + 4 * MIN);
    expect((await rowsOf(world, 'events')).map((row) => [row.event_id, row.partition])).toEqual([
      ['early', `${APP}/2026-03-10T08`],
      ['skewed', `${APP}/2026-03-10T09`],
      ['e2', `${APP}/2026-03-10T09`],
    ]);
  });

  it('exports one hour again with --hour, from every object of it, leaving the checkpoint alone; an hour left without rows loses its file', async () => {
    const world = new MemoryExportWorld();
    const name = object(world, H0 + 5 * MIN, [streamLine('e1', H0 + MIN)]);
    await run(world, H0 + 10 * MIN);
    const checkpoint = world.checkpoints.get(APP);
    world.stream.delete(`stream/${APP}/${name}`); // a privacy deletion emptied it
    const summary = await run(world, H0 + 20 * MIN, { hour: '2026-03-10T09' });
    expect(summary.tables.events).toMatchObject({ files: [], rows: 0, deleted: 1 });
    expect(world.files.has(exportFileKey('events', APP, '2026-03-10T09'))).toBe(false);
    expect(world.checkpoints.get(APP)).toEqual(checkpoint);
  });

  it('exports the clicks of the hours since the last run (less the settle time), through the hour index, without their address', async () => {
    const world = new MemoryExportWorld();
    world.clicks.push(click('Ck1', H0 + MIN), click('Ck2', H0 + HOUR_MS + MIN), click('Ck3', H0 + MIN, OTHER_APP));
    await run(world, H0 + 30 * MIN);
    expect((await rowsOf(world, 'clicks')).map((row) => [row.click_id, row.partition])).toEqual([['Ck1', `${APP}/2026-03-10T09`]]);
    expect(world.checkpoints.get(APP)?.records_ms).toBe(H0 + 30 * MIN);

    world.clicks.push(click('Ck0', H0 + 29 * MIN + 30_000)); // written while the last run read its hour
    const summary = await run(world, H0 + HOUR_MS + 7 * MIN);
    expect(summary.tables.clicks.files).toEqual([
      exportFileKey('clicks', APP, '2026-03-10T09'),
      exportFileKey('clicks', APP, '2026-03-10T10'),
    ]);
    expect(ids(await rowsOf(world, 'clicks'), 'click_id')).toEqual(['Ck1', 'Ck0', 'Ck2']);
    for (const bytes of world.files.values()) expect(Buffer.from(bytes).toString('latin1')).not.toContain('203.0.113');
    expect(RECORD_SETTLE_MS).toBeGreaterThanOrEqual(MIN);
  });

  it('exports SKAN postbacks under app_id=_unmatched in a run over every app, and not in an app’s own run', async () => {
    const world = new MemoryExportWorld();
    const record: PostbackRecord = {
      record_version: 1,
      kind: 'skadnetwork',
      transaction_id: 't-1',
      received_ms: H0 + MIN,
      verified: true,
      key_id: 'skadnetwork/p-256',
      version: '4.0',
      signed: { 'ad-network-id': 'x.skadnetwork', 'source-identifier': '12' },
      unverified: { 'conversion-value': 7 },
      signature: 'sig',
    };
    world.postbacks.push(record);
    await run(world, H0 + 10 * MIN, { skan: false });
    expect(await rowsOf(world, 'skan_postbacks')).toEqual([]);
    const summary = await run(world, H0 + 10 * MIN, { skan: true });
    expect(summary.tables.skan_postbacks.files).toEqual([exportFileKey('skan_postbacks', UNMATCHED_APP_ID, '2026-03-10T09')]);
    expect(await rowsOf(world, 'skan_postbacks')).toEqual([
      expect.objectContaining({ transaction_id: 't-1', verified: true, ad_network_id: 'x.skadnetwork', conversion_value: 7 }),
    ]);
    expect(world.checkpoints.get(UNMATCHED_APP_ID)?.records_ms).toBe(H0 + 10 * MIN);
    expect(checkpointKey(UNMATCHED_APP_ID)).toBe('_export/_unmatched.json');
  });

  it('does not rewrite an hour whose source no longer holds all of it', async () => {
    const world = new MemoryExportWorld();
    world.clicks.push(click('Ck1', H0 + MIN));
    const summary = await run(world, H0 + 3 * 24 * HOUR_MS, { hour: '2026-03-10T09' });
    expect(summary.tables.clicks).toMatchObject({ files: [], skipped: 1 });
    expect(summary.tables.events).toMatchObject({ skipped: 0 });
    const old = await run(world, H0 + 40 * 24 * HOUR_MS, { hour: '2026-03-10T09' });
    expect(old.tables.events).toMatchObject({ skipped: 1, deleted: 0 });
  });

  it('reads a backlog in steps of bounded size, each ending with an hour of opening times and moving the checkpoint', async () => {
    const world = new MemoryExportWorld();
    for (let n = 0; n < 5; n++) object(world, H0 + n * HOUR_MS + 1_000, [streamLine(`e${n}`, H0 + n * HOUR_MS)], { size: STEP_BYTES / 2 });
    for (let n = 5; n < 8; n++)
      object(world, H0 + 4 * HOUR_MS + n * MIN, [streamLine(`e${n}`, H0 + 4 * HOUR_MS + n * MIN)], { size: STEP_BYTES });
    const puts: string[] = [];
    const ports = world.ports();
    const summary = await runExport(
      {
        ...ports,
        checkpoints: {
          get: ports.checkpoints.get,
          put: async (app, checkpoint) => void puts.push(`${app}:${checkpoint.stream_after.slice(0, 13)}`),
        },
      },
      { apps: [{ app_id: APP, created_ms: 0 }], lanes: [], nowMs: H0 + 5 * HOUR_MS, skan: false },
    );
    expect(puts).toEqual([
      `${APP}:${String(H0 + HOUR_MS + 1_000).padStart(13, '0')}`,
      `${APP}:${String(H0 + 3 * HOUR_MS + 1_000).padStart(13, '0')}`,
      `${APP}:${String(H0 + 4 * HOUR_MS + 7 * MIN).padStart(13, '0')}`,
    ]);
    expect(summary.tables.events.rows).toBe(8); // each hour written once
    expect(ids(await rowsOf(world, 'events'))).toEqual(['e0', 'e1', 'e2', 'e3', 'e4', 'e5', 'e6', 'e7']);
  });

  it('leaves apps for the next run when out of time, and starts it with them', async () => {
    const world = new MemoryExportWorld();
    const apps = [
      { app_id: APP, created_ms: 0 },
      { app_id: OTHER_APP, created_ms: 0 },
    ];
    const first = await run(world, H0, { apps, deadlineMs: 0 });
    expect(first).toMatchObject({ apps: 0, unfinished: [APP, OTHER_APP] });
    world.checkpoints.set(APP, { stream_after: '', watermark_ms: 0, records_ms: H0 - MIN });
    const order: string[] = [];
    const ports = world.ports();
    await runExport(
      {
        ...ports,
        clicks: {
          ofHour: async (app, hour) => {
            order.push(app);
            return ports.clicks.ofHour(app, hour);
          },
        },
      },
      { apps, lanes: [], nowMs: H0, skan: false },
    );
    expect(order[0]).toBe(OTHER_APP); // never exported: first
  });

  it('exports every line exactly once, in its receive hour, however the runs fall; and exporting again changes no file', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            receivedAt: fc.integer({ min: 0, max: 6 * HOUR_MS }),
            delay: fc.oneof(fc.integer({ min: 0, max: 20_000 }), fc.integer({ min: 0, max: 3 * HOUR_MS })),
            skew: fc.integer({ min: 0, max: 30_000 }),
            lane: fc.integer({ min: 0, max: 3 }),
            install: fc.boolean(),
          }),
          { minLength: 1, maxLength: 40 },
        ),
        fc.array(fc.integer({ min: 0, max: 10 * HOUR_MS }), { maxLength: 5 }),
        fc.constantFrom(1_000, STEP_BYTES / 3),
        async (events, runsAt, size) => {
          const world = new MemoryExportWorld();
          const objects = new Map<string, { openedMs: number; lane: number; lines: StreamLine[] }>();
          events.forEach((event, n) => {
            const receivedMs = H0 + event.receivedAt;
            const openedMs = Math.ceil((receivedMs + event.delay) / 10_000) * 10_000 - event.skew;
            const key = `${openedMs}/${event.lane}`;
            const found = objects.get(key) ?? { openedMs, lane: event.lane, lines: [] };
            found.lines.push(streamLine(`e${n}`, receivedMs, event.install ? { name: 'install', install: n } : { install: n }));
            objects.set(key, found);
          });
          for (const { openedMs, lane, lines } of objects.values()) object(world, openedMs, lines, { lane, size });

          for (const at of [...runsAt].sort((a, b) => a - b)) await run(world, H0 + at);
          const endMs = H0 + 10 * HOUR_MS + 10 * MIN;
          await run(world, endMs);

          const exported = await rowsOf(world, 'events');
          expect(ids(exported).sort()).toEqual(events.map((_, n) => `e${n}`).sort());
          for (const row of exported) expect(row.partition).toBe(`${APP}/${hourOf(Number(row.received_ms))}`);
          const installs = await rowsOf(world, 'installs');
          expect(ids(installs, 'install_event_id').sort()).toEqual(events.flatMap((event, n) => (event.install ? [`e${n}`] : [])).sort());

          const before = new Map(world.files);
          await run(world, endMs + HOUR_MS);
          for (const hour of new Set(exported.map((row) => hourOf(Number(row.received_ms))))) await run(world, endMs, { hour });
          expect(world.files).toEqual(before);
        },
      ),
      { numRuns: 40 },
    );
  });

  it("exports the other apps when one app's export fails, and names that app with its error", async () => {
    const POISONED = 'app_poisoned0000000000000';
    const apps = [APP, POISONED, OTHER_APP].map((app_id) => ({ app_id, created_ms: 0 }));
    const shared = new MemoryExportWorld();
    for (const [appId, id] of [
      [APP, 'a1'],
      [POISONED, 'p1'],
      [OTHER_APP, 'o1'],
    ] as const)
      object(shared, H0 + 5 * MIN, [streamLine(id, H0 + MIN)], { appId });
    const broken = new Error('a row nobody foresaw');
    const base = shared.ports();
    const ports = {
      ...base,
      clicks: {
        ofHour: async (app: string, hour: string) => {
          if (app === POISONED) throw broken;
          return base.clicks.ofHour(app, hour);
        },
      },
    };
    const summary = await runExport(ports, { apps, lanes: [], nowMs: H0 + HOUR_MS + 7 * MIN, skan: false });
    expect(summary).toMatchObject({ apps: 2, unfinished: [], failed: [{ app_id: POISONED, error: broken }] });
    expect(ids(await rowsOf(shared, 'events')).sort()).toEqual(['a1', 'o1']);
    expect([...shared.checkpoints.keys()].sort()).toEqual([APP, OTHER_APP].sort());
    // One hour again (--hour): the same.
    const again = await runExport(ports, { apps, lanes: [], nowMs: H0 + HOUR_MS + 7 * MIN, skan: false, hour: hourOf(H0) });
    expect(again).toMatchObject({ apps: 2, failed: [{ app_id: POISONED, error: broken }] });
  });

  it('counts every table in the summary', async () => {
    const summary = await run(new MemoryExportWorld(), H0);
    expect(Object.keys(summary.tables)).toEqual([...RAW_TABLE_NAMES]);
  });
});
