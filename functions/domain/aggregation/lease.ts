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
