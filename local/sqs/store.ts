// The SQS emulator's state and actions: queues, messages, visibility timeouts, receive counts,
// redrive to a dead-letter queue on the (maxReceiveCount + 1)-th receive, long polling that
// answers as soon as a message is available, and retention. Every change is handed to the journal
// (when there is one) as it is made; the server answers only once the journal holds it.

import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import type { Journal, JournalRecord, PersistedQueue } from './journal';
import {
  AGE_OF_OLDEST_MESSAGE,
  batchEntries,
  COMPUTED_ATTRIBUTES,
  DEFAULT_ATTRIBUTES,
  decodeReceiptHandle,
  encodeReceiptHandle,
  FIFO_ATTRIBUTES,
  INVALID_MESSAGE_CHARACTER,
  type Json,
  MAX_BATCH_PAYLOAD_BYTES,
  MAX_DELAY_SECONDS,
  MAX_IN_FLIGHT_MESSAGES,
  MAX_VISIBILITY_TIMEOUT,
  MAX_WAIT_TIME_SECONDS,
  type MessageAttributeValue,
  md5Hex,
  md5OfAttributes,
  messageSize,
  optionalInteger,
  optionalString,
  optionalStringList,
  optionalStringMap,
  parseMessageAttributes,
  QUEUE_NAME_PATTERN,
  requiredString,
  SETTABLE_ATTRIBUTES,
  SQS_EMULATOR_ACCOUNT_ID,
  SqsError,
  SYSTEM_ATTRIBUTES,
} from './protocol';

export interface StoredMessage {
  messageId: string;
  body: string;
  md5OfBody: string;
  messageAttributes: Record<string, MessageAttributeValue>;
  awsTraceHeader?: string;
  /** When the producer sent it; retention and SentTimestamp count from here. */
  sentAt: number;
  /** When it entered this queue (differs from sentAt after a redrive). */
  enqueuedAt: number;
  /** Absolute time (ms) the message becomes receivable; absolute so it survives restarts. */
  visibleAt: number;
  receiveCount: number;
  firstReceiveAt?: number;
  /** When the latest receive happened: SQS ends no visibility more than 12 h after it. */
  receivedAt?: number;
  /** Handle of the latest receive; undefined until received (used to tell delayed from in flight). */
  receiptHandle?: string;
  /**
   * The consumer set the visibility itself (ChangeMessageVisibility, e.g. a retry's delay) since
   * the latest receive: a schedule, kept across a restart, rather than a hold, which is not.
   */
  visibilityChanged?: boolean;
  deadLetterSourceArn?: string;
}

export interface QueueState {
  name: string;
  createdAt: number;
  lastModifiedAt: number;
  attributes: Record<string, string>;
  /** Insertion-ordered, which gives the best-effort FIFO ordering standard queues have. */
  messages: Map<string, StoredMessage>;
  /** Long polls waiting on this queue; called whenever a message may have become available. */
  waiters: Set<() => void>;
  deleted: boolean;
}

interface RedrivePolicy {
  deadLetterTargetArn: string;
  maxReceiveCount: number;
}

export class SqsStore {
  readonly queues = new Map<string, QueueState>();
  /** The server's address, set once it listens: queue URLs carry it. */
  baseUrl = '';
  private closing = false;
  /** Set right after construction when state is kept on disk (the journal reads the store back). */
  journal: Journal | undefined;

  constructor(
    readonly region: string,
    private readonly now: () => number,
    /** Messages in flight per queue before ReceiveMessage answers OverLimit (SQS: 120,000). */
    private readonly inFlightLimit = MAX_IN_FLIGHT_MESSAGES,
  ) {}

  queueUrl(name: string): string {
    return `${this.baseUrl}/${SQS_EMULATOR_ACCOUNT_ID}/${name}`;
  }

  queueArn(name: string): string {
    return `arn:aws:sqs:${this.region}:${SQS_EMULATOR_ACCOUNT_ID}:${name}`;
  }

  oldestMessageAgeSeconds(name: string): number {
    const queue = this.queues.get(name);
    if (!queue) throw new Error(`Queue ${name} does not exist`);
    return this.oldestAge(queue, this.now());
  }

  /** Answers pending long polls (empty) and lets no new one wait. */
  close(): void {
    this.closing = true;
    for (const queue of this.queues.values()) this.notify(queue);
  }

  // ----- persistence --------------------------------------------------------------------------

