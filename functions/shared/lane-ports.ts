import { AGGREGATOR_TIMEOUT_SECONDS } from '../../lib/function-constants';
import { AggregateStore, AggregationLedgerStore } from '../adapters/aggregate-store';
import { CapCounter } from '../adapters/cap-counter';
import { addClicksOnce } from '../adapters/click-count-items';
import { ClickLaneLease, ClickLogStates } from '../adapters/click-log-state';
import { ClickStore } from '../adapters/click-store';
import { StreamStore } from '../adapters/stream-store';
import { TenantStore } from '../adapters/tenant-store';
import type { ClickLanePorts } from '../domain/aggregation/click-counts';
import type { LanePorts } from '../domain/aggregation/lanes';
import { leaseMsFor } from '../domain/aggregation/lease';
import { clickTables } from './click-tables';
import { resourceName } from './config';

/**
 * What replays an apply on a ledger lane: the ledger, the report rows, the monthly counts and the
 * stream objects. The aggregator and the lane sweep build them alike, so an apply one of them left
 * open is replayed by the other with the same stores.
 */
export function lanePorts(): Required<LanePorts> {
  return {
    // LOCAL_RUN_ID: set by the local runtime alone, never in AWS (AggregationLedgerStore says why).
    ledger: new AggregationLedgerStore(resourceName.table('ledger'), { run: process.env.LOCAL_RUN_ID || undefined }),
    rows: new AggregateStore(resourceName.table('aggregates')),
    usage: new CapCounter(resourceName.table('counters'), resourceName.table('ledger')),
    stream: new StreamStore(resourceName.exportBucket()),
  };
}

/**
 * A lane's lease outlives the aggregator's timeout, so an invocation Lambda has stopped never still
 * writes; the lane sweep, whose timeout is the same, takes lanes for as long.
 */
export const LANE_LEASE_MS = leaseMsFor(AGGREGATOR_TIMEOUT_SECONDS);

/**
 * What the click-count lane reads and writes (functions/domain/aggregation/click-counts.ts): the
 * apps, the click log (click_log, and the old clicks table's by_app_hour), the counter items and stamps and the lane's state (aggregates),
 * and its lease (ledger).
 */
export function clickLanePorts(): ClickLanePorts {
  const aggregates = resourceName.table('aggregates');
  const states = new ClickLogStates(aggregates);
  const lease = new ClickLaneLease(resourceName.table('ledger'));
  const clicks = new ClickStore(clickTables());
  const rows = new AggregateStore(aggregates);
  const tenants = new TenantStore(resourceName.table('tenants'));
  return {
    apps: async () => (await tenants.listApps()).map((app) => app.app_id),
    state: (appId) => states.state(appId),
    putState: (appId, state, expectedRev) => states.putState(appId, state, expectedRev),
    addOnce: (appId, applyId, count) => addClicksOnce(aggregates, appId, applyId, count),
    stamp: (appId, day) => rows.stamp(appId, day),
    clicksAfter: (appId, hour, fromTs, withLegacy) => clicks.clicksAfter(appId, hour, fromTs, withLegacy),
    legacyHolds: () => clicks.legacyHolds(),
    takeLease: (holder, nowMs, leaseMs) => lease.takeLease(holder, nowMs, leaseMs),
    releaseLease: (holder) => lease.releaseLease(holder),
  };
}
