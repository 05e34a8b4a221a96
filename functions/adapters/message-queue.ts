import { SendMessageCommand } from '@aws-sdk/client-sqs';
import { sqsClient } from '../shared/clients/sqs';

/** A queue that carries one kind of JSON message (the aggregation hand-off, privacy requests). */
export class MessageQueue<T> {
  constructor(
    private readonly queueUrl: string,
  ) {}

  async send(message: T): Promise<void> {
    await sqsClient().send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify(message) }));
  }
}
