import { verify } from 'node:crypto';
import { jsonObjectOf, omit } from './fields';
import type { AdAttributionKitKeySet, KeyEnvironment } from './postback-keys';
import type { Verification } from './verification';

/**
 * AdAttributionKit postbacks: the signed fields travel as a compact JWS in `jws-string`, signed
 * with ES256 (ECDSA P-256, SHA-256, the signature as the raw 64 bytes r||s) by the key its
 * header's `kid` names. Whatever sits beside `jws-string` in the body (conversion values,
 * ad-interaction-type, country-code) is not signed. Apple: "Verifying a postback" and
 * "Identifying the parameters in a postback" (AdAttributionKit); RFC 7515 section 5.2.
 */

export const JWS_FIELD = 'jws-string';

/**
 * The fields Apple defines for an AdAttributionKit postback ("Identifying the parameters in a
 * postback"): beside jws-string in the body, and in the JWS payload. All an invalid postback keeps.
 */
export const ADATTRIBUTIONKIT_BODY_FIELDS: readonly string[] = [
  'conversion-value',
  'coarse-conversion-value',
  'ad-interaction-type',
  'country-code',
];
export const ADATTRIBUTIONKIT_PAYLOAD_FIELDS: readonly string[] = [
  'postback-identifier',
  'ad-network-identifier',
  'source-identifier',
  'advertised-item-identifier',
  'publisher-item-identifier',
  'marketplace-identifier',
  'impression-type',
  'conversion-type',
  'did-win',
  'postback-sequence-index',
];

/** The only algorithm accepted, whatever a header asks for: the header never chooses the check. */
export const JWS_ALGORITHM = 'ES256';

export type AdAttributionKitFailure =
  | 'malformed_jws'
  | 'unsupported_alg'
  | 'unsupported_crit'
  | 'unknown_kid'
  | 'malformed_signature'
  | 'bad_signature';

export interface AdAttributionKitCheck {
  /** The decoded JWS payload: the signed fields, trustworthy only when verified. Undefined when it cannot be decoded. */
  readonly signed?: Record<string, unknown>;
  /** Every field of the body but jws-string: never signed. */
  readonly unverified: Record<string, unknown>;
  /** Production or development, from the key that verified it. */
  readonly keyEnvironment?: KeyEnvironment;
  readonly verification: Verification<AdAttributionKitFailure>;
}

const SEGMENT = /^[A-Za-z0-9_-]+$/;

/** Three base64url segments (RFC 7515 compact serialization; no padding, none empty), or undefined. */
function segmentsOf(jws: unknown): [string, string, string] | undefined {
  if (typeof jws !== 'string') return undefined;
  const parts = jws.split('.');
  if (parts.length !== 3 || !parts.every((part) => SEGMENT.test(part) && part.length % 4 !== 1)) return undefined;
  return parts as [string, string, string];
}

export function verifyAdAttributionKit(postback: Record<string, unknown>, keys: AdAttributionKitKeySet): AdAttributionKitCheck {
  const unverified = omit(postback, [JWS_FIELD]);
  const segments = segmentsOf(postback[JWS_FIELD]);
  const signed = segments && jsonObjectOf(Buffer.from(segments[1], 'base64url'));
  const header = segments && jsonObjectOf(Buffer.from(segments[0], 'base64url'));
  const check = (verification: Verification<AdAttributionKitFailure>, keyEnvironment?: KeyEnvironment): AdAttributionKitCheck => ({
    signed,
    unverified,
    keyEnvironment,
    verification,
  });

  if (!segments || !signed || !header) return check({ verified: false, reason: 'malformed_jws' });
  const kid = typeof header.kid === 'string' ? header.kid : undefined;
  if (header.alg !== JWS_ALGORITHM) return check({ verified: false, reason: 'unsupported_alg', keyId: kid });
  // RFC 7515 4.1.11: extensions listed in crit must be understood; this verifier understands none.
  if (header.crit !== undefined) return check({ verified: false, reason: 'unsupported_crit', keyId: kid });
  const key = kid === undefined ? undefined : keys(kid);
  if (!key) return check({ verified: false, reason: 'unknown_kid', keyId: kid });

  const signature = Buffer.from(segments[2], 'base64url');
  if (signature.length !== 64) return check({ verified: false, reason: 'malformed_signature', keyId: key.kid }, key.environment);
  const signingInput = Buffer.from(`${segments[0]}.${segments[1]}`, 'ascii');
  const valid = verify('sha256', signingInput, { key: key.key, dsaEncoding: 'ieee-p1363' }, signature);
  return valid
    ? check({ verified: true, keyId: key.kid }, key.environment)
    : check({ verified: false, reason: 'bad_signature', keyId: key.kid }, key.environment);
}
