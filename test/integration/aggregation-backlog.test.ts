// Issue 21, item 1: under a backlog no item grows. Invocations of 100 one-event audit objects, all
// on the same report row (one app, one event name, one day), through the aggregator handler
// against the local DynamoDB, one of them killed by a store fault between two writes and
// redelivered: every count exact, and every item of the aggregates and ledger tables as small
// after 800 objects as after 300 (a mark per object would have grown it by 500).
import { ScanCommand, type ScanCommandOutput } from '@aws-sdk/client-dynamodb';
import type { SQSEvent } from 'aws-lambda';
import { itemBytes } from '../../bench/batch-figures';
import { dynamoClient } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import { freeLanes, sqsEvent, stored } from '../support/aggregation-deliveries';
import { createTenant, type LocalStack, startLocalStack } from '../support/local-stack';
import { captureLogs } from '../support/log-capture';
import { storedRows } from '../support/stored-rows';
import { countingWrites } from '../support/write-faults';

// The aggregator logs why a delivery comes back (step and error) at ERROR: read here, so that an
// unfaulted invocation that sends some back says why in the failure, not only which.
process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';

let stack: LocalStack;
beforeAll(async () => {
  // The test hands the handler its messages itself: nothing goes through the queue.
  stack = await startLocalStack();
});
afterAll(async () => {
  await stack?.stop();
});

const aggregator = async (event: SQSEvent) => (await import('../../functions/aggregator')).aggregator(event);

/** Every item of a table, with its size as DynamoDB bills it. */
async function itemSizes(table: 'aggregates' | 'ledger'): Promise<{ key: string; bytes: number }[]> {
  const sizes: { key: string; bytes: number }[] = [];
  let start: ScanCommandOutput['LastEvaluatedKey'];
  do {
    const page = await dynamoClient().send(new ScanCommand({ TableName: resourceName.table(table), ExclusiveStartKey: start }));
    for (const item of page.Items ?? []) sizes.push({ key: `${item.pk?.S}|${item.sk?.S ?? ''}`, bytes: itemBytes(item) });
    start = page.LastEvaluatedKey;
  } while (start);
  return sizes;
}

const largest = (sizes: readonly { bytes: number }[]) => Math.max(...sizes.map((size) => size.bytes));

describe('the aggregation under a backlog of one-event batches on one row', () => {
  it('counts every event once and keeps every item bounded, whatever the objects behind it and a fault between writes', async () => {
    const tenant = await createTenant();
    const installs = Array.from({ length: 50 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    const now = Date.now();
    const INVOCATIONS = 8;
    const PER_INVOCATION = 100;
    const FAULTED = 5;
    const sizesAt: Record<number, { aggregates: number; ledger: number }> = {};
    for (let n = 0; n < INVOCATIONS; n++) {
      const batches = Array.from({ length: PER_INVOCATION }, (_, i) => {
        const index = n * PER_INVOCATION + i;
        return [
          { event_id: `s-${index}`, event_name: 'session', install_uuid: installs[index % installs.length], ts_ms: now - 60_000 + index },
        ];
      });
      const bodies = await stored(tenant, batches, now + n * PER_INVOCATION);
      if (n === FAULTED) {
        // The store fails after the 150th write of this invocation: claims done, some marks or rows not.
        const fault = countingWrites(dynamoClient(), 150);
        // The injected failures are logged, as they should be: not printed here.
        const logs = captureLogs();
        const first = await aggregator(sqsEvent(bodies, `f${n}-`))
          .catch(() => ({ batchItemFailures: bodies.map((_, i) => ({ itemIdentifier: `f${n}-m${i}` })) }))
          .finally(() => logs.restore());
        fault.stop();
        expect(first.batchItemFailures.length).toBeGreaterThan(0);
        expect(logs.lines().some((line) => line.includes('aggregation failed; the message is retried'))).toBe(true);
        await freeLanes();
        const again = bodies.filter((_, i) => first.batchItemFailures.some((f) => f.itemIdentifier === `f${n}-m${i}`));
        expect((await aggregator(sqsEvent(again, `a${n}-`))).batchItemFailures).toEqual([]);
      } else {
        const logs = captureLogs();
        const { batchItemFailures } = await aggregator(sqsEvent(bodies, `i${n}-`)).finally(() => logs.restore());
        expect({ batchItemFailures, errors: logs.lines() }).toEqual({ batchItemFailures: [], errors: [] });
      }
      if (n === 2 || n === INVOCATIONS - 1)
        sizesAt[n + 1] = { aggregates: largest(await itemSizes('aggregates')), ledger: largest(await itemSizes('ledger')) };
    }

    const day = new Date(now - 60_000).toISOString().slice(0, 10);
    const total = INVOCATIONS * PER_INVOCATION;
    expect((await storedRows(tenant.app.app_id)).events).toEqual({
      [`${day}|session`]: { events: total, unique_installs: installs.length },
    });
    // The row carries one number per lane that wrote it, never a mark per object: no bigger after
    // 800 objects than after 300, and under 1 KB (one write unit a write; 4 KB is the goal).
    const after300 = sizesAt[3];
    const afterAll = sizesAt[INVOCATIONS];
    expect(afterAll?.aggregates).toBeLessThanOrEqual(1024);
    // (A few bytes more for the counters' extra digits.)
    expect(afterAll?.aggregates).toBeLessThanOrEqual((after300?.aggregates ?? 0) + 8);
    // The ledger's largest item is a lane listing one invocation's 100 objects, or an object's mark.
    expect(afterAll?.ledger).toBeLessThanOrEqual(4096);
  }, 300_000);
});
