import { INVALID_SKAN_POSTBACKS } from '../../../lib/function-constants';
import { dayOf } from '../common/days';
import {
  ADATTRIBUTIONKIT_BODY_FIELDS,
  ADATTRIBUTIONKIT_PAYLOAD_FIELDS,
  type AdAttributionKitFailure,
  JWS_FIELD,
  verifyAdAttributionKit,
} from './adattributionkit';
import { cut, jsonObjectOf, keepNamed, scalarOf } from './fields';
import type { KeyEnvironment, PostbackKeys } from './postback-keys';
import { SIGNATURE_FIELD, SKADNETWORK_FIELDS, type SkadnetworkFailure, verifySkadnetwork } from './skadnetwork';

/**
 * What POST /skan-postback stores: one JSON audit record per postback, with the result of
 * checking its signature, under audit/skan/<yyyy>/<mm>/<dd>/<transaction-id>.json; a postback
 * that did not verify, kept small, under audit/skan/invalid/<yyyy>/<mm>/<dd>/<transaction-id>.json
 * until it expires.
 */

/**
 * The raw body's bound. Apple's postbacks are well under 2 KiB (the largest, an
 * AdAttributionKit JWS with its envelope, is about 1 KiB); 64 KiB leaves room for any field
 * Apple may add while keeping what one anonymous request can make the service parse and store small.
 */
export const MAX_POSTBACK_BYTES = 64 * 1024;

/** Apple's postbacks are flat; deeper JSON is not a postback (and JSON.stringify would overflow on thousands of levels). */
export const MAX_POSTBACK_NESTING = 32;

/**
 * A transaction-id (AdAttributionKit: postback-identifier) that can name the record: Apple's are
 * UUIDs. It becomes a DynamoDB key and part of an S3 key, so no slash, no leading dot, no spaces.
 */
export const POSTBACK_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * What an invalid postback keeps of each field Apple defines (every other field is dropped):
 * Apple's values are identifiers, domains and small numbers, far shorter. Anybody can send an
 * invalid postback, so what it may make the service store is bounded by this, not by the body.
 */
export const MAX_INVALID_FIELD_CHARS = 256;

/** An invalid postback's signature is kept up to this: a genuine JWS (about 1 KiB) whole, to be checked again once Apple publishes a new key. */
export const MAX_INVALID_SIGNATURE_CHARS = 2048;

/** Where invalid postbacks go, and after how many days they expire (the bucket's lifecycle rule, the table's TTL). */
export const INVALID_POSTBACKS = INVALID_SKAN_POSTBACKS;

export type PostbackKind = 'skadnetwork' | 'adattributionkit';

export type PostbackRefusal = 'body_too_large' | 'bad_json' | 'bad_postback';

export interface PostbackRecord {
  readonly record_version: 1;
  readonly kind: PostbackKind;
  /** SKAdNetwork's transaction-id, or AdAttributionKit's postback-identifier: what duplicates share. */
  readonly transaction_id: string;
  readonly received_ms: number;
  /** True only when the signature verified under one of Apple's keys. */
  readonly verified: boolean;
  /** Why it did not verify (absent when it did). */
  readonly reason?: SkadnetworkFailure | AdAttributionKitFailure;
  /** The signed field a failure is about (missing_field, bad_field, separator_in_field). */
  readonly reason_field?: string;
  /** The key checked: skadnetwork/p-256, skadnetwork/p-192, or an AdAttributionKit kid. */
  readonly key_id?: string;
  /** AdAttributionKit: whether that key signs production or development postbacks. Count production only. */
  readonly key_environment?: KeyEnvironment;
  /** SKAdNetwork: the version as sent ("1.0" for a postback without one). */
  readonly version?: string;
  /**
   * The fields the signature covers, as sent (AdAttributionKit: the decoded JWS payload). They
   * are Apple's only when `verified` is true.
   */
  readonly signed: Record<string, unknown>;
  /** Every other field of the postback, conversion values among them: never signed by Apple. */
  readonly unverified: Record<string, unknown>;
  /** attribution-signature or jws-string, as sent, so the record can be verified again. */
  readonly signature: unknown;
  /** Invalid only: something of the body was dropped or cut (see invalidRecord). */
  readonly trimmed?: true;
  /** Invalid only: epoch seconds after which the record and its table item are deleted. */
  readonly expires_at?: number;
}

/**
 * audit/skan/<yyyy>/<mm>/<dd>/<transaction-id>.json by the UTC day the postback was received, or
 * under audit/skan/invalid/ when it did not verify: that prefix expires, the other never does.
 */
export function postbackObjectKey(record: Pick<PostbackRecord, 'transaction_id' | 'received_ms' | 'verified'>): string {
  const [year, month, day] = dayOf(record.received_ms).split('-');
  const prefix = record.verified ? 'audit/skan/' : INVALID_POSTBACKS.prefix;
  return `${prefix}${year}/${month}/${day}/${record.transaction_id}.json`;
}

/**
 * The body as a JSON object: at most MAX_POSTBACK_BYTES as sent, strict UTF-8 (a leading BOM is
 * dropped), JSON, an object. Anything else is refused with its code.
 */
