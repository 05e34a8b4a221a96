import { gzip, gzipSync } from 'node:zlib';
import { DAY_MS, dayOf } from '../common/days';
import { sha256Hex } from '../common/hashing';
import { isPlainObject } from '../common/json';
import { ESCAPED_KEY, type EventTexts, eventTexts, MULTI_LINE, REPEATED_DEVICE_ID } from './event-text';
import { EVENT_RULES, type EventVerdict, isStorable, isUuid } from './event-validation';

/**
 * The audit record of a batch (docs/ingestion.md): one gzip JSONL object per batch, one line per
 * event, accepted and rejected, in input order. The aggregator and `admin rebuild` read these
 * lines; docs/ingestion.md documents them and the hand-off message.
 */
export interface AuditBatch {
  readonly companyId: string;
  readonly appId: string;
  readonly receivedMs: number;
  /** SHA-256 of the raw body as sent: the object's name, so a retried batch lands on the same key. */
  readonly bodySha256: string;
  readonly clientIp: string;
  readonly sdkVersion?: string;
}

export interface AuditLine {
  index: number;
  status: 'accepted' | 'rejected';
  reason?: string;
  received_ms: number;
  corrected_ts?: number;
  client_ip: string;
  sdk_version: string | null;
  /** Lower-cased, whenever the event carries a well-formed one. */
  install_uuid?: string;
  /**
   * SHA-256 of "<app_id>:<device_id>", or of "<app_id>:<its JSON text>" for a device_id that is no
   * string (a rejected event's number, array or object): the device id itself is never stored.
   */
  device_hash?: string;
  /** The event as sent, minus device_id (unless null); null for an entry too deeply nested to store. */
  event: unknown;
}

/** The message on the aggregation queue, one per audit object. */
export interface AggregationMessage {
  version: 1;
  bucket: string;
  audit_key: string;
  company_id: string;
  app_id: string;
  accepted: number;
  rejected: number;
  received_ms: number;
}

/** SDK versions are echoed into every line; a longer header is cut, not refused. */
const MAX_SDK_VERSION_CHARS = 128;

export function auditKey(batch: AuditBatch): string {
  return `audit/${dayPath(batch.receivedMs)}/${batch.companyId}/${batch.appId}/${batch.bodySha256}.jsonl.gz`;
}

/** yyyy/mm/dd of an instant (UTC); the last day is kept, as nearly every batch is received on it. */
let lastDay: { number: number; path: string } | undefined;
function dayPath(ms: number): string {
  const number = Math.floor(ms / DAY_MS);
  if (lastDay?.number !== number) lastDay = { number, path: dayOf(ms).split('-').join('/') };
  return lastDay.path;
}

/**
 * The audit lines of a batch. Given `source`, the decompressed body that `events` was parsed
 * from or where eventTexts found each event in it, the lines also remember where each event is,
 * and encodeAuditObject copies those bytes instead of writing the parsed event out again with
 * JSON.stringify, which was a fifth of the handler's CPU (docs/ingestion.md, "The audit object").
 * The stored event is then the client's own JSON for it, which parses to the same value.
 */
