import { type AggregationLedger, tokenOf } from '../aggregation/lease';
import { DAY_MS } from '../common/days';
import { pool } from '../common/pool';
import { STREAM_CLOCK_MARGIN_MS } from '../raw-data/export';
import { type ExportHour, exportFileKey, HOUR_MS, hourOf } from '../raw-data/export-layout';
import { decodeTable, encodeTable } from '../raw-data/export-parquet';
import type { ExportRow } from '../raw-data/export-rows';
import { LIST_MAX_KEYS, type StreamSource } from '../raw-data/stream';
import { applyOfStreamName, type StreamLine, type StreamObjects, streamAppPrefix, streamKey } from '../raw-data/stream-objects';
import type { RawTableName } from '../raw-data/tables';
import { type LedgerLanes, STREAM_SETTLE_MS, watermarkOf } from '../raw-data/watermark';

/**
 * What a privacy deletion does to the raw data (docs/privacy.md, "The raw data"; docs/raw-data.md):
 * the install's lines in the event stream's objects and its rows in the export's Parquet files.
 *
 * Stream objects. The install's lines come from the audit objects its claim log names (only
 * those whose claim took event ids: the stream has a line for each event counted, in the stream
 * object of the apply that counted it). An audit object's ledger mark (`agg#<token>`, kind
 * included) names that apply, so its stream object is streamKey(app, mark's stamp). A mark
 * expires (LEDGER_MARK_DAYS), and marks written before the stream have no opened_ms: then the
 * app's stream objects opened from the audit object's UTC receive day on, for STREAM_SEARCH_DAYS,
 * are read instead (an apply opens after the events it counts are received).
 *
 * A line of the install (its event's install_uuid, any case) becomes an erased line, `{}`, which
 * keeps its place: a reader's cursor is an object and a line number (functions/domain/raw-data/
 * stream.ts), and the endpoint passes over a line without an event, so a reader in the middle of
 * the object neither skips nor repeats another install's event. Erased lines at the end of an
 * object hold no place a cursor needs (a cursor past the last line goes on after the object), so
 * they are dropped; an object left with no event is deleted.
 *
 * Only final objects are rewritten: below the app's watermark (functions/domain/raw-data/
 * watermark.ts) the aggregator never writes an object again, above it a replay of the open
 * apply could put back what the drain took out. An object above it that holds lines of the
 * install is waited for (FINAL_WAIT_MS); one still not final then leaves their audit objects'
 * claims pending, and the request is carried to the next run.
 *
 * Export files. The hours that can hold the install's rows: for events and installs, the receive
 * hours of its accepted audit lines, of the stream lines erased, and every hour of the receive
 * day of an audit object that no longer says (an earlier run rewrote it); for clicks, the hours of
 * the clicks its installs matched (decision.click_ms, the click's ts_ms). Each such file that
 * holds rows of the install is written again without them (the export's own codec, so the file
 * is the one a re-export of the hour would write), or deleted when none is left. Stream objects
 * are erased before the files: an export run after the drain reads them erased.
 */

/** Days of the app's stream read from an audit object's receive day when its mark does not name its apply. */
export const STREAM_SEARCH_DAYS = 2;

/** Stream objects and export files read at once. */
const READS_AT_ONCE = 8;

/** A line taken out of a stream object: no event, so no reader serves it, and it keeps the line numbers after it. */
export const ERASED_LINE: Readonly<Record<string, never>> = Object.freeze({});

/** A stream line as stored: an event's line, or an erased one. */
type StoredLine = StreamLine | Readonly<Record<string, never>>;

/** Whether a stored line has no event (erased by an earlier deletion). */
export const isErasedLine = (line: StoredLine | null | undefined): boolean =>
  typeof (line as { event?: unknown } | null | undefined)?.event !== 'object' || (line as { event: unknown }).event === null;

/** Whether a stream line is an event of the install (lower-cased UUID): its install_uuid, in any case. */
export function streamLineOfInstall(line: StoredLine | null | undefined, installUuid: string): line is StreamLine {
  if (isErasedLine(line)) return false;
  const value = (line as StreamLine).event.install_uuid;
  return typeof value === 'string' && value.toLowerCase().includes(installUuid);
}

