// The postback sender's retries against the SQS emulator, which refuses what SQS refuses (a
// visibility ending over 12 h after its receive, a receive with the queue's limit in flight, a
// delay over 900 s), and dynalite, on a clock the test moves: the whole documented schedule
// (5 min, 1 h, 6 h, 12 h) kept, nothing waiting in flight, and one dead partner's waiting retries
// never keeping another partner's postbacks from being received (docs/postbacks.md, "Delivery").

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DeleteMessageBatchCommand, GetQueueAttributesCommand, ReceiveMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import dynalite from 'dynalite';
import { PostbackRecords } from '../../functions/adapters/postback-store';
import { DEFAULT_RETRY_DELAYS_SECONDS } from '../../functions/domain/partner-postbacks/deliver';
import type { PostbackRecord } from '../../functions/domain/partner-postbacks/trigger';
import { envName, queues, tables } from '../../lib/manifest';
import { createQueue, createTable, localCredentials } from '../../local/provision';
import { toRecord } from '../../local/queue-pollers';
import { type SqsEmulator, startSqsEmulator } from '../../local/sqs';

/** Receives before OverLimit in this emulator: far fewer than the retries the dead partner leaves waiting. */
const IN_FLIGHT_LIMIT = 10;
const clock = { now: Date.UTC(2026, 0, 5, 9) };

let database: ReturnType<typeof dynalite>;
let emulator: SqsEmulator;
let sqs: SQSClient;
let partner: Server;
let queueUrl: string;
let deadLetterQueueUrl: string;
let records: PostbackRecords;
let sender: (event: SQSEvent) => Promise<SQSBatchResponse>;
/** The delay of every message the sender sends, in order: the test moves its clock by them. */
const delays: number[] = [];
/** Each call to a partner, with the test clock's time; /dead answers 503, /ok 200. */
const calls: { path: string; id: string; atMs: number }[] = [];

beforeAll(async () => {
  database = dynalite({ createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => database.listen(0, '127.0.0.1', resolve));
  const dynamodb = `http://127.0.0.1:${(database.address() as AddressInfo).port}`;
  emulator = await startSqsEmulator({ now: () => clock.now, maxInFlightMessages: IN_FLIGHT_LIMIT });
  sqs = new SQSClient({ region: 'us-east-1', endpoint: emulator.url, credentials: localCredentials });
  const dynamo = new DynamoDBClient({ region: 'us-east-1', endpoint: dynamodb, credentials: localCredentials });
  await createTable(dynamo, 'postbacks', tables.postbacks);
  dynamo.destroy();
  ({ queueUrl, deadLetterQueueUrl } = await createQueue(sqs, 'postbacks', queues.postbacks));

  partner = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://partner');
    calls.push({ path: url.pathname, id: url.searchParams.get('id') ?? '', atMs: clock.now });
    response.statusCode = url.pathname === '/dead' ? 503 : 200;
    response.end();
  });
  await new Promise<void>((resolve) => partner.listen(0, '127.0.0.1', resolve));

  // The sender's environment, as the stack gives it; read at its cold start.
  Object.assign(process.env, {
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: localCredentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: localCredentials.secretAccessKey,
    AWS_ENDPOINT_URL_SQS: emulator.url,
    AWS_ENDPOINT_URL_DYNAMODB: dynamodb,
    POSTBACK_ALLOW_LOOPBACK: '1',
    [envName.table('postbacks')]: 'postbacks',
    [envName.queue('postbacks')]: queueUrl,
  });
  const { postbackSender } = await import('../../functions/postback-sender');
  const { policyFromEnv } = await import('../../functions/domain/partner-postbacks/destination');
  const { MessageQueue, delayMessage } = await import('../../functions/adapters/message-queue');
  const { resolveHost, sendPostback } = await import('../../functions/adapters/postback-http');
  records = new PostbackRecords('postbacks', queueUrl);
  const queue = new MessageQueue(queueUrl);
  sender = postbackSender({
    ports: {
      records,
      queue: {
        send: async (message, delaySeconds) => {
          await queue.send(message, delaySeconds);
          delays.push(delaySeconds);
        },
      },
      resolve: resolveHost,
      send: sendPostback,
    },
    options: { policy: policyFromEnv(), retryDelaysSeconds: DEFAULT_RETRY_DELAYS_SECONDS, nowMs: () => clock.now },
    release: (receiptHandle) => delayMessage(queueUrl, receiptHandle, 0),
  });
});

afterAll(async () => {
  sqs.destroy();
  await emulator.close();
  partner.closeAllConnections();
  await new Promise((resolve) => partner.close(resolve));
  await new Promise((resolve) => database.close(resolve));
});

