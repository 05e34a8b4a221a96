// Drives the SQS emulator with the real @aws-sdk/client-sqs, so the wire protocol, error mapping
// and MD5 validation are exercised exactly as the service code will exercise them.

import { createHash } from 'node:crypto';
import { appendFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  ChangeMessageVisibilityCommand,
  CreateQueueCommand,
  DeleteMessageBatchCommand,
  DeleteMessageCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  GetQueueUrlCommand,
  ListQueuesCommand,
  PurgeQueueCommand,
  ReceiveMessageCommand,
  SendMessageBatchCommand,
  SendMessageCommand,
  SetQueueAttributesCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { type SqsEmulator, startSqsEmulator } from '../../local/sqs';
import { rejectionOf } from '../support/rejection';
import { sleep } from '../support/wait-for';

function clientFor(emulator: SqsEmulator): SQSClient {
  return new SQSClient({
    endpoint: emulator.url,
    region: 'us-east-1',
    credentials: { accessKeyId: 'test', secretAccessKey: 'test' },
  });
}

let dataDir: string;
let emulator: SqsEmulator;
let sqs: SQSClient;
// Shifts the emulator's clock so retention and message age can be tested without waiting.
let clockOffsetMs = 0;
let queueCounter = 0;

async function createQueue(attributes?: Record<string, string>): Promise<{ name: string; url: string }> {
  const name = `q-${++queueCounter}-${Date.now()}`;
  const { QueueUrl } = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: attributes }));
  return { name, url: QueueUrl! };
}

async function counts(url: string): Promise<Record<string, string>> {
  const { Attributes } = await sqs.send(
    new GetQueueAttributesCommand({
      QueueUrl: url,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  return Attributes ?? {};
}

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), 'sqs-emulator-'));
  emulator = await startSqsEmulator({ port: 0, dataDir, now: () => Date.now() + clockOffsetMs });
  sqs = clientFor(emulator);
});

afterAll(async () => {
  sqs.destroy();
  await emulator.close();
  rmSync(dataDir, { recursive: true, force: true });
});

afterEach(() => {
  clockOffsetMs = 0;
});

describe('queues', () => {
  it('creates a queue idempotently and resolves its URL by name', async () => {
    const { name, url } = await createQueue({ VisibilityTimeout: '5' });
    expect(url).toBe(`${emulator.url}/000000000000/${name}`);

    const again = await sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: '5' } }));
    expect(again.QueueUrl).toBe(url);
    const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name }));
    expect(QueueUrl).toBe(url);
    const { QueueUrls } = await sqs.send(new ListQueuesCommand({ QueueNamePrefix: name }));
    expect(QueueUrls).toEqual([url]);
  });

  it('rejects re-creating a queue with different attributes as QueueNameExists', async () => {
    const { name } = await createQueue({ VisibilityTimeout: '5' });
    const error = await rejectionOf(sqs.send(new CreateQueueCommand({ QueueName: name, Attributes: { VisibilityTimeout: '6' } })));
    expect(error.name).toBe('QueueNameExists');
  });

  it('reports an unknown queue as QueueDoesNotExist', async () => {
    const byName = await rejectionOf(sqs.send(new GetQueueUrlCommand({ QueueName: 'no-such-queue' })));
    expect(byName.name).toBe('QueueDoesNotExist');
    expect(byName.$metadata?.httpStatusCode).toBe(400);

    const byUrl = await rejectionOf(sqs.send(new SendMessageCommand({ QueueUrl: emulator.queueUrl('no-such-queue'), MessageBody: 'x' })));
    expect(byUrl.name).toBe('QueueDoesNotExist');
  });

  it('rejects invalid attribute values and names', async () => {
    const value = await rejectionOf(
      sqs.send(new CreateQueueCommand({ QueueName: 'bad-attrs', Attributes: { VisibilityTimeout: '99999' } })),
    );
    expect(value.name).toBe('InvalidAttributeValue');
    const name = await rejectionOf(
      sqs.send(new CreateQueueCommand({ QueueName: 'bad-attrs', Attributes: { Colour: 'blue' } as Record<string, string> })),
    );
    expect(name.name).toBe('InvalidAttributeName');
  });

  it('deletes a queue', async () => {
    const { name, url } = await createQueue();
    await sqs.send(new DeleteQueueCommand({ QueueUrl: url }));
    const error = await rejectionOf(sqs.send(new GetQueueUrlCommand({ QueueName: name })));
    expect(error.name).toBe('QueueDoesNotExist');
  });
});

