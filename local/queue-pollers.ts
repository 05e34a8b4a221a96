import { DeleteMessageBatchCommand, ReceiveMessageCommand, type Message, type SQSClient } from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { functions, queues, type QueueSpec } from '../lib/manifest';
import { invoke as invokeFunction } from './lambda';

/**
 * Plays Lambda's SQS event source mapping: long-polls each queue that has a consumer, calls the
 * consumer with a real SQSEvent, deletes what succeeded and leaves the batchItemFailures (or the
 * whole batch, if the handler throws) to come back after the visibility timeout. Moving a message
 * to its DLQ after maxReceiveCount is the queue's own redrive policy, as in AWS.
 */
export interface Pollers {
  stop(): Promise<void>;
  /** Resolves once every queue has been polled empty and no batch is in a handler. */
  drain(): Promise<void>;
}

export interface PollerOptions {
  sqs: SQSClient;
  queueUrls: Record<string, string>;
  onError: (error: unknown) => void;
  /** Defaults to the manifest's queues; tests pass their own. */
  specs?: Record<string, QueueSpec>;
  /** Defaults to running the manifest's functions; tests pass their own consumer. */
  invoke?: (functionName: string, event: SQSEvent) => Promise<unknown>;
}

export function startQueuePollers(options: PollerOptions): Pollers {
  const { sqs, queueUrls, onError } = options;
  const specs = options.specs ?? (queues as Record<string, QueueSpec>);
  const invoke = options.invoke ?? ((name: string, event: SQSEvent) => invokeFunction(name, event));
  let running = true;
  /**
   * Per queue, the drain generation of the last poll that came back empty. Only a poll that
   * started after drain() was called proves the queue empty: one already waiting when the last
   * message was sent may still come back empty.
   */
  let generation = 0;
  const idle = new Map<string, number>();
  const loops: Promise<void>[] = [];

  for (const [name, spec] of Object.entries(specs)) {
    // A queue whose consumer is not built yet keeps its messages until it is, as in AWS.
    if (!spec.consumer || (!options.specs && !(spec.consumer.function in functions))) continue;
    const consumer = spec.consumer;
    const url = queueUrls[name];
    idle.set(name, -1);
    loops.push(
      (async () => {
        while (running) {
          const started = generation;
          try {
            const Messages = await receiveBatch(sqs, url, consumer.batchSize);
            if (Messages.length === 0) {
              idle.set(name, started);
              continue;
            }
            await deliver(sqs, invoke, name, url, consumer.function, Messages);
          } catch (error) {
            onError(error);
            if (running) await new Promise((resolve) => setTimeout(resolve, 1000));
          }
        }
      })(),
    );
  }

  return {
    stop: async () => {
      running = false;
      await Promise.all(loops);
    },
    drain: async () => {
      const awaited = ++generation;
      while (running && [...idle.values()].some((emptyAt) => emptyAt < awaited)) await new Promise((resolve) => setTimeout(resolve, 50));
    },
  };
}

/**
 * Up to batchSize messages, as the event source mapping gathers them: SQS hands out at most 10 a
 * call, so a bigger batch takes more calls, for as long as full ones keep coming.
 */
async function receiveBatch(sqs: SQSClient, url: string, batchSize: number): Promise<Message[]> {
  const messages: Message[] = [];
  for (;;) {
    const want = Math.min(batchSize - messages.length, 10);
    const { Messages = [] } = await sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: url,
        MaxNumberOfMessages: want,
        WaitTimeSeconds: messages.length === 0 ? 1 : 0,
        MessageSystemAttributeNames: ['All'],
        MessageAttributeNames: ['All'],
      }),
    );
    messages.push(...Messages);
    if (Messages.length < want || messages.length >= batchSize) return messages;
  }
}

async function deliver(
  sqs: SQSClient,
  invoke: (functionName: string, event: SQSEvent) => Promise<unknown>,
  queueName: string,
  url: string,
  functionName: string,
  messages: Message[],
) {
  const event: SQSEvent = { Records: messages.map((m) => toRecord(queueName, m)) };
  let failed: Set<string>;
  try {
    const response = (await invoke(functionName, event)) as SQSBatchResponse | undefined;
    failed = new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
  } catch {
    failed = new Set(messages.map((m) => m.MessageId as string));
  }
  const done = messages.filter((m) => !failed.has(m.MessageId as string));
  // SQS deletes at most 10 messages a call; a batch can hold more (the batching window).
  for (let start = 0; start < done.length; start += 10) {
    const { Failed = [] } = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: done.slice(start, start + 10).map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
    if (Failed.length > 0) throw new Error(`could not delete ${Failed.length} handled message(s) from ${queueName}: ${Failed[0].Code}`);
  }
}

function toRecord(queueName: string, message: Message): SQSRecord {
  const attributes = message.Attributes ?? {};
  return {
    messageId: message.MessageId as string,
    receiptHandle: message.ReceiptHandle as string,
    body: message.Body ?? '',
    attributes: {
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? String(Date.now()),
      SenderId: attributes.SenderId ?? 'local',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? String(Date.now()),
    },
    messageAttributes: Object.fromEntries(
      Object.entries(message.MessageAttributes ?? {}).map(([k, v]) => [
        k,
        { stringValue: v.StringValue, dataType: v.DataType ?? 'String', stringListValues: [], binaryListValues: [] },
      ]),
    ),
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:${queueName}`,
    awsRegion: 'us-east-1',
  };
}
