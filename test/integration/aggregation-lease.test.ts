import { randomUUID } from 'node:crypto';
import { AggregationLedgerStore } from '../../functions/adapters/aggregate-store';
import { resourceName } from '../../functions/shared/config';
import { type LocalStack, startLocalStack } from '../support/local-stack';

/**
 * The aggregator's lease in the ledger table, against the local DynamoDB: a lease another run of
 * the local runtime took is a dead process's and is taken over at once (functions/adapters/
 * aggregate-store.ts); without a run, as in AWS, a lease holds until it runs out.
 */
let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack();
});
afterAll(async () => {
  await stack?.stop();
});

const LEASE_MS = 75_000;

describe('the aggregation lease', () => {
  it('is taken over, journal and all, by another run of the local runtime, but not by its own run or without a run', async () => {
    const table = resourceName.table('ledger');
    const first = new AggregationLedgerStore(table, { run: 'run-1' });
    const token = `test-${randomUUID()}`;
    const now = Date.now();
    expect(await first.lease(token, now, LEASE_MS)).toEqual({ state: 'acquired', journal: undefined });
    const journal = { 'events|2026-06-01|install': { events: 1 } };
    await first.saveJournal(token, journal);

    // The lease holds for its own run, and for a delivery that names no run (AWS)...
    expect(await new AggregationLedgerStore(table, { run: 'run-1' }).lease(token, now + 1_000, LEASE_MS)).toEqual({
      state: 'busy',
      leaseUntilMs: now + LEASE_MS,
    });
    expect(await new AggregationLedgerStore(table).lease(token, now + 1_000, LEASE_MS)).toEqual({
      state: 'busy',
      leaseUntilMs: now + LEASE_MS,
    });
    // ...and another run takes it over at once, with the journal the dead run saved.
    const second = new AggregationLedgerStore(table, { run: 'run-2' });
    expect(await second.lease(token, now + 1_000, LEASE_MS)).toEqual({ state: 'acquired', journal });
    expect(await new AggregationLedgerStore(table, { run: 'run-2' }).lease(token, now + 2_000, LEASE_MS)).toEqual({
      state: 'busy',
      leaseUntilMs: now + 1_000 + LEASE_MS,
    });
    await second.finish(token, now + 3_000);
    expect(await new AggregationLedgerStore(table, { run: 'run-3' }).lease(token, now + 4_000, LEASE_MS)).toEqual({ state: 'done' });
  });

  it('is not taken over by a run when the delivery that holds it named none', async () => {
    const table = resourceName.table('ledger');
    const token = `test-${randomUUID()}`;
    const now = Date.now();
    expect(await new AggregationLedgerStore(table).lease(token, now, LEASE_MS)).toEqual({ state: 'acquired', journal: undefined });
    expect(await new AggregationLedgerStore(table, { run: 'run-2' }).lease(token, now + 1_000, LEASE_MS)).toEqual({
      state: 'busy',
      leaseUntilMs: now + LEASE_MS,
    });
  });
});
