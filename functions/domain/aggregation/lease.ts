/**
 * The lease an aggregation delivery takes on its audit object (aggregate.ts, step 1): its
 * function's timeout plus 15 s. Lambda stops a delivery at its timeout, so a lease outlives the
 * delivery that took it; and it must stay shorter than the queue's visibility timeout, or a
 * delivery that died comes back while its lease still holds and is deferred for nothing
 * (test/stack/queue-timeouts.test.ts holds the stack to it).
 */
export const leaseMsFor = (timeoutSeconds: number): number => (timeoutSeconds + 15) * 1000;
