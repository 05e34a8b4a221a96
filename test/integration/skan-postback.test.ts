// POST /skan-postback end to end: real HTTP through the local edge, the handler, dynalite and
// s3rver. Apple's postbacks filed verified, tampered ones filed invalid, one object per
// transaction-id, the refusals, and the answers while a store is down; every answer is checked
// against docs/openapi.yaml too.

import { randomUUID } from 'node:crypto';
import { GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { SkanStore } from '../../functions/adapters/skan-store';
import { MAX_POSTBACK_BYTES, type PostbackRecord } from '../../functions/domain/skan/postback-record';
import { CLAIM_LAPSE_MS, mayTakeOver, type PostbackClaim, type PostbackHolder } from '../../functions/domain/skan/take-postback';
import { dynamoClient } from '../../functions/shared/clients';
import { type LocalStack, startLocalStack } from '../support/local-stack';
import { OpenApi, pointerOf } from '../support/openapi';
import { countingWrites } from '../support/write-faults';
import { AAK_EXAMPLE, aakPayload, aakPostback, changed, type Postback, p256, SKADNETWORK_EXAMPLES, signJws } from '../unit/skan/postbacks';

let stack: LocalStack;
let s3: S3Client;
const api = new OpenApi();

beforeAll(async () => {
  stack = await startLocalStack();
  s3 = new S3Client({ forcePathStyle: true });
});

afterAll(async () => {
  s3.destroy();
  await stack.stop();
});

const example = (version: string, didWin?: boolean) =>
  SKADNETWORK_EXAMPLES.find(
    (e) => String(e.postback.version ?? '1.0') === version && (didWin === undefined || e.postback['did-win'] === didWin),
  )!.postback;
const [FINE, COARSE] = SKADNETWORK_EXAMPLES.map((e) => e.postback);

interface Answer {
  status: number;
  body: unknown;
}

/** POSTs a body as Apple does and checks the answer is one docs/openapi.yaml documents, body and all. */
async function post(body: Postback | string | Buffer): Promise<Answer> {
  const response = await fetch(`${stack.baseUrl}/skan-postback`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: typeof body === 'string' || Buffer.isBuffer(body) ? body : JSON.stringify(body),
  });
  const answer = { status: response.status, body: await response.json() };
  const operation = api.operationFor('POST', '/skan-postback')!;
  const raw = operation.spec.responses[String(answer.status)];
  expect({ status: answer.status, documented: raw !== undefined }).toEqual({ status: answer.status, documented: true });
  const documented = api.response(raw, `${operation.pointer}${pointerOf('responses', String(answer.status))}`, String(answer.status));
  expect(api.validate(`${documented.pointer}${pointerOf('content', 'application/json', 'schema')}`, answer.body)).toEqual([]);
  return answer;
}

/** Every object the postbacks have made: key and record. */
async function filed(): Promise<Map<string, PostbackRecord>> {
  const { Contents = [] } = await s3.send(new ListObjectsV2Command({ Bucket: stack.endpoints.bucket, Prefix: 'audit/skan/' }));
  const records = new Map<string, PostbackRecord>();
  for (const { Key } of Contents) {
    const object = await s3.send(new GetObjectCommand({ Bucket: stack.endpoints.bucket, Key }));
    records.set(Key!, JSON.parse(await object.Body!.transformToString()));
  }
  return records;
}

async function filedUnder(transactionId: string): Promise<[string, PostbackRecord][]> {
  return [...(await filed())].filter(([key]) => key.endsWith(`/${transactionId}.json`));
}

const today = () => new Date().toISOString().slice(0, 10).replace(/-/g, '/');
const OK = { status: 200, body: { ok: true } };

