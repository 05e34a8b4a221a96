import { DeleteCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { MessageSink } from '../domain/common/message-sink';
import type { DeletionCounts, DrainReceipts } from '../domain/privacy/drain';
import type { PrivacyMessage, PrivacyReceipt } from '../domain/privacy/privacy';
import type { PrivacyRequestSink } from '../domain/privacy/request';
import { dynamoClient } from '../shared/clients/dynamo';
import { queryAll } from './query-pages';

/**
 * Taking a deletion request: the receipt in privacy_requests, then the message on the privacy
 * queue. A receipt must not claim "queued" for a request that never reached the queue, so when
 * the send fails the receipt is taken back and the caller answers 503 (the client retries).
 */
export class PrivacyRequests implements PrivacyRequestSink {
  constructor(
    private readonly receiptsTable: string,
    private readonly queue: MessageSink<PrivacyMessage>,
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

/** The receipts as the drain and `admin privacy show` use them. */
export class PrivacyReceipts implements DrainReceipts {
  constructor(private readonly receiptsTable: string) {}

  /**
   * The drain's progress on a receipt: the state, when it started and finished, and what it has
   * deleted so far (added up over the runs a large install needs).
   */
  async record(requestId: string, update: { state: 'in_progress' | 'done'; counts: DeletionCounts; nowMs: number }): Promise<void> {
    const counters = Object.entries(update.counts);
    await dynamoClient().send(
      new UpdateCommand({
        TableName: this.receiptsTable,
        Key: { request_id: requestId },
        UpdateExpression:
          `SET #state = :state, updated_ms = :now, started_ms = if_not_exists(started_ms, :now)` +
          (update.state === 'done' ? ', finished_ms = :now' : '') +
          ` ADD ${counters.map((_, i) => `#c${i} :c${i}`).join(', ')}`,
        ConditionExpression: 'attribute_exists(request_id)',
        ExpressionAttributeNames: { '#state': 'state', ...Object.fromEntries(counters.map(([name], i) => [`#c${i}`, `deleted_${name}`])) },
        ExpressionAttributeValues: {
          ':state': update.state,
          ':now': update.nowMs,
          ...Object.fromEntries(counters.map(([, value], i) => [`:c${i}`, value])),
        },
      }),
    );
  }

  /** An install's receipts, oldest first (`admin privacy show`). */
  async ofInstall(appId: string, installHash: string): Promise<Record<string, unknown>[]> {
    return queryAll({
      TableName: this.receiptsTable,
      IndexName: 'by_install',
      KeyConditionExpression: 'app_install = :key',
      ExpressionAttributeValues: { ':key': `${appId}#${installHash}` },
    });
  }
}
