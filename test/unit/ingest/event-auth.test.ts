import { createHmac, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { EventApiError, type EventApiErrorCode, MAX_RAW_BODY_BYTES } from '../../../functions/domain/ingest/event-api';
import { authenticate, type TenantLookup } from '../../../functions/domain/ingest/event-auth';
import { isValidSignature, signBody } from '../../../functions/domain/ingest/signature';
import { newAppKey, newCompanyKey, newSigningSecret } from '../../../functions/domain/tenants/keys';

describe('request signature', () => {
  const secret = newSigningSecret();
  const body = Buffer.from('{"events":[],"sent_at_ms":0}');

  it('is the lowercase hex HMAC-SHA256 of the bytes keyed with the secret string', () => {
    // RFC 4231 test case 2: key "Jefe", data "what do ya want for nothing?".
    expect(signBody('Jefe', Buffer.from('what do ya want for nothing?'))).toBe(
      '5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843',
    );
  });

  it('keys the HMAC with the UTF-8 bytes of any secret string, lone surrogates included', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary', maxLength: 80 }), fc.uint8Array({ maxLength: 64 }), (key, bytes) => {
        const oracle = createHmac('sha256', Buffer.from(key, 'utf8')).update(bytes).digest('hex');
        expect(signBody(key, bytes)).toBe(oracle);
        expect(isValidSignature(key, bytes, oracle)).toBe(true);
      }),
    );
  });

  it('verifies a signature over the same bytes', () => {
    expect(isValidSignature(secret, body, signBody(secret, body))).toBe(true);
  });

  it.each([
    ['another secret', (s: string) => signBody(newSigningSecret(), body) || s],
    ['one changed character', (s: string) => (s[0] === 'a' ? 'b' : 'a') + s.slice(1)],
    ['a truncated signature', (s: string) => s.slice(0, 63)],
    ['a longer signature', (s: string) => `${s}00`],
    ['non-hex characters', () => 'z'.repeat(64)],
    ['base64 instead of hex', () => randomBytes(32).toString('base64')],
    ['an empty value', () => ''],
    // The interface asks for lowercase hex; no client of ours (nor openssl dgst) writes upper-case.
    ['the right signature in upper-case hex', (s: string) => s.toUpperCase()],
    ['the right signature with one letter upper-case', (s: string) => s.replace(/[a-f]/, (letter) => letter.toUpperCase())],
  ])('rejects %s', (_name, mutate) => {
    expect(isValidSignature(secret, body, mutate(signBody(secret, body)))).toBe(false);
  });
});

