import { gzip } from 'node:zlib';
import { isPlainObject } from '../common/json';
import { keptGzip } from '../common/kept-zlib';
import { EVENT_RULES, type EventVerdict } from '../ingest/event-validation';
import { ESCAPED_KEY, type EventTexts, MULTI_LINE, REPEATED_DEVICE_ID } from './event-text';
import { type AuditConversions, auditLine, DeviceHashes, installOf, sdkVersionOf, storedEntry } from './lines';
import type { AuditBatch, AuditFx, AuditLine } from './types';

/**
 * The audit object's bytes (docs/ingestion.md, "The audit object"): gzip JSON Lines, one line per
 * event. Two writers give the same lines: toJsonLines, for any array of lines, and a fast writer
 * (jsonLinesFromBody) that writes a batch's lines straight from its verdicts, copying each event's
 * bytes from the body the batch was parsed from, without making the lines at all.
 */

/** How jsonLinesFromBody writes a line's event: with JSON.stringify, or copied from the body. */
const WRITE = 0;
const COPY = 1;
const COPY_WITHOUT_DEVICE_ID = 2;
/**
 * Added to COPY or COPY_WITHOUT_DEVICE_ID for an event ingest converted (docs/ingestion.md,
 * "Currencies"): its `revenue_usd` member, which the body did not have, is written after the
 * copied members, where `{ ...event, revenue_usd }` puts it, rather than the whole event written out.
 */
const WITH_REVENUE_USD = 4;

/** Exactly one top-level device_id member, found where the scanner can be sure of its keys. */
function canCutDeviceId(texts: EventTexts, index: number): boolean {
  const cutFrom = texts.spans[4 * index + 2];
  const flags = texts.flags[index];
  return cutFrom !== undefined && cutFrom >= 0 && flags !== undefined && (flags & (MULTI_LINE | ESCAPED_KEY | REPEATED_DEVICE_ID)) === 0;
}

/**
 * JSON Lines: one JSON document per line, each line ending in a newline; each line is exactly
 * what JSON.stringify(line) writes (same keys in the same order, undefined fields left out).
 *
 * Written by hand because it runs on the hot path whenever the body is not at hand: the fields
 * every line of a batch shares (received_ms, client_ip, sdk_version, country) are encoded once, not once
 * per line, and only the event, the client's own JSON, goes through JSON.stringify. A unit test
 * holds it to JSON.stringify's output.
 */
export function toJsonLines(lines: readonly AuditLine[]): string {
  let out = '';
  let receivedMs: number | undefined;
  let receivedJson = '';
  let clientIp: string | undefined;
  let sdkVersion: string | null | undefined;
  let country: string | undefined;
  let sharedJson = '';
  for (const line of lines) {
    if (line.received_ms !== receivedMs) {
      receivedMs = line.received_ms;
      receivedJson = `,"received_ms":${number(receivedMs)}`;
    }
    if (line.client_ip !== clientIp || line.sdk_version !== sdkVersion || line.country !== country) {
      clientIp = line.client_ip;
      sdkVersion = line.sdk_version;
      country = line.country;
      sharedJson = sharedFields(clientIp, sdkVersion, country);
    }
    out += `{"index":${number(line.index)},"status":${line.status === 'accepted' ? '"accepted"' : json(line.status)}`;
    if (line.reason !== undefined) out += `,"reason":${json(line.reason)}`;
    out += receivedJson;
    if (line.corrected_ts !== undefined) out += `,"corrected_ts":${number(line.corrected_ts)}`;
    out += sharedJson;
    if (line.event !== undefined) out += `,"event":${JSON.stringify(line.event)}`;
    out += idsJson(line.install_uuid, line.device_hash);
    if (line.fx !== undefined) out += `,"fx":${JSON.stringify(line.fx)}`;
    out += '}\n';
  }
  return out;
}

