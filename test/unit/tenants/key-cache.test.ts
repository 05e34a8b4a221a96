import { CachedTenants, type TenantStore } from '../../../functions/adapters/tenant-store';
import type { ServerKeyRecord } from '../../../functions/domain/tenants/tenant';

/**
 * docs/architecture.md section 4 lets a revocation take up to 60 s to reach the hot path, which caches keys.
 * test/integration/reports.test.ts sees a revoked key refused with a 1 s cache; this holds the
 * cache as deployed (no KEY_CACHE_TTL_MS: the template sets none, test/stack/local-parity.test.ts)
 * to the 60 s.
 */
const SERVER_KEY = `srv_${'a'.repeat(48)}`;

describe('the key cache with the deployed settings', () => {
  const saved = process.env.KEY_CACHE_TTL_MS;
  let now: number;
  beforeEach(() => {
    delete process.env.KEY_CACHE_TTL_MS;
    now = Date.UTC(2026, 0, 1);
    jest.spyOn(Date, 'now').mockImplementation(() => now);
  });
  afterEach(() => {
    jest.restoreAllMocks();
    if (saved === undefined) delete process.env.KEY_CACHE_TTL_MS;
    else process.env.KEY_CACHE_TTL_MS = saved;
  });

  it('sees a server key revoked just after it was cached as revoked within 60 s', async () => {
    let record: ServerKeyRecord = { key_hash: 'h', app_id: 'app', company_id: 'co', revoked: false, created_ms: now };
    const reads = jest.fn(async () => record);
    // Cast: only the look-up the cache is asked for is used.
    const tenants = new CachedTenants({ serverKey: reads } as unknown as TenantStore);

    expect(await tenants.serverKey(SERVER_KEY)).toMatchObject({ revoked: false });
    record = { ...record, revoked: true };
    // The cache is on: right after the revocation the hot path still holds the key it read.
    expect(await tenants.serverKey(SERVER_KEY)).toMatchObject({ revoked: false });
    expect(reads).toHaveBeenCalledTimes(1);

    now += 60_000;
    expect(await tenants.serverKey(SERVER_KEY)).toMatchObject({ revoked: true });
  });
});
