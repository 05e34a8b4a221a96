/** A queue that takes one kind of message (functions/adapters/message-queue.ts): the aggregation hand-off, privacy requests. */
export interface MessageSink<T> {
  /** Puts the message on the queue. */
  send(message: T): Promise<void>;
}
