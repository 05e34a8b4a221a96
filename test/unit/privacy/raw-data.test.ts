import fc from 'fast-check';
import { tokenOf } from '../../../functions/domain/aggregation/lease';
import {
  ERASED_LINE,
  eraseRawData,
  FINAL_WAIT_MS,
  type InstallRawData,
  STREAM_SEARCH_DAYS,
  searchWindows,
  streamWithout,
} from '../../../functions/domain/privacy/raw-data';
import { runExport } from '../../../functions/domain/raw-data/export';
import { exportFileKey, HOUR_MS } from '../../../functions/domain/raw-data/export-layout';
import { decodeTable, encodeTable } from '../../../functions/domain/raw-data/export-parquet';
import { clickRow, eventRow, installRow } from '../../../functions/domain/raw-data/export-rows';
import { readStreamPage, type StreamCursor } from '../../../functions/domain/raw-data/stream';
import type { StreamLine } from '../../../functions/domain/raw-data/stream-objects';
import { APP, auditKeyOf, click, DAY, GONE, line, MIN, RawWorld, uuidOf } from './raw-data-fixtures';

const request = (fields: Partial<InstallRawData>): InstallRawData => ({
  appId: APP,
  installUuid: GONE,
  counted: [],
  hours: new Set(),
  hoursUnknown: [],
  clicks: [],
  ...fields,
});