export function auditLines(
  events: readonly unknown[],
  verdicts: readonly EventVerdict[],
  batch: AuditBatch,
  source?: Uint8Array | EventTexts,
): AuditLine[] {
  const sdkVersion = batch.sdkVersion ? batch.sdkVersion.slice(0, MAX_SDK_VERSION_CHARS) : null;
  const texts = source instanceof Uint8Array ? eventTexts(source, events.length) : source;
  const count = verdicts.length;
  const lines: AuditLine[] = new Array(count);
  const copies: number[] | undefined = texts === undefined ? undefined : new Array(count);
  const entries: number[] | undefined = texts === undefined ? undefined : new Array(count);
  const stored: unknown[] | undefined = texts === undefined ? undefined : new Array(count);
  // An SDK's batch is usually one device's events: its hash is computed once.
  let deviceId: string | undefined;
  let deviceHash = '';
  for (let position = 0; position < count; position++) {
    const verdict = verdicts[position];
    const index = verdict.index;
    const entry = events[index];
    // Every line is made with every field, so that all have one shape (the writers read them
    // fast); an undefined field is left out of the JSON all the same.
    const line: AuditLine = {
      index,
      status: verdict.status,
      reason: verdict.reason,
      received_ms: batch.receivedMs,
      corrected_ts: verdict.corrected_ts,
      client_ip: batch.clientIp,
      sdk_version: sdkVersion,
      // Only a bad_event entry can be too deep: every other entry passed the depth rule.
      event: verdict.reason === 'bad_event' && !isStorable(entry) ? null : entry,
      install_uuid: undefined,
      device_hash: undefined,
    };
    lines[position] = line;
    let copy = texts !== undefined && line.event !== null && (texts.flags[index] & MULTI_LINE) === 0 ? COPY : WRITE;
    if (isPlainObject(entry) && line.event !== null) {
      // An accepted entry passed the install_uuid rule already: the check runs once per entry.
      const install = entry.install_uuid;
      if (typeof install === 'string' && (verdict.status === 'accepted' || isUuid(install))) line.install_uuid = install.toLowerCase();
      const device = entry.device_id;
      // Any device id is cut out, whatever its type: a rejected event's number, array or object
      // (an IDFA in a wrapper) is as much a device id as a string. null names no device.
      if (device !== undefined && device !== null) {
        const { device_id: _cut, ...rest } = entry;
        if (typeof device !== 'string') line.device_hash = sha256Hex(`${batch.appId}:${JSON.stringify(device)}`);
        else {
          if (device !== deviceId) {
            deviceId = device;
            deviceHash = sha256Hex(`${batch.appId}:${device}`);
          }
          line.device_hash = deviceHash;
        }
        line.event = rest;
        if (copy === COPY) copy = canCutDeviceId(texts!, index) ? COPY_WITHOUT_DEVICE_ID : WRITE;
      }
    }
    if (texts !== undefined) {
      copies![position] = copy;
      entries![position] = index;
      stored![position] = line.event;
    }
  }
  if (texts !== undefined) {
    Object.defineProperty(lines, SOURCED, { value: { texts, copies: copies!, entries: entries!, events: stored! } satisfies SourcedLines });
  }
  return lines;
}

/**
 * A malformed install_uuid is searched for this many UUIDs at most: an SDK that mangles its
 * install_uuid (" <uuid>", "{<UUID>}", "urn:uuid:<uuid>") sends one, and a value packed with
 * thousands must not cost the aggregator a write for each.
 */
export const MAX_INSTALLS_PER_LINE = 4;

/** A UUID anywhere in a lower-cased text, overlapping ones too (the lookahead matches at every start). */
const HELD_UUID = /(?=([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}))/g;

/** The event's install_uuid as lower-cased text, whatever its type; '' when it has none. */
function installText(line: AuditLine): string {
  const event = line.event;
  if (!isPlainObject(event)) return '';
  const install = event.install_uuid;
  if (install === undefined || install === null) return '';
  return (typeof install === 'string' ? install : JSON.stringify(install)).toLowerCase();
}

/**
 * The installs a line holds data of (its client IP, its device hash): its install_uuid; for a line
 * without one, each UUID its event's install_uuid contains however malformed (" <uuid>",
 * "{<UUID>}", ["<uuid>"]), at most MAX_INSTALLS_PER_LINE. The aggregator indexes the line's object
 * under each (the `a#` items the privacy drain follows).
 */
export function installsOfLine(line: AuditLine): string[] {
  if (line.install_uuid !== undefined) return [line.install_uuid];
  const text = installText(line);
  if (text.length < 36) return [];
  const held = new Set<string>();
  for (const match of text.matchAll(HELD_UUID)) {
    held.add(match[1]);
    if (held.size === MAX_INSTALLS_PER_LINE) break;
  }
  return [...held];
}

/**
 * Whether a line holds data of the install (lower-cased UUID): its install_uuid is the install's,
 * or its event's install_uuid, whatever its form, contains it. The privacy drain erases such lines.
 */
export function lineOfInstall(line: AuditLine, installUuid: string): boolean {
  return line.install_uuid === installUuid || installText(line).includes(installUuid);
}

/** How encodeAuditObject writes a line's event: with JSON.stringify, or copied from the body. */
const WRITE = 0;
const COPY = 1;
const COPY_WITHOUT_DEVICE_ID = 2;

/**
 * What auditLines knew of the body: the text, where each entry is in it, how each line's event is
 * written, and the entry and the event each line had then (a line changed since is written out).
 * A non-enumerable property of the array auditLines returned (a WeakMap cost a tenth of the
 * handler's CPU in garbage collection): any other array of lines (the privacy drain's rewrite, a
 * test's) is written out by toJsonLines.
 */
interface SourcedLines {
  readonly texts: EventTexts;
  readonly copies: readonly number[];
  readonly entries: readonly number[];
  readonly events: readonly unknown[];
}
const SOURCED = Symbol('audit lines sourced from the body');

/** Exactly one top-level device_id member, found where the scanner can be sure of its keys. */
function canCutDeviceId(texts: EventTexts, index: number): boolean {
  return texts.spans[4 * index + 2] >= 0 && (texts.flags[index] & (MULTI_LINE | ESCAPED_KEY | REPEATED_DEVICE_ID)) === 0;
}

