import { verify } from 'node:crypto';
import { omit, pick } from './fields';
import type { PostbackKeys, SkadnetworkKeyId } from './postback-keys';
import type { Verification } from './verification';

/**
 * SKAdNetwork's attribution-signature: ECDSA with SHA-256 over the UTF-8 string of the version's
 * signed fields joined by U+2063 (INVISIBLE SEPARATOR), in the exact order Apple documents for
 * that version; a DER signature, base64-encoded. Conversion values (fine or coarse) are never
 * signed, in any version.
 *
 * Sources, one per row of SKADNETWORK_VERSIONS (docs/skan-postbacks.md has the links):
 * "Combining parameters for previous SKAdNetwork postback versions" (1.0 to 2.2), "Combining
 * parameters for SKAdNetwork 3 postbacks" (3.0), "Verifying an install-validation postback" (4.0),
 * and the release notes that name the key of each version.
 */

/** U+2063 INVISIBLE SEPARATOR, between every two signed values. */
export const SEPARATOR = '\u2063';

/**
 * A signed field by name, or a place filled by the first of these fields the postback carries
 * and left out (with its separator) when it carries none: source-app-id is signed only when
 * present, and in 4.0 a web ad's postback has source-domain in its place.
 */
export type SignedField = string | { readonly firstPresentOf: readonly string[] };

export interface VersionRule {
  readonly key: SkadnetworkKeyId;
  readonly fields: readonly SignedField[];
}

const SOURCE_APP = { firstPresentOf: ['source-app-id'] } as const;
const SOURCE_APP_OR_DOMAIN = { firstPresentOf: ['source-app-id', 'source-domain'] } as const;

/** Apple's field order per version, and the key that signs it. */
export const SKADNETWORK_VERSIONS: Readonly<Record<string, VersionRule>> = {
  // The original postback carries no version field and no version in its signature.
  '1.0': { key: 'skadnetwork/p-192', fields: ['ad-network-id', 'campaign-id', 'app-id', 'transaction-id'] },
  '2.0': {
    key: 'skadnetwork/p-192',
    fields: ['version', 'ad-network-id', 'campaign-id', 'app-id', 'transaction-id', 'redownload', SOURCE_APP],
  },
  '2.1': {
    key: 'skadnetwork/p-256',
    fields: ['version', 'ad-network-id', 'campaign-id', 'app-id', 'transaction-id', 'redownload', SOURCE_APP],
  },
  '2.2': {
    key: 'skadnetwork/p-256',
    fields: ['version', 'ad-network-id', 'campaign-id', 'app-id', 'transaction-id', 'redownload', SOURCE_APP, 'fidelity-type'],
  },
  '3.0': {
    key: 'skadnetwork/p-256',
    fields: ['version', 'ad-network-id', 'campaign-id', 'app-id', 'transaction-id', 'redownload', SOURCE_APP, 'fidelity-type', 'did-win'],
  },
  '4.0': {
    key: 'skadnetwork/p-256',
    fields: [
      'version',
      'ad-network-id',
      'source-identifier',
      'app-id',
      'transaction-id',
      'redownload',
      SOURCE_APP_OR_DOMAIN,
      'fidelity-type',
      'did-win',
      'postback-sequence-index',
    ],
  },
};

/**
 * Every field Apple defines for a SKAdNetwork postback, in any version, but the signature
 * ("Identifying the parameters in install-validation postbacks"): all an invalid postback keeps.
 */
export const SKADNETWORK_FIELDS: readonly string[] = [
  'version',
  'ad-network-id',
  'source-identifier',
  'campaign-id',
  'app-id',
  'transaction-id',
  'redownload',
  'source-app-id',
  'source-domain',
  'fidelity-type',
  'did-win',
  'postback-sequence-index',
  'conversion-value',
  'coarse-conversion-value',
];

/** The field that carries the signature; it is stored beside the record, never in either half. */
export const SIGNATURE_FIELD = 'attribution-signature';

export type SkadnetworkFailure =
  | 'unknown_version'
  | 'missing_field'
  | 'bad_field'
  | 'separator_in_field'
  | 'missing_signature'
  | 'malformed_signature'
  | 'bad_signature';

export interface SkadnetworkCheck {
  /** The version as sent; "1.0" for a postback without one. */
  readonly version?: string;
  /** The fields the signature covers, as sent, in Apple's order: trustworthy only when verified. */
  readonly signed: Record<string, unknown>;
  /** Everything else the postback carries (conversion values among them), never signed. */
  readonly unverified: Record<string, unknown>;
  readonly verification: Verification<SkadnetworkFailure>;
}

/** The string a field's value is signed as: booleans as "true"/"false", integers in decimal. */
export function signedValue(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (typeof value === 'number' && Number.isSafeInteger(value)) return String(value);
  return undefined;
}