describe("erasing the install's stream lines", () => {
  it('erases its lines in place, drops erased lines at the end, and leaves nothing for an object of its lines only', () => {
    const key = auditKeyOf('a');
    const [g1, k1, g2, k2, g3] = [
      line('g1', GONE, DAY, key),
      line('k1', uuidOf(1), DAY, key),
      line('g2', GONE.toUpperCase(), DAY, key),
      line('k2', uuidOf(2), DAY, key),
      line('g3', GONE, DAY, key),
    ];
    expect(streamWithout([g1, k1, g2, k2, g3], GONE)).toEqual({ lines: [ERASED_LINE, k1, ERASED_LINE, k2], removed: [g1, g2, g3] });
    expect(streamWithout([k1, g1, ERASED_LINE, g2], GONE)).toEqual({ lines: [k1], removed: [g1, g2] });
    expect(streamWithout([g1, ERASED_LINE, g3], GONE)).toEqual({ lines: [], removed: [g1, g3] });
    expect(streamWithout([ERASED_LINE, k1, k2], GONE)).toBeUndefined();
  });

  it("finds the object of each audit object's apply by its mark and erases the install's lines there only", async () => {
    const world = new RawWorld();
    const [mine, shared] = [auditKeyOf('mine'), auditKeyOf('shared')];
    const other = auditKeyOf('other');
    const first = world.apply(DAY + MIN, [line('i', GONE, DAY, mine, true), line('p', GONE, DAY, mine)]);
    const second = world.apply(DAY + 2 * MIN, [line('s', GONE, DAY + MIN, shared), line('k', uuidOf(1), DAY + MIN, shared)]);
    const untouched = world.apply(DAY + 3 * MIN, [line('o', uuidOf(2), DAY + 2 * MIN, other)]);

    const outcome = await eraseRawData(world.ports(), request({ counted: [mine, shared] }), world.clock);
    expect(world.reads.sort()).toEqual([first, second].sort());
    expect(world.stream.objects.has(first)).toBe(false);
    expect(world.stream.objects.get(second)).toEqual([ERASED_LINE, line('k', uuidOf(1), DAY + MIN, shared)]);
    expect(world.stream.objects.get(untouched)).toEqual([line('o', uuidOf(2), DAY + 2 * MIN, other)]);
    expect(outcome).toEqual({
      counts: expect.objectContaining({ stream_objects_deleted: 1, stream_objects_rewritten: 1, stream_lines: 3 }),
      pending: new Set(),
    });
  });

  it('reads the stream from the receive day on, for STREAM_SEARCH_DAYS, when the mark is gone or names no opening time', async () => {
    const world = new RawWorld();
    const expired = auditKeyOf('expired');
    const older = auditKeyOf('older');
    const inWindow = world.apply(DAY + 23 * HOUR_MS, [line('a', GONE, DAY + 22 * HOUR_MS, expired), line('k', uuidOf(1), DAY, expired)], {
      marks: false,
    });
    // An apply opened a moment before the receive day began (another host's clock) is read too.
    const atTheEdge = world.apply(DAY - 30_000, [line('b', GONE, DAY + 1_000, expired)], { marks: false });
    const tooLate = world.apply(DAY + STREAM_SEARCH_DAYS * 24 * HOUR_MS + MIN, [line('c', GONE, DAY, expired)], { marks: false });
    const before = world.apply(DAY - 2 * MIN, [line('d', GONE, DAY - 3 * MIN, older)], { marks: false });
    // A mark from before the stream: no opening time.
    world.ledger.objectMarks.set(tokenOf(older), { kind: 'included', stamp: { lane: 3, seq: 9 }, appId: APP, journal: {} });

    await eraseRawData(world.ports(), request({ counted: [expired, older] }), world.clock);
    expect(world.stream.objects.get(inWindow)).toEqual([ERASED_LINE, line('k', uuidOf(1), DAY, expired)]);
    expect(world.stream.objects.has(atTheEdge)).toBe(false);
    // Beyond the window (documented: an apply that late whose mark has expired is out of reach), and before it.
    expect(world.stream.objects.has(tooLate)).toBe(true);
    expect(world.stream.objects.has(before)).toBe(true);
    expect(searchWindows([DAY, DAY + 24 * HOUR_MS, DAY + 10 * 24 * HOUR_MS])).toEqual([
      { from: DAY - MIN, to: DAY + (1 + STREAM_SEARCH_DAYS) * 24 * HOUR_MS },
      { from: DAY + 10 * 24 * HOUR_MS - MIN, to: DAY + (10 + STREAM_SEARCH_DAYS) * 24 * HOUR_MS },
    ]);
  });

  it('waits for an object at or above the watermark to become final, and erases it then', async () => {
    const world = new RawWorld();
    const open = auditKeyOf('open');
    const now = world.nowMs;
    const object = world.apply(now - 2 * MIN, [line('b', GONE, now - 3 * MIN, open), line('k', uuidOf(1), now - 3 * MIN, open)]);
    world.lanes = [{ seq: 2, applied: 1, openedMs: now - 2 * MIN, apps: [APP] }];
    world.onPause = () => {
      if (world.nowMs >= now + 5_000) world.lanes = [{ seq: 2, applied: 2 }];
    };
    const outcome = await eraseRawData(world.ports(), request({ counted: [open] }), world.clock);
    expect(outcome.pending).toEqual(new Set());
    expect(world.stream.objects.get(object)).toEqual([ERASED_LINE, line('k', uuidOf(1), now - 3 * MIN, open)]);
    expect(world.nowMs - now).toBeLessThan(FINAL_WAIT_MS);
  });

  it('leaves an object still not final after FINAL_WAIT_MS (at once near the time limit) and names its audit object pending; the next run erases it', async () => {
    const world = new RawWorld();
    const [settled, open] = [auditKeyOf('settled'), auditKeyOf('open')];
    const now = world.nowMs;
    const final = world.apply(now - 5 * MIN, [line('a', GONE, now - 6 * MIN, settled)]);
    const notFinal = world.apply(now - 2 * MIN, [line('b', GONE, now - 3 * MIN, open), line('k', uuidOf(1), now - 3 * MIN, open)], {
      lane: 7,
    });
    // Another app's open apply does not hold this one back; this app's crashed apply does.
    world.lanes = [
      { seq: 9, applied: 8, openedMs: now - 10 * MIN, apps: ['app_other'] },
      { seq: 2, applied: 1, openedMs: now - 2 * MIN, apps: [APP] },
    ];

    const first = await eraseRawData(world.ports(), request({ counted: [settled, open] }), world.clock);
    expect(first.pending).toEqual(new Set([open]));
    expect(world.nowMs - now).toBeGreaterThanOrEqual(FINAL_WAIT_MS);
    expect(world.stream.objects.has(final)).toBe(false);
    expect(world.events()).toEqual(['b', 'k']);

    // A run near its time limit does not wait.
    world.timeLeftMs = 30_000;
    const hurried = world.nowMs;
    expect((await eraseRawData(world.ports(), request({ counted: [open] }), world.clock)).pending).toEqual(new Set([open]));
    expect(world.nowMs).toBe(hurried);

    world.lanes = [{ seq: 2, applied: 2 }];
    const second = await eraseRawData(world.ports(), request({ counted: [open] }), world.clock);
    expect(second.pending).toEqual(new Set());
    expect(world.stream.objects.get(notFinal)).toEqual([ERASED_LINE, line('k', uuidOf(1), now - 3 * MIN, open)]);
  });

  it('keeps a reader in the middle of an object on its place: it never skips nor repeats another install’s event, and reads none of the install after the drain', async () => {
    const installs = [GONE, uuidOf(1), uuidOf(2)];
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(fc.constantFrom(0, 1, 2), { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 6 }),
        fc.integer({ min: 1, max: 4 }),
        fc.nat(12),
        async (objects, limit, pagesBefore) => {
          const world = new RawWorld();
          const counted: string[] = [];
          let n = 0;
          objects.forEach((owners, index) => {
            const auditKey = auditKeyOf(`o${index}`);
            counted.push(auditKey);
            world.apply(
              DAY + (index + 1) * MIN,
              owners.map((owner) => line(`e${n++}`, installs[owner] as string, DAY + index * MIN, auditKey)),
            );
          });
          const others = world.stream
            .lines()
            .filter((stored) => stored.event.install_uuid !== GONE)
            .map((stored) => stored.event.event_id);
          const served: { id: string; install: string; afterDrain: boolean }[] = [];
          let cursor: StreamCursor = { position: { kind: 'start' } };
          let drained = false;
          const drain = async () => {
            await eraseRawData(world.ports(), request({ counted }), world.clock);
            drained = true;
          };
          for (let page = 0; page < 100; page++) {
            if (page === pagesBefore && !drained) await drain();
            const read = await readStreamPage(world.source(), APP, { limit, cursor }, world.nowMs);
            for (const event of read.events) served.push({ id: event.event_id, install: event.install_uuid, afterDrain: drained });
            cursor = read.next;
            if (!read.hasMore) {
              if (drained) break;
              await drain();
            }
          }
          expect(served.filter((event) => event.install !== GONE).map((event) => event.id)).toEqual(others);
          expect(served.filter((event) => event.install === GONE && event.afterDrain)).toEqual([]);
          expect(world.stream.lines().filter((stored) => (stored as Partial<StreamLine>).event?.install_uuid === GONE)).toEqual([]);
        },
      ),
    );
  });
});

