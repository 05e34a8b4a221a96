/**
 * The free-tier cap (DESIGN section 5): a company's accepted events per calendar month (UTC).
 * A batch that starts under the cap is taken whole; one that finds it reached is refused whole.
 */

/** yyyy-mm of an instant, in UTC. */
export const capMonth = (ms: number): string => new Date(ms).toISOString().slice(0, 7);

/** The counters-table item that holds a company's count for the month of an instant. */
export const capCounterKey = (companyId: string, ms: number): string => `cap#${companyId}#${capMonth(ms)}`;

/** null is no cap (paid plans unless one is set). */
export function capReached(acceptedThisMonth: number, monthlyCap: number | null): boolean {
  return monthlyCap !== null && acceptedThisMonth >= monthlyCap;
}

/**
 * A batch is identified by its app and the SHA-256 of its raw body: a client's retry re-sends the
 * same bytes. The mark lives in the ledger table (which expires items) long enough to cover any
 * client's retries, so a batch retried after a lost response is counted once.
 */
export const batchMarkKey = (appId: string, bodySha256: string): string => `ingest#batch#${appId}#${bodySha256}`;
export const BATCH_MARK_TTL_SECONDS = 7 * 24 * 60 * 60;

/** A stored batch as the cap counts it: its accepted events, once, in the month it arrived. */
export interface CountedBatch {
  readonly companyId: string;
  readonly appId: string;
  readonly bodySha256: string;
  readonly accepted: number;
  readonly receivedMs: number;
}
