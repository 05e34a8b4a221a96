import { NotFoundError, TenantStore } from '../adapters/tenant-store';
import type { App } from '../domain/tenants/tenant';
import { resourceName } from '../shared/config';

/** The app an `--app-key` names; NotFoundError (a plain message, exit 1) when there is none. */
export async function appByKey(appKey: string): Promise<App> {
  const app = await new TenantStore(resourceName.table('tenants')).appByKey(appKey);
  if (!app) throw new NotFoundError('app');
  return app;
}
