import { appOfKey, type ServerKeys } from '../../../functions/domain/reports/answer-report';
import { parseScopes, scopesOf } from '../../../functions/domain/tenants/tenant';

const key = (c: string) => `srv_${c.repeat(48)}`;

const keys: ServerKeys = {
  serverKey: async (k) =>
    ({
      [key('a')]: { app_id: 'app_legacy', revoked: false },
      [key('b')]: { app_id: 'app_cost', revoked: false, scopes: ['cost' as const] },
      [key('c')]: { app_id: 'app_both', revoked: false, scopes: ['read' as const, 'cost' as const] },
      [key('d')]: { app_id: 'app_revoked', revoked: true, scopes: ['read' as const] },
      // What an UpdateItem of last_used_ms alone would leave under a made-up key's hash.
      [key('f')]: { last_used_ms: 1 } as unknown as { app_id: string; revoked: boolean },
    })[k],
  appTimeZone: async () => 'UTC',
};

const codeOf = (promise: Promise<string>) =>
  promise.then(
    (app) => app,
    (error: { code: string; statusCode: number }) => `${error.statusCode} ${error.code}`,
  );

describe('server key scopes', () => {
  it('reads --scope as a comma list of read and cost, in their order, and nothing else', () => {
    expect(parseScopes('read')).toEqual(['read']);
    expect(parseScopes('cost, read')).toEqual(['read', 'cost']);
    expect(parseScopes('cost,cost')).toEqual(['cost']);
    for (const bad of ['', 'write', 'read,', 'READ']) expect(parseScopes(bad)).toBeUndefined();
  });

  it('treats a key stored before scopes as a read key', () => {
    expect(scopesOf({})).toEqual(['read']);
    expect(scopesOf({ scopes: ['cost'] })).toEqual(['cost']);
  });

  it('lets a key through only with the scope asked for, after the 401s', async () => {
    expect(await codeOf(appOfKey(keys, `Bearer ${key('a')}`))).toBe('app_legacy');
    expect(await codeOf(appOfKey(keys, `Bearer ${key('a')}`, 'cost'))).toBe('403 insufficient_scope');
    expect(await codeOf(appOfKey(keys, `Bearer ${key('b')}`))).toBe('403 insufficient_scope');
    expect(await codeOf(appOfKey(keys, `Bearer ${key('b')}`, 'cost'))).toBe('app_cost');
    expect(await codeOf(appOfKey(keys, `Bearer ${key('c')}`, 'read'))).toBe('app_both');
    expect(await codeOf(appOfKey(keys, `Bearer ${key('c')}`, 'cost'))).toBe('app_both');
    expect(await codeOf(appOfKey(keys, `Bearer ${key('d')}`, 'read'))).toBe('401 invalid_or_revoked_key');
    expect(await codeOf(appOfKey(keys, `Bearer ${key('e')}`, 'cost'))).toBe('401 invalid_or_revoked_key');
    expect(await codeOf(appOfKey(keys, `Bearer ${key('f')}`))).toBe('401 invalid_or_revoked_key');
    expect(await codeOf(appOfKey(keys, undefined, 'cost'))).toBe('401 missing_bearer_token');
  });
});
