import { createHash } from 'node:crypto';
import { isIdText, MAX_EVENT_NAME_CHARS } from '../ingest/event-validation';

/**
 * An app's conversion-value schema (docs/ios.md section 1): what each SKAdNetwork /
 * AdAttributionKit conversion value stands for, in revenue and in-app events, and which events
 * lock a postback window. The report decodes postbacks through it (estimateRevenueUsd); the SDK
 * fetches it (GET /sdk/v1/skan-schema) to choose the value it sends
 * (docs/skan-postbacks.md, "Choosing a conversion value on the device").
 */

/** The postback windows of SKAdNetwork 4 and AdAttributionKit: 0 to 2 days, 3 to 7, 8 to 35. */
export type PostbackWindow = 0 | 1 | 2;
export type CoarseValue = 'low' | 'medium' | 'high';

export const POSTBACK_WINDOWS: readonly PostbackWindow[] = [0, 1, 2];
/** In rising order: the on-device rule and the canonical order of a schema both use it. */
export const COARSE_VALUES: readonly CoarseValue[] = ['low', 'medium', 'high'];
export const MAX_FINE_VALUE = 63;
export const MAX_SCHEMA_REVENUE_USD = 1_000_000;
/** Bounds an entry's events so the largest schema stays far below DynamoDB's 400 KB item. */
export const MAX_EVENTS_PER_ENTRY = 32;

/** A revenue range in US dollars, [min, max], 0 <= min <= max <= 1,000,000. */
export type RevenueRange = readonly [number, number];

export interface FineEntry {
  readonly value: number;
  readonly revenue_usd: RevenueRange;
  readonly events: readonly string[];
}

export interface CoarseEntry {
  readonly window: PostbackWindow;
  readonly value: CoarseValue;
  readonly revenue_usd: RevenueRange;
  readonly events: readonly string[];
}

export interface LockRule {
  readonly window: PostbackWindow;
  readonly events: readonly string[];
}

/**
 * A validated schema in canonical form: `events` always present (empty when the file left it
 * out), `lock` always present, entries sorted (fine by value; coarse by window, then low to high;
 * lock by window). The same schema therefore always serialises to the same bytes, which keeps the
 * SDK endpoint's ETag stable.
 */
export interface SkanSchema {
  readonly fine: readonly FineEntry[];
  readonly coarse: readonly CoarseEntry[];
  readonly lock: readonly LockRule[];
}

export type SchemaValidation = { ok: true; schema: SkanSchema } | { ok: false; field: string; message: string };

/** A schema refused: the field at fault (`fine[3].revenue_usd`) and what is wrong with it. */
class SchemaFault extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Checks a parsed schema file against docs/ios.md section 1; the first fault found names its
 * field, with a JSON path as the operator wrote it (`fine[3].revenue_usd`, `coarse[0].window`).
 * Unknown members are refused too: a misspelt `revenue` would otherwise decode to nothing.
 */
export function validateSkanSchema(json: unknown): SchemaValidation {
  try {
    return { ok: true, schema: schemaOf(json) };
  } catch (error) {
    if (error instanceof SchemaFault) return { ok: false, field: error.field, message: error.message };
    throw error;
  }
}

function schemaOf(json: unknown): SkanSchema {
  const top = objectAt(json, 'schema', ['fine', 'coarse', 'lock'], ['fine', 'coarse']);
  const fine = arrayAt(top.fine, 'fine', MAX_FINE_VALUE + 1).map((entry, i) => fineEntry(entry, `fine[${i}]`));
  const coarse = arrayAt(top.coarse, 'coarse', POSTBACK_WINDOWS.length * COARSE_VALUES.length).map((entry, i) =>
    coarseEntry(entry, `coarse[${i}]`),
  );
  const lock = top.lock === undefined ? [] : arrayAt(top.lock, 'lock', POSTBACK_WINDOWS.length).map((r, i) => lockRule(r, `lock[${i}]`));
  onlyOnce(
    fine,
    (e) => String(e.value),
    (i) => `fine[${i}].value`,
  );
  onlyOnce(
    coarse,
    (e) => `${e.window}/${e.value}`,
    (i) => `coarse[${i}].value`,
  );
  onlyOnce(
    lock,
    (r) => String(r.window),
    (i) => `lock[${i}].window`,
  );
  return {
    fine: [...fine].sort((a, b) => a.value - b.value),
    coarse: [...coarse].sort((a, b) => a.window - b.window || COARSE_VALUES.indexOf(a.value) - COARSE_VALUES.indexOf(b.value)),
    lock: [...lock].sort((a, b) => a.window - b.window),
  };
}

