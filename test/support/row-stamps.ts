import type { Stamp } from '../../functions/domain/aggregation/lease';

let last = 0;

/**
 * A stamp no row has seen yet, for tests that write report rows directly (the aggregator stamps
 * its writes with its lane's applies, docs/aggregation.md): increasing across calls and runs, so
 * every such write lands.
 */
export function freshStamp(lane = 0): Stamp {
  last = Math.max(last + 1, Date.now() * 1000);
  return { lane, seq: last };
}