describe("erasing the install's rows from the export files", () => {
  const hour = (n: number) => DAY + n * HOUR_MS;
  const events = (lines: readonly StreamLine[]) => encodeTable('events', lines.map(eventRow));
  const installs = (lines: readonly StreamLine[]) =>
    encodeTable(
      'installs',
      lines.flatMap((stored) => {
        const row = installRow(stored);
        return row ? [row] : [];
      }),
    );
  const key = auditKeyOf('a');

  it('writes each file of its hours again without its rows, deletes one left empty, and leaves the other files as they were', async () => {
    const world = new RawWorld();
    const [mine, theirs] = [line('i', GONE, hour(9), key, true), line('k', uuidOf(1), hour(9) + MIN, key, true)];
    world.files.set(exportFileKey('events', APP, '2026-03-10T09'), events([mine, theirs]));
    world.files.set(exportFileKey('installs', APP, '2026-03-10T09'), installs([mine, theirs]));
    world.files.set(exportFileKey('events', APP, '2026-03-10T10'), events([line('p', GONE, hour(10), key)]));
    const otherHour = events([line('q', uuidOf(1), hour(11), key)]);
    world.files.set(exportFileKey('events', APP, '2026-03-10T11'), otherHour);
    const [matched, unrelated] = [click('Ck1', hour(8) + 5 * MIN), click('Ck2', hour(8) + 6 * MIN)];
    world.files.set(exportFileKey('clicks', APP, '2026-03-10T08'), encodeTable('clicks', [matched, unrelated].map(clickRow)));

    const outcome = await eraseRawData(
      world.ports(),
      request({ hours: new Set(['2026-03-10T09', '2026-03-10T10']), clicks: [{ clickId: 'Ck1', clickMs: matched.ts_ms }] }),
      world.clock,
    );
    expect(await decodeTable(world.files.get(exportFileKey('events', APP, '2026-03-10T09'))!)).toEqual([eventRow(theirs)]);
    expect(await decodeTable(world.files.get(exportFileKey('installs', APP, '2026-03-10T09'))!)).toEqual([installRow(theirs)]);
    expect(world.files.has(exportFileKey('events', APP, '2026-03-10T10'))).toBe(false);
    expect(world.files.get(exportFileKey('events', APP, '2026-03-10T11'))).toBe(otherHour);
    expect(await decodeTable(world.files.get(exportFileKey('clicks', APP, '2026-03-10T08'))!)).toEqual([clickRow(unrelated)]);
    expect(outcome.counts).toMatchObject({ export_files_rewritten: 3, export_files_deleted: 1, export_rows: 4 });
  });

  it('looks at every hour of the receive day of an audit object that no longer says when, and at the hours of its stream lines', async () => {
    const world = new RawWorld();
    world.files.set(exportFileKey('events', APP, '2026-03-10T23'), events([line('late', GONE, hour(23), key)]));
    world.files.set(exportFileKey('events', APP, '2026-03-12T04'), events([line('s', GONE, hour(52), auditKeyOf('b'))]));
    world.apply(hour(52) + MIN, [line('s', GONE, hour(52), auditKeyOf('b'))]);
    await eraseRawData(world.ports(), request({ counted: [auditKeyOf('b')], hoursUnknown: [key] }), world.clock);
    expect([...world.files.keys()]).toEqual([]);
  });

  it('brings nothing of the install back when the hours are exported again, and the files are those the drain wrote', async () => {
    const world = new RawWorld();
    const [mine, shared] = [auditKeyOf('mine'), auditKeyOf('shared')];
    const matched = click('Ck1', hour(8) + 5 * MIN);
    world.clicks.push(matched, click('Ck2', hour(8) + 6 * MIN));
    world.apply(hour(9) + MIN, [line('i', GONE, hour(9), mine, true), line('p', GONE, hour(9), mine)]);
    world.apply(hour(9) + 2 * MIN, [
      line('s', GONE, hour(9) + MIN, shared),
      line('k', uuidOf(1), hour(9) + MIN, shared, true),
      line('t', GONE, hour(10) - 1, shared),
    ]);
    world.apply(hour(10) + MIN, [line('u', uuidOf(1), hour(10), auditKeyOf('later'))]);
    const exportHours = async () => {
      for (const h of ['2026-03-10T08', '2026-03-10T09', '2026-03-10T10'])
        await runExport(world.exportPorts(), { apps: [{ app_id: APP, created_ms: 0 }], lanes: [], nowMs: hour(12), skan: false, hour: h });
    };
    await exportHours();
    expect(world.files.size).toBe(4);

    // What the drain learns: the hours from the audit lines, the click from the install's decision.
    world.clicks.splice(world.clicks.indexOf(matched), 1);
    await eraseRawData(
      world.ports(),
      request({ counted: [mine, shared], hours: new Set(['2026-03-10T09']), clicks: [{ clickId: 'Ck1', clickMs: matched.ts_ms }] }),
      world.clock,
    );
    const drained = new Map(world.files);
    const everything = async () =>
      JSON.stringify(
        await Promise.all([...world.files].map(async ([file, bytes]) => [file, await decodeTable(bytes)] as const)),
      ).toLowerCase();
    expect(await everything()).not.toContain(GONE);
    expect(await everything()).not.toContain('ck1');
    expect(await everything()).toContain(uuidOf(1));

    await exportHours();
    expect(await everything()).not.toContain(GONE);
    expect(await everything()).not.toContain('ck1');
    expect(new Map(world.files)).toEqual(drained);
  });
});