describe('POST /skan-postback', () => {
  it.each([
    ['SKAdNetwork 4.0', FINE],
    ['SKAdNetwork 3.0, nonwinning', example('3.0', false)],
    ['SKAdNetwork 2.0 (P-192)', example('2.0')],
    ['AdAttributionKit', AAK_EXAMPLE.postback],
  ])(
    "answers 200 to Apple's %s postback and files it verified under audit/skan/<yyyy>/<mm>/<dd>/<transaction-id>.json",
    async (_name, postback) => {
      const dayBefore = today();
      expect(await post(postback)).toEqual(OK);
      const id = String(postback['transaction-id'] ?? '85546EB7-FD39-44BC-8990-C98A4AC36A49');
      const records = await filedUnder(id);
      // The day the postback arrived: the one before it was sent, or the next if midnight passed meanwhile.
      expect(records).toHaveLength(1);
      expect([dayBefore, today()].map((day) => `audit/skan/${day}/${id}.json`)).toContain(records[0][0]);
      expect(records[0][1]).toMatchObject({ transaction_id: id, verified: true });
    },
  );

  it('answers 200 to a tampered postback and files it as invalid', async () => {
    const id = randomUUID();
    expect(await post(changed(COARSE, { 'transaction-id': id }))).toEqual(OK);
    const [[, record]] = await filedUnder(id);
    expect(record).toMatchObject({ kind: 'skadnetwork', verified: false, reason: 'bad_signature', signed: { 'transaction-id': id } });
  });

  it("files a repeated transaction-id once, keeping the first: Apple's 2.2, 3.0 and 2.1 examples share one", async () => {
    const first = example('2.2');
    const id = String(first['transaction-id']);
    for (const postback of [first, example('3.0', true), example('2.1'), changed(first, { 'conversion-value': 63 })]) {
      expect(await post(postback)).toEqual(OK);
    }
    const records = await filedUnder(id);
    expect(records).toHaveLength(1);
    expect(records[0][1]).toMatchObject({ version: '2.2', verified: true, unverified: { 'conversion-value': 20 } });
  });

  it('lets the genuine postback replace a forged one sent first with its transaction-id: filed under audit/skan/ for good, the forged copy left to expire', async () => {
    const id = String(COARSE['transaction-id']);
    expect(await post(changed(COARSE, { 'coarse-conversion-value': 'low', 'source-domain': 'evil.example' }))).toEqual(OK);
    expect((await filedUnder(id))[0][1]).toMatchObject({ verified: false });
    expect(await post(COARSE)).toEqual(OK);
    expect(await post(changed(COARSE, { 'did-win': false }))).toEqual(OK);
    const records = new Map(await filedUnder(id));
    const [genuine, forged] = [
      [...records.keys()].find((key) => !key.includes('/invalid/'))!,
      [...records.keys()].find((key) => key.includes('/invalid/'))!,
    ];
    expect(records.size).toBe(2);
    expect(records.get(genuine)).toMatchObject({ verified: true, unverified: { 'coarse-conversion-value': 'high' } });
    expect(records.get(genuine)).not.toHaveProperty('expires_at');
    expect(records.get(forged)).toMatchObject({
      verified: false,
      unverified: { 'coarse-conversion-value': 'low' },
      expires_at: expect.any(Number),
    });
    const { Item } = await dynamoClient().send(
      new GetCommand({ TableName: stack.endpoints.tables.skan_postbacks, Key: { transaction_id: id } }),
    );
    expect(Item).toMatchObject({ verified: true, object_key: genuine, invalid_object_key: forged, stored_ms: expect.any(Number) });
    expect(Item).not.toHaveProperty('expires_at');
  });

  it.each([
    ['bad_json', 400, '{"version": "4.0",'],
    ['bad_json', 400, '[]'],
    ['bad_postback', 400, JSON.stringify({ version: '4.0', 'attribution-signature': 'x' })],
    ['bad_postback', 400, JSON.stringify({ ...FINE, 'transaction-id': '../../etc/passwd' })],
    ['body_too_large', 413, JSON.stringify({ ...FINE, padding: ' '.repeat(MAX_POSTBACK_BYTES) })],
  ])('refuses with %s (%d) and files nothing', async (code, status, body) => {
    const before = (await filed()).size;
    expect(await post(body)).toEqual({ status, body: { error: code } });
    expect((await filed()).size).toBe(before);
  });

  describe('while a store is down', () => {
    const outage = example('1.0');
    const id = String(outage['transaction-id']);

    it("answers 503 store_unavailable while the object store is down, and files Apple's retry once it is back", async () => {
      await stack.emulators.stopS3();
      try {
        expect(await post(outage)).toEqual({ status: 503, body: { error: 'store_unavailable' } });
      } finally {
        await stack.emulators.startS3();
      }
      expect(await filedUnder(id)).toEqual([]);
      expect(await post(outage)).toEqual(OK);
      expect((await filedUnder(id)).map(([, record]) => record.verified)).toEqual([true]);
    });

    it('answers 503 store_unavailable while the table is down, and files nothing', async () => {
      const fresh = changed(FINE, { 'transaction-id': randomUUID() });
      const fault = countingWrites(dynamoClient(), 0);
      try {
        expect(await post(fresh)).toEqual({ status: 503, body: { error: 'store_unavailable' } });
      } finally {
        fault.stop();
      }
      expect(await filedUnder(String(fresh['transaction-id']))).toEqual([]);
    });
  });
});

