import { ChangeMessageVisibilityCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { MessageSink } from '../domain/common/message-sink';
import { sqsClient } from '../shared/clients/sqs';

/** A queue that carries one kind of JSON message (the aggregation hand-off, privacy requests). */
export class MessageQueue<T> implements MessageSink<T> {
  constructor(private readonly queueUrl: string) {}

  /** `delaySeconds` (0..900, SQS's DelaySeconds) keeps the message from consumers that long. */
  async send(message: T, delaySeconds?: number): Promise<void> {
    await sqsClient().send(
      new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify(message), DelaySeconds: delaySeconds }),
    );
  }
}

/**
 * Leaves a received message invisible for `seconds` (SQS ends no visibility more than 12 h after
 * the receive, and counts the message in flight meanwhile, at most 120,000 a queue: keep it short):
 * reported as a batch item failure afterwards, it comes back once that time is up rather than
 * after the queue's visibility timeout (the rest of an aggregation lease, a dead postback at once).
 */
export async function delayMessage(queueUrl: string, receiptHandle: string, seconds: number): Promise<void> {
  await sqsClient().send(
    new ChangeMessageVisibilityCommand({
      QueueUrl: queueUrl,
      ReceiptHandle: receiptHandle,
      VisibilityTimeout: Math.min(43_200, Math.max(0, seconds)),
    }),
  );
}
