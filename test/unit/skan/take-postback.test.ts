import { DAY_MS } from '../../../functions/domain/common/days';
import { APPLE_KEYS, type PostbackKeys } from '../../../functions/domain/skan/postback-keys';
import { MAX_POSTBACK_BYTES, type PostbackRecord } from '../../../functions/domain/skan/postback-record';
import {
  CLAIM_LAPSE_MS,
  mayTakeOver,
  type PostbackClaim,
  type PostbackHolder,
  type SkanPostbackPorts,
  takePostback,
} from '../../../functions/domain/skan/take-postback';
import { AAK_EXAMPLE, aakPayload, aakPostback, changed, keysWith, type Postback, p256, SKADNETWORK_EXAMPLES, signJws } from './postbacks';

const NOW = Date.UTC(2025, 2, 9, 23, 59, 30);
const [FINE, COARSE] = SKADNETWORK_EXAMPLES;
const bytes = (value: unknown) => Buffer.from(typeof value === 'string' ? value : JSON.stringify(value), 'utf8');

interface LedgerItem {
  verified: boolean;
  stored: boolean;
  claimedMs: number;
  claimId: string;
  /** The object of the id's verified postback and that of its invalid one: each kept by the next claim of its standing. */
  objectKeys: { verified?: string; invalid?: string };
  expiresAt?: number;
}

/** The ports over memory: the ledger applies mayTakeOver as the DynamoDB condition does, and any step can be made to fail. */
function world(keys: PostbackKeys = APPLE_KEYS) {
  const ledger = new Map<string, LedgerItem>();
  const objects = new Map<string, PostbackRecord>();
  const failing = new Set<'claim' | 'putRecord' | 'markStored' | 'release'>();
  let next = 0;
  const fail = (step: 'claim' | 'putRecord' | 'markStored' | 'release') => {
    if (failing.has(step)) throw Object.assign(new Error(`${step} failed`), { name: 'ServiceUnavailable' });
  };
  const ours = (claim: PostbackClaim) => ledger.get(claim.transactionId)?.claimId === claim.claimId;
  const ports: SkanPostbackPorts = {
    keys,
    filing: {
      claim: async (claim) => {
        fail('claim');
        const holder = ledger.get(claim.transactionId);
        if (!mayTakeOver(holder, claim, claim.nowMs))
          return { kind: 'held', holder: holder && { verified: holder.verified, stored: holder.stored, claimedMs: holder.claimedMs } };
        const standing = claim.verified ? 'verified' : 'invalid';
        const objectKey = holder?.objectKeys[standing] ?? claim.objectKey;
        const objectKeys = { ...holder?.objectKeys, [standing]: objectKey };
        ledger.set(claim.transactionId, {
          verified: claim.verified,
          stored: false,
          claimedMs: claim.nowMs,
          claimId: claim.claimId,
          objectKeys,
          expiresAt: claim.expiresAt,
        });
        return {
          kind: 'claimed',
          objectKey,
          replaced: holder && { verified: holder.verified, stored: holder.stored, claimedMs: holder.claimedMs },
        };
      },
      putRecord: async (key, record) => {
        fail('putRecord');
        objects.set(key, structuredClone(record));
      },
      markStored: async (claim) => {
        fail('markStored');
        if (ours(claim)) ledger.get(claim.transactionId)!.stored = true;
      },
      release: async (claim) => {
        fail('release');
        const item = ledger.get(claim.transactionId);
        if (item && ours(claim) && !item.stored) item.claimedMs = 0;
      },
    },
    newClaimId: () => `claim-${++next}`,
  };
  const post = (body: unknown, receivedMs = NOW) => takePostback(ports, { body: bytes(body), receivedMs });
  return { ports, ledger, objects, failing, post };
}