describe('the skan_postbacks claim', () => {
  const T0 = Date.UTC(2025, 0, 1);
  const claimOf = (
    transactionId: string,
    verified: boolean,
    nowMs: number,
    objectKey = `audit/skan/x/${transactionId}-${nowMs}.json`,
  ): PostbackClaim => ({
    transactionId,
    kind: 'skadnetwork',
    verified,
    claimId: randomUUID(),
    objectKey,
    nowMs,
    ...(verified ? {} : { expiresAt: Math.floor(nowMs / 1000) + 30 * 86_400 }),
  });
  const holders: [string, PostbackHolder | undefined][] = [
    ['nobody', undefined],
    ...[true, false].flatMap((verified): [string, PostbackHolder][] => [
      [`a stored ${verified ? 'verified' : 'invalid'} postback`, { verified, stored: true, claimedMs: T0 }],
      [`a fresh ${verified ? 'verified' : 'invalid'} claim`, { verified, stored: false, claimedMs: T0 }],
      [`a lapsed ${verified ? 'verified' : 'invalid'} claim`, { verified, stored: false, claimedMs: T0 - CLAIM_LAPSE_MS - 1 }],
    ]),
  ];

  it.each(
    holders.flatMap(([name, holder]) =>
      [true, false].map((verified) => [name, verified ? 'a verified' : 'an invalid', holder, verified] as const),
    ),
  )(
    'held by %s, is taken by %s postback exactly when mayTakeOver says so, keeping the object key of the same standing',
    async (_name, _kind, holder, verified) => {
      const store = new SkanStore(stack.endpoints.tables.skan_postbacks, stack.endpoints.bucket);
      const id = randomUUID();
      const first = claimOf(id, holder?.verified ?? false, holder?.claimedMs ?? T0);
      if (holder) {
        expect(await store.claim(first)).toMatchObject({ kind: 'claimed', objectKey: first.objectKey });
        if (holder.stored) await store.markStored(first);
      }
      const second = claimOf(id, verified, T0 + 1);
      const result = await store.claim(second);
      const read = async () =>
        (await dynamoClient().send(new GetCommand({ TableName: stack.endpoints.tables.skan_postbacks, Key: { transaction_id: id } }))).Item;
      if (mayTakeOver(holder, { verified }, T0 + 1)) {
        const objectKey = holder?.verified === verified ? first.objectKey : second.objectKey;
        // A verified claim learns when the id's first verified claim was made: the SKAN report's day of it.
        const firstVerifiedMs = holder?.verified ? first.nowMs : second.nowMs;
        expect(result).toEqual({
          kind: 'claimed',
          objectKey,
          ...(holder ? { replaced: holder } : {}),
          ...(verified ? { firstVerifiedMs } : {}),
        });
        // An invalid holder's item expires with its record; a verified one's never does.
        expect((await read())?.expires_at).toBe(verified ? undefined : second.expiresAt);
      } else {
        expect(result).toEqual({ kind: 'held', holder });
      }
    },
  );

  it('is released for the next delivery, and marked stored only by its own claimant', async () => {
    const store = new SkanStore(stack.endpoints.tables.skan_postbacks, stack.endpoints.bucket);
    const id = randomUUID();
    const first = claimOf(id, true, T0);
    await store.claim(first);
    await store.release(first);
    const second = claimOf(id, true, T0 + 1);
    expect(await store.claim(second)).toMatchObject({ kind: 'claimed', objectKey: first.objectKey });
    await store.markStored(first);
    expect(await store.claim(claimOf(id, true, T0 + 2))).toEqual({
      kind: 'held',
      holder: { verified: true, stored: false, claimedMs: T0 + 1 },
    });
    await store.markStored(second);
    expect(await store.claim(claimOf(id, true, T0 + CLAIM_LAPSE_MS * 2))).toMatchObject({ kind: 'held', holder: { stored: true } });
  });
});