/**
 * JSON Lines: one JSON document per line, each line ending in a newline; each line is exactly
 * what JSON.stringify(line) writes (same keys in the same order, undefined fields left out).
 *
 * Written by hand because it runs on the hot path whenever the body is not at hand: the fields
 * every line of a batch shares (received_ms, client_ip, sdk_version) are encoded once, not once
 * per line, and only the event, the client's own JSON, goes through JSON.stringify. A unit test
 * holds it to JSON.stringify's output.
 */
export function toJsonLines(lines: readonly AuditLine[]): string {
  let out = '';
  let receivedMs: number | undefined;
  let receivedJson = '';
  let clientIp: string | undefined;
  let sdkVersion: string | null | undefined;
  let sharedJson = '';
  for (const line of lines) {
    if (line.received_ms !== receivedMs) {
      receivedMs = line.received_ms;
      receivedJson = `,"received_ms":${number(receivedMs)}`;
    }
    if (line.client_ip !== clientIp || line.sdk_version !== sdkVersion) {
      clientIp = line.client_ip;
      sdkVersion = line.sdk_version;
      sharedJson = sharedFields(clientIp, sdkVersion);
    }
    out += `{"index":${number(line.index)},"status":${line.status === 'accepted' ? '"accepted"' : json(line.status)}`;
    if (line.reason !== undefined) out += `,"reason":${json(line.reason)}`;
    out += receivedJson;
    if (line.corrected_ts !== undefined) out += `,"corrected_ts":${number(line.corrected_ts)}`;
    out += sharedJson;
    if (line.event !== undefined) out += `,"event":${JSON.stringify(line.event)}`;
    // A well-formed UUID and a hex digest (all auditLines stores in these) have nothing to escape.
    if (line.install_uuid !== undefined) out += `,"install_uuid":"${line.install_uuid}"`;
    if (line.device_hash !== undefined) out += `,"device_hash":"${line.device_hash}"`;
    out += '}\n';
  }
  return out;
}

const json = (value: string) => JSON.stringify(value);
const sharedFields = (clientIp: string, sdkVersion: string | null) =>
  `,"client_ip":${json(clientIp)},"sdk_version":${sdkVersion === null ? 'null' : json(sdkVersion)}`;

/**
 * JSON's spelling of a number: what JSON.stringify writes, null for NaN and the infinities. An
 * epoch-ms integer is written as two small halves: V8 turns a small integer into a string from
 * a cache, and a 13-digit one by the slow general path, for every line.
 */
function number(value: number): string {
  if (Number.isSafeInteger(value) && value >= 1e9) {
    const high = Math.floor(value / 1e9);
    const low = value - high * 1e9;
    return `${high}${String(low).padStart(9, '0')}`;
  }
  return Number.isFinite(value) ? String(value) : 'null';
}

/**
 * Gzip level 1 (docs/ingestion.md has the numbers: level 6 costs about three times the CPU for
 * objects about 11% smaller). Up to 128 KiB of JSONL (a few hundred events) is compressed
 * synchronously: that blocks the event loop for a fraction of a millisecond, less than the
 * thread-pool round trip costs; a larger batch goes to zlib's thread pool so that the local
 * runtime, which serves every route from one process, is not held up.
 */
export const SYNC_AUDIT_GZIP_MAX_BYTES = 128 * 1024;
const AUDIT_GZIP = { level: 1 };

export function encodeAuditObject(lines: readonly AuditLine[]): Promise<Buffer> {
  const sourced = (lines as { [SOURCED]?: SourcedLines })[SOURCED];
  const jsonl = (sourced && jsonLinesFromBody(lines, sourced)) ?? toJsonLines(lines);
  if (jsonl.length <= SYNC_AUDIT_GZIP_MAX_BYTES) return Promise.resolve(gzipSync(jsonl, AUDIT_GZIP));
  // The scratch buffer is for this call only: the thread pool gets a copy.
  const input = typeof jsonl === 'string' || jsonl.buffer !== scratch?.buffer ? jsonl : Buffer.from(jsonl);
  return new Promise((resolve, reject) => gzip(input, AUDIT_GZIP, (error, body) => (error ? reject(error) : resolve(body))));
}