  /** Takes the queues of a snapshot, before the change log is replayed over them. */
  restore(saved: PersistedQueue[]): void {
    for (const queue of saved) {
      this.queues.set(queue.name, {
        name: queue.name,
        createdAt: queue.createdAt,
        lastModifiedAt: queue.lastModifiedAt,
        attributes: { ...DEFAULT_ATTRIBUTES, ...queue.attributes },
        messages: new Map(queue.messages.map((message) => [message.messageId, message])),
        waiters: new Set(),
        deleted: false,
      });
    }
  }

  /** The whole state, as the snapshot holds it. */
  snapshot(): PersistedQueue[] {
    return [...this.queues.values()].map((queue) => ({
      name: queue.name,
      createdAt: queue.createdAt,
      lastModifiedAt: queue.lastModifiedAt,
      attributes: queue.attributes,
      messages: [...queue.messages.values()],
    }));
  }

  /**
   * Makes the messages a consumer of the last run held (received, not deleted) visible now. Their
   * consumers died with that run, so nobody can delete them; SQS, which cannot know that, would
   * keep them hidden for the rest of the visibility timeout, and locally that timeout (two minutes
   * on the aggregation queue) only delays the work behind a restart. The receive count stays, so
   * the redrive policy still counts the attempt. A visibility the consumer chose itself (a retry's
   * delay) is kept: bringing it forward would spend a retry early at every restart.
   */
  releaseHeldMessages(): void {
    const now = this.now();
    for (const queue of this.queues.values()) {
      for (const message of queue.messages.values()) {
        if (message.receiptHandle !== undefined && message.visibleAt > now && !message.visibilityChanged) message.visibleAt = now;
      }
    }
  }

  /** Applies one change-log record (replay). */
  apply(record: JournalRecord): void {
    switch (record.op) {
      case 'queue': {
        const existing = this.queues.get(record.name);
        if (existing)
          Object.assign(existing, { createdAt: record.createdAt, lastModifiedAt: record.lastModifiedAt, attributes: record.attributes });
        else this.queues.set(record.name, { ...record, messages: new Map(), waiters: new Set(), deleted: false });
        return;
      }
      case 'drop':
        this.queues.delete(record.queue);
        return;
      case 'purge':
        this.queues.get(record.queue)?.messages.clear();
        return;
      case 'put':
        this.queues.get(record.queue)?.messages.set(record.message.messageId, record.message);
        return;
      case 'del':
        this.queues.get(record.queue)?.messages.delete(record.id);
        return;
    }
  }

  private record(record: JournalRecord): void {
    this.journal?.record(record);
  }

  private recordQueue(queue: QueueState): void {
    const { name, createdAt, lastModifiedAt, attributes } = queue;
    this.record({ op: 'queue', name, createdAt, lastModifiedAt, attributes: { ...attributes } });
  }

  private recordMessage(queue: QueueState, message: StoredMessage): void {
    this.record({ op: 'put', queue: queue.name, message });
  }

  /** Runs one action; a long poll (ReceiveMessage with a wait) answers later. */
  dispatch(action: string, input: Json, res: ServerResponse): Json | Promise<Json> {
    switch (action) {
      case 'CreateQueue':
        return this.createQueue(input);
      case 'GetQueueUrl':
        return this.getQueueUrl(input);
      case 'ListQueues':
        return this.listQueues(input);
      case 'GetQueueAttributes':
        return this.getQueueAttributes(input);
      case 'SetQueueAttributes':
        return this.setQueueAttributes(input);
      case 'SendMessage':
        return this.sendMessage(input);
      case 'SendMessageBatch':
        return this.sendMessageBatch(input);
      case 'ReceiveMessage':
        return this.receiveMessage(input, res);
      case 'DeleteMessage':
        return this.deleteMessage(input);
      case 'DeleteMessageBatch':
        return this.deleteMessageBatch(input);
      case 'ChangeMessageVisibility':
        return this.changeMessageVisibility(input);
      case 'ChangeMessageVisibilityBatch':
        return this.changeMessageVisibilityBatch(input);
      case 'PurgeQueue':
        return this.purgeQueue(input);
      case 'DeleteQueue':
        return this.deleteQueue(input);
      default:
        throw new SqsError('UnsupportedOperation', `The action ${action} is not supported by the SQS emulator.`);
    }
  }

  // ----- queue helpers ------------------------------------------------------------------------