describe('authentication', () => {
  const company = { company_id: 'com_1', suspended: false };
  const app = { app_id: 'app_1', company_id: 'com_1' };
  const secret = newSigningSecret();
  const other = { company_id: 'com_2', suspended: false };
  const keys = { company: newCompanyKey(), other: newCompanyKey(), suspended: newCompanyKey(), app: newAppKey() };
  const body = Buffer.from('{"events":[{}],"sent_at_ms":1}');
  const lookups: string[] = [];
  const tenants: TenantLookup<typeof app, typeof company> = {
    appByKey: async (key) => {
      lookups.push(key);
      return key === keys.app ? app : undefined;
    },
    companyByKey: async (key) => {
      lookups.push(key);
      if (key === keys.company) return company;
      if (key === keys.other) return other;
      if (key === keys.suspended) return { ...company, suspended: true };
      return undefined;
    },
    // The secret is kept apart from the app (the signing_secrets table), read by app id.
    signingKeys: async (of) => {
      lookups.push(`secret of ${of.app_id}`);
      return of.app_id === app.app_id ? { current: secret, previous: [] } : undefined;
    },
  };
  const valid = { companyKey: keys.company, appKey: keys.app, signature: signBody(secret, body) };

  async function codeOf(credentials: typeof valid | Partial<typeof valid>, raw: Buffer = body): Promise<EventApiErrorCode | 'ok'> {
    try {
      await authenticate(credentials, raw, tenants);
      return 'ok';
    } catch (error) {
      if (error instanceof EventApiError) return error.code;
      throw error;
    }
  }

  beforeEach(() => {
    lookups.length = 0;
  });

  it('returns the app and company of a correctly signed request', async () => {
    await expect(authenticate(valid, body, tenants)).resolves.toEqual({ app, company });
  });

  it('checks in the documented order', async () => {
    const huge = Buffer.alloc(MAX_RAW_BODY_BYTES + 1);
    const empty = Buffer.alloc(0);
    expect(await codeOf({ ...valid, signature: undefined }, huge)).toBe('missing_auth_headers');
    expect(await codeOf({ ...valid, companyKey: '' })).toBe('missing_auth_headers');
    expect(await codeOf({ ...valid, appKey: 'app_live_nope' }, huge)).toBe('body_too_large');
    expect(await codeOf({ ...valid, appKey: 'app_live_nope' }, empty)).toBe('empty_body');
    expect(await codeOf({ ...valid, appKey: newAppKey(), companyKey: newCompanyKey(), signature: 'x' })).toBe('unknown_app_key');
    expect(await codeOf({ ...valid, companyKey: newCompanyKey(), signature: 'x' })).toBe('unknown_company_key');
    expect(await codeOf({ ...valid, companyKey: keys.other, signature: 'x' })).toBe('app_company_mismatch');
    expect(await codeOf({ ...valid, companyKey: keys.suspended, signature: 'x' })).toBe('company_suspended');
    expect(await codeOf({ ...valid, signature: signBody(secret, Buffer.from('other')) })).toBe('bad_signature');
  });

  it('accepts a body of exactly 1 MiB', async () => {
    const max = Buffer.alloc(MAX_RAW_BODY_BYTES, 0x20);
    expect(await codeOf({ ...valid, signature: signBody(secret, max) }, max)).toBe('ok');
  });

  it('reads the signing secret only for a request whose app, company and ownership passed, never for one refused before', async () => {
    for (const refused of [
      { appKey: newAppKey() },
      { companyKey: newCompanyKey() },
      { companyKey: keys.other },
      { companyKey: keys.suspended },
    ]) {
      await codeOf({ ...valid, ...refused });
    }
    expect(lookups.filter((lookup) => lookup.startsWith('secret of'))).toEqual([]);
    await codeOf(valid);
    expect(lookups.filter((lookup) => lookup.startsWith('secret of'))).toEqual(['secret of app_1']);
  });

  it('fails as a store does, not with a 401, for an app whose signing secret cannot be found', async () => {
    const without: typeof tenants = { ...tenants, signingKeys: async () => undefined };
    const refusal = await authenticate(valid, body, without).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refusal).toBeInstanceOf(Error);
    expect(refusal).not.toBeInstanceOf(EventApiError);
  });

  it('accepts a secret a rotation retired until its grace ends, and only the current one after', async () => {
    const retired = newSigningSecret();
    const never = newSigningSecret();
    const graceEnds = Date.UTC(2026, 11, 1);
    const rotatedTenants: typeof tenants = {
      ...tenants,
      signingKeys: async () => ({ current: secret, previous: [{ secret: retired, until_ms: graceEnds }] }),
    };
    const signedWith = (key: string) => ({ ...valid, signature: signBody(key, body) });
    const outcome = (key: string, nowMs: number) =>
      authenticate(signedWith(key), body, rotatedTenants, { nowMs }).then(
        () => 'ok',
        (error: unknown) => (error instanceof EventApiError ? error.code : 'error'),
      );
    expect(await outcome(secret, graceEnds - 1)).toBe('ok');
    expect(await outcome(retired, graceEnds - 1)).toBe('ok');
    expect(await outcome(never, graceEnds - 1)).toBe('bad_signature');
    expect(await outcome(secret, graceEnds)).toBe('ok');
    expect(await outcome(retired, graceEnds)).toBe('bad_signature');
  });

  it('never looks up a key that cannot exist', async () => {
    expect(await codeOf({ ...valid, appKey: 'app_live_../../etc', companyKey: 'x'.repeat(5000) })).toBe('unknown_app_key');
    expect(lookups).toEqual([]);
  });
});
