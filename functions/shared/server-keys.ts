import { CachedTenants, TenantStore } from '../adapters/tenant-store';
import type { ServerKeys } from '../domain/reports/answer-report';
import { KeyUseRecorder } from '../domain/tenants/key-use';
import { resourceName } from './config';
import { errorFields, logger } from './observability';

/**
 * The server-key check's port for every route that takes a server key (the reports, the stream,
 * the cost upload): the cached look-up (a revoked key stops within 30 s), and the key's last use
 * recorded at most once an hour, in the background; a failed write is logged, the request goes on.
 */
export function serverKeys(): ServerKeys {
  const store = new TenantStore(resourceName.table('tenants'));
  const cached = new CachedTenants(store);
  const uses = new KeyUseRecorder(store, Date.now, (error, keyHash) =>
    logger.warn("a server key's last use was not recorded", { key_id: keyHash, error: errorFields(error) }),
  );
  return {
    serverKey: (key) => cached.serverKey(key),
    appTimeZone: (appId) => cached.appTimeZone(appId),
    keyUsed: (key) => void uses.note(key),
  };
}
