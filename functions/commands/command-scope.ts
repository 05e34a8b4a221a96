import { LinkStore } from '../adapters/link-store';
import { TenantStore } from '../adapters/tenant-store';
import { resourceName } from '../shared/config';
import type { TargetLookup } from './command-roles';

/**
 * The console API's scope look-up (functions/commands/command-roles.ts): the company of what a scope flag
 * names, read from the tenants and links tables, with the record read as the change log's
 * "before". Secrets in it (none in these items: signing secrets are in their own table) would be
 * dropped by the change record anyway (loggedState).
 */
export function storeLookup(): TargetLookup {
  const tenants = new TenantStore(resourceName.table('tenants'));
  return async (flag, value) => {
    const record = await (async () => {
      switch (flag) {
        case 'company-key':
          return tenants.companyByKey(value);
        case 'app-key':
          return tenants.appByKey(value);
        case 'link-id':
          return new LinkStore(resourceName.table('links')).byId(value);
        case 'server-key':
          return tenants.serverKey(value);
        case 'key-id':
          return tenants.serverKeyByHash(value);
      }
    })();
    return record ? { companyId: record.company_id, record } : undefined;
  };
}