  private queueFromUrl(input: Json): QueueState {
    const queueUrl = requiredString(input, 'QueueUrl');
    let segments: string[];
    try {
      segments = new URL(queueUrl).pathname.split('/');
    } catch {
      throw new SqsError('InvalidAddress', `The address ${queueUrl} is not valid for this endpoint.`);
    }
    // Any host is accepted: containers and the host machine may reach the emulator under
    // different names, and the path alone identifies the queue.
    if (segments.length !== 3 || segments[1] !== SQS_EMULATOR_ACCOUNT_ID || !segments[2]) {
      throw new SqsError('InvalidAddress', `The address ${queueUrl} is not valid for this endpoint.`);
    }
    return this.queueByName(decodeURIComponent(segments[2]));
  }

  private queueByName(name: string): QueueState {
    const queue = this.queues.get(name);
    if (!queue) throw new SqsError('QueueDoesNotExist', 'The specified queue does not exist.');
    return queue;
  }

  private numberAttribute(queue: QueueState, name: string): number {
    return Number(queue.attributes[name] ?? DEFAULT_ATTRIBUTES[name]);
  }

  private redrivePolicy(queue: QueueState): RedrivePolicy | undefined {
    const raw = queue.attributes.RedrivePolicy;
    return raw ? (JSON.parse(raw) as RedrivePolicy) : undefined;
  }

  private queueNameFromArn(arn: string): string | undefined {
    const match = /^arn:aws[a-z-]*:sqs:[a-z0-9-]+:(\d{12}):([A-Za-z0-9_-]{1,80})$/.exec(arn);
    return match && match[1] === SQS_EMULATOR_ACCOUNT_ID ? match[2] : undefined;
  }

  /** Validates caller-supplied attributes and returns them normalised as SQS stores them. */
  private validateAttributes(attributes: Record<string, string>): Record<string, string> {
    const result: Record<string, string> = {};
    for (const [name, value] of Object.entries(attributes)) {
      const rule = SETTABLE_ATTRIBUTES[name];
      if (FIFO_ATTRIBUTES.has(name)) throw new SqsError('UnsupportedOperation', 'FIFO queues are not supported by the SQS emulator.');
      if (!rule) throw new SqsError('InvalidAttributeName', `Unknown Attribute ${name}.`);
      const invalid = (reason: string) =>
        new SqsError('InvalidAttributeValue', `Invalid value for the parameter ${name}. Reason: ${reason}`);
      if (typeof rule === 'object') {
        const number = Number(value);
        if (!/^\d+$/.test(value) || number < rule.min || number > rule.max)
          throw invalid(`Must be an integer from ${rule.min} to ${rule.max}.`);
        result[name] = String(number);
      } else if (name === 'RedrivePolicy') {
        result[name] = value === '' ? '' : this.normaliseRedrivePolicy(value, invalid);
      } else if (rule === 'json' && value !== '') {
        try {
          JSON.parse(value);
        } catch {
          throw invalid('Must be a JSON document.');
        }
        result[name] = value;
      } else {
        result[name] = value;
      }
    }
    return result;
  }

  private normaliseRedrivePolicy(value: string, invalid: (reason: string) => SqsError): string {
    let parsed: unknown;
    try {
      parsed = JSON.parse(value);
    } catch {
      throw invalid('Must be a JSON document.');
    }
    if (typeof parsed !== 'object' || parsed === null) throw invalid('Must be a JSON object.');
    const { deadLetterTargetArn, maxReceiveCount } = parsed as Json;
    // CloudFormation templates often pass maxReceiveCount as a string, which SQS accepts.
    const count = typeof maxReceiveCount === 'string' && /^\d+$/.test(maxReceiveCount) ? Number(maxReceiveCount) : maxReceiveCount;
    if (typeof count !== 'number' || !Number.isInteger(count) || count < 1 || count > 1000) {
      throw invalid('maxReceiveCount must be an integer from 1 to 1000.');
    }
    const dlqName = typeof deadLetterTargetArn === 'string' ? this.queueNameFromArn(deadLetterTargetArn) : undefined;
    if (!dlqName) throw invalid('deadLetterTargetArn must be an SQS queue ARN.');
    // SQS checks this too, which catches a mistyped DLQ name at deploy time instead of at redrive.
    if (!this.queues.has(dlqName)) throw invalid('Dead letter target does not exist.');
    return JSON.stringify({ deadLetterTargetArn, maxReceiveCount: count });
  }