function fineEntry(json: unknown, field: string): FineEntry {
  const entry = objectAt(json, field, ['value', 'revenue_usd', 'events'], ['value', 'revenue_usd']);
  const value = entry.value;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_FINE_VALUE) {
    throw new SchemaFault(`${field}.value`, `must be a whole number from 0 to ${MAX_FINE_VALUE}`);
  }
  return {
    value,
    revenue_usd: revenueRange(entry.revenue_usd, `${field}.revenue_usd`),
    events: eventsAt(entry.events, `${field}.events`, false),
  };
}

function coarseEntry(json: unknown, field: string): CoarseEntry {
  const entry = objectAt(json, field, ['window', 'value', 'revenue_usd', 'events'], ['window', 'value', 'revenue_usd']);
  const value = entry.value;
  if (!COARSE_VALUES.includes(value as CoarseValue)) throw new SchemaFault(`${field}.value`, 'must be "low", "medium" or "high"');
  return {
    window: windowAt(entry.window, `${field}.window`),
    value: value as CoarseValue,
    revenue_usd: revenueRange(entry.revenue_usd, `${field}.revenue_usd`),
    events: eventsAt(entry.events, `${field}.events`, false),
  };
}

function lockRule(json: unknown, field: string): LockRule {
  const rule = objectAt(json, field, ['window', 'events'], ['window', 'events']);
  return { window: windowAt(rule.window, `${field}.window`), events: eventsAt(rule.events, `${field}.events`, true) };
}

function windowAt(json: unknown, field: string): PostbackWindow {
  if (!POSTBACK_WINDOWS.includes(json as PostbackWindow)) throw new SchemaFault(field, 'must be 0, 1 or 2 (the postback window)');
  return json as PostbackWindow;
}

function revenueRange(json: unknown, field: string): RevenueRange {
  if (!Array.isArray(json) || json.length !== 2) throw new SchemaFault(field, 'must be [min, max] in US dollars');
  const [min, max] = json as unknown[];
  const dollars = (n: unknown) => typeof n === 'number' && Number.isFinite(n) && n >= 0 && n <= MAX_SCHEMA_REVENUE_USD;
  if (!dollars(min) || !dollars(max)) throw new SchemaFault(field, `min and max must be numbers from 0 to ${MAX_SCHEMA_REVENUE_USD}`);
  if ((min as number) > (max as number)) throw new SchemaFault(field, 'min must not exceed max');
  return [min as number, max as number];
}

function eventsAt(json: unknown, field: string, required: boolean): readonly string[] {
  if (json === undefined && !required) return [];
  const events = arrayAt(json, field, MAX_EVENTS_PER_ENTRY);
  if (required && events.length === 0) throw new SchemaFault(field, 'must name at least one event');
  events.forEach((name, i) => {
    if (typeof name !== 'string' || !isIdText(name, MAX_EVENT_NAME_CHARS)) {
      throw new SchemaFault(`${field}[${i}]`, `must be an event name (1 to ${MAX_EVENT_NAME_CHARS} of A-Z a-z 0-9 . _ : -)`);
    }
  });
  onlyOnce(
    events as string[],
    (name) => name,
    (i) => `${field}[${i}]`,
  );
  return events as string[];
}