const json = (value: string) => JSON.stringify(value);
const sharedFields = (clientIp: string, sdkVersion: string | null, country: string | undefined) =>
  `,"client_ip":${json(clientIp)},"sdk_version":${sdkVersion === null ? 'null' : json(sdkVersion)}${country === undefined ? '' : `,"country":${json(country)}`}`;

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
 * Gzip level 1: level 6 costs several times the CPU for objects only a little smaller
 * (docs/ingestion.md has the numbers). Up to 128 KiB of JSONL (a few hundred events) is compressed
 * synchronously: that blocks the event loop only briefly, for less than the thread-pool round trip
 * costs; a larger batch goes to zlib's thread pool so that the local
 * runtime, which serves every route from one process, is not held up.
 */
export const SYNC_AUDIT_GZIP_MAX_BYTES = 128 * 1024;
const AUDIT_GZIP = { level: 1 };
/** The synchronous gzip, on a zlib engine kept from one batch to the next (common/kept-zlib.ts). */
const gzipInLine = keptGzip(AUDIT_GZIP.level, SYNC_AUDIT_GZIP_MAX_BYTES);

/**
 * The object is typed as the gzip file it is (no Content-Encoding), so anything that downloads it
 * gets the .jsonl.gz bytes and not a transparently inflated copy under a .gz name.
 */
export const AUDIT_CONTENT_TYPE = 'application/gzip';

/** How many of a record's lines are accepted and rejected (the object's metadata). */
export interface AuditCounts {
  readonly accepted: number;
  readonly rejected: number;
}

export function countsOf(lines: readonly AuditLine[]): AuditCounts {
  const accepted = lines.filter((line) => line.status === 'accepted').length;
  return { accepted, rejected: lines.length - accepted };
}

/** The object's metadata: its format and record version, the batch, and its counts. */
export function auditMetadata(batch: AuditBatch, counts: AuditCounts): Record<string, string> {
  return {
    format: 'jsonl',
    'record-version': '1',
    'company-id': batch.companyId,
    'app-id': batch.appId,
    'received-ms': String(batch.receivedMs),
    accepted: String(counts.accepted),
    rejected: String(counts.rejected),
  };
}

/** Any array of lines as the object's bytes (toJsonLines, then gzip). */
export function encodeAuditObject(lines: readonly AuditLine[]): Promise<Buffer> {
  return gzipJsonLines(toJsonLines(lines));
}

/** JSON Lines gzipped: in line up to SYNC_AUDIT_GZIP_MAX_BYTES, else on zlib's thread pool. */
export function gzipJsonLines(jsonl: Buffer | string): Promise<Buffer> {
  if (jsonl.length <= SYNC_AUDIT_GZIP_MAX_BYTES) return Promise.resolve(gzipInLine(typeof jsonl === 'string' ? Buffer.from(jsonl) : jsonl));
  // The scratch buffer is for this call only: the thread pool gets a copy.
  const input = typeof jsonl === 'string' || jsonl.buffer !== scratch?.buffer ? jsonl : Buffer.from(jsonl);
  return new Promise((resolve, reject) => gzip(input, AUDIT_GZIP, (error, body) => (error ? reject(error) : resolve(body))));
}

/**
 * The bytes toJsonLines writes for auditLines(events, verdicts, batch, conversions), written
 * straight from the verdicts into a buffer with each event copied from the body: the lines are
 * never made (nor each event's copy without its device_id), no string is built, flattened and
 * encoded, and nothing is left for the garbage collector, which is most of what writing the
 * lines as text cost (docs/ingestion.md, "Copying each event from the body"). An entry whose text
 * cannot be copied (on several lines, a key written with an escape, a revenue_usd member beside a
 * converted revenue, too deep to store) has its line made and its event written with JSON.stringify.
 *
 * The body is first copied behind the space the lines can take, so that every event is one
 * copyWithin. A batch compressed in line uses one scratch buffer, reused by every batch. What
 * the lines share is made into as few pieces as possible (an accepted line is its index, one
 * piece, its corrected_ts, one piece, its event and install_uuid), and a piece or string of more
 * than a few bytes is written by one native copy rather than byte by byte. Undefined when the
 * text does not give every entry's span (the caller writes the lines out).
 */