/**
 * The bytes of toJsonLines' lines, written straight into a buffer with each event copied from the
 * body: no string is built, flattened and encoded, and nothing is left for the garbage collector,
 * which is most of what writing the lines as text cost (a string of every piece, then one of the
 * whole, then its UTF-8). Undefined when the lines do not share received_ms, client_ip and
 * sdk_version (auditLines makes them so; anything else is toJsonLines' business).
 *
 * The body is first copied behind the space the lines can take, so that every event is one
 * copyWithin. A batch compressed in line uses one scratch buffer, reused by every batch. What
 * the lines share is made into as few pieces as possible (an accepted line is its index, one
 * piece, its corrected_ts, one piece, its event and install_uuid), and a piece or string of more
 * than a few bytes is written by one native copy rather than byte by byte.
 */
function jsonLinesFromBody(lines: readonly AuditLine[], sourced: SourcedLines): Buffer | undefined {
  const count = lines.length;
  if (count === 0) return undefined;
  const { received_ms, client_ip, sdk_version } = lines[0];
  const received = `,"received_ms":${number(received_ms)}`;
  const receivedPiece = utf8(received);
  const acceptedPiece = utf8(`,"status":"accepted"${received},"corrected_ts":`);
  const sharedPiece = utf8(`${sharedFields(client_ip, sdk_version)},"event":`);
  const { text, spans } = sourced.texts;

  // Room for the lines: every piece at its longest, three UTF-8 bytes to a UTF-16 unit, six
  // characters to one that JSON escapes (\u0000).
  let written: (string | undefined)[] | undefined;
  let room = count * (LINE_ROOM + receivedPiece.length + acceptedPiece.length + sharedPiece.length);
  for (let position = 0; position < count; position++) {
    const line = lines[position];
    if (line.received_ms !== received_ms || line.client_ip !== client_ip || line.sdk_version !== sdk_version) return undefined;
    if (howWritten(line, position, sourced) === WRITE) {
      const event = line.event === undefined ? undefined : JSON.stringify(line.event);
      (written ??= new Array(count))[position] = event;
      room += 3 * (event?.length ?? 0);
    } else room += spans[4 * line.index + 1] - spans[4 * line.index];
    room +=
      6 * (line.status.length + (line.reason?.length ?? 0)) + 3 * ((line.install_uuid?.length ?? 0) + (line.device_hash?.length ?? 0));
  }
  const out = bufferOf(room + text.length);
  out.set(text, room);

  let at = 0;
  for (let position = 0; position < count; position++) {
    const line = lines[position];
    at = putNumber(out, putBytes(out, at, INDEX_KEY), line.index);
    if (line.status === 'accepted' && line.reason === undefined && line.corrected_ts !== undefined) {
      at = putNumber(out, putBytes(out, at, acceptedPiece), line.corrected_ts);
    } else {
      const rejected = line.status === 'rejected' && line.reason !== undefined ? REJECTED_PIECES.get(line.reason) : undefined;
      if (rejected !== undefined) at = putBytes(out, at, rejected);
      else {
        at = putString(out, putBytes(out, at, STATUS_KEY), json(line.status));
        if (line.reason !== undefined) at = putString(out, putBytes(out, at, REASON_KEY), json(line.reason));
      }
      at = putBytes(out, at, receivedPiece);
      if (line.corrected_ts !== undefined) at = putNumber(out, putBytes(out, at, CORRECTED_TS_KEY), line.corrected_ts);
    }
    at = putBytes(out, at, sharedPiece);
    const entry = 4 * line.index;
    const how = howWritten(line, position, sourced);
    if (how === COPY) {
      out.copyWithin(at, room + spans[entry], room + spans[entry + 1]);
      at += spans[entry + 1] - spans[entry];
    } else if (how === COPY_WITHOUT_DEVICE_ID) {
      out.copyWithin(at, room + spans[entry], room + spans[entry + 2]);
      at += spans[entry + 2] - spans[entry];
      out.copyWithin(at, room + spans[entry + 3], room + spans[entry + 1]);
      at += spans[entry + 1] - spans[entry + 3];
    } else if (written![position] !== undefined) at = putString(out, at, written![position]!);
    else at -= EVENT_KEY_LENGTH; // no event: toJsonLines leaves the field out
    if (line.install_uuid !== undefined) at = putByte(out, putString(out, putBytes(out, at, INSTALL_UUID_KEY), line.install_uuid), QUOTE);
    if (line.device_hash !== undefined) at = putByte(out, putString(out, putBytes(out, at, DEVICE_HASH_KEY), line.device_hash), QUOTE);
    at = putByte(out, putByte(out, at, CLOSE_BRACE), LINE_FEED);
  }
  return out.subarray(0, at);
}

/** COPY or COPY_WITHOUT_DEVICE_ID while the line holds the entry and event auditLines gave it; else WRITE. */
function howWritten(line: AuditLine, position: number, sourced: SourcedLines): number {
  return line.event === sourced.events[position] && line.index === sourced.entries[position] ? sourced.copies[position] : WRITE;
}