/** Lambda's event source mapping, one batch of up to 10 at a time: delete what the sender finished. Resolves with how many it handled. */
async function pollOnce(): Promise<number> {
  const { Messages = [] } = await sqs.send(
    new ReceiveMessageCommand({
      QueueUrl: queueUrl,
      MaxNumberOfMessages: queues.postbacks.consumer.batchSize,
      MessageSystemAttributeNames: ['All'],
    }),
  );
  if (Messages.length === 0) return 0;
  const { batchItemFailures } = await sender({ Records: Messages.map((message) => toRecord('postbacks', message)) });
  const failed = new Set(batchItemFailures.map((failure) => failure.itemIdentifier));
  const done = Messages.filter((message) => !failed.has(message.MessageId ?? ''));
  if (done.length > 0) {
    await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: queueUrl,
        Entries: done.map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
  }
  return Messages.length;
}

/** Polls until nothing is visible, then checks that nothing waits in flight. */
async function settle(): Promise<void> {
  while ((await pollOnce()) > 0);
  expect(await counts(queueUrl)).toMatchObject({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' });
}

async function counts(url: string): Promise<Record<string, string>> {
  const { Attributes = {} } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }));
  return Attributes;
}

let postbacks = 0;
function postback(path: string): PostbackRecord {
  const postbackId = `pb${String(++postbacks).padStart(6, '0')}`;
  return {
    app_id: 'app_retries',
    postback_id: postbackId,
    partner: path.slice(1),
    kind: 'install',
    event_name: 'install',
    url: `http://127.0.0.1:${(partner.address() as AddressInfo).port}${path}?id=${postbackId}`,
    method: 'GET',
    created_ms: clock.now,
    state: 'new',
  };
}

describe('postback retries within SQS limits', () => {
  it('keeps the whole schedule (5 min, 1 h, 6 h, 12 h) to a dead partner, waiting out of flight, then sends the message to the DLQ', async () => {
    const dead = postback('/dead');
    await records.enqueue([dead], clock.now);
    await settle();
    // The clock moves to when the message last sent becomes visible, and only then: a message
    // received early would show as an attempt made early.
    for (let sent = 0; sent < delays.length; sent++) {
      clock.now += (delays[sent] ?? 0) * 1000;
      await settle();
    }

    const times = calls.filter((call) => call.id === dead.postback_id).map((call) => (call.atMs - (calls[0]?.atMs ?? 0)) / 1000);
    const schedule = DEFAULT_RETRY_DELAYS_SECONDS.map((_, i) => DEFAULT_RETRY_DELAYS_SECONDS.slice(0, i + 1).reduce((a, b) => a + b, 0));
    expect(times).toEqual([0, ...schedule]);
    // Every wait is hops of at most 15 minutes (the 12 hours are 48 of them), each a new message.
    expect(Math.max(...delays)).toBe(900);
    expect(delays.reduce((a, b) => a + b, 0)).toBe(schedule.at(-1));
    const attempts = await records.attempts('app_retries');
    expect(attempts.map((a) => [a.attempt, a.outcome]).reverse()).toEqual([
      [1, 'retry'],
      [2, 'retry'],
      [3, 'retry'],
      [4, 'retry'],
      [5, 'dead'],
    ]);
    expect(await records.get('app_retries', dead.postback_id)).toMatchObject({ state: 'dead', attempts: 5 });
    const { Messages = [] } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: deadLetterQueueUrl }));
    expect(Messages.map((m) => JSON.parse(m.Body ?? '{}'))).toEqual([
      expect.objectContaining({ postback_id: dead.postback_id, attempt: 5 }),
    ]);
  });

  it("receives and delivers another partner's postback while a dead partner has many more retries waiting than SQS allows in flight", async () => {
    const first = calls.length;
    const dead = Array.from({ length: IN_FLIGHT_LIMIT * 3 }, () => postback('/dead'));
    for (let start = 0; start < dead.length; start += 25) await records.enqueue(dead.slice(start, start + 25), clock.now);
    await settle();
    // Halfway through the first wait every retry has hopped once.
    clock.now += 150_000;
    await settle();
    expect(await counts(queueUrl)).toMatchObject({ ApproximateNumberOfMessagesDelayed: String(dead.length) });

    const ok = postback('/ok');
    await records.enqueue([ok], clock.now);
    await settle();
    expect(calls.filter((call) => call.id === ok.postback_id)).toHaveLength(1);
    expect(await records.get('app_retries', ok.postback_id)).toMatchObject({ state: 'delivered', attempts: 1 });
    expect(calls.slice(first).filter((call) => call.path === '/dead')).toHaveLength(dead.length);
  });
});