export function jsonLinesFromBody(
  events: readonly unknown[],
  verdicts: readonly EventVerdict[],
  batch: AuditBatch,
  texts: EventTexts,
  conversions?: AuditConversions,
): Buffer | undefined {
  const count = verdicts.length;
  const sdkVersion = sdkVersionOf(batch);
  const received = `,"received_ms":${number(batch.receivedMs)}`;
  const receivedPiece = utf8(received);
  const acceptedPiece = utf8(`,"status":"accepted"${received},"corrected_ts":`);
  const sharedPiece = utf8(`${sharedFields(batch.clientIp, sdkVersion, batch.country)},"event":`);
  const { text, spans } = texts;
  const devices = new DeviceHashes(batch.appId);

  // How each line's event is written, and room for the lines: every piece at its longest, three
  // UTF-8 bytes to a UTF-16 unit, six characters to one that JSON escapes (\u0000).
  const hows: number[] = new Array(count);
  // The lines written out, by position, and their events' JSON text.
  let writtenLines: (AuditLine | undefined)[] | undefined;
  let written: (string | undefined)[] | undefined;
  // The fx of lines with a converted revenue (docs/ingestion.md, "Currencies"), by position.
  let fxWritten: (AuditFx | undefined)[] | undefined;
  let room = count * (LINE_ROOM + IDS_ROOM + receivedPiece.length + acceptedPiece.length + sharedPiece.length);
  for (let position = 0; position < count; position++) {
    const verdict = verdicts[position];
    if (verdict === undefined) return undefined;
    const entry = events[verdict.index];
    const how = howWritten(entry, verdict, texts, conversions);
    hows[position] = how;
    room += 6 * (verdict.status.length + (verdict.reason?.length ?? 0));
    let fx: AuditFx | undefined;
    if (how === WRITE) {
      const line = auditLine(entry, verdict, batch, sdkVersion, devices, conversions);
      const event = line.event === undefined ? undefined : JSON.stringify(line.event);
      writtenLines ??= new Array(count);
      writtenLines[position] = line;
      written ??= new Array(count);
      written[position] = event;
      room += 3 * (event?.length ?? 0);
      fx = line.fx;
    } else {
      const start = spans[4 * verdict.index];
      const end = spans[4 * verdict.index + 1];
      if (start === undefined || end === undefined) return undefined;
      room += end - start + REVENUE_USD_ROOM;
      if ((how & WITH_REVENUE_USD) !== 0) fx = conversions?.get(verdict.index)?.fx;
    }
    if (fx !== undefined) {
      fxWritten ??= new Array(count);
      fxWritten[position] = fx;
      room += FX_ROOM + 3 * (fx.currency.length + fx.rate_day.length);
    }
  }
  const out = bufferOf(room + text.length);
  out.set(text, room);

  let at = 0;
  let idsFrom = -1;
  let idsTo = -1;
  let idsInstall: string | undefined;
  let idsHash: string | undefined;
  for (let position = 0; position < count; position++) {
    const verdict = verdicts[position];
    const how = hows[position];
    if (verdict === undefined || how === undefined) throw new Error(`no verdict for the audit line at ${position}`);
    const index = verdict.index;
    at = putNumber(out, putBytes(out, at, INDEX_KEY), index);
    if (verdict.status === 'accepted' && verdict.reason === undefined && verdict.corrected_ts !== undefined) {
      at = putNumber(out, putBytes(out, at, acceptedPiece), verdict.corrected_ts);
    } else {
      const rejected = verdict.status === 'rejected' && verdict.reason !== undefined ? REJECTED_PIECES.get(verdict.reason) : undefined;
      if (rejected !== undefined) at = putBytes(out, at, rejected);
      else {
        at = putString(out, putBytes(out, at, STATUS_KEY), json(verdict.status));
        if (verdict.reason !== undefined) at = putString(out, putBytes(out, at, REASON_KEY), json(verdict.reason));
      }
      at = putBytes(out, at, receivedPiece);
      if (verdict.corrected_ts !== undefined) at = putNumber(out, putBytes(out, at, CORRECTED_TS_KEY), verdict.corrected_ts);
    }
    at = putBytes(out, at, sharedPiece);
    let install: string | undefined;
    let hash: string | undefined;
    if (how !== WRITE) {
      at = copyEvent(out, at, room, spans, 4 * index, how & ~WITH_REVENUE_USD);
      if ((how & WITH_REVENUE_USD) !== 0) at = putRevenueUsd(out, at, conversions?.get(index)?.revenueUsd);
      const entry = events[index];
      if (isPlainObject(entry)) {
        // What auditLine stores of a copied entry: its install_uuid (a UUID) and its device id's hash.
        install = installOf(entry, verdict);
        const device = entry.device_id;
        if (device !== undefined && device !== null) hash = devices.of(device);
      }
    } else {
      const event = written?.[position];
      if (event !== undefined) at = putString(out, at, event);
      else at -= EVENT_KEY_LENGTH; // no event: toJsonLines leaves the field out
      const line = writtenLines?.[position];
      install = line?.install_uuid;
      hash = line?.device_hash;
    }
    // The install_uuid and device_hash members: copied from the line before when it had the same.
    if (idsFrom >= 0 && install === idsInstall && hash === idsHash) {
      out.copyWithin(at, idsFrom, idsTo);
      at += idsTo - idsFrom;
    } else {
      idsInstall = install;
      idsHash = hash;
      idsFrom = at;
      if (install !== undefined) at = putByte(out, putUuidLowerCase(out, putBytes(out, at, INSTALL_UUID_KEY), install), QUOTE);
      if (hash !== undefined) at = putByte(out, putAscii(out, putBytes(out, at, DEVICE_HASH_KEY), hash), QUOTE);
      idsTo = at;
    }
    const fx = fxWritten?.[position];
    if (fx !== undefined) at = putFx(out, at, fx);
    at = putByte(out, putByte(out, at, CLOSE_BRACE), LINE_FEED);
  }
  return out.subarray(0, at);
}

