import { ChangeMessageVisibilityCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, SQSEvent, SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import { envName, queues, tables } from '../../../lib/manifest';

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
    expect(settled).toContainEqual({ ':state': 'refused' });
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
});
