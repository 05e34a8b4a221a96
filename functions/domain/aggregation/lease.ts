import { sha256Hex } from '../common/hashing';

/**
 * The lease protocol (docs/aggregation.md): one ledger mark per audit object that only one
 * delivery at a time holds, with the journal of what the object adds to each row written to it
 * before any row is touched, so that a redelivery after a crash adds exactly the same amounts.
 */

/** Short owner token of an audit object: what its claims, its ledger mark and its row tokens carry. */
export const tokenOf = (auditKey: string): string => sha256Hex(auditKey).slice(0, 24);

export type Journal = Record<string, Record<string, number>>;

export type LeaseResult =
  | { readonly state: 'acquired'; readonly journal?: Journal }
  | { readonly state: 'done' }
  /** Another delivery holds the lease, until then. */
  | { readonly state: 'busy'; readonly leaseUntilMs: number };

export interface AggregationLedger {
  /** Takes the object's lease unless another delivery holds an unexpired one or it is finished. */
  lease(token: string, nowMs: number, leaseMs: number): Promise<LeaseResult>;
  /** Keeps the first journal written for the object and returns the one that stands. */
  saveJournal(token: string, journal: Journal): Promise<Journal>;
  finish(token: string, nowMs: number): Promise<void>;
  /** Gives up a lease after a failed delivery, so the next one need not wait for it to run out. */
  release(token: string): Promise<void>;
  /** Of these tokens, those whose object is finished (or whose mark has expired long after). */
  finished(tokens: readonly string[]): Promise<Set<string>>;
}

/**
 * The lease an aggregation delivery takes on its audit object (aggregate.ts, step 1): its
 * function's timeout plus 15 s. Lambda stops a delivery at its timeout, so a lease outlives the
 * delivery that took it; and it must stay shorter than the queue's visibility timeout, or a
 * delivery that died comes back while its lease still holds and is deferred for nothing
 * (test/stack/queue-timeouts.test.ts holds the stack to it).
 */
export const leaseMsFor = (timeoutSeconds: number): number => (timeoutSeconds + 15) * 1000;

/**
 * How long a delivery that found the object leased (busy) stays away: until the lease has run out,
 * not the queue's whole visibility timeout, so that the object of a delivery that died is counted
 * as soon as it may be. Whole seconds, as SQS counts them, and one more for the clocks of
 * different hosts: a delivery that comes back a moment early is only deferred again.
 */
export const secondsUntilLeaseEnds = (leaseUntilMs: number, nowMs: number): number =>
  Math.max(0, Math.ceil((leaseUntilMs - nowMs) / 1000)) + 1;