/**
 * How an entry's event is written: copied from the body as it is, or without its device_id member
 * (auditLine stores it without), each with revenue_usd after it when it was converted; or
 * written out (WRITE) where the copy would not be that event's JSON.
 */
function howWritten(entry: unknown, verdict: EventVerdict, texts: EventTexts, conversions: AuditConversions | undefined): number {
  const index = verdict.index;
  // An entry the scan has no flags for is written out, as one on several lines is.
  if (storedEntry(entry, verdict) === null || ((texts.flags[index] ?? MULTI_LINE) & MULTI_LINE) !== 0) return WRITE;
  if (!isPlainObject(entry)) return COPY;
  let how = COPY;
  const device = entry.device_id;
  if (device !== undefined && device !== null) {
    if (!canCutDeviceId(texts, index)) return WRITE;
    how = COPY_WITHOUT_DEVICE_ID;
  }
  // Still copied, with revenue_usd written after it, unless the body has a revenue_usd member (a
  // null one passes the rules) whose place the spread keeps.
  if (conversions?.get(index) !== undefined) return Object.hasOwn(entry, 'revenue_usd') ? WRITE : how | WITH_REVENUE_USD;
  return how;
}

/**
 * A line's install_uuid and device_hash members: a well-formed UUID and a hex digest (all
 * auditLines stores in these) have nothing to escape.
 */
const idsJson = (installUuid: string | undefined, deviceHash: string | undefined) =>
  `${installUuid === undefined ? '' : `,"install_uuid":"${installUuid}"`}${deviceHash === undefined ? '' : `,"device_hash":"${deviceHash}"`}`;

/**
 * The entry's text copied from the body, which lies `room` bytes on in `out` (spans as eventTexts
 * gives them, `entry` four times the entry's index), without its device_id member for
 * COPY_WITHOUT_DEVICE_ID. jsonLinesFromBody made room for it, having found its span.
 */
