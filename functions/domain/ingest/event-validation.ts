import { isPlainObject } from '../common/json';
import { UUID_PATTERN } from '../common/uuid';

/**
 * The event rules of DESIGN section 5, in its order: the first rule an event fails names its
 * rejection reason. The table is the single source: the validator runs it, docs/ingestion.md
 * lists it (a unit test keeps the two equal) and the benchmark's schema-library twin mirrors it.
 *
 * This runs once per event on the hot path, so the checks are plain comparisons and anchored
 * regular expressions; bench/run.ts measures it against an equivalent zod schema.
 */
export type RejectionReason =
  | 'bad_event'
  | 'bad_event_id'
  | 'bad_event_name'
  | 'bad_install_uuid'
  | 'bad_timestamp'
  | 'bad_revenue'
  | 'bad_platform'
  | 'bad_device_id'
  | 'bad_attribution'
  | 'bad_properties';

/** What an SDK sends; unknown fields are allowed, kept in the audit record and ignored. */
export interface SdkEvent {
  event_id: string;
  event_name: string;
  install_uuid: string;
  ts_ms: number;
  revenue_usd?: number;
  platform?: 'ios' | 'android';
  device_id?: string;
  attribution?: {
    click_id?: string;
    referrer?: string;
    referrer_click_ms?: number;
    install_begin_ms?: number;
  };
  properties?: Record<string, string | number | boolean | null>;
  [field: string]: unknown;
}

export const INSTALL_EVENT = 'install';
export const MAX_EVENT_DEPTH = 32;
export const MAX_FUTURE_SKEW_MS = 60 * 60 * 1000;
export const MAX_PAST_AGE_MS = 90 * 24 * 60 * 60 * 1000;
export const MAX_REVENUE_USD = 1_000_000;
export const MAX_PROPERTIES = 50;
export const MAX_PROPERTIES_JSON_BYTES = 4096;

export const EVENT_ID_PATTERN = /^[A-Za-z0-9._:-]{1,128}$/;
export const EVENT_NAME_PATTERN = /^[A-Za-z0-9_.:-]{1,64}$/;
export const PLATFORMS: readonly string[] = ['ios', 'android'];

/** The batch around an event: when it arrived, the client's clock offset, the ids already taken. */
export interface BatchContext {
  readonly receivedMs: number;
  /** received_ms - sent_at_ms: added to a device timestamp to put it on the server's clock. */
  readonly skewMs: number;
  /** Takes an event id for this batch; false when an earlier event already has it. */
  claimEventId(eventId: string): boolean;
}

export interface EventRule {
  readonly field: string;
  readonly rule: string;
  readonly reason: RejectionReason;
  readonly passes: (event: Record<string, unknown>, batch: BatchContext) => boolean;
}

/** Optional fields may be absent or null (many SDK encoders write null for a missing value). */
const absent = (value: unknown): value is undefined | null => value === undefined || value === null;
const optional = (check: (value: unknown) => boolean) => (value: unknown) => absent(value) || check(value);
const stringOf = (min: number, max: number) => (value: unknown) =>
  typeof value === 'string' && value.length >= min && value.length <= max;
const epochMs = (value: unknown) => Number.isSafeInteger(value) && (value as number) >= 0;
const isPropertyValue = (value: unknown) =>
  value === null || typeof value === 'string' || typeof value === 'boolean' || (typeof value === 'number' && Number.isFinite(value));

/** A string's JSON is at most 6 bytes per UTF-16 unit (\uXXXX) plus its quotes. */
const maxJsonBytes = (text: string) => 6 * text.length + 2;
/** The longest JSON number is 25 characters (-0.0000012345678901234567); true, false, null fewer. */
const MAX_JSON_SCALAR_BYTES = 25;

