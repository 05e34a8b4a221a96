import { ServiceError } from '../common/errors';
import { appOfKey, type ServerKeys } from '../reports/answer-report';
import { isTimeBound, isTimeMs, limitOf, reportError } from '../reports/report-query';
import {
  applyOfStreamName,
  IMPRESSION_MEMBERS,
  REFUND_MEMBERS,
  type StreamAttribution,
  type StreamConsent,
  type StreamEvent,
} from './stream-objects';
import { type LedgerLanes, STREAM_SETTLE_MS, watermarkOf } from './watermark';

/**
 * GET /api/v1/stream/events (docs/raw-data.md, "The event stream"): the app's counted events, a
 * page at a time, in the order of its stream objects (key order, then line order), each exactly
 * once across the pages of a read. Only objects whose key time is below the watermark are read:
 * those never change again and no new one appears among them, so a page read twice is the same
 * page, and a cursor taken at the end of the stream finds later events after it and none before.
 *
 * A request costs one BatchGetItem of the ledger's lanes, one LIST of the app's prefix from the
 * cursor and a GET of each object the page reads (and of at most one more, to tell has_more
 * exactly). Nothing is kept between requests.
 */

/** The endpoint's refusals and their statuses: the reports' 401s, 400s and 503, and the cursor's own 400. */
export const STREAM_ERRORS = {
  invalid_since_until: 400,
  invalid_limit: 400,
  invalid_cursor: 400,
  missing_bearer_token: 401,
  invalid_or_revoked_key: 401,
  insufficient_scope: 403,
  store_unavailable: 503,
} as const;

export type StreamErrorCode = keyof typeof STREAM_ERRORS;

export const streamError = (code: StreamErrorCode) => new ServiceError(STREAM_ERRORS[code], code);

export const STREAM_PATH = '/api/v1/stream/events';

/** One LIST reads at most this many keys (S3's own maximum), so a page reads at most this many objects and the one at its cursor. */
export const LIST_MAX_KEYS = 1000;
/** Objects read at once, at most. */
export const MAX_OBJECTS_IN_FLIGHT = 16;
/** Compressed bytes of the objects read at once, at most (one object at a time when a single one is bigger). */
export const MAX_BYTES_IN_FLIGHT = 8 * 1024 * 1024;
/**
 * A page's events as JSON, at most this many bytes (a page holds at least one event): Lambda
 * answers at most 6 MB, and 1,000 events each with 4 KB of properties and a 4 KB TC string in its
 * consent would pass it. The page then ends early with has_more.
 */
export const MAX_PAGE_EVENT_BYTES = 5 * 1024 * 1024;

/**
 * Where a read goes on:
 * - `start`: the first object whose key time is at least the read's since_ms (all of them without one);
 * - `after`: the first object after this one (every line of it is behind the read);
 * - `at`: line `line` of this object (the lines before it are behind the read), then the objects after it.
 * Object names are the part of the key after the app's prefix (stream-objects.ts, streamName).
 */
export type StreamPosition =
  | { readonly kind: 'start' }
  | { readonly kind: 'after'; readonly name: string }
  | { readonly kind: 'at'; readonly name: string; readonly line: number };

/** What a cursor holds: the position, and the receive-time filter of the read it belongs to. */
export interface StreamCursor {
  readonly position: StreamPosition;
  /** Only events with received_ms at or after it (the since_ms that started the read). */
  readonly sinceMs?: number;
}

/** The app's stream objects in the export bucket (functions/adapters/stream-reader.ts). */
export interface StreamSource {
  /**
   * The app's stream objects whose names sort after `after` ('' for all), in key order: at most
   * `max`, each with its compressed size, and whether more follow.
   */
  list(appId: string, after: string, max: number): Promise<StreamListing>;
  /** An object's lines in order: each line's `event` as stored, or undefined for a line without one. A missing object has no lines. */
  lines(appId: string, name: string): Promise<readonly (unknown | undefined)[]>;
}

export interface StreamListing {
  readonly objects: readonly { readonly name: string; readonly size: number }[];
  readonly truncated: boolean;
}