describe('takePostback', () => {
  it("files Apple's postback as verified under audit/skan/<yyyy>/<mm>/<dd>/<transaction-id>.json, conversion value unverified", async () => {
    const { post, objects } = world();
    const outcome = await post(FINE.postback);
    const key = 'audit/skan/2025/03/09/6aafb7a5-0170-41b5-bbe4-fe71dedf1e30.json';
    expect(outcome).toMatchObject({ kind: 'stored', objectKey: key });
    const { 'attribution-signature': signature, 'conversion-value': conversionValue, ...signed } = FINE.postback;
    expect(objects.get(key)).toEqual({
      record_version: 1,
      kind: 'skadnetwork',
      transaction_id: '6aafb7a5-0170-41b5-bbe4-fe71dedf1e30',
      received_ms: NOW,
      verified: true,
      key_id: 'skadnetwork/p-256',
      version: '4.0',
      signed,
      unverified: { 'conversion-value': conversionValue },
      signature,
    });
    expect(Object.keys(objects.get(key)!.signed)).toEqual(FINE.signed_order);
  });

  it('files a tampered postback as invalid, with the reason, and answers it the same (Apple retries anything else)', async () => {
    const { post, objects } = world();
    const outcome = await post(changed(COARSE.postback, { 'source-identifier': '40' }));
    expect(outcome).toMatchObject({ kind: 'stored', record: { verified: false, reason: 'bad_signature', key_id: 'skadnetwork/p-256' } });
    expect([...objects.values()]).toMatchObject([
      { transaction_id: COARSE.postback['transaction-id'], verified: false, signed: { 'source-identifier': '40' } },
    ]);
  });

  it('files a repeated transaction-id once: the copy, even with another conversion value, writes nothing', async () => {
    const { post, objects } = world();
    await post(FINE.postback);
    const replay = await post(changed(FINE.postback, { 'conversion-value': 1 }), NOW + DAY_MS);
    expect(replay).toMatchObject({ kind: 'duplicate', holder: { verified: true, stored: true } });
    expect([...objects.values()]).toMatchObject([{ unverified: { 'conversion-value': 63 }, received_ms: NOW }]);
  });

  it('lets the genuine postback replace a forged one filed first under its transaction-id: filed under audit/skan/, without expiry, the forged copy left to expire', async () => {
    const { post, objects, ledger } = world();
    const id = String(FINE.postback['transaction-id']);
    const forged = await post(changed(FINE.postback, { 'conversion-value': 0, 'source-domain': 'evil.example' }));
    expect(forged).toMatchObject({ kind: 'stored', objectKey: `audit/skan/invalid/2025/03/09/${id}.json`, record: { verified: false } });
    const genuine = await post(FINE.postback, NOW + DAY_MS);
    expect(genuine).toMatchObject({
      kind: 'stored',
      objectKey: `audit/skan/2025/03/10/${id}.json`,
      replaced: { verified: false, stored: true },
    });
    expect(Object.fromEntries(objects)).toMatchObject({
      [`audit/skan/invalid/2025/03/09/${id}.json`]: { verified: false, expires_at: Math.floor(NOW / 1000) + 30 * 86_400 },
      [`audit/skan/2025/03/10/${id}.json`]: { verified: true, received_ms: NOW + DAY_MS },
    });
    expect(objects.get(`audit/skan/2025/03/10/${id}.json`)).not.toHaveProperty('expires_at');
    expect(ledger.get(id)).toMatchObject({ verified: true, expiresAt: undefined });
    // ...and no forged copy can take its place afterwards.
    expect(await post(changed(FINE.postback, { 'source-domain': 'evil.example' }))).toMatchObject({ kind: 'duplicate' });
    expect(objects.size).toBe(2);
  });

  it('keeps of an invalid postback only the fields Apple defines, each value at most 256 characters, under audit/skan/invalid/, expiring after 30 days', async () => {
    const { post, objects, ledger } = world();
    const junk = changed(FINE.postback, {
      'source-domain': 'd'.repeat(300),
      'conversion-value': { deep: ['junk'] },
      junk: 'x'.repeat(1000),
    });
    const outcome = await post(junk);
    const id = String(FINE.postback['transaction-id']);
    const key = `audit/skan/invalid/2025/03/09/${id}.json`;
    expect(outcome).toMatchObject({ kind: 'stored', objectKey: key });
    const { 'attribution-signature': signature, 'conversion-value': _value, ...signed } = FINE.postback;
    expect(objects.get(key)).toEqual({
      record_version: 1,
      kind: 'skadnetwork',
      transaction_id: id,
      received_ms: NOW,
      verified: false,
      reason: 'bad_signature',
      key_id: 'skadnetwork/p-256',
      version: '4.0',
      signed: { ...signed, 'source-domain': 'd'.repeat(256) },
      unverified: {},
      signature,
      trimmed: true,
      expires_at: Math.floor(NOW / 1000) + 30 * 86_400,
    });
    expect(ledger.get(id)).toMatchObject({ verified: false, stored: true, expiresAt: Math.floor(NOW / 1000) + 30 * 86_400 });
  });

  it("cuts a version that is not Apple's to 256 characters, and marks nothing trimmed when nothing was", async () => {
    const { post, objects } = world();
    await post(changed(FINE.postback, { version: 'v'.repeat(1000) }));
    await post(changed(COARSE.postback, { 'did-win': false }));
    const [long, plain] = [...objects.values()];
    expect(long).toMatchObject({ verified: false, reason: 'unknown_version', version: 'v'.repeat(256), trimmed: true });
    expect(plain).toMatchObject({ verified: false, reason: 'bad_signature', expires_at: expect.any(Number) });
    expect(plain).not.toHaveProperty('trimmed');
  });

  it('files an invalid copy of an invalid postback once too', async () => {
    const { post, objects } = world();
    const forged = changed(FINE.postback, { 'did-win': false });
    await post(forged);
    expect(await post(forged)).toMatchObject({ kind: 'duplicate', holder: { verified: false } });
    expect(objects.size).toBe(1);
  });

  describe('AdAttributionKit', () => {
    const kid = 'test-suite/0';
    const key = p256();

    it("files Apple's example by its postback-identifier, signed fields from the JWS and the rest unverified", async () => {
      const { post, objects } = world();
      expect(await post(AAK_EXAMPLE.postback)).toMatchObject({ kind: 'stored' });
      expect([...objects.values()]).toEqual([
        {
          record_version: 1,
          kind: 'adattributionkit',
          transaction_id: '85546EB7-FD39-44BC-8990-C98A4AC36A49',
          received_ms: NOW,
          verified: true,
          key_id: 'apple-development-identifier/1',
          key_environment: 'development',
          signed: aakPayload('85546EB7-FD39-44BC-8990-C98A4AC36A49'),
          unverified: { 'conversion-value': 24, 'ad-interaction-type': 'click', 'country-code': 'US' },
          signature: AAK_EXAMPLE.postback['jws-string'],
        },
      ]);
    });

    it('verifies a postback signed with a key the test adds, files one signed with another key as invalid, and de-duplicates on postback-identifier', async () => {
      const { post, objects } = world(keysWith(kid, key.publicKey));
      const payload = aakPayload('0A1B2C3D-0000-4000-8000-000000000001');
      expect(await post(aakPostback(signJws({ kid, alg: 'ES256' }, payload, key.privateKey)))).toMatchObject({
        kind: 'stored',
        record: { verified: true, key_id: kid, key_environment: 'production' },
      });
      expect(await post(aakPostback(signJws({ kid, alg: 'ES256' }, payload, key.privateKey), { 'conversion-value': 1 }))).toMatchObject({
        kind: 'duplicate',
      });

      const other = aakPayload('0A1B2C3D-0000-4000-8000-000000000002');
      expect(await post(aakPostback(signJws({ kid, alg: 'ES256' }, other, p256().privateKey)))).toMatchObject({
        kind: 'stored',
        record: { verified: false, reason: 'bad_signature', transaction_id: '0A1B2C3D-0000-4000-8000-000000000002' },
      });
      expect(objects.size).toBe(2);
    });

    it("keeps of an invalid one only Apple's payload and body fields, each at most 256 characters, and at most 2,048 characters of its JWS", async () => {
      const { post, objects } = world();
      const id = '0A1B2C3D-0000-4000-8000-000000000003';
      const payload = aakPayload(id, { 'source-identifier': 's'.repeat(300), junk: 'x'.repeat(3000) });
      const jws = signJws({ kid: 'k'.repeat(1000), alg: 'ES256' }, payload, key.privateKey);
      await post(aakPostback(jws, { 'conversion-value': 24, 'ad-interaction-type': 'click', 'country-code': 'US', extra: { junk: true } }));
      const { junk: _junk, ...defined } = payload;
      expect(objects.get(`audit/skan/invalid/2025/03/09/${id}.json`)).toEqual({
        record_version: 1,
        kind: 'adattributionkit',
        transaction_id: id,
        received_ms: NOW,
        verified: false,
        reason: 'unknown_kid',
        key_id: 'k'.repeat(256),
        signed: { ...defined, 'source-identifier': 's'.repeat(256) },
        unverified: { 'conversion-value': 24, 'ad-interaction-type': 'click', 'country-code': 'US' },
        signature: jws.slice(0, 2048),
        trimmed: true,
        expires_at: Math.floor(NOW / 1000) + 30 * 86_400,
      });
    });

    it('tells the two kinds apart by shape: a body with jws-string is AdAttributionKit whatever else it carries', async () => {
      const { post } = world();
      const outcome = await post({ ...AAK_EXAMPLE.postback, 'transaction-id': 'something-else' });
      expect(outcome).toMatchObject({
        kind: 'stored',
        record: { kind: 'adattributionkit', transaction_id: '85546EB7-FD39-44BC-8990-C98A4AC36A49' },
      });
    });
  });

  describe('refuses', () => {
    it.each([
      ['not JSON', '{"version": "4.0",'],
      ['invalid UTF-8', Buffer.from([0x7b, 0x22, 0xc3, 0x28, 0x22, 0x3a, 0x31, 0x7d])],
      ['empty', ''],
      ['an array', '[]'],
      ['a string', '"postback"'],
      ['null', 'null'],
    ])('bad_json: %s', async (_name, body) => {
      const { ports } = world();
      expect(await takePostback(ports, { body: typeof body === 'string' ? bytes(body) : body, receivedMs: NOW })).toEqual({
        kind: 'refused',
        refusal: 'bad_json',
      });
    });

    it(`body_too_large above ${MAX_POSTBACK_BYTES} bytes, and takes a postback padded to exactly that`, async () => {
      const { post } = world();
      const padded = (size: number) => {
        const base = JSON.stringify({ ...FINE.postback, padding: '' });
        return base.replace('"padding":""', `"padding":"${' '.repeat(size - base.length)}"`);
      };
      expect(await post(padded(MAX_POSTBACK_BYTES + 1))).toEqual({ kind: 'refused', refusal: 'body_too_large' });
      expect(await post(padded(MAX_POSTBACK_BYTES))).toMatchObject({ kind: 'stored', record: { verified: true } });
    });

    it.each<[string, Postback]>([
      ['no transaction-id', changed(FINE.postback, { 'transaction-id': undefined })],
      ['a transaction-id that is not a string', changed(FINE.postback, { 'transaction-id': 42 })],
      ['a transaction-id that would climb out of the key', changed(FINE.postback, { 'transaction-id': '../../audit/2025/x' })],
      ['a transaction-id with a slash', changed(FINE.postback, { 'transaction-id': 'a/b' })],
      ['a transaction-id of a dot', changed(FINE.postback, { 'transaction-id': '.' })],
      ['an empty object', {}],
      ['a JWS whose payload cannot be read', aakPostback('eyJhbGciOiJFUzI1NiJ9.bm90IGpzb24.c2ln')],
      [
        'a JWS payload without postback-identifier',
        aakPostback(signJws({ alg: 'ES256', kid: 'k' }, { 'did-win': true }, p256().privateKey)),
      ],
      ['nesting deeper than any postback', { ...FINE.postback, deep: JSON.parse('['.repeat(40) + ']'.repeat(40)) }],
    ])('bad_postback: %s, and files nothing', async (_name, body) => {
      const { post, objects, ledger } = world();
      expect(await post(body)).toEqual({ kind: 'refused', refusal: 'bad_postback' });
      expect(objects.size + ledger.size).toBe(0);
    });
  });

  describe('when a store fails', () => {
    it('answers store_failed when the claim fails, and writes nothing', async () => {
      const { post, objects, failing } = world();
      failing.add('claim');
      expect(await post(FINE.postback)).toMatchObject({ kind: 'store_failed', step: 'claim' });
      expect(objects.size).toBe(0);
    });

    it("releases the claim when the record cannot be written, so Apple's retry files it at once", async () => {
      const { post, objects, failing } = world();
      failing.add('putRecord');
      expect(await post(FINE.postback)).toMatchObject({ kind: 'store_failed', step: 'record' });
      failing.delete('putRecord');
      expect(await post(FINE.postback, NOW + 1000)).toMatchObject({ kind: 'stored', record: { verified: true } });
      expect(objects.size).toBe(1);
    });

    it('lets a claim that could not be released lapse: in progress until then, taken over after, into the same object', async () => {
      const { post, objects, failing } = world();
      failing.add('putRecord').add('release');
      await post(FINE.postback);
      failing.clear();
      expect(await post(FINE.postback, NOW + CLAIM_LAPSE_MS - 1)).toEqual(expect.objectContaining({ kind: 'in_progress' }));
      const retry = await post(FINE.postback, NOW + CLAIM_LAPSE_MS + 1);
      expect(retry).toMatchObject({ kind: 'stored', objectKey: `audit/skan/2025/03/09/${String(FINE.postback['transaction-id'])}.json` });
      expect(objects.size).toBe(1);
    });

    it('answers stored when only marking the claim fails: the record is safe', async () => {
      const { post, objects, failing } = world();
      failing.add('markStored');
      const outcome = await post(FINE.postback);
      expect(outcome).toMatchObject({ kind: 'stored', markFailure: expect.any(Error) });
      expect(objects.size).toBe(1);
    });
  });
});

describe('mayTakeOver', () => {
  const fresh = NOW - 1;
  const lapsed = NOW - CLAIM_LAPSE_MS - 1;
  const holder = (verified: boolean, stored: boolean, claimedMs = fresh): PostbackHolder => ({ verified, stored, claimedMs });

  it.each<[string, PostbackHolder | undefined, boolean, boolean]>([
    ['a free id, to anybody', undefined, false, true],
    ['a stored verified postback, to nobody', holder(true, true), true, false],
    ['a stored verified postback, to nobody (invalid)', holder(true, true), false, false],
    ['a stored invalid postback, to a verified one', holder(false, true), true, true],
    ['a stored invalid postback, not to another invalid one', holder(false, true), false, false],
    ['a claim in progress, to nobody', holder(false, false), true, false],
    ['a lapsed invalid claim, to anybody', holder(false, false, lapsed), false, true],
    ['a lapsed verified claim, to a verified postback', holder(true, false, lapsed), true, true],
    ['a lapsed verified claim, not to an invalid one', holder(true, false, lapsed), false, false],
  ])('gives %s', (_name, current, verified, expected) => {
    expect(mayTakeOver(current, { verified }, NOW)).toBe(expected);
  });
});