const isRevenue = optional((v) => typeof v === 'number' && Number.isFinite(v) && v >= 0 && v <= MAX_REVENUE_USD);
const isDeviceId = optional(stringOf(1, 128));
const attributionFields = {
  click_id: optional(stringOf(1, 256)),
  referrer: optional(stringOf(0, 2048)),
  referrer_click_ms: optional(epochMs),
  install_begin_ms: optional(epochMs),
};

export const EVENT_RULES: readonly EventRule[] = [
  {
    field: '(the entry)',
    rule: `a JSON object, nested at most ${MAX_EVENT_DEPTH} levels deep`,
    reason: 'bad_event',
    // The object check is done by validateEvent before any rule; depth keeps the audit record storable.
    passes: (event) => !nestedDeeperThan(event, MAX_EVENT_DEPTH),
  },
  {
    field: 'event_id',
    rule: 'string of 1–128 characters from `[A-Za-z0-9._:-]`, unique within the batch (a later duplicate is rejected)',
    reason: 'bad_event_id',
    passes: (event, batch) => {
      const id = event.event_id;
      return typeof id === 'string' && EVENT_ID_PATTERN.test(id) && batch.claimEventId(id);
    },
  },
  {
    field: 'event_name',
    rule: 'string of 1–64 characters from `[A-Za-z0-9_.:-]`; `install` marks the first launch',
    reason: 'bad_event_name',
    passes: (event) => typeof event.event_name === 'string' && EVENT_NAME_PATTERN.test(event.event_name),
  },
  {
    field: 'install_uuid',
    rule: 'a UUID of any version, any case (stored lower-case)',
    reason: 'bad_install_uuid',
    passes: (event) => typeof event.install_uuid === 'string' && UUID_PATTERN.test(event.install_uuid),
  },
  {
    field: 'ts_ms',
    rule: 'integer epoch ms on the device clock; corrected_ts = ts_ms + (received_ms − sent_at_ms) must be at most 1 hour ahead of and at most 90 days behind received_ms',
    reason: 'bad_timestamp',
    passes: (event, batch) => {
      const corrected = correctedTimestamp(event.ts_ms, batch);
      return corrected !== undefined && corrected <= batch.receivedMs + MAX_FUTURE_SKEW_MS && corrected >= batch.receivedMs - MAX_PAST_AGE_MS;
    },
  },
  {
    field: 'revenue_usd',
    rule: 'optional finite number from 0 to 1,000,000',
    reason: 'bad_revenue',
    passes: (event) => isRevenue(event.revenue_usd),
  },
  {
    field: 'platform',
    rule: '`ios` or `android`; required on `install`, optional otherwise',
    reason: 'bad_platform',
    passes: (event) =>
      absent(event.platform) ? event.event_name !== INSTALL_EVENT : PLATFORMS.includes(event.platform as string),
  },
  {
    field: 'device_id',
    rule: 'optional string of 1–128 characters; never stored in the clear (the audit record keeps a hash)',
    reason: 'bad_device_id',
    passes: (event) => isDeviceId(event.device_id),
  },
  {
    field: 'attribution',
    rule: 'optional, only on `install`: an object whose `click_id` (1–256 chars), `referrer` (up to 2,048 chars), `referrer_click_ms` and `install_begin_ms` (non-negative integers) are each optional',
    reason: 'bad_attribution',
    passes: (event) => {
      const attribution = event.attribution;
      if (absent(attribution)) return true;
      if (event.event_name !== INSTALL_EVENT || !isPlainObject(attribution)) return false;
      return (
        attributionFields.click_id(attribution.click_id) &&
        attributionFields.referrer(attribution.referrer) &&
        attributionFields.referrer_click_ms(attribution.referrer_click_ms) &&
        attributionFields.install_begin_ms(attribution.install_begin_ms)
      );
    },
  },
  {
    field: 'properties',
    rule: 'optional flat object (values string, number, boolean or null), at most 50 keys and 4 KiB as JSON',
    reason: 'bad_properties',
    passes: (event) => {
      const properties = event.properties;
      if (absent(properties)) return true;
      if (!isPlainObject(properties)) return false;
      let keys = 0;
      let maxBytes = 2;
      for (const key in properties) {
        const value = properties[key];
        if (++keys > MAX_PROPERTIES || !isPropertyValue(value)) return false;
        maxBytes += maxJsonBytes(key) + 2 + (typeof value === 'string' ? maxJsonBytes(value) : MAX_JSON_SCALAR_BYTES);
      }
      // Most property sets are far below the limit even at the worst case of every character
      // escaped; only the others pay for serialising them to count the exact bytes.
      return maxBytes <= MAX_PROPERTIES_JSON_BYTES || Buffer.byteLength(JSON.stringify(properties), 'utf8') <= MAX_PROPERTIES_JSON_BYTES;
    },
  },
];

