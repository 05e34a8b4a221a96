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
    if (typeof entry.install_uuid === 'string' && UUID_PATTERN.test(entry.install_uuid)) {
      line.install_uuid = entry.install_uuid.toLowerCase();
    }
    if (typeof entry.device_id === 'string') {
      const { device_id, ...rest } = entry;
      line.device_hash = sha256Hex(`${batch.appId}:${device_id}`);
      line.event = rest;
    }
    return line;
  });
}

/** JSON Lines: one JSON document per line, each line ending in a newline. */
export function toJsonLines(lines: readonly object[]): string {
  let out = '';
  for (const line of lines) out += `${JSON.stringify(line)}\n`;
  return out;
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
