/**
 * The free-tier cap (docs/ingestion.md): a company's accepted events per calendar month (UTC).
 * A batch that starts under the cap is taken whole; one that finds it reached is refused whole.
 * How a batch is counted once, and the bound on the count, are in metering.ts.
 */
import { dayOf } from '../common/days';

/** yyyy-mm of an instant, in UTC. */
export const capMonth = (ms: number): string => dayOf(ms).slice(0, 7);

/** The counters-table item that holds a company's count for the month of an instant (its shard 0). */
export const capCounterKey = (companyId: string, ms: number): string => `cap#${companyId}#${capMonth(ms)}`;

/**
 * The month's count is read from CAP_SHARDS items and the aggregator's (capMeteredKey), summed in
 * one batch read. A capped company's batches all go to shard 0, where one conditional write sees
 * the whole count (metering.ts); shards 1 to 7 hold what a company without a cap was counted on
 * before the aggregator counted it (read, no longer written). Shard 0 is the plain key, so counts
 * written before sharding still add up.
 */
export const CAP_SHARDS = 8;

export function capCounterKeys(companyId: string, ms: number): string[] {
  // The month's key made once, not once per shard: this runs on every capped batch.
  const first = capCounterKey(companyId, ms);
  const keys = [first];
  for (let shard = 1; shard < CAP_SHARDS; shard++) keys.push(`${first}#${shard}`);
  keys.push(`${first}#agg`);
  return keys;
}

/**
 * The month's events of a company without a cap, added by the aggregator once per audit object
 * (its lanes make each addition once: functions/domain/aggregation/lease.ts), so that ingestion
 * writes nothing per batch for them. Read with the shards: it is part of the month's count.
 */
export const capMeteredKey = (companyId: string, ms: number): string => `${capCounterKey(companyId, ms)}#agg`;

/** null is no cap (paid plans unless one is set). */
export function capReached(acceptedThisMonth: number, monthlyCap: number | null): boolean {
  return monthlyCap !== null && acceptedThisMonth >= monthlyCap;
}

/**
 * A batch is identified by its app and the SHA-256 of its raw body: a client's retry re-sends the
 * same bytes. Its mark, written once it is stored, names the hold it was counted under; it lives
 * in the ledger table (which expires items) long enough to cover any client's retries, so a batch
 * retried after a lost response is counted once.
 */
export const batchMarkKey = (appId: string, bodySha256: string): string => `ingest#batch#${appId}#${bodySha256}`;
export const BATCH_MARK_TTL_SECONDS = 7 * 24 * 60 * 60;