describe('messages', () => {
  it('sends, receives and deletes a message with digests SQS would compute', async () => {
    const { url } = await createQueue();
    const body = JSON.stringify({ event: 'install', note: 'ünïcödé 🚀' });
    const sent = await sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: body,
        MessageAttributes: {
          source: { DataType: 'String', StringValue: 'sdk' },
          count: { DataType: 'Number', StringValue: '3' },
          blob: { DataType: 'Binary', BinaryValue: Buffer.from([1, 2, 3]) },
        },
      }),
    );
    // The SDK has already validated MD5OfMessageBody itself; check it against node's MD5 too.
    expect(sent.MD5OfMessageBody).toBe(createHash('md5').update(body, 'utf8').digest('hex'));
    expect(sent.MessageId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(sent.MD5OfMessageAttributes).toMatch(/^[0-9a-f]{32}$/);

    const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MessageAttributeNames: ['All'] }));
    expect(Messages).toHaveLength(1);
    const [message] = Messages!;
    expect(message!.Body).toBe(body);
    expect(message!.MessageId).toBe(sent.MessageId);
    expect(message!.MD5OfBody).toBe(sent.MD5OfMessageBody);
    expect(message!.MD5OfMessageAttributes).toBe(sent.MD5OfMessageAttributes);
    expect(message!.MessageAttributes?.source?.StringValue).toBe('sdk');
    expect(Buffer.from(message!.MessageAttributes!.blob!.BinaryValue!)).toEqual(Buffer.from([1, 2, 3]));

    await sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: message!.ReceiptHandle }));
    expect(await counts(url)).toEqual({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '0',
      ApproximateNumberOfMessagesDelayed: '0',
    });
  });

  it('computes MD5OfMessageAttributes as in the SQS documentation example', async () => {
    const { url } = await createQueue();
    const sent = await sqs.send(
      new SendMessageCommand({
        QueueUrl: url,
        MessageBody: 'x',
        MessageAttributes: { SellerName: { DataType: 'String', StringValue: 'Example Store' } },
      }),
    );
    expect(sent.MD5OfMessageAttributes).toBe('cd28f3b68aeee4b2eac9c66f2f694b58');
  });

  it('reports per-entry failures in batch send and batch delete', async () => {
    const { url } = await createQueue();
    const sent = await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: 'a', MessageBody: 'first' },
          { Id: 'b', MessageBody: 'second' },
          { Id: 'c', MessageBody: 'too late', DelaySeconds: 901 },
        ],
      }),
    );
    expect(sent.Successful?.map((entry) => entry.Id).sort()).toEqual(['a', 'b']);
    expect(sent.Failed).toEqual([expect.objectContaining({ Id: 'c', SenderFault: true, Code: 'InvalidParameterValue' })]);

    const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }));
    expect(Messages).toHaveLength(2);
    const deleted = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          ...Messages!.map((message, index) => ({ Id: `m${index}`, ReceiptHandle: message.ReceiptHandle! })),
          { Id: 'bogus', ReceiptHandle: 'not-a-handle!' },
        ],
      }),
    );
    expect(deleted.Successful?.map((entry) => entry.Id).sort()).toEqual(['m0', 'm1']);
    expect(deleted.Failed).toEqual([expect.objectContaining({ Id: 'bogus', SenderFault: true, Code: 'ReceiptHandleIsInvalid' })]);
    expect((await counts(url)).ApproximateNumberOfMessagesNotVisible).toBe('0');
  });

  it('rejects empty, oversized and ambiguous batches as a whole', async () => {
    const { url } = await createQueue();
    const empty = await rejectionOf(sqs.send(new SendMessageBatchCommand({ QueueUrl: url, Entries: [] })));
    expect(empty.name).toBe('EmptyBatchRequest');
    const tooMany = await rejectionOf(
      sqs.send(
        new SendMessageBatchCommand({ QueueUrl: url, Entries: Array.from({ length: 11 }, (_, i) => ({ Id: `e${i}`, MessageBody: 'x' })) }),
      ),
    );
    expect(tooMany.name).toBe('TooManyEntriesInBatchRequest');
    const duplicate = await rejectionOf(
      sqs.send(
        new SendMessageBatchCommand({
          QueueUrl: url,
          Entries: [
            { Id: 'same', MessageBody: 'x' },
            { Id: 'same', MessageBody: 'y' },
          ],
        }),
      ),
    );
    expect(duplicate.name).toBe('BatchEntryIdsNotDistinct');
  });

  it('rejects a malformed receipt handle as ReceiptHandleIsInvalid', async () => {
    const { url } = await createQueue();
    const error = await rejectionOf(sqs.send(new DeleteMessageCommand({ QueueUrl: url, ReceiptHandle: 'garbage!' })));
    expect(error.name).toBe('ReceiptHandleIsInvalid');
  });

  it('hides a received message for the visibility timeout and then shows it again with a higher receive count', async () => {
    const { url } = await createQueue();
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'retry me' }));

    const first = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, VisibilityTimeout: 1, MessageSystemAttributeNames: ['All'] }));
    expect(first.Messages?.[0]?.Attributes?.ApproximateReceiveCount).toBe('1');
    const sentTimestamp = Number(first.Messages![0]!.Attributes!.SentTimestamp);
    expect(Math.abs(Date.now() - sentTimestamp)).toBeLessThan(5000);
    expect(first.Messages![0]!.Attributes!.ApproximateFirstReceiveTimestamp).toBeDefined();

    const hidden = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url }));
    expect(hidden.Messages).toBeUndefined();
    expect(await counts(url)).toMatchObject({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '1' });

    // The 1 s visibility timeout running out: a fixed wait is the point here.
    await sleep(1100);
    // AttributeNames is the deprecated spelling that older consumers still send.
    const again = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, AttributeNames: ['All'] }));
    expect(again.Messages?.[0]?.Body).toBe('retry me');
    expect(again.Messages?.[0]?.Attributes?.ApproximateReceiveCount).toBe('2');
    expect(again.Messages?.[0]?.ReceiptHandle).not.toBe(first.Messages![0]!.ReceiptHandle);
  });

  it('makes a message visible immediately when its visibility is changed to 0', async () => {
    const { url } = await createQueue();
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'back' }));
    const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, VisibilityTimeout: 60 }));

    await sqs.send(new ChangeMessageVisibilityCommand({ QueueUrl: url, ReceiptHandle: Messages![0]!.ReceiptHandle, VisibilityTimeout: 0 }));
    const again = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url }));
    expect(again.Messages?.[0]?.Body).toBe('back');
  });

  it('moves a message to the dead-letter queue instead of receiving it more than maxReceiveCount times', async () => {
    const dlq = await createQueue();
    const { url } = await createQueue({
      RedrivePolicy: JSON.stringify({ deadLetterTargetArn: emulator.queueArn(dlq.name), maxReceiveCount: 2 }),
    });
    const sent = await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'poison' }));

    for (let attempt = 1; attempt <= 2; attempt++) {
      const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, VisibilityTimeout: 0 }));
      expect(Messages?.[0]?.MessageId).toBe(sent.MessageId);
    }
    const third = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, VisibilityTimeout: 0 }));
    expect(third.Messages).toBeUndefined();

    const dead = await sqs.send(
      new ReceiveMessageCommand({ QueueUrl: dlq.url, MessageSystemAttributeNames: ['DeadLetterQueueSourceArn'] }),
    );
    expect(dead.Messages?.[0]?.MessageId).toBe(sent.MessageId);
    expect(dead.Messages?.[0]?.Body).toBe('poison');
    expect(dead.Messages?.[0]?.Attributes?.DeadLetterQueueSourceArn).toBe(emulator.queueArn(url.split('/').pop()!));

    const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['RedrivePolicy', 'QueueArn'] }));
    expect(JSON.parse(Attributes!.RedrivePolicy!)).toEqual({ deadLetterTargetArn: emulator.queueArn(dlq.name), maxReceiveCount: 2 });
  });

  it('returns a long poll early when a message is sent during the wait', async () => {
    const { url } = await createQueue();
    const started = Date.now();
    const polling = sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 10 }));
    // The send comes while the long poll waits: the fixed wait puts it there.
    await sleep(300);
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'wake up' }));

    const { Messages } = await polling;
    expect(Messages?.[0]?.Body).toBe('wake up');
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('returns an empty long poll once WaitTimeSeconds passes', async () => {
    const { url } = await createQueue();
    const started = Date.now();
    const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, WaitTimeSeconds: 1 }));
    expect(Messages).toBeUndefined();
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
  });

  it('counts visible, in-flight and delayed messages', async () => {
    const { url } = await createQueue();
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: '1', MessageBody: 'one' },
          { Id: '2', MessageBody: 'two' },
          { Id: '3', MessageBody: 'three' },
          { Id: '4', MessageBody: 'later', DelaySeconds: 60 },
        ],
      }),
    );
    await sqs.send(new ReceiveMessageCommand({ QueueUrl: url }));

    expect(await counts(url)).toEqual({
      ApproximateNumberOfMessages: '2',
      ApproximateNumberOfMessagesNotVisible: '1',
      ApproximateNumberOfMessagesDelayed: '1',
    });
  });

  it('returns standard attributes for All and the oldest-message age only when named', async () => {
    const { name, url } = await createQueue({ VisibilityTimeout: '7' });
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'old' }));

    const all = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['All'] }));
    expect(all.Attributes).toMatchObject({ QueueArn: emulator.queueArn(name), VisibilityTimeout: '7', MessageRetentionPeriod: '345600' });
    expect(Number(all.Attributes!.CreatedTimestamp)).toBeGreaterThan(1_600_000_000);
    expect(all.Attributes).not.toHaveProperty('ApproximateAgeOfOldestMessage');

    clockOffsetMs = 90_000;
    expect(emulator.oldestMessageAgeSeconds(name)).toBe(90);
    const named = await sqs.send(
      new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateAgeOfOldestMessage' as 'All'] }),
    );
    expect(named.Attributes).toEqual({ ApproximateAgeOfOldestMessage: '90' });
  });

  it('drops messages older than the retention period', async () => {
    const { name, url } = await createQueue();
    await sqs.send(new SendMessageCommand({ QueueUrl: url, MessageBody: 'stale' }));
    await sqs.send(new SetQueueAttributesCommand({ QueueUrl: url, Attributes: { MessageRetentionPeriod: '60' } }));

    clockOffsetMs = 61_000;
    expect((await counts(url)).ApproximateNumberOfMessages).toBe('0');
    expect(emulator.oldestMessageAgeSeconds(name)).toBe(0);
  });

  it('purges every message in a queue', async () => {
    const { url } = await createQueue();
    await sqs.send(
      new SendMessageBatchCommand({
        QueueUrl: url,
        Entries: [
          { Id: 'a', MessageBody: 'a' },
          { Id: 'b', MessageBody: 'b' },
        ],
      }),
    );
    await sqs.send(new ReceiveMessageCommand({ QueueUrl: url }));

    await sqs.send(new PurgeQueueCommand({ QueueUrl: url }));
    expect(await counts(url)).toEqual({
      ApproximateNumberOfMessages: '0',
      ApproximateNumberOfMessagesNotVisible: '0',
      ApproximateNumberOfMessagesDelayed: '0',
    });
  });
});

