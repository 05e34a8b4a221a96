import { STREAM_OBJECTS } from '../../../lib/function-constants';
import { DAY_MS } from '../common/days';
import { pool } from '../common/pool';
import type { ClickRecord } from '../links/click';
import type { PostbackRecord } from '../skan/postback-record';
import { type ExportHour, exportFileKey, HOUR_MS, hourOf, hourStartMs, hoursFrom } from './export-layout';
import { encodeTable } from './export-parquet';
import { clickRow, type ExportRow, eventRow, installRow, skanRow } from './export-rows';
import { LIST_MAX_KEYS, type StreamListing, type StreamSource } from './stream';
import { applyOfStreamName, type StreamObjects, streamAppPrefix } from './stream-objects';
import { type RawTableName, UNMATCHED_APP_ID } from './tables';
import { type LaneOpening, watermarkOf } from './watermark';

/**
 * The warehouse export (docs/raw-data.md#warehouse-exports): each app's data of an hour as one
 * Parquet file per table under `<table>/app_id=/dt=/hour=/part-00000.parquet`, by UTC receive hour.
 *
 * - events and installs come from the app's stream objects. An event received in hour H is in an
 *   object opened at or after H's start (an apply counts events already received), so H is
 *   exported from every object keyed from H's start (less STREAM_CLOCK_MARGIN_MS) up to the
 *   watermark, never from the new ones only: the file holds every line of H the stream has.
 * - clicks come from the click log (click_log's 4 keys of an hour, and the old clicks table's
 *   by_app_hour index until it is dropped), skan_postbacks from the SKAN records of
 *   the audit bucket (all under app_id=_unmatched until postbacks are matched to apps).
 * - A partition is written whole from its source and replaces the file before it; one with no
 *   rows loses its file. So exporting an hour again, for any reason, gives the same file.
 *
 * The scheduled run exports what changed since the app's checkpoint: the receive hours of the
 * stream objects keyed after the last one it read and below the watermark (a late event names
 * its old hour again), and the click and postback hours since its last run. `--hour` exports one
 * hour and leaves checkpoints alone.
 */

/** An app's stream objects: listed (the stream endpoint's StreamSource.list) and read whole, install lines with their decisions. */
export interface ExportStream {
  readonly listing: Pick<StreamSource, 'list'>;
  readonly objects: Pick<StreamObjects, 'get'>;
}

type StreamObjectRef = StreamListing['objects'][number];

export interface ExportClicks {
  /** The app's clicks recorded in the hour (ts_ms), every shard of click_log (and of the old table's by_app_hour). */
  ofHour(appId: string, hour: ExportHour): Promise<readonly ClickRecord[]>;
}

export interface ExportPostbacks {
  /** Every SKAN postback record received in [fromMs, toMs), verified or not. */
  receivedBetween(fromMs: number, toMs: number): Promise<readonly PostbackRecord[]>;
}

export interface ExportFiles {
  put(key: string, body: Uint8Array): Promise<void>;
  /** Removes the object; nothing happens when there is none. */
  delete(key: string): Promise<void>;
}

export interface ExportCheckpoint {
  /** The last stream object read (its name after the app's prefix); '' before the first. */
  readonly stream_after: string;
  /** The watermark of the run that wrote the checkpoint. */
  readonly watermark_ms: number;
  /** When the run that wrote it started: clicks and postbacks are exported from here (less RECORD_SETTLE_MS) on. */
  readonly records_ms: number;
}

export interface ExportCheckpoints {
  get(appId: string): Promise<ExportCheckpoint | undefined>;
  put(appId: string, checkpoint: ExportCheckpoint): Promise<void>;
}

export interface ExportPorts {
  readonly stream: ExportStream;
  readonly clicks: ExportClicks;
  readonly postbacks: ExportPostbacks;
  readonly files: ExportFiles;
  readonly checkpoints: ExportCheckpoints;
}

export interface ExportApp {
  readonly app_id: string;
  readonly created_ms: number;
}

