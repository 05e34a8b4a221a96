import { gzip, gzipSync } from 'node:zlib';
import { sha256Hex } from '../common/hashing';
import { isPlainObject } from '../common/json';
import { UUID_PATTERN } from '../common/uuid';
import { isStorable, type EventVerdict } from './event-validation';

/**
 * The audit record of a batch (DESIGN section 5): one gzip JSONL object per batch, one line per
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
  /** SHA-256 of "<app_id>:<device_id>": the device id itself is never stored. */
  device_hash?: string;
  /** The event as sent, minus device_id; null for an entry too deeply nested to store. */
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
  const day = new Date(batch.receivedMs).toISOString().slice(0, 10).split('-').join('/');
  return `audit/${day}/${batch.companyId}/${batch.appId}/${batch.bodySha256}.jsonl.gz`;
}

export function auditLines(events: readonly unknown[], verdicts: readonly EventVerdict[], batch: AuditBatch): AuditLine[] {
  const sdkVersion = batch.sdkVersion ? batch.sdkVersion.slice(0, MAX_SDK_VERSION_CHARS) : null;
  return verdicts.map((verdict) => {
    const entry = events[verdict.index];
    const line: AuditLine = {
      index: verdict.index,
      status: verdict.status,
      reason: verdict.reason,
      received_ms: batch.receivedMs,
      corrected_ts: verdict.corrected_ts,
      client_ip: batch.clientIp,
      sdk_version: sdkVersion,
      // Only a bad_event entry can be too deep: every other entry passed the depth rule.
      event: verdict.reason === 'bad_event' && !isStorable(entry) ? null : entry,
    };
    if (!isPlainObject(entry) || line.event === null) return line;
    // An accepted entry passed the install_uuid rule already: the pattern is tested once per entry.
    const install = entry.install_uuid;
    if (typeof install === 'string' && (verdict.status === 'accepted' || UUID_PATTERN.test(install))) {
      line.install_uuid = install.toLowerCase();
    }
    if (typeof entry.device_id === 'string') {
      const { device_id, ...rest } = entry;
      line.device_hash = sha256Hex(`${batch.appId}:${device_id}`);
      line.event = rest;
    }
    return line;
  });
}

/**
 * JSON Lines: one JSON document per line, each line ending in a newline; each line is exactly
 * what JSON.stringify(line) writes (same keys in the same order, undefined fields left out).
 *
 * Written by hand because it runs once per batch on the hot path and costs more than anything
 * else there but gzip: the fields every line of a batch shares (received_ms, client_ip,
 * sdk_version) are encoded once, not once per line, and only the event, the client's own JSON,
 * goes through JSON.stringify. A unit test holds it to JSON.stringify's output.
 */
export function toJsonLines(lines: readonly AuditLine[]): string {
  const shared = new SharedFields();
  let out = '';
  for (const line of lines) {
    let text = `{"index":${number(line.index)},"status":${line.status === 'accepted' ? '"accepted"' : json(line.status)}`;
    if (line.reason !== undefined) text += `,"reason":${json(line.reason)}`;
    text += `,"received_ms":${shared.receivedMs(line.received_ms)}`;
    if (line.corrected_ts !== undefined) text += `,"corrected_ts":${number(line.corrected_ts)}`;
    text += `,"client_ip":${shared.clientIp(line.client_ip)},"sdk_version":${shared.sdkVersion(line.sdk_version)}`;
    if (line.event !== undefined) text += `,"event":${JSON.stringify(line.event)}`;
    // A well-formed UUID and a hex digest (all auditLines stores in these) have nothing to escape.
    if (line.install_uuid !== undefined) text += `,"install_uuid":"${line.install_uuid}"`;
    if (line.device_hash !== undefined) text += `,"device_hash":"${line.device_hash}"`;
    out += `${text}}\n`;
  }
  return out;
}

const json = (value: string) => JSON.stringify(value);
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

/** The last value of each shared field and its JSON, so a batch encodes each once. */
class SharedFields {
  private received?: [number, string];
  private ip?: [string, string];
  private sdk?: [string | null, string];
  receivedMs(value: number): string {
    if (this.received?.[0] !== value) this.received = [value, number(value)];
    return this.received[1];
  }
  clientIp(value: string): string {
    if (this.ip?.[0] !== value) this.ip = [value, json(value)];
    return this.ip[1];
  }
  sdkVersion(value: string | null): string {
    if (this.sdk === undefined || this.sdk[0] !== value) this.sdk = [value, value === null ? 'null' : json(value)];
    return this.sdk[1];
  }
}

/**
 * Gzip level 1 (docs/ingestion.md has the numbers: level 6 costs about three times the CPU for
 * objects about 11% smaller). Up to 128 Ki characters of JSONL (a few hundred events) is compressed
 * synchronously: that blocks the event loop for a fraction of a millisecond, less than the
 * thread-pool round trip costs; a larger batch goes to zlib's thread pool so that the local
 * runtime, which serves every route from one process, is not held up.
 */
export const SYNC_AUDIT_GZIP_MAX_BYTES = 128 * 1024;
const AUDIT_GZIP = { level: 1 };

export function encodeAuditObject(lines: readonly AuditLine[]): Promise<Buffer> {
  const jsonl = toJsonLines(lines);
  if (jsonl.length <= SYNC_AUDIT_GZIP_MAX_BYTES) return Promise.resolve(gzipSync(jsonl, AUDIT_GZIP));
  return new Promise((resolve, reject) => gzip(jsonl, AUDIT_GZIP, (error, body) => (error ? reject(error) : resolve(body))));
}

export function aggregationMessage(bucket: string, key: string, batch: AuditBatch, counts: { accepted: number; rejected: number }): AggregationMessage {
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

