import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import {
  APPLE_ADATTRIBUTIONKIT_KEYS,
  APPLE_KEYS,
  adAttributionKitKeys,
  type KeyEnvironment,
  type PostbackKeys,
} from '../../../functions/domain/skan/postback-keys';
import fixtures from './fixtures/apple-postbacks.json';

/** Postbacks Apple signed (fixtures/README.md says where each was published), and signing helpers for the tests. */

export type Postback = Record<string, unknown>;

export interface SkadnetworkExample {
  readonly name: string;
  readonly source: string;
  readonly signed_order: readonly string[];
  readonly postback: Postback;
}

export const SKADNETWORK_EXAMPLES: readonly SkadnetworkExample[] = fixtures.skadnetwork;
export const SKADNETWORK_ERRATUM: Postback = fixtures.skadnetwork_erratum.postback;
export const AAK_EXAMPLE = fixtures.adattributionkit[0] as { name: string; kid: string; postback: Postback };

/** A deep copy with some fields changed (undefined removes one). */
export function changed(postback: Postback, fields: Postback): Postback {
  const copy: Postback = structuredClone(postback);
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) delete copy[name];
    else copy[name] = value;
  }
  return copy;
}

/** A value of the same JSON type that differs from the original: what a tamperer would send. */
export function tamperedValue(value: unknown): unknown {
  if (typeof value === 'boolean') return !value;
  if (typeof value === 'number') return value + 1;
  if (typeof value === 'string') return /^\d+$/.test(value) ? String(Number(value) + 1) : `${value}x`;
  throw new Error(`no tampered value for ${JSON.stringify(value)}`);
}

/** A P-256 key pair the test owns, the kind Apple signs AdAttributionKit postbacks with. */
export const p256 = () => generateKeyPairSync('ec', { namedCurve: 'P-256' });

/** Apple's keys plus one AdAttributionKit key of the test's own, under its kid. */
export function keysWith(kid: string, publicKey: KeyObject, environment: KeyEnvironment = 'production'): PostbackKeys {
  return {
    ...APPLE_KEYS,
    adAttributionKit: adAttributionKitKeys([...APPLE_ADATTRIBUTIONKIT_KEYS, { kid, environment, key: publicKey }]),
  };
}

const segment = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value), 'utf8').toString('base64url');

/** A compact JWS over header and payload, ES256 with r||s as JWS wants, unless the header says otherwise. */
export function signJws(header: Postback, payload: Postback, privateKey: KeyObject): string {
  const signingInput = `${segment(header)}.${segment(payload)}`;
  const signature = sign('sha256', Buffer.from(signingInput, 'ascii'), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${signingInput}.${signature.toString('base64url')}`;
}

/** An AdAttributionKit body as Apple sends it: the JWS and the unsigned fields beside it. */
export function aakPostback(
  jws: string,
  unsigned: Postback = { 'conversion-value': 24, 'ad-interaction-type': 'click', 'country-code': 'US' },
): Postback {
  return { 'jws-string': jws, ...unsigned };
}

/** The payload of Apple's example with another postback-identifier: a fresh AdAttributionKit postback. */
export function aakPayload(postbackIdentifier: string, overrides: Postback = {}): Postback {
  const [, payload] = String(AAK_EXAMPLE.postback['jws-string']).split('.');
  return { ...JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')), 'postback-identifier': postbackIdentifier, ...overrides };
}