function objectAt(json: unknown, field: string, known: readonly string[], required: readonly string[]): Record<string, unknown> {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) throw new SchemaFault(field, 'must be a JSON object');
  const record = json as Record<string, unknown>;
  const prefix = field === 'schema' ? '' : `${field}.`;
  for (const name of Object.keys(record)) {
    if (!known.includes(name)) throw new SchemaFault(`${prefix}${name}`, `is not a schema field (expected ${known.join(', ')})`);
  }
  for (const name of required) {
    if (record[name] === undefined) throw new SchemaFault(`${prefix}${name}`, 'is required');
  }
  return record;
}

function arrayAt(json: unknown, field: string, max: number): unknown[] {
  if (!Array.isArray(json)) throw new SchemaFault(field, 'must be an array');
  if (json.length > max) throw new SchemaFault(field, `must have at most ${max} entries`);
  return json;
}

/** The second entry with a key already seen is at fault, named by its index in the file. */
function onlyOnce<T>(entries: readonly T[], key: (entry: T) => string, field: (index: number) => string): void {
  const seen = new Set<string>();
  entries.forEach((entry, i) => {
    const k = key(entry);
    if (seen.has(k)) throw new SchemaFault(field(i), `${k} appears more than once`);
    seen.add(k);
  });
}

/** A postback's conversion value as the report reads it: its window and what crowd anonymity left of the value. */
export interface PostbackValue {
  readonly window: PostbackWindow;
  readonly fine?: number;
  readonly coarse?: CoarseValue;
}

/**
 * The estimated revenue of a postback in US dollars (docs/ios.md section 1): the middle of its
 * value's revenue range. Window 0 with a fine value decodes the fine value (a fine value absent
 * from the schema: 0, never its coarse one); otherwise the coarse value of the postback's window;
 * no value, a value absent from the schema, or no schema: 0. Not rounded: the report sums the
 * estimates and rounds the sum to cents.
 */
export function estimateRevenueUsd(schema: SkanSchema | undefined, value: PostbackValue): number {
  if (schema === undefined) return 0;
  if (value.window === 0 && value.fine !== undefined) return middle(schema.fine.find((e) => e.value === value.fine)?.revenue_usd);
  if (value.coarse === undefined) return 0;
  return middle(schema.coarse.find((e) => e.window === value.window && e.value === value.coarse)?.revenue_usd);
}

function middle(range: RevenueRange | undefined): number {
  return range === undefined ? 0 : (range[0] + range[1]) / 2;
}

/** A stored version of an app's schema: versions count 1, 2, ... per app; the newest set is the active one. */
export interface SkanSchemaVersion {
  readonly version: number;
  readonly schema: SkanSchema;
  readonly updated_ms: number;
}

/** What decoding postbacks needs of the store: the version active now (undefined: the app has none). */
export interface ActiveSkanSchemas {
  active(appId: string): Promise<SkanSchemaVersion | undefined>;
}

/**
 * GET /sdk/v1/skan-schema's answer for an authenticated app: the active version as the JSON the
 * SDK reads (`{"version", "updated_ms", "fine", "coarse", "lock"}`), under a strong ETag of those
 * exact bytes; 304 when If-None-Match names it; `no_schema` when the app has none.
 */
export type SdkSchemaAnswer =
  | { readonly kind: 'schema'; readonly body: string; readonly etag: string }
  | { readonly kind: 'not_modified'; readonly etag: string }
  | { readonly kind: 'no_schema' };

export function sdkSchemaAnswer(active: SkanSchemaVersion | undefined, ifNoneMatch: string | undefined): SdkSchemaAnswer {
  if (active === undefined) return { kind: 'no_schema' };
  const { version, updated_ms, schema } = active;
  const body = JSON.stringify({ version, updated_ms, fine: schema.fine, coarse: schema.coarse, lock: schema.lock });
  const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;
  return ifNoneMatch !== undefined && matchesEtag(ifNoneMatch, etag) ? { kind: 'not_modified', etag } : { kind: 'schema', body, etag };
}

/** If-None-Match: `*`, or a comma-separated list of tags, compared weakly as RFC 9110 says it is. */
function matchesEtag(header: string, etag: string): boolean {
  const bare = (tag: string) => tag.trim().replace(/^W\//, '');
  return header.split(',').some((tag) => tag.trim() === '*' || bare(tag) === etag);
}