/**
 * The object's lines without the install's: each of its lines erased in place, erased lines at the
 * end dropped. Undefined when the object holds no line of the install; `lines` empty when no
 * event is left (the object is deleted).
 */
export function streamWithout(
  lines: readonly StoredLine[],
  installUuid: string,
): { lines: StoredLine[]; removed: StreamLine[] } | undefined {
  const removed = lines.filter((line): line is StreamLine => streamLineOfInstall(line, installUuid));
  if (removed.length === 0) return undefined;
  const kept = lines.map((line) => (streamLineOfInstall(line, installUuid) ? ERASED_LINE : line));
  while (kept.length > 0 && isErasedLine(kept.at(-1))) kept.pop();
  return { lines: kept, removed };
}

/** Whether an export row is the install's: an events or installs row of its install_uuid, a clicks row of a click it matched. */
export function exportRowOfInstall(
  table: RawTableName,
  row: ExportRow,
  target: { readonly installUuid: string; readonly clickIds: ReadonlySet<string> },
): boolean {
  if (table === 'clicks') return typeof row.click_id === 'string' && target.clickIds.has(row.click_id);
  if (table === 'events' || table === 'installs')
    return typeof row.install_uuid === 'string' && row.install_uuid.toLowerCase().includes(target.installUuid);
  // skan_postbacks name no install.
  return false;
}

/** Export files by key, as bytes (functions/adapters/raw-data-eraser.ts). */
export interface ExportFileObjects {
  /** The file's bytes; undefined when there is none. */
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, body: Uint8Array): Promise<void>;
  delete(key: string): Promise<void>;
}

/** What the drain reads and rewrites of the raw data. */
export interface RawDataPorts {
  /** The aggregator's marks of audit objects, by token (AggregationLedgerStore.marks). */
  readonly marks: Pick<AggregationLedger, 'marks'>;
  /** The ledger's lanes: the app's watermark. */
  readonly lanes: LedgerLanes;
  readonly stream: StreamObjects;
  /** The app's stream objects by name (the stream endpoint's listing). */
  readonly streamNames: Pick<StreamSource, 'list'>;
  readonly exportFiles: ExportFileObjects;
}

/** What one run of a request knows of the install's raw data. */
export interface InstallRawData {
  readonly appId: string;
  /** Lower-cased. */
  readonly installUuid: string;
  /** Audit objects whose counted events of the install the stream may hold (claims that took event ids; legacy `a#` references). */
  readonly counted: readonly string[];
  /** Receive hours of the install's accepted lines, read from the audit objects before they were rewritten. */
  readonly hours: ReadonlySet<ExportHour>;
  /** Audit objects of counted events that no longer hold the install's lines: every hour of their receive day is looked at. */
  readonly hoursUnknown: readonly string[];
  /** The clicks the install's decisions matched, with the time each was recorded (undefined: not known, not looked for). */
  readonly clicks: readonly { readonly clickId: string; readonly clickMs: number | undefined }[];
}

export interface RawDataCounts {
  stream_objects_rewritten: number;
  stream_objects_deleted: number;
  stream_lines: number;
  export_files_rewritten: number;
  export_files_deleted: number;
  export_rows: number;
}

export const emptyRawDataCounts = (): RawDataCounts => ({
  stream_objects_rewritten: 0,
  stream_objects_deleted: 0,
  stream_lines: 0,
  export_files_rewritten: 0,
  export_files_deleted: 0,
  export_rows: 0,
});

export interface RawDataOutcome {
  readonly counts: RawDataCounts;
  /**
   * Audit objects whose lines are still in a stream object that is not final: their claims stay,
   * and the request is carried to the next run. `all` when such a line came from no audit object
   * of this run (every counted claim stays).
   */
  readonly pending: ReadonlySet<string> | 'all';
}

/** The drain's clock: a stream object not final yet is waited for a moment, when the run has the time. */
export interface DrainClock {
  nowMs(): number;
  pause(ms: number): Promise<void>;
  /** Milliseconds before the function must stop. */
  timeLeftMs(): number;
}

