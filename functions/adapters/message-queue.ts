import { ChangeMessageVisibilityCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { MessageSink } from '../domain/common/message-sink';
import { sqsClient } from '../shared/clients/sqs';

/** A queue that carries one kind of JSON message (the aggregation hand-off, privacy requests). */
export class MessageQueue<T> implements MessageSink<T> {
  constructor(private readonly queueUrl: string) {}

  async send(message: T): Promise<void> {
    await sqsClient().send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify(message) }));
  }
}

/**
 * Leaves a received message invisible for `seconds` (at most 12 h, SQS's limit): reported as a
 * batch item failure afterwards, it comes back once that time is up rather than after the
 * queue's visibility timeout (a postback's retry delay, the rest of an aggregation lease).
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
