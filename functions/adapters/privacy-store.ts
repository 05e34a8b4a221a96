import { DeleteCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamoClient } from '../shared/clients';
import type { PrivacyMessage, PrivacyReceipt } from '../domain/privacy/privacy';
import { MessageQueue } from './message-queue';

/**
 * Taking a deletion request: the receipt in privacy_requests, then the message on the privacy
 * queue. A receipt must not claim "queued" for a request that never reached the queue, so when
 * the send fails the receipt is taken back and the caller answers 503 (the client retries).
 */
export class PrivacyRequests {
  constructor(
    private readonly receiptsTable: string,
    private readonly queue: MessageQueue<PrivacyMessage>,
  ) {}

  async submit(receipt: PrivacyReceipt, message: PrivacyMessage): Promise<void> {
    await dynamoClient().send(
      new PutCommand({ TableName: this.receiptsTable, Item: receipt, ConditionExpression: 'attribute_not_exists(request_id)' }),
    );
    try {
      await this.queue.send(message);
    } catch (error) {
      await dynamoClient()
        .send(new DeleteCommand({ TableName: this.receiptsTable, Key: { request_id: receipt.request_id } }))
        .catch(() => undefined);
      throw error;
    }
  }
}
