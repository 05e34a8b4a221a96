import { sha256Hex } from '../common/hashing';
import { isPlainObject } from '../common/json';
import { type EventVerdict, isStorable, isUuid } from '../ingest/event-validation';
import { COPY, COPY_WITHOUT_DEVICE_ID, canCutDeviceId, sourceLines, WITH_REVENUE_USD, WRITE } from './encode';
import { type EventTexts, eventTexts, MULTI_LINE } from './event-text';
import type { AuditBatch, AuditFx, AuditLine } from './types';

/** SDK versions are echoed into every line; a longer header is cut, not refused. */
const MAX_SDK_VERSION_CHARS = 128;

/**
 * The audit lines of a batch. Given `source`, the decompressed body that `events` was parsed
 * from or where eventTexts found each event in it, the lines also remember where each event is,
 * and encodeAuditObject copies those bytes instead of writing the parsed event out again with
 * JSON.stringify, which cost more than the copy (docs/ingestion.md, "Copying each event from the body").
 * The stored event is then the client's own JSON for it, which parses to the same value.
 */
export function auditLines(
  events: readonly unknown[],
  verdicts: readonly EventVerdict[],
  batch: AuditBatch,
  source?: Uint8Array | EventTexts,
  conversions?: ReadonlyMap<number, { readonly revenueUsd: number; readonly fx: AuditFx }>,
): AuditLine[] {
  const sdkVersion = batch.sdkVersion ? batch.sdkVersion.slice(0, MAX_SDK_VERSION_CHARS) : null;
  const texts = source instanceof Uint8Array ? eventTexts(source, events.length) : source;
  const count = verdicts.length;
  const lines: AuditLine[] = new Array(count);
  const sourced: { texts: EventTexts; copies: number[]; entries: number[]; events: unknown[] } | undefined =
    texts === undefined ? undefined : { texts, copies: new Array(count), entries: new Array(count), events: new Array(count) };
  // An SDK's batch is usually one device's events: its hash is computed once.
  let deviceId: string | undefined;
  let deviceHash = '';
  let position = 0;
  for (const verdict of verdicts) {
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
      country: batch.country,
      // Only a bad_event entry can be too deep: every other entry passed the depth rule.
      event: verdict.reason === 'bad_event' && !isStorable(entry) ? null : entry,
      install_uuid: undefined,
      device_hash: undefined,
      fx: undefined,
    };
    lines[position] = line;
    // An entry the scan has no flags for is written out, as one on several lines is.
    let copy = texts !== undefined && line.event !== null && ((texts.flags[index] ?? MULTI_LINE) & MULTI_LINE) === 0 ? COPY : WRITE;
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
        if (copy === COPY && texts !== undefined) copy = canCutDeviceId(texts, index) ? COPY_WITHOUT_DEVICE_ID : WRITE;
      }
      // Revenue in a currency: the event as sent plus the dollars the aggregator counts.
      const conversion = conversions?.get(index);
      if (conversion !== undefined) {
        line.event = withRevenueUsd(line.event as Record<string, unknown>, conversion.revenueUsd, line.event !== entry);
        line.fx = conversion.fx;
        // Still copied, with revenue_usd written after it, unless the body has a revenue_usd
        // member (a null one passes the rules) whose place the spread keeps.
        copy = copy === WRITE || Object.hasOwn(entry, 'revenue_usd') ? WRITE : copy | WITH_REVENUE_USD;
      }
    }
    if (sourced !== undefined) {
      sourced.copies[position] = copy;
      sourced.entries[position] = index;
      sourced.events[position] = line.event;
    }
    position++;
  }
  if (sourced !== undefined) sourceLines(lines, sourced);
  return lines;
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