export interface ExportRunInput {
  readonly apps: readonly ExportApp[];
  /** The ledger's lanes, read once for the run: an app's stream objects at or above its watermark are not read (watermark.ts). */
  readonly lanes: readonly LaneOpening[];
  readonly nowMs: number;
  /** Exports this hour only (`YYYY-MM-DDTHH`), checkpoints untouched; otherwise what changed since them. */
  readonly hour?: ExportHour;
  /** skan_postbacks too: postbacks are not matched to apps yet, so a run over every app exports them. */
  readonly skan: boolean;
  /** No app or step is started after this (the scheduled function's time limit); what is left waits for the next run. */
  readonly deadlineMs?: number;
}

export interface TableSummary {
  /** The files written, in the order written. */
  readonly files: string[];
  /** Rows in those files. */
  rows: number;
  /** Partitions left without rows, whose file (if any) was removed. */
  deleted: number;
  /** Hours not rewritten: their source no longer holds all of their rows (see SOURCE_KEPT_MS). */
  skipped: number;
}

export interface ExportSummary {
  readonly watermark_ms: number;
  readonly hour: ExportHour | null;
  /** Apps exported. */
  apps: number;
  readonly tables: Record<RawTableName, TableSummary>;
  /** Apps the run had no time for (the next run starts with them). */
  readonly unfinished: string[];
  /** Apps whose export failed, with the error: the run went on with the others, and the next starts at their checkpoints. */
  readonly failed: { app_id: string; error: unknown }[];
}

/**
 * Lines are read from this much before an hour's start: an event's received_ms (the ingest
 * host's clock) can be a little after the opened_ms of the apply that counted it (the
 * aggregator's), and a line read late is only filtered out.
 */
export const STREAM_CLOCK_MARGIN_MS = 60_000;

/**
 * A click or postback is written just after the time it carries (and the old clicks table's index
 * followed it within a second): each run exports again from this much before the last run
 * started, so a record written while the last run read its hour is in the next one's file.
 */
export const RECORD_SETTLE_MS = 60_000;

/** A first run (no checkpoint) exports clicks and postbacks of the last 12 hours at most, not before the app was made. */
export const FIRST_RUN_RECORDS_MS = 12 * HOUR_MS;

/**
 * How long each source keeps everything of an hour. Stream objects expire after the export
 * bucket's lifecycle days, and invalid SKAN postbacks after as many; a click after its link's
 * lookback, at least a day. An hour older than this (by its end) is not rewritten: its file
 * would lose rows the source no longer has.
 */
export const SOURCE_KEPT_MS: Readonly<Record<RawTableName, number>> = {
  events: (STREAM_OBJECTS.expireAfterDays - 1) * DAY_MS,
  installs: (STREAM_OBJECTS.expireAfterDays - 1) * DAY_MS,
  clicks: DAY_MS - HOUR_MS,
  skan_postbacks: (STREAM_OBJECTS.expireAfterDays - 1) * DAY_MS,
};

/**
 * A step of the scheduled run reads new stream objects up to about this many (gzip) bytes, and
 * on to the end of the hour their opening times reached, before it writes their hours: a
 * backlog of many hours is several steps, each holding only its own hours' rows. One app's hour
 * is always built whole in memory (docs/raw-data.md, "Cost and time": about 500,000 events at
 * the function's 2,048 MB).
 */
export const STEP_BYTES = 16 * 1024 * 1024;

const READS_AT_ONCE = 16;
const WRITES_AT_ONCE = 8;