/**
 * How long a run waits for a stream object of the install to become final: the settle time of the
 * watermark and an apply's few seconds. An object still not final then (an apply left open by a
 * crashed invocation, replayed after its lease) is left for the next run.
 */
export const FINAL_WAIT_MS = STREAM_SETTLE_MS + 10_000;
const FINAL_POLL_MS = 1_000;
/** A run with less time left than this does not wait: the request is carried (its 25 requests could each wait). */
const WAIT_TIME_LEFT_MS = 60_000;

export async function eraseRawData(ports: RawDataPorts, install: InstallRawData, clock: DrainClock): Promise<RawDataOutcome> {
  const counts = emptyRawDataCounts();
  const hours = new Set(install.hours);
  for (const auditKey of install.hoursUnknown) {
    const day = receiveDayOf(auditKey);
    if (day !== undefined) for (let hour = 0; hour < 24; hour++) hours.add(hourOf(day + hour * HOUR_MS));
  }

  const prefix = streamAppPrefix(install.appId);
  const openedOf = (key: string) => applyOfStreamName(key.slice(prefix.length))?.openedMs ?? Number.POSITIVE_INFINITY;
  /** Erases the install's lines of a final object; returns them, untouched, from an object that is not final yet. */
  const erase = async (key: string, watermark: number): Promise<StreamLine[] | undefined> => {
    const lines = await ports.stream.get(key);
    if (lines === undefined) return undefined;
    const erased = streamWithout(lines, install.installUuid);
    if (!erased) return undefined;
    for (const line of erased.removed) hours.add(hourOf(line.event.received_ms));
    if (openedOf(key) >= watermark) return erased.removed;
    if (erased.lines.length === 0) {
      await ports.stream.delete(key);
      counts.stream_objects_deleted++;
    } else {
      // Erased lines are stored as they are: no event, which every reader passes over.
      await ports.stream.put(key, erased.lines as StreamLine[]);
      counts.stream_objects_rewritten++;
    }
    counts.stream_lines += erased.removed.length;
    return undefined;
  };
  const watermark = async () => watermarkOf(await ports.lanes.lanes(), clock.nowMs(), install.appId);

  const keys = await streamObjectsOf(ports, install);
  const waiting = new Map<string, StreamLine[]>();
  if (keys.length > 0) {
    const first = await watermark();
    await pool(keys, READS_AT_ONCE, async (key) => {
      const left = await erase(key, first);
      if (left) waiting.set(key, left);
    });
  }
  const deadline = clock.nowMs() + FINAL_WAIT_MS;
  while (waiting.size > 0 && clock.nowMs() < deadline && clock.timeLeftMs() > WAIT_TIME_LEFT_MS) {
    await clock.pause(FINAL_POLL_MS);
    const now = await watermark();
    for (const key of [...waiting.keys()]) {
      if (openedOf(key) >= now) continue;
      waiting.delete(key);
      // Read again: a replay may have rewritten it meanwhile.
      await erase(key, now);
    }
  }

  // Stream objects first: an export run after this one reads them erased.
  await eraseExportRows(ports.exportFiles, install, hours, counts);

  if (waiting.size === 0) return { counts, pending: new Set() };
  const byToken = new Map(install.counted.map((auditKey) => [tokenOf(auditKey), auditKey]));
  const pending = new Set<string>();
  for (const line of [...waiting.values()].flat()) {
    const auditKey = byToken.get(line.o);
    if (auditKey === undefined) return { counts, pending: 'all' };
    pending.add(auditKey);
  }
  return { counts, pending };
}

/**
 * The stream objects that may hold the install's lines, in key order: the object of each counted
 * audit object's apply, as its mark names it; for an audit object without such a mark, every
 * object of the app opened in the days from its receive day on.
 */
