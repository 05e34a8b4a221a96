import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateQueueCommand,
  DeleteQueueCommand,
  GetQueueAttributesCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import type { QueueSpec } from '../../lib/manifest';
import { startQueuePollers } from '../../local/queue-pollers';
import { type SqsEmulator, startSqsEmulator } from '../../local/sqs';
import { sleep, waitFor } from '../support/wait-for';

describe('the local queue pollers', () => {
  let emulator: SqsEmulator;
  let sqs: SQSClient;
  let dataDir: string;
  let queueUrl: string;
  let dlqUrl: string;

  beforeAll(async () => {
    dataDir = mkdtempSync(join(tmpdir(), 'pollers-'));
    emulator = await startSqsEmulator({ dataDir });
    sqs = new SQSClient({ region: 'us-east-1', endpoint: emulator.url, credentials: { accessKeyId: 'x', secretAccessKey: 'x' } });
    dlqUrl = (await sqs.send(new CreateQueueCommand({ QueueName: 'work-dlq' }))).QueueUrl as string;
    queueUrl = (
      await sqs.send(
        new CreateQueueCommand({
          QueueName: 'work',
          Attributes: {
            VisibilityTimeout: '1',
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: emulator.queueArn('work-dlq'), maxReceiveCount: 2 }),
          },
        }),
      )
    ).QueueUrl as string;
  });

  afterAll(async () => {
    sqs.destroy();
    await emulator.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const specs: Record<string, QueueSpec> = {
    work: {
      purpose: 'test',
      visibilityTimeoutSeconds: 1,
      maxReceiveCount: 2,
      retentionDays: 1,
      consumer: { function: 'consumer', batchSize: 10 },
    },
  };

  it('delivers real SQS events, deletes successes and moves a message that keeps failing to the DLQ', async () => {
    const seen: SQSEvent[] = [];
    const pollers = startQueuePollers({
      sqs,
      queueUrls: { work: queueUrl },
      specs,
      onError: () => undefined,
      invoke: async (name, event): Promise<SQSBatchResponse> => {
        expect(name).toBe('consumer');
        seen.push(event);
        return { batchItemFailures: event.Records.filter((r) => r.body === 'poison').map((r) => ({ itemIdentifier: r.messageId })) };
      },
    });
    try {
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'good' }));
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'poison' }));

      // Two failed receives (maxReceiveCount 2), then the queue's redrive policy moves it.
      const deadline = Date.now() + 10_000;
      let dead: string | undefined;
      while (Date.now() < deadline && !dead) {
        const { Messages } = await sqs.send(new ReceiveMessageCommand({ QueueUrl: dlqUrl, WaitTimeSeconds: 1 }));
        dead = Messages?.[0]?.Body;
      }
      expect(dead).toBe('poison');

      const records = seen.flatMap((e) => e.Records);
      expect(records.filter((r) => r.body === 'good')).toHaveLength(1);
      expect(records.filter((r) => r.body === 'poison').map((r) => r.attributes.ApproximateReceiveCount)).toEqual(['1', '2']);
      expect(records[0]).toMatchObject({ eventSource: 'aws:sqs', awsRegion: 'us-east-1' });
      expect(records[0].eventSourceARN).toMatch(/:work$/);

      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: queueUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      expect(Attributes).toMatchObject({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' });
    } finally {
      await pollers.stop();
    }
  });

  it('gathers batches above 10 messages as the batching window does, and deletes every handled one', async () => {
    const sizes: number[] = [];
    const big: Record<string, QueueSpec> = {
      work: { ...specs.work, consumer: { function: 'consumer', batchSize: 25, maxBatchingWindowSeconds: 1 } },
    };
    for (let i = 0; i < 30; i++) await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: `m${i}` }));
    const pollers = startQueuePollers({
      sqs,
      queueUrls: { work: queueUrl },
      specs: big,
      onError: () => undefined,
      invoke: async (_name, event): Promise<SQSBatchResponse> => {
        sizes.push(event.Records.length);
        return { batchItemFailures: [] };
      },
    });
    try {
      await pollers.drain();
    } finally {
      await pollers.stop();
    }
    expect(sizes.reduce((a, b) => a + b, 0)).toBe(30);
    expect(Math.max(...sizes)).toBe(25);
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    expect(Attributes).toMatchObject({ ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' });
  });

  it('drains idle queues without waiting out the long poll, and still waits for a batch in its handler', async () => {
    const handled: string[] = [];
    let release: (() => void) | undefined;
    const pollers = startQueuePollers({
      sqs,
      queueUrls: { work: queueUrl },
      specs,
      onError: () => undefined,
      invoke: async (_name, event): Promise<SQSBatchResponse> => {
        await new Promise<void>((resolve) => (release = resolve));
        handled.push(...event.Records.map((r) => r.body));
        return { batchItemFailures: [] };
      },
    });
    try {
      await pollers.drain();
      // A poll started after the call would take the whole long poll (1 s): the empty queue is proof enough.
      const started = Date.now();
      await pollers.drain();
      expect(Date.now() - started).toBeLessThan(900);

      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'late' }));
      await waitFor(() => release !== undefined, { timeoutMs: 10_000, what: 'the handler to take the batch' });
      let drained = false;
      const draining = pollers.drain().then(() => (drained = true));
      // Longer than a long poll: a fixed wait, to show that drain does not return while the batch is in its handler.
      await sleep(1_500);
      expect(drained).toBe(false);
      release?.();
      await draining;
      expect(handled).toEqual(['late']);
    } finally {
      await pollers.stop();
    }
  });

  describe('when stopped', () => {
    // A visibility timeout longer than the test: a held message stays held.
    const held: Record<string, QueueSpec> = { slow: { ...specs.work, visibilityTimeoutSeconds: 60 } };
    let slowUrl: string;
    const counts = async () => {
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: slowUrl,
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
        }),
      );
      return { visible: Number(Attributes?.ApproximateNumberOfMessages), held: Number(Attributes?.ApproximateNumberOfMessagesNotVisible) };
    };
    beforeEach(async () => {
      slowUrl = (await sqs.send(new CreateQueueCommand({ QueueName: `slow-${Date.now()}`, Attributes: { VisibilityTimeout: '60' } })))
        .QueueUrl as string;
    });
    afterEach(async () => {
      await sqs.send(new DeleteQueueCommand({ QueueUrl: slowUrl }));
    });

    it('abandons a batch still in its handler after the grace, leaving its messages held to come back', async () => {
      let calls = 0;
      const pollers = startQueuePollers({
        sqs,
        queueUrls: { slow: slowUrl },
        specs: held,
        onError: () => undefined,
        // A handler that never returns.
        invoke: () => {
          calls += 1;
          return new Promise(() => undefined);
        },
      });
      await sqs.send(new SendMessageCommand({ QueueUrl: slowUrl, MessageBody: 'stuck' }));
      await waitFor(() => calls >= 1, { timeoutMs: 10_000, intervalMs: 20, what: 'the handler call' });
      const stopping = Date.now();
      await pollers.stop(200);
      expect(Date.now() - stopping).toBeLessThan(1_000);
      expect(calls).toBe(1);
      expect(await counts()).toEqual({ visible: 0, held: 1 });
    });

    it('lets a batch that finishes within the grace be deleted', async () => {
      const pollers = startQueuePollers({
        sqs,
        queueUrls: { slow: slowUrl },
        specs: held,
        onError: () => undefined,
        // A handler that takes 300 ms, timed: it must still run when the stop begins, and end within the grace.
        invoke: () => sleep(300).then(() => ({ batchItemFailures: [] })),
      });
      await sqs.send(new SendMessageCommand({ QueueUrl: slowUrl, MessageBody: 'quick' }));
      await waitFor(async () => (await counts()).held >= 1, { timeoutMs: 10_000, intervalMs: 20, what: 'the message held' });
      await pollers.stop(5_000);
      expect(await counts()).toEqual({ visible: 0, held: 0 });
    });
  });

  it('leaves the whole batch on the queue when the consumer throws', async () => {
    let calls = 0;
    const pollers = startQueuePollers({
      sqs,
      queueUrls: { work: queueUrl },
      specs,
      onError: () => undefined,
      invoke: async () => {
        calls += 1;
        throw new Error('consumer crashed');
      },
    });
    try {
      await sqs.send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: 'retry-me' }));
      const deadline = Date.now() + 5_000;
      while (Date.now() < deadline && calls < 1) await new Promise((r) => setTimeout(r, 50));
      expect(calls).toBeGreaterThanOrEqual(1);
    } finally {
      await pollers.stop();
    }
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl: queueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    expect(Number(Attributes?.ApproximateNumberOfMessages) + Number(Attributes?.ApproximateNumberOfMessagesNotVisible)).toBe(1);
  });
});