function copyEvent(out: Buffer, at: number, room: number, spans: readonly number[], entry: number, how: number): number {
  const start = spans[entry];
  const end = spans[entry + 1];
  if (start === undefined || end === undefined) throw new Error(`no span for the audit event at ${entry / 4}`);
  if (how === COPY) {
    out.copyWithin(at, room + start, room + end);
    return at + end - start;
  }
  // auditLines chose COPY_WITHOUT_DEVICE_ID only where the scan found the member (canCutDeviceId).
  const cutFrom = spans[entry + 2];
  const cutTo = spans[entry + 3];
  if (cutFrom === undefined || cutTo === undefined || cutFrom < 0) throw new Error(`no device_id span for the audit event at ${entry / 4}`);
  out.copyWithin(at, room + start, room + cutFrom);
  at += cutFrom - start;
  out.copyWithin(at, room + cutTo, room + end);
  return at + end - cutTo;
}

/**
 * The converted event's `revenue_usd` as the last member of the event just copied, which ends in
 * `}`: what JSON.stringify writes for `{ ...event, revenue_usd }` when the event had no such member.
 */
function putRevenueUsd(out: Buffer, at: number, usd: number | undefined): number {
  if (out[at - 1] !== CLOSE_BRACE || usd === undefined) throw new Error('a converted audit event must be an object with revenue_usd');
  return putByte(out, putNumber(out, putBytes(out, at - 1, REVENUE_USD_KEY), usd), CLOSE_BRACE);
}

/**
 * A line's fx member as JSON.stringify writes it, straight into the buffer: the code is an ISO
 * 4217 code and the day YYYY-MM-DD (nothing to escape), the amount and rate finite numbers
 * (convertRevenue's).
 */
function putFx(out: Buffer, at: number, fx: AuditFx): number {
  at = putString(out, putBytes(out, at, FX_CURRENCY_KEY), fx.currency);
  at = putNumber(out, putBytes(out, at, FX_AMOUNT_KEY), fx.amount);
  at = putNumber(out, putBytes(out, at, FX_RATE_KEY), fx.rate);
  return putBytes(out, putString(out, putBytes(out, at, FX_RATE_DAY_KEY), fx.rate_day), FX_END);
}

const utf8 = (text: string) => Buffer.from(text, 'utf8');
const INDEX_KEY = utf8('{"index":');
const STATUS_KEY = utf8(',"status":');
const REASON_KEY = utf8(',"reason":');
const CORRECTED_TS_KEY = utf8(',"corrected_ts":');
const EVENT_KEY_LENGTH = ',"event":'.length;
/** The status and reason of a rejected line, for every reason the rules give. */
const REJECTED_PIECES = new Map(EVENT_RULES.map(({ reason }) => [reason as string, utf8(`,"status":"rejected","reason":${json(reason)}`)]));
const FX_CURRENCY_KEY = utf8(',"fx":{"currency":"');
const FX_AMOUNT_KEY = utf8('","amount":');
const FX_RATE_KEY = utf8(',"rate":');
const FX_RATE_DAY_KEY = utf8(',"rate_day":"');
const FX_END = utf8('"}');
/** A line's fx member but its code and day: the pieces and two numbers of at most 25 characters each. */
const FX_ROOM = FX_CURRENCY_KEY.length + FX_AMOUNT_KEY.length + FX_RATE_KEY.length + FX_RATE_DAY_KEY.length + FX_END.length + 50;
const INSTALL_UUID_KEY = utf8(',"install_uuid":"');
const DEVICE_HASH_KEY = utf8(',"device_hash":"');
const QUOTE = 0x22;
const REVENUE_USD_KEY = utf8(',"revenue_usd":');
/** The most a copied event may grow by: its revenue_usd member (a number of at most 25 characters). */
const REVENUE_USD_ROOM = REVENUE_USD_KEY.length + 25;
const CLOSE_BRACE = 0x7d;
const LINE_FEED = 0x0a;
/** The constant pieces of a line and two numbers of at most 25 characters each. */
const LINE_ROOM = 200;
/** A line's install_uuid (a UUID) and device_hash (a SHA-256 hex digest) members. */
const IDS_ROOM = INSTALL_UUID_KEY.length + 36 + 1 + DEVICE_HASH_KEY.length + 64 + 1;

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
  else {
    for (let i = 0; i < bytes.length; i++) {
      // Never undefined below bytes.length; the check costs nothing once V8 has compiled the loop.
      const byte = bytes[i];
      if (byte === undefined) break;
      out[at + i] = byte;
    }
  }
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
 * A UUID lower-cased, character by character: a hex digit's or a dash's code with 0x20 set is the
 * lower-case letter or itself (installOf gives only UUIDs).
 */