  private sweepExpired(queue: QueueState, now: number): void {
    const retentionMs = this.numberAttribute(queue, 'MessageRetentionPeriod') * 1000;
    for (const message of queue.messages.values()) {
      // Retention counts from the original send, also in a dead-letter queue, as for standard queues.
      if (now - message.sentAt >= retentionMs) {
        queue.messages.delete(message.messageId);
        this.record({ op: 'del', queue: queue.name, id: message.messageId });
      }
    }
  }

  private oldestAge(queue: QueueState, now: number): number {
    this.sweepExpired(queue, now);
    let oldest = now;
    for (const message of queue.messages.values()) oldest = Math.min(oldest, message.enqueuedAt);
    return Math.max(0, Math.floor((now - oldest) / 1000));
  }

  private notify(queue: QueueState): void {
    // Copy first: a waiter removes itself from the set when it completes.
    for (const waiter of [...queue.waiters]) waiter();
  }

  // ----- actions ------------------------------------------------------------------------------

  private createQueue(input: Json): Json {
    const name = requiredString(input, 'QueueName');
    if (name.endsWith('.fifo')) throw new SqsError('UnsupportedOperation', 'FIFO queues are not supported by the SQS emulator.');
    if (!QUEUE_NAME_PATTERN.test(name)) {
      throw new SqsError('InvalidParameterValue', 'Can only include alphanumeric characters, hyphens, or underscores. 1 to 80 in length');
    }
    const attributes = this.validateAttributes(optionalStringMap(input, 'Attributes'));
    optionalStringMap(input, 'tags'); // accepted for compatibility; tags are not emulated
    const existing = this.queues.get(name);
    if (existing) {
      // Idempotent like SQS: same name and matching attributes return the existing queue.
      for (const [key, value] of Object.entries(attributes)) {
        if ((existing.attributes[key] ?? '') !== value) {
          throw new SqsError('QueueNameExists', `A queue already exists with the same name and a different value for attribute ${key}`);
        }
      }
      return { QueueUrl: this.queueUrl(name) };
    }
    const now = this.now();
    const stored = { ...DEFAULT_ATTRIBUTES, ...attributes };
    if (stored.RedrivePolicy === '') delete stored.RedrivePolicy;
    const queue: QueueState = {
      name,
      createdAt: now,
      lastModifiedAt: now,
      attributes: stored,
      messages: new Map(),
      waiters: new Set(),
      deleted: false,
    };
    this.queues.set(name, queue);
    this.recordQueue(queue);
    return { QueueUrl: this.queueUrl(name) };
  }

  private getQueueUrl(input: Json): Json {
    const name = requiredString(input, 'QueueName');
    const owner = optionalString(input, 'QueueOwnerAWSAccountId');
    if (owner !== undefined && owner !== SQS_EMULATOR_ACCOUNT_ID)
      throw new SqsError('QueueDoesNotExist', 'The specified queue does not exist.');
    this.queueByName(name);
    return { QueueUrl: this.queueUrl(name) };
  }

  private listQueues(input: Json): Json {
    const prefix = optionalString(input, 'QueueNamePrefix') ?? '';
    const maxResults = optionalInteger(input, 'MaxResults', 1, 1000);
    const nextToken = optionalString(input, 'NextToken');
    let names = [...this.queues.keys()].filter((name) => name.startsWith(prefix)).sort();
    if (nextToken !== undefined) {
      const after = Buffer.from(nextToken, 'base64url').toString('utf8');
      names = names.filter((name) => name > after);
    }
    if (maxResults === undefined) {
      // Without MaxResults SQS returns at most 1000 queues and no token.
      return names.length > 0 ? { QueueUrls: names.slice(0, 1000).map((name) => this.queueUrl(name)) } : {};
    }
    const page = names.slice(0, maxResults);
    const output: Json = {};
    if (page.length > 0) output.QueueUrls = page.map((name) => this.queueUrl(name));
    // MaxResults is at least 1, so a page short of the names has a last name to resume after.
    const last = page.at(-1);
    if (names.length > maxResults && last !== undefined) output.NextToken = Buffer.from(last, 'utf8').toString('base64url');
    return output;
  }

