import { ChangeMessageVisibilityCommand, DeleteMessageCommand, ReceiveMessageCommand, SendMessageCommand } from '@aws-sdk/client-sqs';
import type { PrivacyRequestQueue, QueuedRequest } from '../domain/privacy/drain';
import type { PrivacyMessage } from '../domain/privacy/privacy';
import { sqsClient } from '../shared/clients/sqs';

/**
 * The privacy queue as the drain consumes it. A message that is not a version-1 request is
 * left where it is: after maxReceiveCount receives SQS moves it to the DLQ, whose alarm fires.
 */
export class PrivacyQueue implements PrivacyRequestQueue {
  constructor(
    private readonly queueUrl: string,
    private readonly onUnreadable: (body: string | undefined) => void = () => undefined,
  ) {}

  async receive(max: number): Promise<QueuedRequest[]> {
    const requests: QueuedRequest[] = [];
    for (;;) {
      const want = Math.min(10, max - requests.length);
      const { Messages = [] } = await sqsClient().send(
        new ReceiveMessageCommand({ QueueUrl: this.queueUrl, MaxNumberOfMessages: want, WaitTimeSeconds: requests.length === 0 ? 1 : 0 }),
      );
      for (const message of Messages) {
        const request = parse(message.Body);
        if (request && message.ReceiptHandle) requests.push({ message: request, handle: message.ReceiptHandle });
        else this.onUnreadable(message.Body);
      }
      if (Messages.length < want || requests.length >= max) return requests;
    }
  }

  async remove(request: QueuedRequest): Promise<void> {
    await sqsClient().send(new DeleteMessageCommand({ QueueUrl: this.queueUrl, ReceiptHandle: request.handle }));
  }

  /** Sent again (its receive count starts afresh: a large install is not a poison message), then removed. */
  async carry(request: QueuedRequest): Promise<void> {
    await sqsClient().send(new SendMessageCommand({ QueueUrl: this.queueUrl, MessageBody: JSON.stringify(request.message) }));
    await this.remove(request);
  }

  async release(request: QueuedRequest): Promise<void> {
    await sqsClient().send(
      new ChangeMessageVisibilityCommand({ QueueUrl: this.queueUrl, ReceiptHandle: request.handle, VisibilityTimeout: 0 }),
    );
  }
}

function parse(body: string | undefined): PrivacyMessage | undefined {
  try {
    const message = JSON.parse(body ?? '') as Partial<PrivacyMessage>;
    const ok =
      message.version === 1 &&
      [message.request_id, message.app_id, message.company_id, message.install_uuid].every((v) => typeof v === 'string');
    return ok ? (message as PrivacyMessage) : undefined;
  } catch {
    return undefined;
  }
}