// Last in the file: it leaves 200 more objects under audit/skan/, which filed() above would read.
describe('a flood of junk postbacks', () => {
  // Transcribed from Apple's pages, separately from the code: "Identifying the parameters in
  // install-validation postbacks" (SKAdNetwork, every version) and "Identifying the parameters in
  // a postback" (AdAttributionKit: the body beside jws-string, and the JWS payload).
  const SKADNETWORK_FIELDS = [
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
  const AAK_BODY_FIELDS = ['conversion-value', 'coarse-conversion-value', 'ad-interaction-type', 'country-code'];
  const AAK_PAYLOAD_FIELDS = [
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
  const RECORD_FIELDS = [
    'record_version',
    'kind',
    'transaction_id',
    'received_ms',
    'verified',
    'reason',
    'reason_field',
    'key_id',
    'key_environment',
    'version',
    'signed',
    'unverified',
    'signature',
    'trimmed',
    'expires_at',
  ];
  const ITEM_FIELDS = [
    'transaction_id',
    'postback_kind',
    'verified',
    'claim_id',
    'claimed_ms',
    'invalid_object_key',
    'stored_ms',
    'expires_at',
  ];
  const DAY_S = 86_400;

  /** The body padded with a junk field to exactly MAX_POSTBACK_BYTES, the most the route takes. */
  const padded = (body: Postback): string => {
    const bare = JSON.stringify({ ...body, padding: '' });
    return JSON.stringify({ ...body, padding: 'x'.repeat(MAX_POSTBACK_BYTES - Buffer.byteLength(bare)) });
  };

  /** Four kinds of junk, each with a signature that does not verify and 64 KiB in all. */
  function junk(id: string, variant: number): string {
    switch (variant % 4) {
      case 0: // Apple's postback under another transaction-id, plus one big unknown field
        return padded(changed(FINE, { 'transaction-id': id }));
      case 1: // oversized values in Apple's own fields, and a nested one
        return padded(
          changed(FINE, {
            'transaction-id': id,
            'source-domain': 'd'.repeat(20_000),
            'source-identifier': 's'.repeat(5_000),
            'conversion-value': { deep: ['junk'] },
          }),
        );
      case 2: {
        // a thousand unknown fields
        const fields = Object.fromEntries(Array.from({ length: 1_000 }, (_, i) => [`junk-${i}`, 'j'.repeat(40)]));
        return padded(changed(COARSE, { 'transaction-id': id, ...fields }));
      }
      default: {
        // AdAttributionKit under Apple's production kid, signed by another key, junk inside the JWS too
        const payload = aakPayload(id, { 'source-identifier': 's'.repeat(3_000), junk: 'x'.repeat(20_000) });
        return padded(aakPostback(signJws({ kid: 'apple-cas-identifier/0', alg: 'ES256' }, payload, p256().privateKey)));
      }
    }
  }

  async function everyObject(prefix: string): Promise<Map<string, { record: PostbackRecord; bytes: number }>> {
    const objects = new Map<string, { record: PostbackRecord; bytes: number }>();
    let token: string | undefined;
    do {
      const page = await s3.send(new ListObjectsV2Command({ Bucket: stack.endpoints.bucket, Prefix: prefix, ContinuationToken: token }));
      for (const { Key } of page.Contents ?? []) {
        const text = await (await s3.send(new GetObjectCommand({ Bucket: stack.endpoints.bucket, Key }))).Body!.transformToString();
        objects.set(Key!, { record: JSON.parse(text), bytes: Buffer.byteLength(text) });
      }
      token = page.NextContinuationToken;
    } while (token);
    return objects;
  }

  /** Apple's fields only, each a scalar of at most 256 characters. */
  const onlyDefined = (fields: Record<string, unknown>, defined: readonly string[]) => {
    expect(Object.keys(fields).filter((name) => !defined.includes(name))).toEqual([]);
    for (const value of Object.values(fields)) {
      expect(['string', 'number', 'boolean'].includes(typeof value) || value === null).toBe(true);
      if (typeof value === 'string') expect(value.length).toBeLessThanOrEqual(256);
    }
  };

  it('keeps of 200 junk postbacks (bad signature, 64 KiB) only the fields Apple defines, each cut short, under a prefix that expires, with an expiry in the record and the table', async () => {
    const ids = Array.from({ length: 200 }, () => randomUUID());
    const sentS = Math.floor(Date.now() / 1000);
    for (let at = 0; at < ids.length; at += 20) {
      const answers = await Promise.all(ids.slice(at, at + 20).map((id, i) => post(junk(id, at + i))));
      expect(answers).toEqual(answers.map(() => OK));
    }
    const doneS = Math.ceil(Date.now() / 1000);

    const objects = [...(await everyObject('audit/skan/'))].filter(([key]) => ids.some((id) => key.endsWith(`/${id}.json`)));
    expect(objects).toHaveLength(200);
    for (const [key, { record, bytes }] of objects) {
      expect(key).toMatch(/^audit\/skan\/invalid\/\d{4}\/\d{2}\/\d{2}\/[0-9a-f-]{36}\.json$/);
      expect(Object.keys(record).filter((name) => !RECORD_FIELDS.includes(name))).toEqual([]);
      expect(record).toMatchObject({ verified: false, trimmed: true });
      onlyDefined(record.signed, record.kind === 'adattributionkit' ? AAK_PAYLOAD_FIELDS : SKADNETWORK_FIELDS);
      onlyDefined(record.unverified, record.kind === 'adattributionkit' ? AAK_BODY_FIELDS : SKADNETWORK_FIELDS);
      for (const name of ['version', 'key_id'] as const) expect(String(record[name] ?? '').length).toBeLessThanOrEqual(256);
      // A genuine JWS is about 1 KiB: kept whole, it can be checked again once Apple publishes a new key.
      expect(String(record.signature ?? '').length).toBeLessThanOrEqual(2048);
      expect(bytes).toBeLessThanOrEqual(8 * 1024);
      const { expires_at: expiresAt } = record as PostbackRecord & { expires_at?: number };
      expect(expiresAt).toBeGreaterThanOrEqual(sentS + 30 * DAY_S);
      expect(expiresAt).toBeLessThanOrEqual(doneS + 30 * DAY_S);

      const { Item } = await dynamoClient().send(
        new GetCommand({ TableName: stack.endpoints.tables.skan_postbacks, Key: { transaction_id: record.transaction_id } }),
      );
      expect(Object.keys(Item!).filter((name) => !ITEM_FIELDS.includes(name))).toEqual([]);
      expect(Item).toMatchObject({ verified: false, invalid_object_key: key, expires_at: expiresAt, stored_ms: expect.any(Number) });
    }
    // 200 × 64 KiB sent (13 MB); what is kept is a small fraction of it.
    expect(objects.reduce((sum, [, { bytes }]) => sum + bytes, 0)).toBeLessThan(200 * 8 * 1024);
  });
});
