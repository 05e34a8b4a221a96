// The SQS emulator refuses what SQS refuses (local/sqs/README.md, "AWS's limits"), so code that
// only works in the emulator fails here instead of in AWS: a visibility ending more than 12 h
// after its receive, the 120,001st message in flight, a delay over 15 minutes, a message over the
// queue's size limit and a batch of more than 10 entries.

import type { ServerResponse } from 'node:http';
import {
  ChangeMessageVisibilityBatchCommand,
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { type SqsEmulator, startSqsEmulator } from '../../local/sqs';
import { encodeReceiptHandle, MAX_IN_FLIGHT_MESSAGES } from '../../local/sqs/protocol';
import { SqsStore } from '../../local/sqs/store';
import { rejectionOf } from '../support/rejection';

const HOUR_MS = 3_600_000;
let clockMs = Date.now();
const emulators: SqsEmulator[] = [];

async function emulator(options: { maxInFlightMessages?: number } = {}) {
  const started = await startSqsEmulator({ ...options, now: () => clockMs });
  emulators.push(started);
  const sqs = new SQSClient({ endpoint: started.url, region: 'us-east-1', credentials: { accessKeyId: 'test', secretAccessKey: 'test' } });
  const queue = async (name: string, attributes?: Record<string, string>) =>
    (await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }))).QueueUrl as string;
  return { sqs, queue };
}

afterAll(async () => {
  await Promise.all(emulators.map((started) => started.close()));
});

