import { ChangeMessageVisibilityCommand, SQSClient } from '@aws-sdk/client-sqs';
import { BatchGetCommand, DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSEvent } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { tokenOf } from '../../../functions/domain/aggregation/lease';
import { rowId } from '../../../functions/domain/aggregation/rows';
import { envName, queues, tables } from '../../../lib/manifest';
import { APP, LEASE_MS, T0, world } from './world';

// The aggregator reads its resource names at cold start.
for (const name of Object.keys(tables)) process.env[envName.table(name)] = name;
for (const name of Object.keys(queues)) process.env[envName.queue(name)] = `https://sqs.local/${name}`;
process.env[envName.bucket()] = 'audit';
process.env[envName.exportBucket()] = 'exports';

const install = {
  event_id: 'i-1',
  event_name: 'install',
  install_uuid: '00000000-0000-4000-8000-000000000001',
  ts_ms: T0,
  platform: 'ios',
};

describe('a delivery that finds its audit object in an apply another invocation holds', () => {
  it("is sent back for what is left of that lane's lease, not for the whole visibility timeout", async () => {
    const w = world();
    const body = w.upload([install]);
    const token = tokenOf(JSON.parse(body).audit_key);
    // Another invocation (one that died, say) took lane 0 just now and included the object in its apply.
    const cohort = rowId({ family: 'cohorts', day: '2026-06-01', group: [] });
    expect(await w.ledger.take(0, 'another', [token], T0, LEASE_MS)).toEqual({ state: 'reserved', seq: 1 });
    await w.ledger.include(token, { kind: 'included', stamp: { lane: 0, seq: 1 }, appId: APP, journal: { [cohort]: { installs: 1 } } }, T0);

    expect(await w.deliver([body])).toEqual([expect.objectContaining({ kind: 'busy', retryInSeconds: LEASE_MS / 1000 + 1 })]);
    w.clock.now = T0 + 30_500;
    expect(await w.deliver([body])).toEqual([expect.objectContaining({ kind: 'busy', retryInSeconds: 46 })]);
    // Back when the lease has run out, it replays that apply: the object is counted, once.
    w.clock.now = T0 + LEASE_MS + 1;
    expect(await w.deliver([body])).toEqual([expect.objectContaining({ kind: 'counted', events: 1 })]);
    expect(await w.deliver([body])).toEqual([expect.objectContaining({ kind: 'already_counted' })]);
    expect(w.table().cohorts).toEqual({ '2026-06-01': { installs: 1 } });
  });
});

describe('the aggregator handler on a busy audit object', () => {
  const db = mockClient(DynamoDBDocumentClient);
  const sqs = mockClient(SQSClient);
  const context = { functionName: 'aggregator', awsRequestId: 'r' } as Context;
  const message = JSON.stringify({
    version: 1,
    bucket: 'audit',
    audit_key: 'audit/app_1/2026/06/01/x.jsonl.gz',
    app_id: 'app_1',
    company_id: 'com_1',
    received_ms: T0,
    accepted: 1,
    rejected: 0,
  });
  const event: SQSEvent = {
    Records: [{ messageId: 'm1', receiptHandle: 'h1', body: message, attributes: { ApproximateReceiveCount: '1' } }],
  } as unknown as SQSEvent;
  // The object is in apply 5 of lane 3, which another invocation holds for `ms` more. The handler's
  // clock (Date.now) stands still at T0, so the time left is exactly `ms` on a loaded machine too.
  const leasedFor = (ms: number) => {
    db.on(UpdateCommand).rejects(Object.assign(new Error('The conditional request failed'), { name: 'ConditionalCheckFailedException' }));
    const items: Record<string, Record<string, unknown>> = {
      [`agg#${tokenOf('audit/app_1/2026/06/01/x.jsonl.gz')}`]: { m: 'included', lane: 3, seq: 5, app_id: 'app_1', journal: '{}' },
      'lane#3': { seq: 5, applied: 4, objects: [], holder: 'another', lease_until: T0 + ms },
    };
    db.on(BatchGetCommand).callsFake((input: { RequestItems: Record<string, { Keys: { pk: string }[] }> }) => ({
      Responses: Object.fromEntries(
        Object.entries(input.RequestItems).map(([table, { Keys }]) => [
          table,
          Keys.flatMap(({ pk }) => (items[pk] ? [{ pk, ...items[pk] }] : [])),
        ]),
      ),
    }));
  };
  const handler = async () => (await import('../../../functions/aggregator')).handler;

  beforeEach(() => {
    db.reset();
    sqs.reset();
    jest.spyOn(Date, 'now').mockReturnValue(T0);
  });
  afterEach(() => jest.restoreAllMocks());

  it('makes its message visible again when the lease ends, and reports it for retry', async () => {
    leasedFor(40_000);
    sqs.on(ChangeMessageVisibilityCommand).resolves({});
    await expect((await handler())(event, context)).resolves.toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
    const calls = sqs.commandCalls(ChangeMessageVisibilityCommand).map((call) => call.args[0].input);
    expect(calls).toEqual([{ QueueUrl: 'https://sqs.local/aggregation', ReceiptHandle: 'h1', VisibilityTimeout: 41 }]);
  });

  it('still sends the message back, after the visibility timeout, when its visibility cannot be set', async () => {
    leasedFor(40_000);
    sqs.on(ChangeMessageVisibilityCommand).rejects(new Error('Service unavailable'));
    await expect((await handler())(event, context)).resolves.toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
  });
});
