import type { AttributionLookups } from '../domain/attribution/decision';
import type { ClickStore } from './click-store';
import type { DynamoInstallStore } from './install-store';
import type { IpBlockStore } from './ip-block-store';

/**
 * What attribution looks at, from the stores: the aggregator decides live installs with these,
 * and `admin rebuild` decides with the same ones any install the live path has not recorded.
 */
export function attributionLookups(stores: {
  clicks: ClickStore;
  ipBlocks: IpBlockStore;
  installs: DynamoInstallStore;
}): AttributionLookups {
  const { clicks, ipBlocks, installs } = stores;
  return {
    // Attribution applies the lookback and the 24-hour window itself, to the millisecond; the
    // stores' expiry filter (whole seconds) would cut the window's last second off.
    clickById: (appId, clickId) => clicks.byId(appId, clickId, 0),
    latestClick: (query) => clicks.latest(query, 0),
    honeypotBlocked: (companyId, ip, atMs) => ipBlocks.isBlocked(companyId, ip, atMs),
    deviceSeenElsewhere: (appId, deviceHash, installUuid) => installs.deviceSeenElsewhere(appId, deviceHash, installUuid),
  };
}