  private getQueueAttributes(input: Json): Json {
    const queue = this.queueFromUrl(input);
    const requested = optionalStringList(input, 'AttributeNames');
    const now = this.now();
    this.sweepExpired(queue, now);
    const all = requested.includes('All');
    const wanted = new Set(all ? [...COMPUTED_ATTRIBUTES, ...Object.keys(queue.attributes)] : requested);
    for (const name of requested) {
      if (
        name !== 'All' &&
        name !== AGE_OF_OLDEST_MESSAGE &&
        !FIFO_ATTRIBUTES.has(name) &&
        !(name in SETTABLE_ATTRIBUTES) &&
        !(COMPUTED_ATTRIBUTES as readonly string[]).includes(name)
      ) {
        throw new SqsError('InvalidAttributeName', `Unknown Attribute ${name}.`);
      }
    }
    if (wanted.size === 0) return {};

    let visible = 0;
    let inFlight = 0;
    let delayed = 0;
    for (const message of queue.messages.values()) {
      if (message.visibleAt <= now) visible++;
      else if (message.receiptHandle !== undefined) inFlight++;
      else delayed++;
    }
    const computed: Record<string, string> = {
      QueueArn: this.queueArn(queue.name),
      ApproximateNumberOfMessages: String(visible),
      ApproximateNumberOfMessagesNotVisible: String(inFlight),
      ApproximateNumberOfMessagesDelayed: String(delayed),
      CreatedTimestamp: String(Math.floor(queue.createdAt / 1000)),
      LastModifiedTimestamp: String(Math.floor(queue.lastModifiedAt / 1000)),
    };
    const attributes: Record<string, string> = {};
    for (const name of wanted) {
      const value = name === AGE_OF_OLDEST_MESSAGE ? String(this.oldestAge(queue, now)) : (computed[name] ?? queue.attributes[name]);
      if (value !== undefined) attributes[name] = value;
    }
    return { Attributes: attributes };
  }

  private setQueueAttributes(input: Json): Json {
    const queue = this.queueFromUrl(input);
    const attributes = this.validateAttributes(optionalStringMap(input, 'Attributes'));
    for (const [name, value] of Object.entries(attributes)) {
      // An empty RedrivePolicy is how SQS callers remove it.
      if (value === '' && (name === 'RedrivePolicy' || name === 'RedriveAllowPolicy' || name === 'Policy')) delete queue.attributes[name];
      else queue.attributes[name] = value;
    }
    queue.lastModifiedAt = this.now();
    this.recordQueue(queue);
    return {};
  }

  /** Validates one message and enqueues it; shared by SendMessage and SendMessageBatch. */
  private enqueue(queue: QueueState, entry: Json): Json {
    const body = requiredString(entry, 'MessageBody');
    if (body.length === 0) throw new SqsError('MissingParameter', 'The request must contain the parameter MessageBody.');
    if (INVALID_MESSAGE_CHARACTER.test(body)) {
      throw new SqsError(
        'InvalidMessageContents',
        'Invalid binary character in the message body. Only characters in the XML 1.0 range are allowed.',
      );
    }
    const delaySeconds = optionalInteger(entry, 'DelaySeconds', 0, MAX_DELAY_SECONDS) ?? this.numberAttribute(queue, 'DelaySeconds');
    const messageAttributes = parseMessageAttributes(entry, 'MessageAttributes');
    const systemAttributes = parseMessageAttributes(entry, 'MessageSystemAttributes');
    for (const name of Object.keys(systemAttributes)) {
      if (name !== 'AWSTraceHeader') throw new SqsError('InvalidParameterValue', `Message system attribute name '${name}' is invalid.`);
    }
    const maxSize = this.numberAttribute(queue, 'MaximumMessageSize');
    if (messageSize(body, messageAttributes) > maxSize) {
      throw new SqsError(
        'InvalidParameterValue',
        `One or more parameters are invalid. Reason: Message must be shorter than ${maxSize} bytes.`,
      );
    }
    const now = this.now();
    const message: StoredMessage = {
      messageId: randomUUID(),
      body,
      md5OfBody: md5Hex(Buffer.from(body, 'utf8')),
      messageAttributes,
      sentAt: now,
      enqueuedAt: now,
      visibleAt: now + delaySeconds * 1000,
      receiveCount: 0,
    };
    const traceHeader = systemAttributes.AWSTraceHeader?.StringValue;
    if (traceHeader !== undefined) message.awsTraceHeader = traceHeader;
    queue.messages.set(message.messageId, message);
    this.recordMessage(queue, message);
    if (delaySeconds === 0) this.notify(queue);

    const output: Json = { MessageId: message.messageId, MD5OfMessageBody: message.md5OfBody };
    const md5OfMessageAttributes = md5OfAttributes(messageAttributes);
    if (md5OfMessageAttributes) output.MD5OfMessageAttributes = md5OfMessageAttributes;
    const md5OfSystemAttributes = md5OfAttributes(systemAttributes);
    if (md5OfSystemAttributes) output.MD5OfMessageSystemAttributes = md5OfSystemAttributes;
    return output;
  }

