import { sha256Hex } from '../common/hashing';
import { isPlainObject } from '../common/json';
import { type EventVerdict, isStorable, isUuid } from '../ingest/event-validation';
import type { AuditBatch, AuditFx, AuditLine } from './types';

/** SDK versions are echoed into every line; a longer header is cut, not refused. */
const MAX_SDK_VERSION_CHARS = 128;

/** What a batch's revenue conversions are (functions/domain/fx/event-revenue.ts): by entry index. */
export type AuditConversions = ReadonlyMap<number, { readonly revenueUsd: number; readonly fx: AuditFx }>;

/** The sdk_version every line of the batch has. */
export const sdkVersionOf = (batch: AuditBatch): string | null =>
  batch.sdkVersion ? batch.sdkVersion.slice(0, MAX_SDK_VERSION_CHARS) : null;

/**
 * The audit lines of a batch, one per verdict, in order. The audit object of a batch whose body is
 * at hand is written without them (record.ts, auditRecord): these are the lines it holds.
 */
export function auditLines(
  events: readonly unknown[],
  verdicts: readonly EventVerdict[],
  batch: AuditBatch,
  conversions?: AuditConversions,
): AuditLine[] {
  const sdkVersion = sdkVersionOf(batch);
  const devices = new DeviceHashes(batch.appId);
  return verdicts.map((verdict) => auditLine(events[verdict.index], verdict, batch, sdkVersion, devices, conversions));
}

/** A device id's hash (AuditLine.device_hash), the last string one kept: an SDK's batch is usually one device's events. */
export class DeviceHashes {
  private deviceId: string | undefined;
  private hash = '';

  constructor(private readonly appId: string) {}

  of(device: unknown): string {
    // A device id that is no string (a rejected event's number, array or object) is hashed as its JSON text.
    if (typeof device !== 'string') return sha256Hex(`${this.appId}:${JSON.stringify(device)}`);
    if (device !== this.deviceId) {
      this.deviceId = device;
      this.hash = sha256Hex(`${this.appId}:${device}`);
    }
    return this.hash;
  }
}

/** The event a line stores: null for a bad_event entry too deeply nested to store, else the entry. */
export const storedEntry = (entry: unknown, verdict: EventVerdict): unknown =>
  verdict.reason === 'bad_event' && !isStorable(entry) ? null : entry;

/**
 * The entry's install_uuid as sent when the line stores it (lower-cased): a UUID. An accepted entry
 * passed the install_uuid rule already, so the check runs once per entry.
 */
export function installOf(entry: Record<string, unknown>, verdict: EventVerdict): string | undefined {
  const install = entry.install_uuid;
  return typeof install === 'string' && (verdict.status === 'accepted' || isUuid(install)) ? install : undefined;
}

/** One entry's audit line. */
export function auditLine(
  entry: unknown,
  verdict: EventVerdict,
  batch: AuditBatch,
  sdkVersion: string | null,
  devices: DeviceHashes,
  conversions?: AuditConversions,
): AuditLine {
  const index = verdict.index;
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
    country: batch.country,
    // Only a bad_event entry can be too deep: every other entry passed the depth rule.
    event: storedEntry(entry, verdict),
    install_uuid: undefined,
    device_hash: undefined,
    fx: undefined,
  };
  if (!isPlainObject(entry) || line.event === null) return line;
  line.install_uuid = installOf(entry, verdict)?.toLowerCase();
  const device = entry.device_id;
  // Any device id is cut out, whatever its type: a rejected event's number, array or object
  // (an IDFA in a wrapper) is as much a device id as a string. null names no device.
  if (device !== undefined && device !== null) {
    const { device_id: _cut, ...rest } = entry;
    line.device_hash = devices.of(device);
    line.event = rest;
  }
  // Revenue in a currency: the event as sent plus the dollars the aggregator counts.
  const conversion = conversions?.get(index);
  if (conversion !== undefined) {
    line.event = withRevenueUsd(line.event as Record<string, unknown>, conversion.revenueUsd, line.event !== entry);
    line.fx = conversion.fx;
  }
  return line;
}

/**
 * `{ ...event, revenue_usd }` without the spread, which costs several microseconds for an object
 * of a shape seen before in many forms (every parsed event's), against well under one for
 * Object.assign. The two differ only for an own `__proto__` member (JSON.parse makes one, which
 * Object.assign would take for the prototype), so such an event is spread. `owned`: the event is
 * already this line's own copy (its device_id cut), so it takes revenue_usd itself.
 */
function withRevenueUsd(event: Record<string, unknown>, revenueUsd: number, owned: boolean): Record<string, unknown> {
  const copy = owned ? event : Object.hasOwn(event, '__proto__') ? { ...event } : Object.assign({}, event);
  copy.revenue_usd = revenueUsd;
  return copy;
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
 * under each (its claim log items, `c#`, which the privacy drain follows).
 */
export function installsOfLine(line: AuditLine): string[] {
  if (line.install_uuid !== undefined) return [line.install_uuid];
  const text = installText(line);
  if (text.length < 36) return [];
  const held = new Set<string>();
  for (const match of text.matchAll(HELD_UUID)) {
    const uuid = match[1];
    if (uuid !== undefined) held.add(uuid);
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