export async function runExport(ports: ExportPorts, input: ExportRunInput): Promise<ExportSummary> {
  const summary: ExportSummary = {
    watermark_ms: watermarkOf(input.lanes, input.nowMs),
    hour: input.hour ?? null,
    apps: 0,
    tables: {
      events: emptyTable(),
      installs: emptyTable(),
      clicks: emptyTable(),
      skan_postbacks: emptyTable(),
    },
    unfinished: [],
    failed: [],
  };
  // One app's failure is the app's (issue 36): it is named in `failed` and the run goes on.
  const isolated = async (appId: string, work: () => Promise<void>): Promise<void> => {
    try {
      await work();
    } catch (error) {
      summary.failed.push({ app_id: appId, error });
    }
  };
  const run = new Run(ports, input, summary);
  if (input.hour !== undefined) {
    const hour = input.hour;
    for (const app of input.apps) {
      await isolated(app.app_id, async () => {
        await run.streamHours(app.app_id, run.watermark(app.app_id), new Set([hour]), '');
        await run.clickHours(app.app_id, [hour]);
        summary.apps += 1;
      });
    }
    if (input.skan) await run.postbackHours([hour]);
    return summary;
  }

  if (input.skan) await run.postbacksChanged();
  const checkpoints = new Map<string, ExportCheckpoint | undefined>();
  await pool(input.apps, READS_AT_ONCE, (app) =>
    isolated(app.app_id, async () => {
      checkpoints.set(app.app_id, await ports.checkpoints.get(app.app_id));
    }),
  );
  // The apps exported longest ago first: a run out of time leaves the freshest for the next one.
  const apps = [...input.apps].sort(
    (a, b) =>
      (checkpoints.get(a.app_id)?.records_ms ?? 0) - (checkpoints.get(b.app_id)?.records_ms ?? 0) || a.app_id.localeCompare(b.app_id),
  );
  const failedToRead = new Set(summary.failed.map(({ app_id }) => app_id));
  for (const app of apps) {
    if (failedToRead.has(app.app_id)) continue;
    if (run.outOfTime()) {
      summary.unfinished.push(app.app_id);
      continue;
    }
    await isolated(app.app_id, async () => {
      if (await run.appChanged(app, checkpoints.get(app.app_id))) summary.apps += 1;
      else summary.unfinished.push(app.app_id);
    });
  }
  return summary;
}

/** A stream line as the export keeps it: its receive hour, its events row and, for a counted install, its installs row. */
interface HourRows {
  readonly hour: ExportHour;
  readonly event: ExportRow;
  readonly install: ExportRow | undefined;
}

const emptyTable = (): TableSummary => ({ files: [], rows: 0, deleted: 0, skipped: 0 });

/** The name every stream object opened at or after `ms` sorts after. */
const streamNameFrom = (ms: number): string => String(Math.max(0, ms)).padStart(13, '0');

class Run {
  constructor(
    private readonly ports: ExportPorts,
    private readonly input: ExportRunInput,
    private readonly summary: ExportSummary,
  ) {}

  /** The app's watermark: an open apply of other apps does not hold it back. */
  watermark(appId: string): number {
    return watermarkOf(this.input.lanes, this.input.nowMs, appId);
  }

  /** The app's stream objects after `after`, in name order, a LIST page at a time (read as far as the caller goes). */
  private async *list(appId: string, after: string): AsyncGenerator<StreamObjectRef> {
    for (let from = after; ; ) {
      const page = await this.ports.stream.listing.list(appId, from, LIST_MAX_KEYS);
      yield* page.objects;
      const last = page.objects.at(-1);
      if (!page.truncated || !last) return;
      from = last.name;
    }
  }

  outOfTime(): boolean {
    return this.input.deadlineMs !== undefined && Date.now() >= this.input.deadlineMs;
  }

  /** The app's changes since its checkpoint; false when the run ran out of time first (the checkpoint says how far it got). */
  async appChanged(app: ExportApp, checkpoint: ExportCheckpoint | undefined): Promise<boolean> {
    const { nowMs } = this.input;
    const watermark = this.watermark(app.app_id);
    const recordsFrom = checkpoint ? checkpoint.records_ms - RECORD_SETTLE_MS : Math.max(app.created_ms, nowMs - FIRST_RUN_RECORDS_MS);
    await this.clickHours(app.app_id, hoursFrom(recordsFrom, nowMs));
    let state: ExportCheckpoint = {
      stream_after: checkpoint?.stream_after ?? '',
      watermark_ms: checkpoint?.watermark_ms ?? 0,
      records_ms: nowMs,
    };
    for (;;) {
      const step = await this.streamStep(app.app_id, watermark, state.stream_after);
      if (!step) break;
      state = { ...state, stream_after: step.last };
      if (!step.more) break;
      await this.ports.checkpoints.put(app.app_id, state);
      if (this.outOfTime()) return false;
    }
    await this.ports.checkpoints.put(app.app_id, { ...state, watermark_ms: Math.max(state.watermark_ms, watermark) });
    return true;
  }

