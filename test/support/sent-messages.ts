import { MessageQueue } from '../../functions/adapters/message-queue';
import type { AggregationMessage } from '../../functions/domain/audit/types';

/** A message a handler sent, with the name of the queue it went to. */
export interface SentMessage {
  readonly queue: string;
  readonly message: AggregationMessage;
}

/**
 * Records every message the handlers send through MessageQueue (they are still sent), so a test
 * can tell which queue a batch went to, or deliver one again. `jest.restoreAllMocks()` ends it.
 */
export function recordSentMessages(): SentMessage[] {
  const sent: SentMessage[] = [];
  const send = MessageQueue.prototype.send;
  jest.spyOn(MessageQueue.prototype, 'send').mockImplementation(async function (this: MessageQueue<unknown>, message: unknown) {
    const url = (this as unknown as { queueUrl: string }).queueUrl;
    sent.push({ queue: url.split('/').pop() ?? url, message: message as AggregationMessage });
    return send.call(this, message);
  });
  return sent;
}
