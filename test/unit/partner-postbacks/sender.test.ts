import { ChangeMessageVisibilityCommand, DeleteMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { logger, metrics } from '../../../functions/shared/observability';
import { envName, queues, tables } from '../../../lib/manifest';

// The partner answers 503 and its host resolves to a public address: nothing leaves the test.
jest.mock('../../../functions/adapters/postback-http', () => ({
  resolveHost: async () => [{ address: '93.184.215.14', family: 4 }],
  sendPostback: async () => ({ status: 503 }),
}));

// The sender reads its resource names and retry schedule at cold start.
for (const name of Object.keys(tables)) process.env[envName.table(name)] = name;
for (const name of Object.keys(queues)) process.env[envName.queue(name)] = `https://sqs.local/${name}`;
process.env.POSTBACK_RETRY_DELAYS_SECONDS = '7,8,9,10';

const db = mockClient(DynamoDBDocumentClient);
const sqs = mockClient(SQSClient);
const outage = Object.assign(new Error('Service unavailable'), { name: 'InternalServerError' });
const context = { functionName: 'postback-sender', awsRequestId: 'r' } as Context;

const record = (receiveCount: number, body = JSON.stringify({ version: 1, app_id: 'app_1', postback_id: 'pb1' })): SQSRecord =>
  ({
    messageId: `m${receiveCount}`,
    receiptHandle: `h${receiveCount}`,
    body,
    attributes: { ApproximateReceiveCount: String(receiveCount) },
  }) as unknown as SQSRecord;
const sqsEvent = (...records: SQSRecord[]): SQSEvent => ({ Records: records });
/** A postback to a destination that is refused before any connection: nothing leaves the test. */
const refusedPostback = {
  pk: 'app_1',
  sk: 'pb#pb1',
  app_id: 'app_1',
  postback_id: 'pb1',
  partner: 'acme',
  kind: 'install',
  event_name: 'install',
  url: 'https://10.0.0.1/cb',
  method: 'GET',
  created_ms: 0,
  state: 'queued',
};

async function sender() {
  return (await import('../../../functions/postback-sender')).handler;
}

describe('the postback sender when a store fails or a message is bad', () => {
  beforeEach(() => {
    db.reset();
    sqs.reset();
    jest.restoreAllMocks();
  });

  it('sends the message back when the postbacks table is down, without throwing or calling anyone', async () => {
    db.on(GetCommand).rejects(outage);
    const handler = await sender();
    await expect(handler(sqsEvent(record(1)), context)).resolves.toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
    expect(sqs.commandCalls(ChangeMessageVisibilityCommand)).toHaveLength(0);
  });

  it('sends back an unreadable message, which reaches the DLQ after maxReceiveCount', async () => {
    const handler = await sender();
    await expect(handler(sqsEvent(record(1, 'not json'), record(2, '{"version":2}')), context)).resolves.toEqual({
      batchItemFailures: [{ itemIdentifier: 'm1' }, { itemIdentifier: 'm2' }],
    });
    expect(db.calls()).toHaveLength(0);
  });

  it('settles a refused destination for good and acknowledges the message', async () => {
    db.on(GetCommand).resolves({ Item: refusedPostback });
    db.on(UpdateCommand).resolves({});
    db.on(PutCommand).resolves({});
    const handler = await sender();
    await expect(handler(sqsEvent(record(1)), context)).resolves.toEqual({ batchItemFailures: [] });
    const settled = db.commandCalls(UpdateCommand).map((call) => call.args[0].input.ExpressionAttributeValues);
    expect(settled).toContainEqual({ ':state': 'refused', ':attempts': 1 });
    expect(db.commandCalls(PutCommand)[0].args[0].input.Item).toMatchObject({
      outcome: 'refused',
      attempt: 1,
      error: expect.stringMatching(/private/),
    });
  });

  it('leaves a message whose attempt cannot be settled to come back, rather than losing it', async () => {
    db.on(GetCommand).resolves({ Item: refusedPostback });
    db.on(UpdateCommand).resolvesOnce({}).rejects(outage);
    db.on(PutCommand).resolves({});
    const handler = await sender();
    await expect(handler(sqsEvent(record(3)), context)).resolves.toEqual({ batchItemFailures: [{ itemIdentifier: 'm3' }] });
  });

  it('sends nothing for a duplicate of a delivered postback and acknowledges it', async () => {
    db.on(GetCommand).resolves({ Item: { ...refusedPostback, state: 'delivered' } });
    const handler = await sender();
    await expect(handler(sqsEvent(record(2)), context)).resolves.toEqual({ batchItemFailures: [] });
    expect(db.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it("keeps a dead postback's message failing, visible at once, so SQS moves it to the DLQ", async () => {
    db.on(GetCommand).resolves({ Item: { ...refusedPostback, state: 'dead' } });
    sqs.on(ChangeMessageVisibilityCommand).resolves({});
    const handler = await sender();
    await expect(handler(sqsEvent(record(6)), context)).resolves.toEqual({ batchItemFailures: [{ itemIdentifier: 'm6' }] });
    expect(sqs.commandCalls(ChangeMessageVisibilityCommand)[0].args[0].input).toMatchObject({ ReceiptHandle: 'h6', VisibilityTimeout: 0 });
  });

  describe('when the queue refuses the next message', () => {
    const queueDown = Object.assign(new Error('We encountered an internal error'), { name: 'InternalError' });
    const watch = () => ({
      metricNames: jest.spyOn(metrics, 'addMetric').mockImplementation(() => metrics),
      errors: jest.spyOn(logger, 'error').mockImplementation(() => undefined),
    });

    it('does not acknowledge a failed attempt whose retry cannot be sent, and logs and meters it, leaving the attempt unrecorded', async () => {
      db.on(GetCommand).resolves({ Item: { ...refusedPostback, url: 'https://partner.example/cb' } });
      db.on(UpdateCommand).resolves({});
      db.on(PutCommand).resolves({});
      sqs.on(SendMessageCommand).rejects(queueDown);
      const { metricNames, errors } = watch();
      const handler = await sender();
      await expect(handler(sqsEvent(record(1)), context)).resolves.toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
      expect(sqs.commandCalls(SendMessageCommand)[0].args[0].input).toMatchObject({ DelaySeconds: 7 });
      expect(metricNames.mock.calls.map(([name]) => name)).toContain('PostbackRequeueFailures');
      expect(errors).toHaveBeenCalledWith(
        expect.stringMatching(/could not be sent/),
        expect.objectContaining({ message_id: 'm1', reason: 'retry' }),
      );
      // The partner was called (503) and the attempt logged, but the record keeps attempts at 0: the
      // message that comes back makes attempt 1 again instead of losing the postback.
      const updates = db.commandCalls(UpdateCommand).map((call) => call.args[0].input.UpdateExpression);
      expect(updates).toEqual(['SET lease_until = :until']);
      expect(sqs.commandCalls(DeleteMessageCommand)).toHaveLength(0);
    });

    it('does not acknowledge an early message whose next hop cannot be sent, and logs and meters it', async () => {
      sqs.on(SendMessageCommand).rejects(queueDown);
      const { metricNames, errors } = watch();
      const handler = await sender();
      const early = JSON.stringify({ version: 1, app_id: 'app_1', postback_id: 'pb1', attempt: 3, not_before_ms: Date.now() + 3_600_000 });
      await expect(handler(sqsEvent(record(1, early)), context)).resolves.toEqual({ batchItemFailures: [{ itemIdentifier: 'm1' }] });
      expect(sqs.commandCalls(SendMessageCommand)[0].args[0].input).toMatchObject({ DelaySeconds: 900, MessageBody: early });
      expect(metricNames.mock.calls.map(([name]) => name)).toContain('PostbackRequeueFailures');
      expect(errors).toHaveBeenCalledWith(expect.stringMatching(/could not be sent/), expect.objectContaining({ reason: 'waiting' }));
      expect(db.calls()).toHaveLength(0);
    });

    it("logs and meters a dead postback's message that cannot be made visible, and still reports it failed", async () => {
      db.on(GetCommand).resolves({ Item: { ...refusedPostback, state: 'dead' } });
      sqs.on(ChangeMessageVisibilityCommand).rejects(queueDown);
      const { metricNames, errors } = watch();
      const handler = await sender();
      await expect(handler(sqsEvent(record(2)), context)).resolves.toEqual({ batchItemFailures: [{ itemIdentifier: 'm2' }] });
      expect(metricNames.mock.calls.map(([name]) => name)).toContain('PostbackReleaseFailures');
      expect(errors).toHaveBeenCalledWith(
        expect.stringMatching(/could not be made visible/),
        expect.objectContaining({ message_id: 'm2' }),
      );
    });
  });
});
