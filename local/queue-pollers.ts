import {
  ChangeMessageVisibilityBatchCommand,
  DeleteMessageBatchCommand,
  GetQueueAttributesCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { functions, type QueueSpec, queues } from '../lib/manifest';
import { invoke as invokeFunction } from './lambda';

/**
 * Plays Lambda's SQS event source mapping: long-polls each queue that has a consumer, calls the
 * consumer with a real SQSEvent, deletes what succeeded and leaves the batchItemFailures (or the
 * whole batch, if the handler throws) to come back after the visibility timeout. Moving a message
 * to its DLQ after maxReceiveCount is the queue's own redrive policy, as in AWS.
 */
export interface Pollers {
  /**
   * Stops receiving at once (a batch being gathered goes back to its queue, visible, unseen by any
   * handler) and gives the batches in a handler up to graceMs to finish, their successes deleted.
   * A batch still in its handler then is abandoned: its messages stay held, to come back as a
   * crashed invocation's do, and nothing more is done for it (local/invocations.ts stops the
   * handler itself).
   */
  stop(graceMs?: number): Promise<void>;
  /**
   * Resolves once every queue has been polled empty and no batch is in a handler; or sooner, once
   * every queue is seen holding no message while every poller waits in its receive.
   */
  drain(): Promise<void>;
}

/**
 * At most this many invocations of one queue's consumer at once in the local runtime. They share
 * one Node process with the emulators and every HTTP function: a second aggregator invocation
 * drains a backlog faster (4.8 s against 9.7 s after the bench's 10 s load) but takes the event
 * loop from ingestion (2,064 against 2,928 events/s) and halves the invocations' batches, so each
 * report row is written twice as often as an event source mapping under load would. One keeps the
 * local figures closest to AWS's.
 */
export const LOCAL_CONCURRENCY = 1;

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
  let abandon!: () => void;
  const abandoned = new Promise<typeof ABANDONED>((resolve) => (abandon = () => resolve(ABANDONED)));
  /**
   * Per poller (a queue's loop), the drain generation of the last poll that came back empty. Only a poll that
   * started after drain() was called proves the queue empty: one already waiting when the last
   * message was sent may still come back empty.
   */
  let generation = 0;
  const idle = new Map<string, number>();
  /** The pollers in a receive, with their queue and when it began, and how many receives brought messages (drain's quick proof). */
  const receiving = new Map<string, { url: string; sinceMs: number }>();
  let receivedBatches = 0;
  const polledUrls: string[] = [];
  const loops: Promise<void>[] = [];

  for (const [name, spec] of Object.entries(specs)) {
    // A queue whose consumer is not built yet keeps its messages until it is, as in AWS.
    if (!spec.consumer || (!options.specs && !(spec.consumer.function in functions))) continue;
    const consumer = spec.consumer;
    const url = queueUrls[name];
    if (url === undefined) throw new Error(`no URL for queue ${name}: it was not provisioned`);
    polledUrls.push(url);
    // As many loops as the event source mapping runs invocations at once, up to LOCAL_CONCURRENCY:
    // each receives and invokes on its own, as Lambda's pollers do.
    for (let loop = 0; loop < Math.min(consumer.maxConcurrency ?? 1, LOCAL_CONCURRENCY); loop++) {
      const poller = `${name}#${loop}`;
      idle.set(poller, -1);
      loops.push(
        (async () => {
          while (running) {
            const started = generation;
            try {
              receiving.set(poller, { url, sinceMs: Date.now() });
              const messages = await receiveBatch(sqs, url, consumer.batchSize, () => running).finally(() => receiving.delete(poller));
              if (messages.length > 0) receivedBatches++;
              if (!running) {
                await giveBack(sqs, url, messages);
                break;
              }
              if (messages.length === 0) {
                idle.set(poller, started);
                continue;
              }
              const failed = await Promise.race([handle(invoke, name, consumer.function, messages), abandoned]);
              if (failed === ABANDONED) break;
              await deleteHandled(sqs, name, url, messages, failed);
            } catch (error) {
              onError(error);
              if (running) await new Promise((resolve) => setTimeout(resolve, 1000));
            }
          }
        })(),
      );
    }
  }

  return {
    stop: async (graceMs = 1000) => {
      running = false;
      const stopped = Promise.all(loops);
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([stopped, new Promise((resolve) => (timer = setTimeout(resolve, graceMs)))]);
      clearTimeout(timer);
      // A loop in a handler leaves now; one receiving, deleting or giving back finishes that call.
      abandon();
      await stopped;
    },
    drain: async () => {
      const awaited = ++generation;
      const polledEmpty = () => [...idle.values()].every((emptyAt) => emptyAt >= awaited);
      while (running && !polledEmpty() && !(await quiet())) await new Promise((resolve) => setTimeout(resolve, 50));
    },
  };

  /**
   * What a poll started now would prove, without waiting out the long poll a poller is in (a
   * second, so up to two a drain, which the tests call hundreds of times): at one moment every
   * poller is in a receive, no receive brought messages, and no polled queue holds a message,
   * visible or in flight. A queue holding one (a batch in a handler, a retry waiting out its
   * visibility timeout) leaves drain to the polls; so does an emulator that does not answer, and
   * a queue whose attributes changed since its receive began (tests shorten a visibility timeout,
   * then drain so that the next receive takes it: the one waiting keeps the old one).
   */
  async function quiet(): Promise<boolean> {
    const before = receivedBatches;
    const allReceiving = () => receiving.size === idle.size && receivedBatches === before;
    if (!allReceiving()) return false;
    try {
      const states = await Promise.all(
        polledUrls.map(async (url) => {
          const { Attributes = {} } = await sqs.send(
            new GetQueueAttributesCommand({
              QueueUrl: url,
              AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'LastModifiedTimestamp'],
            }),
          );
          // The timestamp is in whole seconds: a receive begun in the same second may predate the change.
          const changedBeforeMs = (Number(Attributes.LastModifiedTimestamp) + 1) * 1000;
          const receivesAfterChange = [...receiving.values()].every((r) => r.url !== url || r.sinceMs >= changedBeforeMs);
          return (
            Attributes.ApproximateNumberOfMessages === '0' &&
            Attributes.ApproximateNumberOfMessagesNotVisible === '0' &&
            receivesAfterChange
          );
        }),
      );
      return states.every(Boolean) && allReceiving();
    } catch {
      return false;
    }
  }
}

