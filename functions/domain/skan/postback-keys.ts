import { createPublicKey, type KeyObject } from 'node:crypto';
import appleKeys from './data/apple-keys.json';

/**
 * The public keys postbacks are verified with. Apple publishes them in its documentation
 * (data/apple-keys.json names each page); they are embedded rather than fetched, so a cold start
 * never depends on Apple's site and a key only changes through a reviewed commit.
 */

/** The two SKAdNetwork keys: P-192 signs versions 1.0 and 2.0, P-256 every later version. */
export type SkadnetworkKeyId = 'skadnetwork/p-192' | 'skadnetwork/p-256';

/** Apple signs production AdAttributionKit postbacks with one key, development ones with others. */
export type KeyEnvironment = 'production' | 'development';

export interface AdAttributionKitKey {
  readonly kid: string;
  readonly environment: KeyEnvironment;
  readonly key: KeyObject;
}

/** The AdAttributionKit key a JWS header's kid names, if any: a port, so tests can add a key of their own. */
export type AdAttributionKitKeySet = (kid: string) => AdAttributionKitKey | undefined;

export interface PostbackKeys {
  readonly skadnetwork: Readonly<Record<SkadnetworkKeyId, KeyObject>>;
  readonly adAttributionKit: AdAttributionKitKeySet;
  /** A P-256 key trusted beside Apple's for SKAdNetwork 2.1 and later: the local runtime's test key only (testKeysOf). */
  readonly skadnetworkTest?: KeyObject;
}

const CURVES = { 'P-192': 'prime192v1', 'P-256': 'prime256v1' } as const;

/**
 * A public key from its base64 DER SubjectPublicKeyInfo, as Apple prints it. A key on another
 * curve than the one expected throws: a wrong key in the data file fails the cold start loudly
 * instead of quietly marking every postback invalid.
 */
export function publicKeyOf(base64Der: string, curve: keyof typeof CURVES): KeyObject {
  const key = createPublicKey({ key: Buffer.from(base64Der, 'base64'), format: 'der', type: 'spki' });
  const namedCurve = key.asymmetricKeyDetails?.namedCurve;
  if (key.asymmetricKeyType !== 'ec' || namedCurve !== CURVES[curve]) {
    throw new Error(`expected an EC ${curve} public key, got ${key.asymmetricKeyType} ${namedCurve ?? ''}`.trim());
  }
  return key;
}

/** A key set from a list; every key must be P-256, the only curve ES256 uses. */
export function adAttributionKitKeys(keys: readonly AdAttributionKitKey[]): AdAttributionKitKeySet {
  for (const { kid, key } of keys) {
    if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== CURVES['P-256']) {
      throw new Error(`AdAttributionKit key ${kid} is not an EC P-256 key`);
    }
  }
  const byKid = new Map(keys.map((entry) => [entry.kid, entry]));
  return (kid) => byKid.get(kid);
}

/** Apple's published AdAttributionKit keys, production and development. */
export const APPLE_ADATTRIBUTIONKIT_KEYS: readonly AdAttributionKitKey[] = appleKeys.adattributionkit.map((entry) => ({
  kid: entry.kid,
  environment: entry.environment as KeyEnvironment,
  key: publicKeyOf(entry.key, 'P-256'),
}));

function skadnetworkKey(id: SkadnetworkKeyId): KeyObject {
  const entry = appleKeys.skadnetwork.find((key) => key.id === id);
  if (!entry) throw new Error(`data/apple-keys.json has no ${id} key`);
  return publicKeyOf(entry.key, entry.curve as keyof typeof CURVES);
}

/** What production verifies with: Apple's published keys, nothing else. */
export const APPLE_KEYS: PostbackKeys = {
  skadnetwork: { 'skadnetwork/p-192': skadnetworkKey('skadnetwork/p-192'), 'skadnetwork/p-256': skadnetworkKey('skadnetwork/p-256') },
  adAttributionKit: adAttributionKitKeys(APPLE_ADATTRIBUTIONKIT_KEYS),
};

/**
 * The variable through which the local runtime (local/skan-test-key.ts) makes skan-postback trust
 * its test keys, so the simulator can sign postbacks: JSON `{"skadnetwork": "<base64 DER P-256
 * public key>", "adattributionkit": [{"kid": "...", "key": "<base64 DER>"}]}`. The stack never
 * sets it (test/stack checks), so in AWS only Apple's keys verify.
 */
export const TEST_KEYS_VARIABLE = 'SKAN_TEST_KEYS';

/**
 * Apple's keys, plus the test keys the variable holds, if it is set. Test AdAttributionKit keys
 * sign as `production` (the report counts them, as the simulator wants); a malformed value fails
 * the cold start.
 */
export function testKeysOf(value: string | undefined, base: PostbackKeys = APPLE_KEYS): PostbackKeys {
  if (value === undefined || value === '') return base;
  const parsed = JSON.parse(value) as { skadnetwork?: string; adattributionkit?: { kid: string; key: string }[] };
  const extra = (parsed.adattributionkit ?? []).map(({ kid, key }) => ({
    kid,
    environment: 'production' as const,
    key: publicKeyOf(key, 'P-256'),
  }));
  return {
    ...base,
    adAttributionKit: extra.length ? adAttributionKitKeys([...APPLE_ADATTRIBUTIONKIT_KEYS, ...extra]) : base.adAttributionKit,
    ...(parsed.skadnetwork === undefined ? {} : { skadnetworkTest: publicKeyOf(parsed.skadnetwork, 'P-256') }),
  };
}