export function readPostback(bytes: Uint8Array): { ok: true; body: Record<string, unknown> } | { ok: false; refusal: PostbackRefusal } {
  if (bytes.length > MAX_POSTBACK_BYTES) return { ok: false, refusal: 'body_too_large' };
  const body = jsonObjectOf(bytes);
  if (!body) return { ok: false, refusal: 'bad_json' };
  if (nestingOf(body) > MAX_POSTBACK_NESTING) return { ok: false, refusal: 'bad_postback' };
  return { ok: true, body };
}

/** How deeply objects and arrays nest (a flat object is 1), without recursion. */
function nestingOf(value: unknown): number {
  let deepest = 0;
  const stack: [unknown, number][] = [[value, 1]];
  for (let entry = stack.pop(); entry !== undefined; entry = stack.pop()) {
    const [node, depth] = entry;
    if (node === null || typeof node !== 'object') continue;
    deepest = Math.max(deepest, depth);
    if (deepest > MAX_POSTBACK_NESTING) return deepest;
    for (const child of Object.values(node)) stack.push([child, depth + 1]);
  }
  return deepest;
}

/**
 * The record of a postback, its signature checked, or undefined when the body names no usable
 * transaction-id (then it cannot be Apple's, and there is nothing to file it under). The two
 * kinds are told apart by their shape: AdAttributionKit's body carries `jws-string`, and its
 * postback-identifier is read from the JWS payload even when the signature then fails.
 */
export function judgePostback(body: Record<string, unknown>, keys: PostbackKeys, receivedMs: number): PostbackRecord | undefined {
  const record = recordOf(body, keys, receivedMs);
  return record && !record.verified ? invalidRecord(record) : record;
}

function recordOf(body: Record<string, unknown>, keys: PostbackKeys, receivedMs: number): PostbackRecord | undefined {
  if (Object.hasOwn(body, JWS_FIELD)) {
    const check = verifyAdAttributionKit(body, keys.adAttributionKit);
    const id = check.signed?.['postback-identifier'];
    if (!check.signed || typeof id !== 'string' || !POSTBACK_ID.test(id)) return undefined;
    const { verification } = check;
    return {
      record_version: 1,
      kind: 'adattributionkit',
      transaction_id: id,
      received_ms: receivedMs,
      verified: verification.verified,
      ...(verification.verified ? {} : { reason: verification.reason }),
      ...(verification.keyId === undefined ? {} : { key_id: verification.keyId }),
      ...(check.keyEnvironment === undefined ? {} : { key_environment: check.keyEnvironment }),
      signed: check.signed,
      unverified: check.unverified,
      signature: body[JWS_FIELD] ?? null,
    };
  }

  const id = body['transaction-id'];
  if (typeof id !== 'string' || !POSTBACK_ID.test(id)) return undefined;
  const check = verifySkadnetwork(body, keys);
  const { verification } = check;
  return {
    record_version: 1,
    kind: 'skadnetwork',
    transaction_id: id,
    received_ms: receivedMs,
    verified: verification.verified,
    ...(verification.verified ? {} : { reason: verification.reason }),
    ...(!verification.verified && verification.field !== undefined ? { reason_field: verification.field } : {}),
    ...(verification.keyId === undefined ? {} : { key_id: verification.keyId }),
    ...(check.version === undefined ? {} : { version: check.version }),
    signed: check.signed,
    unverified: check.unverified,
    signature: body[SIGNATURE_FIELD] ?? null,
  };
}

/**
 * An invalid postback as it is kept: of `signed` and `unverified` only the fields Apple defines
 * for its kind, each a scalar of at most MAX_INVALID_FIELD_CHARS; the version and key id it
 * claims cut the same way, the signature to MAX_INVALID_SIGNATURE_CHARS; `trimmed` when any of
 * that lost something; and the time it expires. What anybody can make the service keep is then
 * a few KiB per transaction-id, for INVALID_POSTBACKS.expireAfterDays.
 */
function invalidRecord(record: PostbackRecord): PostbackRecord {
  const adAttributionKit = record.kind === 'adattributionkit';
  const signed = keepNamed(record.signed, adAttributionKit ? ADATTRIBUTIONKIT_PAYLOAD_FIELDS : SKADNETWORK_FIELDS, MAX_INVALID_FIELD_CHARS);
  const unverified = keepNamed(
    record.unverified,
    adAttributionKit ? ADATTRIBUTIONKIT_BODY_FIELDS : SKADNETWORK_FIELDS,
    MAX_INVALID_FIELD_CHARS,
  );
  const signature = scalarOf(record.signature, MAX_INVALID_SIGNATURE_CHARS);
  const version = record.version === undefined ? undefined : cut(record.version, MAX_INVALID_FIELD_CHARS);
  const keyId = record.key_id === undefined ? undefined : cut(record.key_id, MAX_INVALID_FIELD_CHARS);
  const trimmed = signed.trimmed || unverified.trimmed || signature.trimmed || version !== record.version || keyId !== record.key_id;
  return {
    ...record,
    ...(keyId === undefined ? {} : { key_id: keyId }),
    ...(version === undefined ? {} : { version }),
    signed: signed.kept,
    unverified: unverified.kept,
    signature: signature.value ?? null,
    ...(trimmed ? { trimmed: true } : {}),
    expires_at: invalidExpiry(record.received_ms),
  };
}

/** When an invalid postback received at `receivedMs` expires (epoch seconds): its record, its table item, its count. */
export const invalidExpiry = (receivedMs: number): number => Math.floor(receivedMs / 1000) + INVALID_POSTBACKS.expireAfterDays * 86_400;