/** The reason an entry is rejected, or undefined when it is accepted. */
export function validateEvent(entry: unknown, batch: BatchContext): RejectionReason | undefined {
  if (!isPlainObject(entry)) return 'bad_event';
  for (const rule of EVENT_RULES) {
    if (!rule.passes(entry, batch)) return rule.reason;
  }
  return undefined;
}

export function correctedTimestamp(tsMs: unknown, batch: Pick<BatchContext, 'skewMs'>): number | undefined {
  return Number.isSafeInteger(tsMs) ? (tsMs as number) + batch.skewMs : undefined;
}

export interface EventVerdict {
  readonly index: number;
  /** The event's id as sent when it is a string of at most 128 characters, else "". */
  readonly event_id: string;
  readonly status: 'accepted' | 'rejected';
  readonly reason?: RejectionReason;
  readonly corrected_ts?: number;
}

export interface BatchVerdict {
  readonly verdicts: EventVerdict[];
  readonly accepted: number;
  readonly rejected: number;
}

/** Every entry of a batch judged in input order; the counts are the verdicts counted by status. */
export function judgeEvents(events: readonly unknown[], sentAtMs: number, receivedMs: number): BatchVerdict {
  const seen = new Set<string>();
  const batch: BatchContext = {
    receivedMs,
    skewMs: receivedMs - sentAtMs,
    claimEventId: (id) => seen.size !== seen.add(id).size,
  };
  let accepted = 0;
  const verdicts = events.map((entry, index): EventVerdict => {
    const reason = validateEvent(entry, batch);
    const fields = isPlainObject(entry) ? entry : {};
    const eventId = typeof fields.event_id === 'string' && fields.event_id.length <= 128 ? fields.event_id : '';
    const corrected_ts = correctedTimestamp(fields.ts_ms, batch);
    if (reason === undefined) {
      accepted++;
      return { index, event_id: eventId, status: 'accepted', corrected_ts };
    }
    return { index, event_id: eventId, status: 'rejected', reason, corrected_ts };
  });
  return { verdicts, accepted, rejected: verdicts.length - accepted };
}

/** An entry that JSON.stringify can write back (V8 overflows its stack on deep nesting). */
export function isStorable(entry: unknown): boolean {
  return typeof entry !== 'object' || entry === null || !nestedDeeperThan(entry, MAX_EVENT_DEPTH);
}

/**
 * Recursive, but never deeper than the limit: a hostile nesting depth stops the walk at the
 * limit and cannot overflow the stack. for...in and an index loop allocate nothing per object,
 * which matters because every entry of every batch is walked.
 */
function nestedDeeperThan(value: object, limit: number, depth = 1): boolean {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      if (deeperChild(value[i], limit, depth)) return true;
    }
    return false;
  }
  const record = value as Record<string, unknown>;
  for (const key in record) {
    if (Object.hasOwn(record, key) && deeperChild(record[key], limit, depth)) return true;
  }
  return false;
}

function deeperChild(child: unknown, limit: number, depth: number): boolean {
  if (typeof child !== 'object' || child === null) return false;
  return depth + 1 > limit || nestedDeeperThan(child, limit, depth + 1);
}