  /**
   * New stream objects after `after`, below the watermark, up to STEP_BYTES and then to the end
   * of the hour they were opened in (so that a busy hour is not exported once per step): the
   * receive hours of their lines are exported again, each from all of its objects.
   */
  private async streamStep(appId: string, watermark: number, after: string): Promise<{ last: string; more: boolean } | undefined> {
    const fresh: StreamObjectRef[] = [];
    let bytes = 0;
    let more = false;
    let openedHour: ExportHour | undefined;
    for await (const ref of this.list(appId, after)) {
      const apply = applyOfStreamName(ref.name);
      if (!apply) continue;
      if (apply.openedMs >= watermark) break;
      if (bytes >= STEP_BYTES && hourOf(apply.openedMs) !== openedHour) {
        more = true;
        break;
      }
      fresh.push(ref);
      bytes += ref.size;
      openedHour = hourOf(apply.openedMs);
    }
    const last = fresh.at(-1);
    if (!last) return undefined;
    const freshRows = await this.readRows(appId, fresh);
    await this.streamHours(appId, watermark, new Set(freshRows.map((row) => row.hour)), after, freshRows);
    return { last: last.name, more };
  }

  /**
   * Writes the events and installs files of the hours: the rows of `known` (objects after
   * `through`, already read) and those of every object from the earliest hour's start up to and
   * including `through` ('' when `known` is everything, or to read up to the watermark).
   */
  async streamHours(
    appId: string,
    watermark: number,
    hours: ReadonlySet<ExportHour>,
    through: string,
    known?: readonly HourRows[],
  ): Promise<void> {
    const kept = this.keptHours(['events', 'installs'], [...hours]);
    if (kept.length === 0) return;
    const wanted = new Set(kept);
    const fromName = streamNameFrom(Math.min(...kept.map(hourStartMs)) - STREAM_CLOCK_MARGIN_MS);
    const older: StreamObjectRef[] = [];
    if (known === undefined || through !== '') {
      for await (const ref of this.list(appId, fromName)) {
        const apply = applyOfStreamName(ref.name);
        if (!apply) continue;
        if (known === undefined ? apply.openedMs >= watermark : ref.name > through) break;
        older.push(ref);
      }
    }
    const events = new Map<ExportHour, ExportRow[]>(kept.map((hour) => [hour, []]));
    const installs = new Map<ExportHour, ExportRow[]>(kept.map((hour) => [hour, []]));
    for (const rows of [await this.readRows(appId, older, wanted), known ?? []]) {
      for (const row of rows) {
        events.get(row.hour)?.push(row.event);
        if (row.install) installs.get(row.hour)?.push(row.install);
      }
    }
    await this.write(appId, 'events', events);
    await this.write(appId, 'installs', installs);
  }

  async clickHours(appId: string, hours: readonly ExportHour[]): Promise<void> {
    const kept = this.keptHours(['clicks'], hours);
    const byHour = new Map<ExportHour, ExportRow[]>();
    await pool(kept, 4, async (hour) => {
      const clicks = [...(await this.ports.clicks.ofHour(appId, hour))]
        .filter((click) => hourOf(click.ts_ms) === hour)
        .sort((a, b) => a.ts_ms - b.ts_ms || compare(a.click_id, b.click_id));
      byHour.set(hour, clicks.map(clickRow));
    });
    await this.write(appId, 'clicks', new Map(kept.map((hour) => [hour, byHour.get(hour) ?? []])));
  }

