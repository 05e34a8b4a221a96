import { randomUUID } from 'node:crypto';
import { AggregationLedgerStore } from '../../functions/adapters/aggregate-store';
import { StreamStore } from '../../functions/adapters/stream-store';
import { type StreamLine, streamKey } from '../../functions/domain/raw-data/stream-objects';
import { LANE_NUMBERS, watermarkOf } from '../../functions/domain/raw-data/watermark';
import { resourceName } from '../../functions/shared/config';
import { type LocalStack, startLocalStack } from '../support/local-stack';

/**
 * The aggregator's lane leases and object marks in the ledger table, against the local DynamoDB: a
 * lane another run of the local runtime holds is a dead process's and is taken over at once, its
 * open apply with it (functions/adapters/aggregate-store.ts); without a run, as in AWS, a lease
 * holds until it runs out or is given back.
 */
let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack();
});
afterAll(async () => {
  await stack?.stop();
});

const LEASE_MS = 75_000;
const table = () => resourceName.table('ledger');

describe('the aggregation lanes', () => {
  it('are taken over, open apply and all, by another run of the local runtime, but not by their own run or without a run', async () => {
    const first = new AggregationLedgerStore(table(), { run: 'run-1' });
    const token = `test-${randomUUID()}`;
    const now = Date.now();
    expect(await first.take(10, 'h1', [token], now, LEASE_MS)).toEqual({ state: 'reserved', seq: 1 });
    const journal = { 'events|2026-06-01|install': { events: 1 } };
    const mark = { kind: 'included', stamp: { lane: 10, seq: 1 }, appId: 'app_1', journal } as const;
    expect(await first.include(token, mark, now)).toEqual(mark);

    // The lane holds for its own run, and for an invocation that names no run (AWS)...
    expect(await new AggregationLedgerStore(table(), { run: 'run-1' }).take(10, 'h2', [], now + 1_000, LEASE_MS)).toEqual({
      state: 'held',
      leaseUntilMs: now + LEASE_MS,
    });
    expect(await new AggregationLedgerStore(table()).take(10, 'h2', [], now + 1_000, LEASE_MS)).toEqual({
      state: 'held',
      leaseUntilMs: now + LEASE_MS,
    });
    // ...and another run takes it over at once, with the apply the dead run left open.
    const second = new AggregationLedgerStore(table(), { run: 'run-2' });
    expect(await second.take(10, 'h3', [], now + 1_000, LEASE_MS)).toEqual({
      state: 'open',
      // The apply opened when the dead run took the lane, with no stream object to write.
      lane: { lane: 10, seq: 1, applied: 0, objects: [token], openedMs: now, apps: [], holder: 'h3', leaseUntilMs: now + 1_000 + LEASE_MS },
    });
    expect(await second.marks([token])).toEqual(new Map([[token, mark]]));
    expect(await new AggregationLedgerStore(table(), { run: 'run-2' }).take(10, 'h4', [], now + 2_000, LEASE_MS)).toEqual({
      state: 'held',
      leaseUntilMs: now + 1_000 + LEASE_MS,
    });
    // The dead holder can no longer settle it; the new one can, and the next take reserves apply 2.
    await first.settle(10, 'h1', 1);
    expect((await second.lanes([10])).get(10)).toMatchObject({ seq: 1, applied: 0 });
    await second.settle(10, 'h3', 1);
    expect(await new AggregationLedgerStore(table(), { run: 'run-3' }).take(10, 'h5', [], now + 4_000, LEASE_MS)).toEqual({
      state: 'reserved',
      seq: 2,
    });
  });

  it("are closed by the lane sweep once a dead invocation's lease has run out, with the grants the stack gives it", async () => {
    // An invocation (no run, as in AWS) took lane 20 for an object of a fresh app, wrote its stream
    // object and died before any mark; its lease ran out a minute ago.
    const dead = new AggregationLedgerStore(table());
    const appId = `app_sweep_${randomUUID().slice(0, 8)}`;
    const token = `test-${randomUUID()}`;
    const openedMs = Date.now() - LEASE_MS - 60_000;
    const taken = await dead.take(20, 'dead', [token], openedMs, LEASE_MS, [appId]);
    if (taken.state !== 'reserved') throw new Error(`lane 20 not free: ${JSON.stringify(taken)}`);
    const key = streamKey(appId, { openedMs, lane: 20, seq: taken.seq });
    const stream = new StreamStore(resourceName.exportBucket());
    const line = { o: token, event: { event_id: 'e-1' } } as unknown as StreamLine;
    await stream.put(key, [line]);
    const watermark = async () => watermarkOf((await dead.lanes([...LANE_NUMBERS])).values(), Date.now(), appId);
    expect(await watermark()).toBe(openedMs);

    // One run of the schedule, as EventBridge (or npm start) fires it, through the local IAM guard.
    expect(await stack.scheduler.run('lane-sweep')).toMatchObject({ settled: expect.arrayContaining([20]), failed: [] });
    expect((await dead.lanes([20])).get(20)).toMatchObject({ seq: taken.seq, applied: taken.seq });
    // The apply included nothing: its object's mark is void and its stream object deleted.
    expect(await dead.marks([token])).toEqual(new Map([[token, { kind: 'void', stamp: { lane: 20, seq: taken.seq } }]]));
    expect(await stream.get(key)).toBeUndefined();
    expect(await watermark()).toBeGreaterThan(openedMs + LEASE_MS);
  });

  it('are not taken over by a run when the invocation that holds one named none', async () => {
    const now = Date.now();
    expect(await new AggregationLedgerStore(table()).take(11, 'h1', [], now, LEASE_MS)).toEqual({ state: 'reserved', seq: 1 });
    expect(await new AggregationLedgerStore(table(), { run: 'run-2' }).take(11, 'h2', [], now + 1_000, LEASE_MS)).toEqual({
      state: 'held',
      leaseUntilMs: now + LEASE_MS,
    });
  });

  it('keep the first mark of an object: a void one refuses a late write of its own apply only', async () => {
    const ledger = new AggregationLedgerStore(table());
    const token = `test-${randomUUID()}`;
    const now = Date.now();
    const mark = (lane: number, seq: number) => ({ kind: 'included', stamp: { lane, seq }, appId: 'app_1', journal: {} }) as const;
    expect(await ledger.void(token, { lane: 12, seq: 3 }, now)).toEqual({ kind: 'void', stamp: { lane: 12, seq: 3 } });
    expect(await ledger.include(token, mark(12, 3), now)).toEqual({ kind: 'void', stamp: { lane: 12, seq: 3 } });
    expect(await ledger.include(token, mark(13, 1), now)).toEqual(mark(13, 1));
    expect(await ledger.include(token, mark(14, 1), now)).toEqual(mark(13, 1));
    expect(await ledger.void(token, { lane: 14, seq: 1 }, now)).toEqual(mark(13, 1));
  });
});
