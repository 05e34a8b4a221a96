import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { LANES, leaseMsFor } from '../../functions/domain/aggregation/lease';
import { type QueueName, type QueueSpec, queues } from '../../lib/manifest';
import type { AttributionServiceStack } from '../../lib/stack';
import { logicalId, serviceApp } from './synthesize';

/**
 * A queue's visibility timeout against its consumer, as deployed: a message must not come back
 * while the invocation that holds it may still run (so each consumer's timeout is under it, and 6x
 * under it unless the manifest says why not), its dead letters must outlive it, and a
 * delivery the aggregator lost must find its lease (the timeout plus 15 s) run out when it comes
 * back, or it is deferred again and counts towards the DLQ for nothing. The local runtime
 * provisions its queues and runs its functions from the same manifest entries.
 */
type Resource = { Type: string; Properties: Record<string, any> };

let stack: AttributionServiceStack;
let resources: Record<string, Resource>;

beforeAll(() => {
  ({ stack } = serviceApp());
  resources = Template.fromStack(stack).toJSON().Resources;
});

interface Consumed {
  queue: QueueName;
  visibilityTimeoutSeconds: number;
  functionId: string;
  timeoutSeconds: number;
}

/** Every event source mapping of the template: its queue, that queue's visibility timeout, and its function's timeout. */
function consumedQueues(): Consumed[] {
  const queueNames = new Map(Object.entries(stack.stores.queues).map(([name, queue]) => [logicalId(queue), name as QueueName]));
  return Object.values(resources)
    .filter((resource) => resource.Type === 'AWS::Lambda::EventSourceMapping')
    .map(({ Properties: mapping }) => {
      const queueId: string = mapping.EventSourceArn['Fn::GetAtt'][0];
      const functionId: string = mapping.FunctionName.Ref;
      return {
        queue: queueNames.get(queueId)!,
        visibilityTimeoutSeconds: resources[queueId]!.Properties.VisibilityTimeout,
        functionId,
        timeoutSeconds: resources[functionId]!.Properties.Timeout,
      };
    });
}

describe('the queues and their consumers', () => {
  it('feeds every queue that names a consumer, and only those', () => {
    const named = (Object.entries(queues) as [QueueName, QueueSpec][]).filter(([, spec]) => spec.consumer).map(([name]) => name);
    expect(
      consumedQueues()
        .map((consumed) => consumed.queue)
        .sort(),
    ).toEqual(named.sort());
  });

  it("keeps every consumer's timeout under its queue's visibility timeout", () => {
    const consumed = consumedQueues();
    for (const { timeoutSeconds, visibilityTimeoutSeconds } of consumed) {
      expect(typeof timeoutSeconds).toBe('number');
      expect(typeof visibilityTimeoutSeconds).toBe('number');
    }
    expect(consumed.filter((c) => !(c.timeoutSeconds < c.visibilityTimeoutSeconds))).toEqual([]);
  });

  it("gives every queue a visibility timeout of at least 6x its consumer's timeout, or the reason beside the setting", () => {
    // AWS's advice for an event source mapping: room for Lambda to retry a throttled batch before
    // its messages come back. lib/manifest.ts says why each exception is one.
    const exceptions: Partial<Record<QueueName, RegExp>> = {};
    const manifest = readFileSync(join(__dirname, '..', '..', 'lib', 'manifest.ts'), 'utf8');
    const below = consumedQueues().filter((c) => c.visibilityTimeoutSeconds < 6 * c.timeoutSeconds);
    expect(below.map((c) => c.queue).sort()).toEqual(Object.keys(exceptions).sort());
    for (const [, reason] of Object.entries(exceptions)) expect(manifest).toMatch(reason!);
    // The privacy queue has no mapping (the drain receives itself): its reason is beside it too.
    expect(manifest).toMatch(/privacy-drain's timeout, not 6x: no event source mapping reads this queue/);
  });

  it("keeps every dead-letter queue's messages longer than its source queue's, since a moved message keeps its first enqueue time", () => {
    for (const [name, queue] of Object.entries(stack.stores.queues) as [QueueName, (typeof stack.stores.queues)[QueueName]][]) {
      const source: number = resources[logicalId(queue)]!.Properties.MessageRetentionPeriod;
      const deadLetters: number = resources[logicalId(stack.stores.deadLetterQueues[name])]!.Properties.MessageRetentionPeriod;
      expect([name, source]).toEqual([name, queues[name].retentionDays * 86_400]);
      // At least a week in the DLQ, whenever the message failed.
      expect([name, deadLetters - source >= 7 * 86_400]).toEqual([name, true]);
    }
  });

  it("keeps the aggregator's lease (its timeout plus 15 s) under the aggregation queue's visibility timeout", () => {
    const aggregator = logicalId(stack.functions.get('aggregator')!);
    const consumed = consumedQueues().filter((c) => c.functionId === aggregator);
    expect(consumed.map((c) => c.queue)).toEqual(['aggregation']);
    const [{ timeoutSeconds, visibilityTimeoutSeconds }] = consumed as [Consumed];
    expect(leaseMsFor(timeoutSeconds)).toBe((timeoutSeconds + 15) * 1000);
    expect(leaseMsFor(timeoutSeconds)).toBeLessThan(visibilityTimeoutSeconds * 1000);
  });
});

describe("the aggregator's concurrency", () => {
  it('stays under the ledger lanes, so an invocation finds a lane free (functions/domain/aggregation/lease.ts)', () => {
    const aggregation = Object.values(resources).find(
      (resource) =>
        resource.Type === 'AWS::Lambda::EventSourceMapping' && resource.Properties.BatchSize === queues.aggregation.consumer.batchSize,
    );
    const maximum: number = aggregation?.Properties.ScalingConfig?.MaximumConcurrency;
    expect(maximum).toBe(queues.aggregation.consumer.maxConcurrency);
    expect(maximum).toBeLessThan(LANES);
  });
});
