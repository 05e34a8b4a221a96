import { billedRequests, type MeteredRequest } from '../../../bench/write-units';

const sqs = (operation: string, units = 1, messages = 0): MeteredRequest => ({
  writer: 'aggregator',
  service: 'sqs',
  operation,
  units,
  bytes: 0,
  messages,
});

describe("the bench's billed SQS requests", () => {
  it('count the traffic’s sends, receives and deletes, not an empty receive or the local drain’s GetQueueAttributes', () => {
    const requests = [
      sqs('SendMessage', 2),
      sqs('ReceiveMessage', 1, 3),
      sqs('DeleteMessageBatch'),
      sqs('ReceiveMessage', 1, 0),
      sqs('GetQueueAttributes'),
      sqs('GetQueueAttributes'),
    ];
    expect(billedRequests(requests).sqs).toBe(4);
  });
});