  private sendMessage(input: Json): Json {
    return this.enqueue(this.queueFromUrl(input), input);
  }

  private sendMessageBatch(input: Json): Json {
    const queue = this.queueFromUrl(input);
    const entries = batchEntries(input, 'SendMessageBatch');
    let total = 0;
    for (const entry of entries) {
      const body = typeof entry.MessageBody === 'string' ? entry.MessageBody : '';
      total += Buffer.byteLength(body, 'utf8');
    }
    if (total > MAX_BATCH_PAYLOAD_BYTES) {
      throw new SqsError(
        'BatchRequestTooLong',
        `Batch requests cannot be longer than ${MAX_BATCH_PAYLOAD_BYTES} bytes. You have sent ${total} bytes.`,
      );
    }
    return this.runBatch(entries, (entry) => this.enqueue(queue, entry));
  }

  /** Runs each entry independently: per-entry problems go to Failed, as SQS reports them. */
  private runBatch(entries: Json[], run: (entry: Json) => Json): Json {
    const successful: Json[] = [];
    const failed: Json[] = [];
    for (const entry of entries) {
      const id = entry.Id as string;
      try {
        successful.push({ Id: id, ...run(entry) });
      } catch (error) {
        if (!(error instanceof SqsError)) throw error;
        failed.push({ Id: id, SenderFault: true, Code: error.code, Message: error.message });
      }
    }
    return { Successful: successful, Failed: failed };
  }

  private receiveMessage(input: Json, res: ServerResponse): Json | Promise<Json> {
    const queue = this.queueFromUrl(input);
    const maxMessages = optionalInteger(input, 'MaxNumberOfMessages', 1, 10) ?? 1;
    const visibilityTimeout =
      optionalInteger(input, 'VisibilityTimeout', 0, MAX_VISIBILITY_TIMEOUT) ?? this.numberAttribute(queue, 'VisibilityTimeout');
    const waitSeconds =
      optionalInteger(input, 'WaitTimeSeconds', 0, MAX_WAIT_TIME_SECONDS) ?? this.numberAttribute(queue, 'ReceiveMessageWaitTimeSeconds');
    // AttributeNames is the deprecated spelling of MessageSystemAttributeNames; SDKs still send it.
    const systemNames = new Set([
      ...optionalStringList(input, 'AttributeNames'),
      ...optionalStringList(input, 'MessageSystemAttributeNames'),
    ]);
    const attributeNames = optionalStringList(input, 'MessageAttributeNames');
    const format = (messages: StoredMessage[]): Json =>
      messages.length > 0 ? { Messages: messages.map((message) => this.formatMessage(message, systemNames, attributeNames)) } : {};

    if (this.inFlight(queue, this.now()) >= this.inFlightLimit) {
      throw new SqsError(
        'OverLimit',
        `The maximum number of in flight messages (${this.inFlightLimit}) has been reached for this queue. Delete messages or let their visibility time out.`,
      );
    }
    const received = this.take(queue, maxMessages, visibilityTimeout);
    if (received.length > 0 || waitSeconds === 0 || this.closing) return format(received);

    // Long polling: answer as soon as any message becomes available, or empty at the deadline.
    const deadline = this.now() + waitSeconds * 1000;
    return new Promise<Json>((resolve) => {
      let timer: NodeJS.Timeout | undefined;
      const finish = (messages: StoredMessage[]) => {
        queue.waiters.delete(attempt);
        if (timer) clearTimeout(timer);
        res.off('close', abandon);
        resolve(format(messages));
      };
      // A client that gave up must not have messages hidden from other consumers on its behalf.
      const abandon = () => {
        queue.waiters.delete(attempt);
        if (timer) clearTimeout(timer);
      };
      const attempt = () => {
        if (queue.deleted || this.closing) return finish([]);
        const messages = this.take(queue, maxMessages, visibilityTimeout);
        const now = this.now();
        if (messages.length > 0 || now >= deadline) return finish(messages);
        // Wake up for the deadline or for a delayed / in-flight message becoming visible.
        let wakeAt = deadline;
        for (const message of queue.messages.values()) {
          if (message.visibleAt > now && message.visibleAt < wakeAt) wakeAt = message.visibleAt;
        }
        if (timer) clearTimeout(timer);
        timer = setTimeout(attempt, Math.max(1, wakeAt - now));
      };
      queue.waiters.add(attempt);
      res.once('close', abandon);
      attempt();
    });
  }

