import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import { sqsClient } from '../shared/clients';

/** A queue that carries one kind of JSON message (the aggregation hand-off, privacy requests). */
export class MessageQueue<T> {
  constructor(
    private readonly queueUrl: string,
    /** Tests pass their own; otherwise the shared client, resolved per call (see shared/clients.ts). */
    private readonly ownSQSClient?: SQSClient,
  ) {}

  private get sqs(): SQSClient {
    return this.ownSQSClient ?? sqsClient();
  }

  async send(message: T): Promise<void> {
    await this.sqs.send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify(message) }));
  }
}