  async postbackHours(hours: readonly ExportHour[]): Promise<void> {
    const kept = this.keptHours(['skan_postbacks'], hours);
    if (kept.length === 0) return;
    const fromMs = Math.min(...kept.map(hourStartMs));
    const toMs = Math.max(...kept.map(hourStartMs)) + HOUR_MS;
    const records = [...(await this.ports.postbacks.receivedBetween(fromMs, toMs))].sort(
      (a, b) => a.received_ms - b.received_ms || compare(a.transaction_id, b.transaction_id),
    );
    await this.write(
      UNMATCHED_APP_ID,
      'skan_postbacks',
      groupByHour(kept, records, (record) => record.received_ms, skanRow),
    );
  }

  /** The postbacks since the `_unmatched` checkpoint, which keeps only records_ms. */
  async postbacksChanged(): Promise<void> {
    const { nowMs } = this.input;
    const checkpoint = await this.ports.checkpoints.get(UNMATCHED_APP_ID);
    const fromMs = checkpoint ? checkpoint.records_ms - RECORD_SETTLE_MS : nowMs - FIRST_RUN_RECORDS_MS;
    await this.postbackHours(hoursFrom(fromMs, nowMs));
    await this.ports.checkpoints.put(UNMATCHED_APP_ID, { stream_after: '', watermark_ms: 0, records_ms: nowMs });
  }

  /** The hours whose source still holds all their rows; the others are counted as skipped. */
  private keptHours(tables: readonly RawTableName[], hours: readonly ExportHour[]): ExportHour[] {
    const kept = hours.filter((hour) => hourStartMs(hour) + HOUR_MS > this.input.nowMs - SOURCE_KEPT_MS[tables[0] ?? 'events']);
    for (const table of tables) this.summary.tables[table].skipped += hours.length - kept.length;
    return kept.sort();
  }

  /**
   * The rows of the objects' lines (of the wanted hours only, when given), in the order of the
   * objects: each object's lines become rows as soon as it is read, so the lines themselves are
   * not held.
   */
  private async readRows(appId: string, refs: readonly StreamObjectRef[], wanted?: ReadonlySet<ExportHour>): Promise<HourRows[]> {
    const rows: HourRows[][] = new Array(refs.length);
    await pool(
      refs.map((ref, index) => ({ ref, index })),
      READS_AT_ONCE,
      async ({ ref, index }) => {
        const lines = (await this.ports.stream.objects.get(`${streamAppPrefix(appId)}${ref.name}`)) ?? [];
        rows[index] = lines.flatMap((line) => {
          // A line the privacy drain erased keeps its place for the stream's cursors, with no event (docs/privacy.md).
          if (typeof line.event !== 'object' || line.event === null) return [];
          const hour = hourOf(line.event.received_ms);
          return wanted && !wanted.has(hour) ? [] : [{ hour, event: eventRow(line), install: installRow(line) }];
        });
      },
    );
    return rows.flat();
  }

  /** Each hour's file written from its rows, or removed when it has none. */
  private async write(appId: string, table: RawTableName, byHour: ReadonlyMap<ExportHour, readonly ExportRow[]>): Promise<void> {
    const summary = this.summary.tables[table];
    const hours = [...byHour.keys()].sort();
    await pool(hours, WRITES_AT_ONCE, async (hour) => {
      const rows = byHour.get(hour) ?? [];
      const key = exportFileKey(table, appId, hour);
      if (rows.length === 0) {
        await this.ports.files.delete(key);
        summary.deleted += 1;
        return;
      }
      await this.ports.files.put(key, encodeTable(table, rows));
      summary.files.push(key);
      summary.rows += rows.length;
    });
  }
}

/** Rows of each of the hours (in the order of the items), an empty list for an hour with none. */
function groupByHour<T>(
  hours: readonly ExportHour[],
  items: readonly T[],
  timeOf: (item: T) => number,
  rowOf: (item: T) => ExportRow | undefined,
): Map<ExportHour, ExportRow[]> {
  const byHour = new Map<ExportHour, ExportRow[]>(hours.map((hour) => [hour, []]));
  for (const item of items) {
    const row = rowOf(item);
    if (row) byHour.get(hourOf(timeOf(item)))?.push(row);
  }
  return byHour;
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