export interface StreamPorts {
  readonly keys: ServerKeys;
  readonly lanes: LedgerLanes;
  readonly objects: StreamSource;
  nowMs(): number;
}

export interface StreamRequest {
  readonly authorization?: string;
  readonly params: Readonly<Record<string, string | undefined>>;
}

export interface StreamBody {
  events: StreamEvent[];
  next_cursor: string;
  has_more: boolean;
}

export interface StreamQuery {
  readonly limit: number;
  readonly cursor: StreamCursor;
}

/**
 * The use case: the key names the app (exactly as for the reports: the same bearer check, the same
 * cached look-up, the same 401s), then the parameters, then the watermark and the page.
 */
export async function answerStream(ports: StreamPorts, request: StreamRequest): Promise<StreamBody> {
  const appId = await appOfKey(ports.keys, request.authorization);
  const query = parseStreamQuery(request.params);
  const watermark = watermarkOf(await ports.lanes.lanes(), ports.nowMs(), appId);
  const page = await readStreamPage(ports.objects, appId, query, watermark);
  return { events: page.events, next_cursor: encodeCursor(page.next), has_more: page.hasMore };
}

// ---- Parameters --------------------------------------------------------------------------------

/**
 * The query, checked in this order (each check once the ones before it pass); other parameters are
 * ignored, as the reports ignore them, and none can name another app:
 *   1. since_ms, when given, is a base-10 integer within ±8.64e15          invalid_since_until
 *   2. limit, when given, is an integer from 1 to 1000 (default 100)       invalid_limit
 *   3. cursor, when given, is one this endpoint made, and comes alone:     invalid_cursor
 *      a cursor carries its read's start and filter, so a since_ms beside
 *      it would either be ignored or change the read under the client
 * Without a cursor the read starts at since_ms (or at the beginning of the app's stream).
 */
export function parseStreamQuery(params: Readonly<Record<string, string | undefined>>): StreamQuery {
  const since = params.since_ms;
  // The reports' own checks of since_ms and limit (docs/reports.md).
  if (since !== undefined && !isTimeBound(since)) throw reportError('invalid_since_until');
  const limit = limitOf(params.limit);
  if (params.cursor !== undefined) {
    if (since !== undefined) throw streamError('invalid_cursor');
    return { limit, cursor: decodeCursor(params.cursor) };
  }
  const start = { kind: 'start' } as const;
  return { limit, cursor: since === undefined ? { position: start } : { position: start, sinceMs: Number(since) } };
}

// ---- The cursor --------------------------------------------------------------------------------

/**
 * base64url (no padding) of a small JSON object: `v` 1, `k` an object name and `i` the next line
 * in it (or `k` alone: after that object; or no `k`: from key time `s`, or the beginning), `s` the
 * read's since_ms. It names no app: the app is always the key's, so a cursor cannot read another
 * app's stream, and a forged one can only move within the key's own.
 */
const CURSOR_VERSION = 1;
const MAX_CURSOR_CHARS = 256;
/** A line index no object reaches (an apply counts at most 100 batches of 1,000 events). */
const MAX_LINE = 100_000_000;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

export function encodeCursor(cursor: StreamCursor): string {
  const { position } = cursor;
  const body: Record<string, unknown> = { v: CURSOR_VERSION };
  if (position.kind !== 'start') body.k = position.name;
  if (position.kind === 'at') body.i = position.line;
  if (cursor.sinceMs !== undefined) body.s = cursor.sinceMs;
  return Buffer.from(JSON.stringify(body)).toString('base64url');
}

/**
 * The cursor, or invalid_cursor: not base64url, not JSON, another version, a field unknown, missing
 * or out of range, or a position before where its filter's read starts.
 */
