import { generateKeyPairSync, sign } from 'node:crypto';
import { APPLE_KEYS } from '../../../functions/domain/skan/postback-keys';
import { SEPARATOR, SKADNETWORK_VERSIONS, signedMessage, signedValue, verifySkadnetwork } from '../../../functions/domain/skan/skadnetwork';
import { changed, type Postback, SKADNETWORK_ERRATUM, SKADNETWORK_EXAMPLES, tamperedValue } from './postbacks';

const verify = (postback: Postback) => verifySkadnetwork(postback, APPLE_KEYS);
const examples = SKADNETWORK_EXAMPLES.map((example) => [example.name, example] as const);

describe('SKAdNetwork attribution-signature', () => {
  it.each(examples)("verifies Apple's postback: %s", (_name, example) => {
    const version = String(example.postback.version ?? '1.0');
    const check = verify(example.postback);
    expect(check.verification).toEqual({
      verified: true,
      keyId: ['1.0', '2.0'].includes(version) ? 'skadnetwork/p-192' : 'skadnetwork/p-256',
    });
    expect(check.version).toBe(version);
  });

  it.each(examples)('joins the signed fields with U+2063 in the order Apple lists for the version: %s', (_name, example) => {
    const built = signedMessage(example.postback);
    expect(built.ok && built.names).toEqual(example.signed_order);
    const expected = example.signed_order.map((name) => signedValue(example.postback[name])).join('\u2063');
    expect(built.ok && built.message).toBe(expected);
  });

  it.each(examples.flatMap(([name, example]) => example.signed_order.map((field) => [name, field, example] as const)))(
    'fails when a signed field is changed: %s, %s',
    (_name, field, example) => {
      const check = verify(changed(example.postback, { [field]: tamperedValue(example.postback[field]) }));
      expect(check.verification.verified).toBe(false);
    },
  );

  it.each(examples.flatMap(([name, example]) => example.signed_order.map((field) => [name, field, example] as const)))(
    'fails when a signed field is removed: %s, %s',
    (_name, field, example) => {
      expect(verify(changed(example.postback, { [field]: undefined })).verification.verified).toBe(false);
    },
  );

  it('fails when a field the version does not sign is added in a signed place (source-app-id on a nonwinning postback)', () => {
    const nonwinning = SKADNETWORK_EXAMPLES.find((example) => example.postback['did-win'] === false)!;
    expect(verify(changed(nonwinning.postback, { 'source-app-id': 1234567891 })).verification).toMatchObject({
      verified: false,
      reason: 'bad_signature',
    });
  });

  it('keeps verifying when an unsigned field changes, and files conversion values as unverified', () => {
    const [fine, coarse] = SKADNETWORK_EXAMPLES;
    const replayed = verify(changed(fine.postback, { 'conversion-value': 7, 'country-code': 'JP' }));
    expect(replayed.verification.verified).toBe(true);
    expect(replayed.unverified).toEqual({ 'conversion-value': 7, 'country-code': 'JP' });
    expect(Object.keys(replayed.signed)).toEqual(fine.signed_order);
    expect(verify(coarse.postback).unverified).toEqual({ 'coarse-conversion-value': 'high' });
  });

  it('renders booleans as "true"/"false" and integers in decimal, and takes numbers sent as strings for the same value', () => {
    expect([true, false, 0, 525463029, '4.0'].map(signedValue)).toEqual(['true', 'false', '0', '525463029', '4.0']);
    expect([1.5, null, {}, [], Number.MAX_SAFE_INTEGER + 2].map(signedValue)).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    const [fine] = SKADNETWORK_EXAMPLES;
    expect(verify(changed(fine.postback, { 'app-id': '525463029', 'fidelity-type': '1' })).verification.verified).toBe(true);
  });

  it('refuses a value that carries the separator, which would move a boundary between two signed fields', () => {
    const [fine] = SKADNETWORK_EXAMPLES;
    const smuggled = changed(fine.postback, { 'ad-network-id': `com.example${SEPARATOR}5239` });
    expect(verify(smuggled).verification).toEqual({ verified: false, reason: 'separator_in_field', field: 'ad-network-id' });
  });

  it('refuses a signed field of the wrong type, naming it', () => {
    const [fine] = SKADNETWORK_EXAMPLES;
    expect(verify(changed(fine.postback, { redownload: { value: false } })).verification).toEqual({
      verified: false,
      reason: 'bad_field',
      field: 'redownload',
    });
    expect(verify(changed(fine.postback, { 'app-id': null })).verification).toEqual({
      verified: false,
      reason: 'missing_field',
      field: 'app-id',
    });
  });

  it('refuses a version Apple has not documented rather than guessing its order', () => {
    const [fine] = SKADNETWORK_EXAMPLES;
    for (const version of ['5.0', '4', 4, 'constructor', '__proto__']) {
      const check = verify(changed(fine.postback, { version }));
      expect(check.verification).toEqual({ verified: false, reason: 'unknown_version' });
      expect(check.signed).toEqual({});
    }
  });

  it("refuses a missing or malformed signature, and one made by any key but Apple's", () => {
    const [fine] = SKADNETWORK_EXAMPLES;
    expect(verify(changed(fine.postback, { 'attribution-signature': undefined })).verification).toMatchObject({
      reason: 'missing_signature',
    });
    expect(verify(changed(fine.postback, { 'attribution-signature': 'not base64!' })).verification).toMatchObject({
      reason: 'malformed_signature',
    });
    expect(verify(changed(fine.postback, { 'attribution-signature': 42 })).verification).toMatchObject({ reason: 'malformed_signature' });
    expect(verify(changed(fine.postback, { 'attribution-signature': 'AAAA' })).verification).toMatchObject({ reason: 'bad_signature' });

    const forger = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const built = signedMessage(fine.postback);
    if (!built.ok) throw new Error('the example must build');
    const forged = changed(fine.postback, {
      'attribution-signature': sign('sha256', Buffer.from(built.message), forger.privateKey).toString('base64'),
    });
    expect(verify(forged).verification).toEqual({ verified: false, reason: 'bad_signature', keyId: 'skadnetwork/p-256' });
  });

  it('binds each version to its key: a 2.0 postback relabelled 2.1 no longer verifies', () => {
    const v20 = SKADNETWORK_EXAMPLES.find((example) => example.postback.version === '2.0')!;
    expect(verify(changed(v20.postback, { version: '2.1' })).verification).toMatchObject({ verified: false, keyId: 'skadnetwork/p-256' });
  });

  it("does not verify Apple's printed 2.0 example, which developers reported as wrong", () => {
    expect(verify(SKADNETWORK_ERRATUM).verification).toEqual({ verified: false, reason: 'bad_signature', keyId: 'skadnetwork/p-192' });
  });

  it('covers every version of the table with an example signed by Apple', () => {
    const versions = new Set(SKADNETWORK_EXAMPLES.map((example) => String(example.postback.version ?? '1.0')));
    expect([...versions].sort()).toEqual(Object.keys(SKADNETWORK_VERSIONS).sort());
  });
});