const present = (postback: Record<string, unknown>, name: string) => postback[name] !== undefined && postback[name] !== null;

/** The version a postback claims: its version field, or 1.0 when it has none. */
export function versionOf(postback: Record<string, unknown>): string | undefined {
  if (!present(postback, 'version')) return '1.0';
  return typeof postback.version === 'string' ? postback.version : undefined;
}

export type SignedMessage =
  | { readonly ok: true; readonly rule: VersionRule; readonly names: readonly string[]; readonly message: string }
  | {
      readonly ok: false;
      readonly reason: 'unknown_version' | 'missing_field' | 'bad_field' | 'separator_in_field';
      readonly field?: string;
    };

/** The rule of a version SKADNETWORK_VERSIONS knows (its own keys only, not the prototype's); else undefined. */
function versionRule(version: string | undefined): VersionRule | undefined {
  return version !== undefined && Object.hasOwn(SKADNETWORK_VERSIONS, version) ? SKADNETWORK_VERSIONS[version] : undefined;
}

/**
 * The string Apple signed for this postback: its version's fields in order, each rendered as
 * signedValue does, joined by U+2063. A value holding the separator itself is refused: it would
 * move the boundary between two fields and let one signature read two ways.
 */
export function signedMessage(postback: Record<string, unknown>): SignedMessage {
  const rule = versionRule(versionOf(postback));
  if (rule === undefined) return { ok: false, reason: 'unknown_version' };
  const names: string[] = [];
  const values: string[] = [];
  for (const field of rule.fields) {
    const name = typeof field === 'string' ? field : field.firstPresentOf.find((candidate) => present(postback, candidate));
    if (name === undefined) continue;
    if (!present(postback, name)) return { ok: false, reason: 'missing_field', field: name };
    const value = signedValue(postback[name]);
    if (value === undefined) return { ok: false, reason: 'bad_field', field: name };
    if (value.includes(SEPARATOR)) return { ok: false, reason: 'separator_in_field', field: name };
    names.push(name);
    values.push(value);
  }
  return { ok: true, rule, names, message: values.join(SEPARATOR) };
}

const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The key id a postback verified with the local test key is filed under. */
export const SKADNETWORK_TEST_KEY_ID = 'local-test/p-256';

/** Verifies a SKAdNetwork postback (any version of SKADNETWORK_VERSIONS) against the keys. */
export function verifySkadnetwork(postback: Record<string, unknown>, keys: PostbackKeys): SkadnetworkCheck {
  const version = versionOf(postback);
  const built = signedMessage(postback);
  const signedNames = built.ok ? built.names : expectedNames(version, postback);
  const signed = pick(postback, signedNames);
  const unverified = omit(postback, [...signedNames, SIGNATURE_FIELD]);
  const check = (verification: Verification<SkadnetworkFailure>): SkadnetworkCheck => ({ version, signed, unverified, verification });

  if (!built.ok) return check({ verified: false, reason: built.reason, field: built.field });
  const keyId = built.rule.key;
  const signature = postback[SIGNATURE_FIELD];
  if (signature === undefined || signature === null || signature === '')
    return check({ verified: false, reason: 'missing_signature', keyId });
  if (typeof signature !== 'string' || !BASE64.test(signature)) return check({ verified: false, reason: 'malformed_signature', keyId });
  const valid = ecdsaSha256(Buffer.from(built.message, 'utf8'), keys.skadnetwork[keyId], Buffer.from(signature, 'base64'));
  if (!valid && keyId === 'skadnetwork/p-256' && keys.skadnetworkTest) {
    // The local runtime's test key (functions/domain/skan/postback-keys.ts, testKeysOf): never in AWS.
    if (ecdsaSha256(Buffer.from(built.message, 'utf8'), keys.skadnetworkTest, Buffer.from(signature, 'base64')))
      return check({ verified: true, keyId: SKADNETWORK_TEST_KEY_ID });
  }
  return check(valid ? { verified: true, keyId } : { verified: false, reason: 'bad_signature', keyId });
}

/** A DER ECDSA signature over SHA-256; a signature OpenSSL cannot even parse is simply not valid. */
function ecdsaSha256(data: Buffer, key: Parameters<typeof verify>[2], signature: Buffer): boolean {
  try {
    return verify('sha256', data, key, signature);
  } catch {
    return false;
  }
}

/** For a postback whose message cannot be built: the fields its version would sign, those it has. */
function expectedNames(version: string | undefined, postback: Record<string, unknown>): string[] {
  const rule = versionRule(version);
  if (rule === undefined) return [];
  return rule.fields
    .flatMap((field) => (typeof field === 'string' ? [field] : field.firstPresentOf))
    .filter((name) => Object.hasOwn(postback, name));
}