export function decodeCursor(text: string): StreamCursor {
  const invalid = () => streamError('invalid_cursor');
  if (text.length === 0 || text.length > MAX_CURSOR_CHARS || !BASE64URL.test(text)) throw invalid();
  let body: unknown;
  try {
    body = JSON.parse(Buffer.from(text, 'base64url').toString('utf8'));
  } catch {
    throw invalid();
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw invalid();
  const { v, k, i, s, ...rest } = body as Record<string, unknown>;
  if (Object.keys(rest).length > 0 || v !== CURSOR_VERSION) throw invalid();
  if (s !== undefined && !isTimeMs(s)) throw invalid();
  const sinceMs = s as number | undefined;
  const filter = sinceMs === undefined ? {} : { sinceMs };
  let cursor: StreamCursor;
  if (k === undefined) {
    if (i !== undefined) throw invalid();
    cursor = { position: { kind: 'start' }, ...filter };
  } else {
    if (typeof k !== 'string' || applyOfStreamName(k) === undefined) throw invalid();
    if (i === undefined) cursor = { position: { kind: 'after', name: k }, ...filter };
    else if (typeof i !== 'number' || !Number.isSafeInteger(i) || i < 0 || i > MAX_LINE) throw invalid();
    else cursor = { position: { kind: 'at', name: k, line: i }, ...filter };
  }
  // Only a cursor spelled as this endpoint spells it (no blanks, no other order, no other number form).
  if (encodeCursor(cursor) !== text) throw invalid();
  // Its position fits its filter: a read from since_ms lists after listAfter's start, so every
  // cursor it gives stands beyond it. One standing before it (made by hand) would read objects
  // that hold nothing for the filter: 1,000 GETs for an empty page (issue 36).
  if (cursor.position.kind !== 'start' && cursor.position.name <= listAfter({ kind: 'start' }, sinceMs)) throw invalid();
  return cursor;
}

// ---- A page ------------------------------------------------------------------------------------

export interface StreamPage {
  readonly events: StreamEvent[];
  /** Just after the last event returned (and past the objects read after it that hold nothing for the read). */
  readonly next: StreamCursor;
  /** Events of the read are there below the watermark now, after `next` (or may be, past the objects one LIST names). */
  readonly hasMore: boolean;
}

/** Key time of an object name (the time its apply opened). */
const keyTimeOf = (name: string): number => applyOfStreamName(name)?.openedMs ?? Number.POSITIVE_INFINITY;

/**
 * How far before since_ms a read starts listing. An apply opens after the events it counts were
 * received, so objects opened before since_ms hold none received at or after it; but received_ms
 * is the ingest host's clock and opened_ms the aggregator's, so the read starts this much earlier
 * (the tolerance the watermark already gives the hosts' clocks) and the received_ms filter drops
 * what it reads too early: once per read, a few seconds of objects.
 */
export const SINCE_CLOCK_MARGIN_MS = STREAM_SETTLE_MS;

/**
 * The LIST's StartAfter for a position. Names begin with their key time in 13 digits, so a time
 * alone sorts just before every name of that time: a read from since_ms skips the objects opened
 * before it (less SINCE_CLOCK_MARGIN_MS).
 */
function listAfter(position: StreamPosition, sinceMs: number | undefined): string {
  if (position.kind !== 'start') return position.name;
  if (sinceMs === undefined || sinceMs - SINCE_CLOCK_MARGIN_MS <= 0) return '';
  return String(Math.min(sinceMs - SINCE_CLOCK_MARGIN_MS, 9_999_999_999_999)).padStart(13, '0');
}

interface PlannedObject {
  readonly name: string;
  /** Compressed bytes, when the LIST gave them (not for the object a cursor stands in). */
  readonly size?: number;
  /** The first line to take. */
  readonly from: number;
}

/**
 * Reads a page: the object the cursor stands in (from its line), then the listed objects below the
 * watermark in key order, taking the events the read keeps until `limit`; then looks on for one
 * more kept event, to say has_more exactly. A page also ends before the event that would take its
 * events past MAX_PAGE_EVENT_BYTES. Objects are read a few at a time, ahead of the one
 * being taken, as many as the events per byte seen so far say the page still needs.
 */
export async function readStreamPage(source: StreamSource, appId: string, query: StreamQuery, watermark: number): Promise<StreamPage> {
  const { cursor, limit } = query;
  const { position, sinceMs } = cursor;
  const filter = sinceMs === undefined ? {} : { sinceMs };
  // Only after a clock step back could a cursor stand at or above the watermark: nothing to read there yet.
  if (position.kind !== 'start' && keyTimeOf(position.name) >= watermark) return { events: [], next: cursor, hasMore: false };

  const listing = await source.list(appId, listAfter(position, sinceMs), LIST_MAX_KEYS);
  const planned: PlannedObject[] = position.kind === 'at' ? [{ name: position.name, from: position.line }] : [];
  let belowWatermark = true;
  for (const object of listing.objects) {
    if (applyOfStreamName(object.name) === undefined) continue;
    if (keyTimeOf(object.name) >= watermark) {
      belowWatermark = false;
      break;
    }
    planned.push({ name: object.name, size: object.size, from: 0 });
  }

  const keep = (value: unknown): value is Record<string, unknown> => {
    if (typeof value !== 'object' || value === null) return false;
    const received = (value as { received_ms?: unknown }).received_ms;
    return sinceMs === undefined || (typeof received === 'number' && received >= sinceMs);
  };
  const reads = new ObjectReads(source, appId, planned);
  const events: StreamEvent[] = [];
  let bytes = 0;
  let next: StreamPosition = position;
  let hasMore = false;
  try {
    for (let index = 0; index < planned.length && !hasMore; index++) {
      const object = planned[index] as PlannedObject;
      reads.ahead(index, limit - events.length + 1);
      const lines = await reads.take(index);
      const full = events.length === limit;
      let line = object.from;
      for (; line < lines.length && events.length < limit; line++) {
        const value = lines[line];
        if (!keep(value)) continue;
        const event = streamEventOf(value);
        const size = Buffer.byteLength(JSON.stringify(event));
        // The event that would pass the page's bytes opens the next page.
        if (events.length > 0 && bytes + size > MAX_PAGE_EVENT_BYTES) break;
        events.push(event);
        bytes += size;
      }
      reads.saw(object, lines, keep);
      if (lines.slice(line).some(keep)) {
        // More of the read from `line` on: the page stops in this object, or just before it.
        if (!full) next = { kind: 'at', name: object.name, line };
        hasMore = true;
      } else {
        // Nothing more of the read in this object: the read goes on after it.
        next = { kind: 'after', name: object.name };
      }
    }
    if (!hasMore) hasMore = listing.truncated && belowWatermark;
  } finally {
    await reads.settle();
  }
  return { events, next: { position: next, ...filter }, hasMore };
}

/**
 * The objects a page reads, each fetched once, a few ahead of the one being taken. How many: as
 * many as the events still wanted need at the rate of kept events per compressed byte seen so far
 * (one at first, to learn it), up to MAX_OBJECTS_IN_FLIGHT and MAX_BYTES_IN_FLIGHT.
 */
class ObjectReads {
  private readonly fetched: Promise<readonly unknown[]>[] = [];
  private keptEvents = 0;
  private bytesSeen = 0;

  constructor(
    private readonly source: StreamSource,
    private readonly appId: string,
    private readonly planned: readonly PlannedObject[],
  ) {}

  /** Starts the reads the page will likely need from `index` on, to find `wanted` more events. */
  ahead(index: number, wanted: number): void {
    const count = this.aheadCount(index, wanted);
    // Started now, taken later (start has already caught a failure for the page to see then).
    for (let ahead = index; ahead < index + count; ahead++) void this.start(ahead);
  }

  take(index: number): Promise<readonly unknown[]> {
    return this.start(index);
  }

  /** Learns the rate of kept events per compressed byte from an object read whole. */
  saw(object: PlannedObject, lines: readonly unknown[], keep: (value: unknown) => boolean): void {
    if (object.size === undefined || object.from > 0) return;
    this.bytesSeen += object.size;
    this.keptEvents += lines.filter(keep).length;
  }

  /** Waits for every read started, so nothing started runs on after the page is answered. */
  async settle(): Promise<void> {
    await Promise.allSettled(this.fetched);
  }

  private aheadCount(index: number, wanted: number): number {
    const rate = this.bytesSeen > 0 ? this.keptEvents / this.bytesSeen : undefined;
    if (rate === undefined && index === 0) return 1;
    let count = 0;
    let bytes = 0;
    let expected = 0;
    for (let ahead = index; ahead < this.planned.length && count < MAX_OBJECTS_IN_FLIGHT; ahead++) {
      const size = this.planned[ahead]?.size ?? 0;
      if (count > 0 && (expected >= wanted || bytes + size > MAX_BYTES_IN_FLIGHT)) break;
      count++;
      bytes += size;
      // Unknown rate (only objects without a size seen): one event an object, the fewest an object that is there has.
      expected += rate === undefined ? 1 : Math.max(rate * size, 0);
    }
    return count;
  }

  /** The object's read, started once. */
  private start(index: number): Promise<readonly unknown[]> {
    let read = this.fetched[index];
    if (!read) {
      read = this.source.lines(this.appId, (this.planned[index] as PlannedObject).name);
      // A read started ahead and never taken (the page filled first) must not be an unhandled rejection.
      void read.catch(() => undefined);
      this.fetched[index] = read;
    }
    return read;
  }
}

// ---- Events ------------------------------------------------------------------------------------

const ATTRIBUTION_FIELDS = [
  'partner',
  'campaign',
  'attribution_type',
  'link_id',
  'ext_click_id',
  'sub1',
  'sub2',
  'sub3',
  'sub4',
  'sub5',
  'is_reinstall',
  'fraud_reasons',
  'install_corrected_ts',
  'install_event_id',
] as const satisfies readonly (keyof StreamAttribution)[];

const EVENT_FIELDS = [
  'event_id',
  'event_name',
  'install_uuid',
  'ts_ms',
  'corrected_ts',
  'received_ms',
  'revenue_usd',
  'platform',
  'properties',
  'country',
  'attribution',
  'consent',
] as const satisfies readonly (keyof StreamEvent)[];

const CONSENT_FIELDS = [
  'gdpr_applies',
  'tcf_string',
  'ad_user_data',
  'ad_personalization',
  'third_party_sharing',
  'measurement',
  'ts_ms',
  'event_id',
] as const satisfies readonly (keyof StreamConsent)[];

/** Only the documented members of a stored object, in their order, each null when absent; null for no object. */
function picked(stored: unknown, fields: readonly string[]): Record<string, unknown> | null {
  if (typeof stored !== 'object' || stored === null) return null;
  const served: Record<string, unknown> = {};
  for (const field of fields) served[field] = (stored as Record<string, unknown>)[field] ?? null;
  return served;
}

/** The members of a picked object that have a value; undefined for no object. */
const present = (served: Record<string, unknown> | null): Record<string, unknown> | undefined =>
  served ? Object.fromEntries(Object.entries(served).filter(([, value]) => value !== null)) : undefined;

/**
 * The event as served: the `event` of a stream line, with exactly the documented fields, in their
 * order. The aggregator writes nothing else there, and taking the fields by name keeps it so: a
 * field added to the line by mistake (a device id, an address) never reaches a client.
 */
export function streamEventOf(stored: Record<string, unknown>): StreamEvent {
  const event: Record<string, unknown> = {};
  for (const field of EVENT_FIELDS) event[field] = stored[field] ?? null;
  event.attribution = picked(stored.attribution, ATTRIBUTION_FIELDS);
  event.consent = picked(stored.consent, CONSENT_FIELDS);
  // An ad_revenue event's impression and a refund event's refund, their known members only, and a
  // purchase's transaction id; each absent on every other event.
  const impression = present(picked(stored.ad_revenue, IMPRESSION_MEMBERS));
  if (impression) event.ad_revenue = impression;
  const refund = present(picked(stored.refund, REFUND_MEMBERS));
  if (refund) event.refund = refund;
  if (typeof stored.transaction_id === 'string') event.transaction_id = stored.transaction_id;
  return event as unknown as StreamEvent;
}