  /** Received and not deleted, with visibility left: what counts toward the in-flight limit (a delayed message does not). */
  private inFlight(queue: QueueState, now: number): number {
    let count = 0;
    for (const message of queue.messages.values()) if (message.receiptHandle !== undefined && message.visibleAt > now) count++;
    return count;
  }

  /**
   * Marks up to `max` visible messages in flight, redriving those past maxReceiveCount, and never
   * more than the in-flight limit leaves room for (a long poll waits for room, as for messages).
   */
  private take(queue: QueueState, wanted: number, visibilityTimeout: number): StoredMessage[] {
    const now = this.now();
    this.sweepExpired(queue, now);
    const max = Math.min(wanted, this.inFlightLimit - this.inFlight(queue, now));
    const policy = this.redrivePolicy(queue);
    const deadLetterQueue = policy ? this.queues.get(this.queueNameFromArn(policy.deadLetterTargetArn) ?? '') : undefined;
    const taken: StoredMessage[] = [];
    let redriven = false;
    for (const message of queue.messages.values()) {
      if (taken.length >= max) break;
      if (message.visibleAt > now) continue;
      // SQS moves a message when it would be received for the (maxReceiveCount + 1)-th time. If the
      // DLQ has been deleted the message stays where it is, rather than being lost.
      if (policy && deadLetterQueue && deadLetterQueue !== queue && message.receiveCount >= policy.maxReceiveCount) {
        queue.messages.delete(message.messageId);
        delete message.receiptHandle;
        message.enqueuedAt = now;
        message.visibleAt = now;
        message.deadLetterSourceArn = this.queueArn(queue.name);
        deadLetterQueue.messages.set(message.messageId, message);
        this.record({ op: 'del', queue: queue.name, id: message.messageId });
        this.recordMessage(deadLetterQueue, message);
        redriven = true;
        continue;
      }
      message.receiveCount++;
      message.firstReceiveAt ??= now;
      message.receivedAt = now;
      message.receiptHandle = encodeReceiptHandle(queue.name, message.messageId);
      message.visibleAt = now + visibilityTimeout * 1000;
      delete message.visibilityChanged;
      this.recordMessage(queue, message);
      taken.push(message);
    }
    // Deferred so a waiter on the DLQ never runs in the middle of this iteration.
    if (redriven && deadLetterQueue) setImmediate(() => this.notify(deadLetterQueue));
    return taken;
  }

  private formatMessage(message: StoredMessage, systemNames: Set<string>, attributeNames: string[]): Json {
    const output: Json = {
      MessageId: message.messageId,
      ReceiptHandle: message.receiptHandle,
      MD5OfBody: message.md5OfBody,
      Body: message.body,
    };
    const all = systemNames.has('All');
    const values: Record<string, string | undefined> = {
      ApproximateReceiveCount: String(message.receiveCount),
      ApproximateFirstReceiveTimestamp: message.firstReceiveAt !== undefined ? String(message.firstReceiveAt) : undefined,
      SentTimestamp: String(message.sentAt),
      SenderId: SQS_EMULATOR_ACCOUNT_ID,
      AWSTraceHeader: message.awsTraceHeader,
      DeadLetterQueueSourceArn: message.deadLetterSourceArn,
    };
    const attributes: Record<string, string> = {};
    for (const name of SYSTEM_ATTRIBUTES) {
      const value = values[name];
      if ((all || systemNames.has(name)) && value !== undefined) attributes[name] = value;
    }
    if (Object.keys(attributes).length > 0) output.Attributes = attributes;

    // MessageAttributeNames: "All", ".*", "prefix.*" or exact names.
    const selected: Record<string, MessageAttributeValue> = {};
    for (const [name, value] of Object.entries(message.messageAttributes)) {
      const match = attributeNames.some(
        (pattern) =>
          pattern === 'All' || pattern === '.*' || pattern === name || (pattern.endsWith('.*') && name.startsWith(pattern.slice(0, -1))),
      );
      if (match) selected[name] = value;
    }
    const md5 = md5OfAttributes(selected);
    if (md5) {
      output.MessageAttributes = selected;
      output.MD5OfMessageAttributes = md5;
    }
    return output;
  }