describe('persistence', () => {
  it('keeps queued messages across a restart and makes the ones a consumer held visible at once, receive count kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqs-emulator-restart-'));
    try {
      const first = await startSqsEmulator({ port: 0, dataDir: dir });
      const firstClient = clientFor(first);
      const { QueueUrl } = await firstClient.send(new CreateQueueCommand({ QueueName: 'durable' }));
      await firstClient.send(new SendMessageCommand({ QueueUrl, MessageBody: 'in flight' }));
      // Held far longer than the test runs: only the restart can bring it back.
      await firstClient.send(new ReceiveMessageCommand({ QueueUrl, VisibilityTimeout: 3600 }));
      await firstClient.send(new SendMessageCommand({ QueueUrl, MessageBody: 'queued' }));
      firstClient.destroy();
      await first.close();

      const saved = JSON.parse(readFileSync(join(dir, 'sqs.json'), 'utf8'));
      expect(saved).toMatchObject({ version: 1, queues: [{ name: 'durable' }] });

      const second = await startSqsEmulator({ port: 0, dataDir: dir });
      const secondClient = clientFor(second);
      try {
        const { QueueUrl: url } = await secondClient.send(new GetQueueUrlCommand({ QueueName: 'durable' }));
        const received = await secondClient.send(
          new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['ApproximateReceiveCount'] }),
        );
        expect(received.Messages?.map((message) => [message.Body, message.Attributes?.ApproximateReceiveCount])).toEqual([
          ['in flight', '2'],
          ['queued', '1'],
        ]);
      } finally {
        secondClient.destroy();
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('keeps a visibility a consumer set with ChangeMessageVisibility (a retry delay) across a restart', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqs-emulator-restart-delay-'));
    try {
      const first = await startSqsEmulator({ port: 0, dataDir: dir });
      const firstClient = clientFor(first);
      const { QueueUrl } = await firstClient.send(new CreateQueueCommand({ QueueName: 'retries' }));
      await firstClient.send(new SendMessageCommand({ QueueUrl, MessageBody: 'retry in an hour' }));
      const { Messages = [] } = await firstClient.send(new ReceiveMessageCommand({ QueueUrl, VisibilityTimeout: 60 }));
      await firstClient.send(
        new ChangeMessageVisibilityCommand({ QueueUrl, ReceiptHandle: Messages[0]!.ReceiptHandle, VisibilityTimeout: 3600 }),
      );
      firstClient.destroy();
      await first.close();

      const second = await startSqsEmulator({ port: 0, dataDir: dir });
      const secondClient = clientFor(second);
      try {
        const { QueueUrl: url } = await secondClient.send(new GetQueueUrlCommand({ QueueName: 'retries' }));
        const received = await secondClient.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10 }));
        expect(received.Messages).toBeUndefined();
        const { Attributes } = await secondClient.send(
          new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['ApproximateNumberOfMessagesNotVisible'] }),
        );
        expect(Attributes?.ApproximateNumberOfMessagesNotVisible).toBe('1');
      } finally {
        secondClient.destroy();
        await second.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('persistence without a clean close', () => {
  it('has every answered change on disk before the answer, and drops a record cut short by a kill', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'sqs-emulator-journal-'));
    const first = await startSqsEmulator({ port: 0, dataDir: dir });
    const firstClient = clientFor(first);
    try {
      const { QueueUrl } = await firstClient.send(new CreateQueueCommand({ QueueName: 'journaled' }));
      await firstClient.send(new SendMessageCommand({ QueueUrl, MessageBody: 'received' }));
      await firstClient.send(new ReceiveMessageCommand({ QueueUrl, VisibilityTimeout: 3600 }));
      await firstClient.send(new SendMessageCommand({ QueueUrl, MessageBody: 'deleted' }));
      const { Messages = [] } = await firstClient.send(new ReceiveMessageCommand({ QueueUrl, VisibilityTimeout: 60 }));
      await firstClient.send(new DeleteMessageCommand({ QueueUrl, ReceiptHandle: Messages[0]!.ReceiptHandle }));
      await firstClient.send(new SendMessageCommand({ QueueUrl, MessageBody: 'queued' }));
      // As if the process died mid-write: half a record, never answered.
      appendFileSync(join(dir, 'sqs.log'), '{"op":"put","queue":"journaled","mess');

      // The first emulator is never closed: the second one sees only what the first had answered,
      // and the message the first one's consumer held is back at once.
      const second = await startSqsEmulator({ port: 0, dataDir: dir });
      const secondClient = clientFor(second);
      try {
        const { QueueUrl: url } = await secondClient.send(new GetQueueUrlCommand({ QueueName: 'journaled' }));
        const received = await secondClient.send(
          new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, MessageSystemAttributeNames: ['ApproximateReceiveCount'] }),
        );
        expect(received.Messages?.map((message) => [message.Body, message.Attributes?.ApproximateReceiveCount])).toEqual([
          ['received', '2'],
          ['queued', '1'],
        ]);
      } finally {
        secondClient.destroy();
        await second.close();
      }
    } finally {
      firstClient.destroy();
      await first.close().catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('malformed requests', () => {
  const post = (body: string, target = 'AmazonSQS.ListQueues') =>
    fetch(emulator.url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-amz-json-1.0', 'x-amz-target': target },
      body,
    });

  it('answers invalid JSON with a 400 error in AWS JSON shape', async () => {
    const response = await post('{"QueueName": ');
    expect(response.status).toBe(400);
    expect(response.headers.get('content-type')).toBe('application/x-amz-json-1.0');
    expect(await response.json()).toEqual({ __type: 'com.amazonaws.sqs#SerializationException', message: expect.any(String) });
  });

  it('answers a non-object body and wrongly typed fields with 400', async () => {
    expect((await post('[1, 2]')).status).toBe(400);

    const { url } = await createQueue();
    const response = await post(JSON.stringify({ QueueUrl: url, MaxNumberOfMessages: 'ten' }), 'AmazonSQS.ReceiveMessage');
    expect(response.status).toBe(400);
    expect(((await response.json()) as { __type: string }).__type).toBe('com.amazonaws.sqs#InvalidParameterValue');

    const outOfRange = await post(JSON.stringify({ QueueUrl: url, MaxNumberOfMessages: 11 }), 'AmazonSQS.ReceiveMessage');
    expect(outOfRange.status).toBe(400);
  });

  it('answers an unknown action with UnsupportedOperation', async () => {
    const response = await post('{}', 'AmazonSQS.TeleportMessage');
    expect(response.status).toBe(400);
    expect(response.headers.get('x-amzn-query-error')).toBe('AWS.SimpleQueueService.UnsupportedOperation;Sender');
    expect(((await response.json()) as { __type: string }).__type).toBe('com.amazonaws.sqs#UnsupportedOperation');
  });

  it('answers a malformed queue URL with InvalidAddress', async () => {
    const response = await post(JSON.stringify({ QueueUrl: 'not a url' }), 'AmazonSQS.PurgeQueue');
    expect(response.status).toBe(404);
    expect(((await response.json()) as { __type: string }).__type).toBe('com.amazonaws.sqs#InvalidAddress');
  });

  it('answers a request without X-Amz-Target with 400', async () => {
    const response = await fetch(emulator.url, { method: 'POST', body: 'Action=ListQueues' });
    expect(response.status).toBe(400);
  });
});
