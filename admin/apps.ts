import { NotFoundError, TenantStore } from '../functions/adapters/tenant-store';
import type { App } from '../functions/domain/tenants/tenant';
import { resourceName } from '../functions/shared/config';

/** The app an `--app-key` names; NotFoundError (a plain message, exit 1) when there is none. */
export async function appByKey(appKey: string): Promise<App> {
  const app = await new TenantStore(resourceName.table('tenants')).appByKey(appKey);
  if (!app) throw new NotFoundError('app');
  return app;
}