async function streamObjectsOf(ports: RawDataPorts, install: InstallRawData): Promise<string[]> {
  if (install.counted.length === 0) return [];
  const tokens = new Map(install.counted.map((auditKey) => [tokenOf(auditKey), auditKey]));
  const marks = await ports.marks.marks([...tokens.keys()]);
  const keys = new Set<string>();
  const days = new Set<number>();
  for (const [token, auditKey] of tokens) {
    const mark = marks.get(token);
    if (mark?.kind === 'included' && mark.stamp.openedMs !== undefined)
      keys.add(streamKey(install.appId, { openedMs: mark.stamp.openedMs, lane: mark.stamp.lane, seq: mark.stamp.seq }));
    else {
      const day = receiveDayOf(auditKey);
      if (day !== undefined) days.add(day);
    }
  }
  for (const window of searchWindows(days))
    for (const name of await namesBetween(ports.streamNames, install.appId, window)) keys.add(`${streamAppPrefix(install.appId)}${name}`);
  return [...keys].sort();
}

/** Key-time windows [from, to) of the days' searches, overlapping ones merged. */
export function searchWindows(days: Iterable<number>): { from: number; to: number }[] {
  const windows: { from: number; to: number }[] = [];
  for (const day of [...days].sort((a, b) => a - b)) {
    const from = day - STREAM_CLOCK_MARGIN_MS;
    const to = day + STREAM_SEARCH_DAYS * DAY_MS;
    const last = windows.at(-1);
    if (last && from <= last.to) last.to = Math.max(last.to, to);
    else windows.push({ from, to });
  }
  return windows;
}

/** The app's stream object names whose key time is in [from, to), a LIST page at a time. */
async function namesBetween(listing: Pick<StreamSource, 'list'>, appId: string, window: { from: number; to: number }): Promise<string[]> {
  const names: string[] = [];
  // Names begin with their key time in 13 digits: the time alone sorts just before every name of that time.
  let after = String(Math.max(0, window.from)).padStart(13, '0');
  for (;;) {
    const page = await listing.list(appId, after, LIST_MAX_KEYS);
    for (const { name } of page.objects) {
      const apply = applyOfStreamName(name);
      if (!apply) continue;
      if (apply.openedMs >= window.to) return names;
      names.push(name);
    }
    const last = page.objects.at(-1);
    if (!page.truncated || !last) return names;
    after = last.name;
  }
}

/** The first millisecond of an audit object's UTC receive day (its key: audit/yyyy/mm/dd/...); undefined for another key. */
export function receiveDayOf(auditKey: string): number | undefined {
  const match = /^audit\/(\d{4})\/(\d{2})\/(\d{2})\//.exec(auditKey);
  if (!match) return undefined;
  const day = Date.parse(`${match[1]}-${match[2]}-${match[3]}T00:00:00.000Z`);
  return Number.isNaN(day) ? undefined : day;
}

/** Every export file that can hold the install's rows, rewritten without them (or deleted when none is left). */
async function eraseExportRows(
  files: ExportFileObjects,
  install: InstallRawData,
  hours: ReadonlySet<ExportHour>,
  counts: RawDataCounts,
): Promise<void> {
  const target = { installUuid: install.installUuid, clickIds: new Set(install.clicks.map((click) => click.clickId)) };
  const keys: { table: RawTableName; key: string }[] = [];
  for (const hour of [...hours].sort())
    for (const table of ['events', 'installs'] as const) keys.push({ table, key: exportFileKey(table, install.appId, hour) });
  const clickHours = new Set(install.clicks.flatMap((click) => (click.clickMs === undefined ? [] : [hourOf(click.clickMs)])));
  for (const hour of [...clickHours].sort()) keys.push({ table: 'clicks', key: exportFileKey('clicks', install.appId, hour) });

  await pool(keys, READS_AT_ONCE, async ({ table, key }) => {
    const bytes = await files.get(key);
    if (bytes === undefined) return;
    const rows = await decodeTable(bytes);
    const kept = rows.filter((row) => !exportRowOfInstall(table, row, target));
    if (kept.length === rows.length) return;
    if (kept.length === 0) {
      await files.delete(key);
      counts.export_files_deleted++;
    } else {
      await files.put(key, encodeTable(table, kept));
      counts.export_files_rewritten++;
    }
    counts.export_rows += rows.length - kept.length;
  });
}