function putUuidLowerCase(out: Buffer, at: number, uuid: string): number {
  for (let i = 0; i < uuid.length; i++) out[at + i] = uuid.charCodeAt(i) | 0x20;
  return at + uuid.length;
}

/** A string of ASCII characters (a hex digest) character by character. */
function putAscii(out: Buffer, at: number, text: string): number {
  for (let i = 0; i < text.length; i++) out[at + i] = text.charCodeAt(i);
  return at + text.length;
}

/**
 * JSON's spelling of a number, digit by digit for a safe integer: an epoch-ms value in two halves
 * below 2^31, which V8 keeps as small integers (the remainder of a larger double is a libm call).
 */
function putNumber(out: Buffer, at: number, value: number): number {
  if (!Number.isSafeInteger(value)) return putDecimal(out, at, value);
  if (value < 0) {
    out[at++] = 0x2d;
    value = -value;
  }
  if (value < 1e9) return putDigits(out, at, value, digitsOf(value));
  const high = Math.floor(value / 1e9);
  return putDigits(out, putDigits(out, at, high, digitsOf(high)), value - high * 1e9, 9);
}

/** Powers of ten by exponent, 10^0 to 10^6. */
const TENS = [1, 10, 100, 1e3, 1e4, 1e5, 1e6];

/**
 * A number that is not a safe integer as String writes it (JSON.stringify's spelling), with the
 * common case written digit by digit: a positive number below 1e9 that is some c / 10^d with at
 * most six decimals (a price, an impression's revenue, a converted amount in micro-dollars).
 * Formatting a double costs V8 a few hundred nanoseconds (docs/ingestion.md, "Writing numbers").
 *
 * Why these are String's digits: parsing "c/10^d" gives the double nearest c / 10^d, which is
 * what c / 10^d computes, so the test below holds exactly when those digits read back as the
 * value. The first d that holds is the fewest decimals that do (with fewer, value * 10^d is within
 * a hundredth of that c, far below 2^53, and rounds to it), and below 1e9 a double's spacing is
 * under 10^-6, so only one c of d decimals reads back as the value: String's shortest digits. In
 * this range String writes no exponent.
 */
function putDecimal(out: Buffer, at: number, value: number): number {
  if (value > 0 && value < 1e9) {
    for (let d = 1; d < TENS.length; d++) {
      const scale = TENS[d] ?? 1;
      const scaled = Math.round(value * scale);
      if (scaled / scale !== value) continue;
      const whole = Math.floor(value);
      at = putDigits(out, at, whole, digitsOf(whole));
      out[at++] = 0x2e;
      return putDigits(out, at, scaled - whole * scale, d);
    }
  }
  return putString(out, at, number(value));
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
const DIGIT_PAIRS = Array.from({ length: 100 }, (_, n) => String(n).padStart(2, '0')).join('');

/** A non-negative integer below 2^31 as exactly `digits` digits, zero-padded. */
function putDigits(out: Buffer, at: number, value: number, digits: number): number {
  value |= 0; // an integer to the compiler too, or `%` below is a floating-point remainder
  let i = at + digits;
  while (i - at >= 2) {
    const pair = 2 * (value % 100);
    value = (value / 100) | 0;
    out[--i] = DIGIT_PAIRS.charCodeAt(pair + 1);
    out[--i] = DIGIT_PAIRS.charCodeAt(pair);
  }
  if (i > at) out[--i] = 0x30 + (value % 10);
  return at + digits;
}