describe("the SQS emulator's AWS limits", () => {
  it('refuses a visibility that would end more than 12 hours after the receive, and accepts one ending at 12 hours', async () => {
    const { sqs, queue } = await emulator();
    const url = await queue('visibility');
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'wait' }));
    const [message] = (await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, VisibilityTimeout: 43_200 }))).Messages ?? [];
    const handle = message?.ReceiptHandle;

    const thirteenHours = await rejectionOf(
      sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: handle, VisibilityTimeout: 46_800 })),
    );
    expect(thirteenHours.name).toBe('InvalidParameterValue');

    // An hour later, 12 hours more would end 13 hours after the receive: what the old postback retry asked for.
    clockMs += HOUR_MS;
    const pastReceipt = await rejectionOf(
      sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: handle, VisibilityTimeout: 43_200 })),
    );
    expect(pastReceipt.name).toBe('InvalidParameterValue');
    expect(pastReceipt.message).toMatch(/beyond the limit \[43200 seconds\]/);
    await expect(
      sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: handle, VisibilityTimeout: 11 * 3600 })),
    ).resolves.toBeDefined();
  });

  it('answers OverLimit to a receive once the queue holds its limit in flight; delayed messages do not count', async () => {
    const { sqs, queue } = await emulator({ maxInFlightMessages: 3 });
    const url = await queue('in-flight');
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: Array.from({ length: 10 }, (_, i) => ({ Id: `d${i}`, MessageBody: 'later', DelaySeconds: 900 })),
      }),
    );
    for (const body of ['a', 'b', 'c', 'd']) await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: body }));

    const first = (await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }))).Messages ?? [];
    expect(first).toHaveLength(3); // only room for three
    const over = await rejectionOf(sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 })));
    expect(over.name).toBe('OverLimit');
    expect(over.$metadata?.httpStatusCode).toBe(403);

    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: first[0]?.ReceiptHandle }));
    const after = (await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }))).Messages ?? [];
    expect(after.map((m) => m.Body)).toEqual(['d']);
    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }));
    expect(Attributes).toMatchObject({ ApproximateNumberOfMessagesNotVisible: '3', ApproximateNumberOfMessagesDelayed: '10' });

    // A visibility that runs out gives the room back.
    clockMs += 60_000;
    await expect(sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }))).resolves.toBeDefined();
  });

  it('refuses the 120,001st message in flight with the real limit', () => {
    // In memory, on the store the server runs: 120,000 messages received an hour ago and held for
    // another hour, as a snapshot would restore them (receiving them one call of ten at a time
    // would take minutes), then one more sent and received.
    expect(MAX_IN_FLIGHT_MESSAGES).toBe(120_000);
    const store = new SqsStore('us-east-1', () => clockMs);
    store.baseUrl = 'http://127.0.0.1:1';
    const QueueUrl = store.queueUrl('full');
    const receivedAt = clockMs - HOUR_MS;
    const held = Array.from({ length: MAX_IN_FLIGHT_MESSAGES }, (_, n) => ({
      messageId: `m${n}`,
      body: 'held',
      md5OfBody: '',
      messageAttributes: {},
      sentAt: receivedAt,
      enqueuedAt: receivedAt,
      visibleAt: clockMs + HOUR_MS,
      receiveCount: 1,
      firstReceiveAt: receivedAt,
      receivedAt,
      receiptHandle: encodeReceiptHandle('full', `m${n}`),
    }));
    store.restore([{ name: 'full', createdAt: receivedAt, lastModifiedAt: receivedAt, attributes: {}, messages: held }]);
    const run = (action: string, input: Record<string, unknown>) =>
      // Synchronous: no receive here waits.
      store.dispatch(action, { QueueUrl, ...input }, {} as ServerResponse) as Record<string, unknown>;

    run('SendMessage', { MessageBody: 'the 120,001st' });
    expect(() => run('ReceiveMessage', {})).toThrow(expect.objectContaining({ code: 'OverLimit' }));
    run('DeleteMessage', { ReceiptHandle: held[0]?.receiptHandle });
    expect(run('ReceiveMessage', {})).toMatchObject({ Messages: [{ Body: 'the 120,001st' }] });
    expect(() => run('ReceiveMessage', {})).toThrow(expect.objectContaining({ code: 'OverLimit' }));
  });

  it('refuses a delay over 900 seconds and accepts 900', async () => {
    const { sqs, queue } = await emulator();
    const url = await queue('delays');
    const tooLong = await rejectionOf(sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x', DelaySeconds: 901 })));
    expect(tooLong.name).toBe('InvalidParameterValue');
    await expect(sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'x', DelaySeconds: 900 }))).resolves.toBeDefined();
  });

  it("refuses a message over the queue's maximum size: 256 KiB when set so, 1 MiB by default", async () => {
    const { sqs, queue } = await emulator();
    const small = await queue('small', { MaximumMessageSize: String(256 * 1024) });
    const tooLong = await rejectionOf(sqs.send(new SendMessageCommand({ QueueUrl: small, MessageBody: 'x'.repeat(256 * 1024 + 1) })));
    expect(tooLong.name).toBe('InvalidParameterValue');
    expect(tooLong.message).toMatch(/shorter than 262144 bytes/);
    await expect(sqs.send(new SendMessageCommand({ QueueUrl: small, MessageBody: 'x'.repeat(256 * 1024) }))).resolves.toBeDefined();

    const standard = await queue('standard');
    const overMiB = await rejectionOf(sqs.send(new SendMessageCommand({ QueueUrl: standard, MessageBody: 'x'.repeat(1024 * 1024 + 1) })));
    expect(overMiB.name).toBe('InvalidParameterValue');
  });

  it('refuses a batch of more than 10 entries, whichever the batch action', async () => {
    const { sqs, queue } = await emulator();
    const url = await queue('batches');
    const eleven = Array.from({ length: 11 }, (_, i) => `e${i}`);
    const sends = await rejectionOf(
      sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: eleven.map((Id) => ({ Id, MessageBody: 'x' })) })),
    );
    const deletes = await rejectionOf(
      sqs.send(new DeleteMessageBatchCommand({ QueueUrl: url, Entries: eleven.map((Id) => ({ Id, ReceiptHandle: 'h' })) })),
    );
    const changes = await rejectionOf(
      sqs.send(
        new ChangeMessageVisibilityBatchCommand({
          QueueUrl: url,
          Entries: eleven.map((Id) => ({ Id, ReceiptHandle: 'h', VisibilityTimeout: 0 })),
        }),
      ),
    );
    expect([sends.name, deletes.name, changes.name]).toEqual([
      'TooManyEntriesInBatchRequest',
      'TooManyEntriesInBatchRequest',
      'TooManyEntriesInBatchRequest',
    ]);
  });
});