const utf8 = (text: string) => Buffer.from(text, 'utf8');
const INDEX_KEY = utf8('{"index":');
const STATUS_KEY = utf8(',"status":');
const REASON_KEY = utf8(',"reason":');
const CORRECTED_TS_KEY = utf8(',"corrected_ts":');
const EVENT_KEY_LENGTH = ',"event":'.length;
/** The status and reason of a rejected line, for every reason the rules give. */
const REJECTED_PIECES = new Map(EVENT_RULES.map(({ reason }) => [reason as string, utf8(`,"status":"rejected","reason":${json(reason)}`)]));
const INSTALL_UUID_KEY = utf8(',"install_uuid":"');
const DEVICE_HASH_KEY = utf8(',"device_hash":"');
const QUOTE = 0x22;
const CLOSE_BRACE = 0x7d;
const LINE_FEED = 0x0a;
/** The constant pieces of a line and two numbers of at most 25 characters each. */
const LINE_ROOM = 200;

/** The scratch buffer (256 KiB, made on first use); a batch that needs more gets its own. */
const SCRATCH_BYTES = 256 * 1024;
let scratch: Buffer | undefined;
function bufferOf(bytes: number): Buffer {
  if (bytes > SCRATCH_BYTES) return Buffer.allocUnsafe(bytes);
  scratch ??= Buffer.allocUnsafe(SCRATCH_BYTES);
  return scratch;
}

function putByte(out: Buffer, at: number, byte: number): number {
  out[at] = byte;
  return at + 1;
}

/**
 * Up to this many bytes or characters are written one by one; a longer piece or string in one
 * native copy (Uint8Array.set, Buffer.write), which costs about as much as 16 bytes one by one.
 */
const BYTE_BY_BYTE = 16;

function putBytes(out: Buffer, at: number, bytes: Uint8Array): number {
  if (bytes.length > BYTE_BY_BYTE) out.set(bytes, at);
  else for (let i = 0; i < bytes.length; i++) out[at + i] = bytes[i];
  return at + bytes.length;
}

/** A string as UTF-8: a short one character by character while it is ASCII, which it almost always is. */
function putString(out: Buffer, at: number, text: string): number {
  if (text.length > BYTE_BY_BYTE) return at + out.write(text, at, 'utf8');
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 0x80) return at + out.write(text, at, 'utf8');
    out[at + i] = code;
  }
  return at + text.length;
}

/**
 * JSON's spelling of a number, digit by digit for a safe integer: an epoch-ms value in two halves
 * below 2^31, which V8 keeps as small integers (the remainder of a larger double is a libm call).
 */
function putNumber(out: Buffer, at: number, value: number): number {
  if (!Number.isSafeInteger(value)) return putString(out, at, number(value));
  if (value < 0) {
    out[at++] = 0x2d;
    value = -value;
  }
  if (value < 1e9) return putDigits(out, at, value, digitsOf(value));
  const high = Math.floor(value / 1e9);
  return putDigits(out, putDigits(out, at, high, digitsOf(high)), value - high * 1e9, 9);
}

const digitsOf = (value: number) =>
  value < 1e4
    ? value < 10
      ? 1
      : value < 100
        ? 2
        : value < 1e3
          ? 3
          : 4
    : value < 1e6
      ? value < 1e5
        ? 5
        : 6
      : value < 1e7
        ? 7
        : value < 1e8
          ? 8
          : 9;

/** "00" to "99": two digits per division. */
const DIGIT_PAIRS = utf8(Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0')).join(''));

/** A non-negative integer below 2^31 as exactly `digits` digits, zero-padded. */
function putDigits(out: Buffer, at: number, value: number, digits: number): number {
  value |= 0; // an integer to the compiler too, or `%` below is a floating-point remainder
  let i = at + digits;
  while (i - at >= 2) {
    const pair = 2 * (value % 100);
    value = (value / 100) | 0;
    out[--i] = DIGIT_PAIRS[pair + 1];
    out[--i] = DIGIT_PAIRS[pair];
  }
  if (i > at) out[--i] = 0x30 + (value % 10);
  return at + digits;
}

export function aggregationMessage(
  bucket: string,
  key: string,
  batch: AuditBatch,
  counts: { accepted: number; rejected: number },
): AggregationMessage {
  return {
    version: 1,
    bucket,
    audit_key: key,
    company_id: batch.companyId,
    app_id: batch.appId,
    accepted: counts.accepted,
    rejected: counts.rejected,
    received_ms: batch.receivedMs,
  };
}
