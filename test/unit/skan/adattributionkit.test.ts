import { createHmac, generateKeyPairSync, sign } from 'node:crypto';
import { verifyAdAttributionKit } from '../../../functions/domain/skan/adattributionkit';
import { APPLE_KEYS, adAttributionKitKeys } from '../../../functions/domain/skan/postback-keys';
import { AAK_EXAMPLE, aakPayload, aakPostback, changed, keysWith, p256, signJws } from './postbacks';

const TEST_KID = 'test-suite/0';
const testKey = p256();
const keys = keysWith(TEST_KID, testKey.publicKey);
const payload = aakPayload('3F2504E0-4F89-41D3-9A0C-0305E82C3301');
const header = { kid: TEST_KID, alg: 'ES256' };
const verify = (postback: Record<string, unknown>, keySet = keys) => verifyAdAttributionKit(postback, keySet.adAttributionKit);
const segments = (jws: string) => jws.split('.') as [string, string, string];
const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

describe('AdAttributionKit JWS', () => {
  it("verifies Apple's example postback with Apple's published key for its kid, as a development postback", () => {
    const check = verify(AAK_EXAMPLE.postback, APPLE_KEYS);
    expect(check.verification).toEqual({ verified: true, keyId: AAK_EXAMPLE.kid });
    expect(check.keyEnvironment).toBe('development');
    expect(check.signed).toMatchObject({ 'postback-identifier': '85546EB7-FD39-44BC-8990-C98A4AC36A49', 'did-win': true });
    expect(check.unverified).toEqual({ 'conversion-value': 24, 'ad-interaction-type': 'click', 'country-code': 'US' });
  });

  it('verifies a postback signed with a key the test adds to the key set', () => {
    const check = verify(aakPostback(signJws(header, payload, testKey.privateKey)));
    expect(check.verification).toEqual({ verified: true, keyId: TEST_KID });
    expect(check.keyEnvironment).toBe('production');
    expect(check.signed).toEqual(payload);
  });

  it('does not verify a postback signed with another key under the same kid', () => {
    const other = p256();
    expect(verify(aakPostback(signJws(header, payload, other.privateKey))).verification).toEqual({
      verified: false,
      reason: 'bad_signature',
      keyId: TEST_KID,
    });
  });

  it('does not verify a kid the key set does not hold, whatever the signature', () => {
    const jws = signJws({ kid: 'test-suite/9', alg: 'ES256' }, payload, testKey.privateKey);
    expect(verify(aakPostback(jws)).verification).toEqual({ verified: false, reason: 'unknown_kid', keyId: 'test-suite/9' });
    expect(verify(aakPostback(signJws({ alg: 'ES256' }, payload, testKey.privateKey))).verification).toMatchObject({
      reason: 'unknown_kid',
    });
    // Apple's production keys know nothing of the test's key.
    expect(verify(aakPostback(signJws(header, payload, testKey.privateKey)), APPLE_KEYS).verification).toMatchObject({
      reason: 'unknown_kid',
    });
  });

  it.each(['HS256', 'none', 'ES384', 'RS256', 'es256', undefined])('refuses alg %s, even over a valid ES256 signature', (alg) => {
    const [, body, signature] = segments(signJws(header, payload, testKey.privateKey));
    const relabelled = `${encode({ kid: TEST_KID, alg })}.${body}.${signature}`;
    expect(verify(aakPostback(relabelled)).verification).toMatchObject({ verified: false, reason: 'unsupported_alg' });
  });

  it('refuses an HMAC "signed" with the public key, the classic algorithm confusion', () => {
    const forgedHeader = encode({ kid: TEST_KID, alg: 'HS256' });
    const input = `${forgedHeader}.${encode(payload)}`;
    const mac = createHmac('sha256', testKey.publicKey.export({ format: 'der', type: 'spki' }))
      .update(input)
      .digest('base64url');
    expect(verify(aakPostback(`${input}.${mac}`)).verification).toMatchObject({ verified: false, reason: 'unsupported_alg' });
  });

  it('fails when the payload or the header is changed after signing', () => {
    const [head, , signature] = segments(signJws(header, payload, testKey.privateKey));
    const tamperedPayload = `${head}.${encode({ ...payload, 'source-identifier': '9999' })}.${signature}`;
    expect(verify(aakPostback(tamperedPayload)).verification).toMatchObject({ verified: false, reason: 'bad_signature' });
    const [, body] = segments(signJws(header, payload, testKey.privateKey));
    const tamperedHeader = `${encode({ alg: 'ES256', kid: TEST_KID })}.${body}.${signature}`;
    expect(verify(aakPostback(tamperedHeader)).verification).toMatchObject({ verified: false, reason: 'bad_signature' });

    const [appleHead, applePayload, appleSignature] = segments(String(AAK_EXAMPLE.postback['jws-string']));
    const decoded = JSON.parse(Buffer.from(applePayload, 'base64url').toString());
    for (const [field, value] of Object.entries(decoded)) {
      const changedValue = typeof value === 'boolean' ? !value : typeof value === 'number' ? value + 1 : `${String(value)}0`;
      const jws = `${appleHead}.${encode({ ...decoded, [field]: changedValue })}.${appleSignature}`;
      expect({ field, verified: verify(changed(AAK_EXAMPLE.postback, { 'jws-string': jws }), APPLE_KEYS).verification.verified }).toEqual({
        field,
        verified: false,
      });
    }
  });

  it('refuses critical header extensions it does not understand', () => {
    const jws = signJws({ ...header, crit: ['exp'], exp: 1 }, payload, testKey.privateKey);
    expect(verify(aakPostback(jws)).verification).toMatchObject({ verified: false, reason: 'unsupported_crit' });
  });

  it('refuses a signature that is not the 64 bytes r||s of JWS (a DER signature, say)', () => {
    const [head, body] = segments(signJws(header, payload, testKey.privateKey));
    const der = sign('sha256', Buffer.from(`${head}.${body}`), testKey.privateKey).toString('base64url');
    expect(verify(aakPostback(`${head}.${body}.${der}`)).verification).toMatchObject({ verified: false, reason: 'malformed_signature' });
  });

  it.each([
    ['two segments', 'eyJhIjoxfQ.eyJhIjoxfQ'],
    ['four segments', 'a.b.c.d'],
    ['padding', `${encode(header)}=.${encode(payload)}.c2ln`],
    ['base64 rather than base64url', `${encode(header)}.${encode(payload)}.ab+/`],
    ['a header that is not JSON', `bm90IGpzb24.${encode(payload)}.c2ln`],
    ['a header that is not an object', `${encode([1])}.${encode(payload)}.c2ln`],
    ['not a string', 42],
  ])('refuses a malformed JWS: %s', (_name, jws) => {
    const check = verify(aakPostback(jws as string));
    expect(check.verification).toEqual({ verified: false, reason: 'malformed_jws' });
  });

  it('keeps the payload of a JWS it cannot verify, so the postback can still be filed under its identifier', () => {
    const [head, body] = segments(signJws(header, payload, testKey.privateKey));
    expect(verify(aakPostback(`${head}.${body}.c2ln`)).signed).toEqual(payload);
  });

  it('takes only P-256 keys into a key set', () => {
    const p384 = generateKeyPairSync('ec', { namedCurve: 'P-384' });
    expect(() => adAttributionKitKeys([{ kid: 'x', environment: 'production', key: p384.publicKey }])).toThrow(/P-256/);
  });
});