  /** Resolves a receipt handle to its message; undefined when the message is already gone. */
  private messageForHandle(queue: QueueState, handle: string): StoredMessage | undefined {
    const decoded = decodeReceiptHandle(handle);
    if (!decoded || decoded.queueName !== queue.name) {
      throw new SqsError('ReceiptHandleIsInvalid', `The input receipt handle "${handle}" is not a valid receipt handle.`);
    }
    return queue.messages.get(decoded.messageId);
  }

  private removeByHandle(queue: QueueState, entry: Json): Json {
    const handle = requiredString(entry, 'ReceiptHandle');
    const message = this.messageForHandle(queue, handle);
    // Like SQS, deleting an already deleted message succeeds; a stale handle (the message was
    // received again since) succeeds without deleting, so the newer consumer keeps its message.
    if (message && message.receiptHandle === handle) {
      queue.messages.delete(message.messageId);
      this.record({ op: 'del', queue: queue.name, id: message.messageId });
    }
    return {};
  }

  private deleteMessage(input: Json): Json {
    return this.removeByHandle(this.queueFromUrl(input), input);
  }

  private deleteMessageBatch(input: Json): Json {
    const queue = this.queueFromUrl(input);
    return this.runBatch(batchEntries(input, 'DeleteMessageBatch'), (entry) => this.removeByHandle(queue, entry));
  }

  private changeVisibility(queue: QueueState, entry: Json): Json {
    const handle = requiredString(entry, 'ReceiptHandle');
    const timeout = optionalInteger(entry, 'VisibilityTimeout', 0, MAX_VISIBILITY_TIMEOUT);
    if (timeout === undefined) throw new SqsError('MissingParameter', 'The request must contain the parameter VisibilityTimeout.');
    const message = this.messageForHandle(queue, handle);
    if (!message || message.receiptHandle !== handle) {
      throw new SqsError('ReceiptHandleIsInvalid', `The input receipt handle "${handle}" is not a valid receipt handle.`);
    }
    const now = this.now();
    if (message.visibleAt <= now) {
      throw new SqsError(
        'MessageNotInflight',
        'Value for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.',
      );
    }
    // SQS ends no visibility more than 12 h after the receive that gave the handle (a message from
    // a snapshot older than receivedAt counts from its first receive).
    const receivedAt = message.receivedAt ?? message.firstReceiveAt ?? now;
    if (now + timeout * 1000 > receivedAt + MAX_VISIBILITY_TIMEOUT * 1000) {
      throw new SqsError(
        'InvalidParameterValue',
        `Value ${timeout} for parameter VisibilityTimeout is invalid. Reason: Total VisibilityTimeout for the message is beyond the limit [${MAX_VISIBILITY_TIMEOUT} seconds].`,
      );
    }
    message.visibleAt = now + timeout * 1000;
    message.visibilityChanged = true;
    this.recordMessage(queue, message);
    if (timeout === 0) this.notify(queue);
    return {};
  }

  private changeMessageVisibility(input: Json): Json {
    return this.changeVisibility(this.queueFromUrl(input), input);
  }

  private changeMessageVisibilityBatch(input: Json): Json {
    const queue = this.queueFromUrl(input);
    return this.runBatch(batchEntries(input, 'ChangeMessageVisibilityBatch'), (entry) => this.changeVisibility(queue, entry));
  }

  // SQS allows one purge per 60 s and keeps a deleted queue's name reserved for 60 s; neither
  // limit is emulated because tests legitimately purge and recreate queues back to back.
  private purgeQueue(input: Json): Json {
    const queue = this.queueFromUrl(input);
    queue.messages.clear();
    this.record({ op: 'purge', queue: queue.name });
    return {};
  }

  private deleteQueue(input: Json): Json {
    const queue = this.queueFromUrl(input);
    this.queues.delete(queue.name);
    queue.deleted = true;
    this.notify(queue);
    this.record({ op: 'drop', queue: queue.name });
    return {};
  }
}