const ABANDONED = Symbol('abandoned');

/**
 * Up to batchSize messages, as the event source mapping gathers them: SQS hands out at most 10 a
 * call, so a bigger batch takes more calls, for as long as full ones keep coming (and `more` says so).
 */
async function receiveBatch(sqs: SQSClient, url: string, batchSize: number, more: () => boolean): Promise<Message[]> {
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
    if (Messages.length < want || messages.length >= batchSize || !more()) return messages;
  }
}

/** Runs the consumer on the batch; resolves with the ids of the messages that must come back. */
async function handle(
  invoke: (functionName: string, event: SQSEvent) => Promise<unknown>,
  queueName: string,
  functionName: string,
  messages: Message[],
): Promise<Set<string>> {
  const event: SQSEvent = { Records: messages.map((m) => toRecord(queueName, m)) };
  try {
    const response = (await invoke(functionName, event)) as SQSBatchResponse | undefined;
    return new Set((response?.batchItemFailures ?? []).map((f) => f.itemIdentifier));
  } catch {
    return new Set(messages.map((m) => m.MessageId as string));
  }
}

async function deleteHandled(sqs: SQSClient, queueName: string, url: string, messages: Message[], failed: Set<string>) {
  const done = messages.filter((m) => !failed.has(m.MessageId as string));
  // SQS deletes at most 10 messages a call; a batch can hold more (the batching window).
  for (let start = 0; start < done.length; start += 10) {
    const { Failed = [] } = await sqs.send(
      new DeleteMessageBatchCommand({
        QueueUrl: url,
        Entries: done.slice(start, start + 10).map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle })),
      }),
    );
    const [first] = Failed;
    if (first) throw new Error(`could not delete ${Failed.length} handled message(s) from ${queueName}: ${first.Code}`);
  }
}

/** Makes messages received while stopping visible again at once, as if never received. */
async function giveBack(sqs: SQSClient, url: string, messages: Message[]) {
  for (let start = 0; start < messages.length; start += 10) {
    await sqs.send(
      new ChangeMessageVisibilityBatchCommand({
        QueueUrl: url,
        Entries: messages.slice(start, start + 10).map((m, i) => ({ Id: String(i), ReceiptHandle: m.ReceiptHandle, VisibilityTimeout: 0 })),
      }),
    );
  }
}

/** A received message as Lambda hands it to the consumer. */
export function toRecord(queueName: string, message: Message): SQSRecord {
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
