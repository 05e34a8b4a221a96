import { AGGREGATOR_TIMEOUT_SECONDS } from '../../lib/function-constants';
import { AggregateStore, AggregationLedgerStore } from '../adapters/aggregate-store';
import { CapCounter } from '../adapters/cap-counter';
import { StreamStore } from '../adapters/stream-store';
import type { LanePorts } from '../domain/aggregation/lanes';
import { leaseMsFor } from '../domain/aggregation/lease';
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
