import { z } from 'zod';
import { NotFoundError, TenantStore } from '../adapters/tenant-store';
import { AD_NETWORK_ID } from '../domain/skan/postback-match';
import { resourceName } from '../shared/config';
import { appByKey } from './apps';
import { defineCommand } from './command';
import { key, partner } from './flags';

const adNetworkId = z.string().regex(AD_NETWORK_ID, 'must be an ad network id, such as example123.skadnetwork');

/** Ad network ids to partner names per app, for the SKAN report (docs/ios.md section 2). */
export const skanNetworkCommands = [
  defineCommand({
    name: 'skan network set',
    usage:
      'skan network set --app-key K --ad-network-id X --partner P   (the SKAN report counts postbacks of X under P from now on;\n' +
      '            an unmapped ad network id reports as the id itself)',
    flags: z.object({ 'app-key': key, 'ad-network-id': adNetworkId, partner }),
    async execute(f) {
      const app = await new TenantStore(resourceName.table('tenants')).setSkanNetwork(f['app-key'], f['ad-network-id'], f.partner);
      if (!app) throw new NotFoundError('app');
      return { app_id: app.app_id, skan_networks: app.skan_networks ?? {} };
    },
  }),
  defineCommand({
    name: 'skan network show',
    usage: "skan network show --app-key K            (the app's App Store id and its ad network ids' partners)",
    flags: z.object({ 'app-key': key }),
    async execute(f) {
      const app = await appByKey(f['app-key']);
      return { app_id: app.app_id, app_store_id: app.app_store_id ?? null, skan_networks: app.skan_networks ?? {} };
    },
  }),
];
