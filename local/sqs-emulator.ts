// A small SQS emulator for local development and integration tests.
//
// It speaks the AWS JSON 1.0 protocol exactly as the current @aws-sdk/client-sqs sends it
// (POST /, `X-Amz-Target: AmazonSQS.<Action>`, `Content-Type: application/x-amz-json-1.0`), so the
// service code runs unchanged against it: only the client's `endpoint` differs. It deliberately
// covers standard queues only; FIFO queues, tags, KMS and permissions are out of scope.
//
// Behaviour follows real SQS where it matters to the application: visibility timeouts, receive
// counts, redrive to a dead-letter queue on the (maxReceiveCount + 1)-th receive, long polling
// that returns as soon as a message is available, retention, and MD5 digests that the SDK
// validates on every send and receive. One difference is deliberate: on start from a data
// directory, messages a consumer of the last run held are visible at once (releaseHeldMessages).
//
// Only node built-ins are used, so it starts in milliseconds and needs no Docker.

import { createHash, randomUUID } from 'node:crypto';
import { closeSync, fsyncSync, ftruncateSync, openSync, renameSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { mkdir, readFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';

export interface SqsEmulatorLogger {
  info(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

export interface SqsEmulatorOptions {
  /** TCP port; 0 (the default) picks a free port. */
  port?: number;
  /** Interface to bind; defaults to 127.0.0.1 so the emulator is never exposed by accident. */
  host?: string;
  /**
   * When set, state is persisted under dataDir and reloaded on start: every change is appended to
   * `sqs.log` before the request that made it is answered, and folded into `sqs.json` on start,
   * on close and when the log grows large. Only one emulator may use a dataDir at a time (the
   * local runtime's lock, lockDataDir in emulators.ts, sees to it).
   */
  dataDir?: string;
  /** Region used in queue ARNs; defaults to us-east-1. */
  region?: string;
  /** Optional sink for lifecycle and failure messages; the emulator is silent without it. */
  logger?: SqsEmulatorLogger;
  /**
   * Clock in epoch milliseconds; defaults to Date.now. Tests pass a shifted clock to exercise
   * retention and message ages without waiting for days. Timers still run in real time.
   */
  now?: () => number;
}

export interface SqsEmulator {
  /** Endpoint to give to the SDK (`new SQSClient({ endpoint })`). */
  readonly url: string;
  readonly port: number;
  readonly region: string;
  readonly accountId: string;
  queueUrl(queueName: string): string;
  queueArn(queueName: string): string;
  /**
   * Age in whole seconds of the oldest message in the queue (0 when empty), like CloudWatch's
   * ApproximateAgeOfOldestMessage. For a dead-letter queue it counts from when the message was
   * moved there, as CloudWatch does. Throws if the queue does not exist.
   */
  oldestMessageAgeSeconds(queueName: string): number;
  /** Folds the change log into the snapshot now (no-op without dataDir). */
  flush(): Promise<void>;
  /** Answers pending long polls, stops the server and writes the snapshot. */
  close(): Promise<void>;
}

export const SQS_EMULATOR_ACCOUNT_ID = '000000000000';

const STATE_FILE = 'sqs.json';
const JOURNAL_FILE = 'sqs.log';
const STATE_VERSION = 1;
// Past this size the change log is folded into the snapshot, so a restart replays little.
const COMPACT_JOURNAL_BYTES = 32 * 1024 * 1024;
// Generous because JSON escaping can inflate a 1 MiB batch several times over.
const MAX_REQUEST_BYTES = 8 * 1024 * 1024;
const MAX_BATCH_PAYLOAD_BYTES = 1024 * 1024;
const MAX_VISIBILITY_TIMEOUT = 43_200;
const MAX_DELAY_SECONDS = 900;
const MAX_WAIT_TIME_SECONDS = 20;
const MAX_MESSAGE_ATTRIBUTES = 10;
const QUEUE_NAME_PATTERN = /^[A-Za-z0-9_-]{1,80}$/;
const BATCH_ENTRY_ID_PATTERN = /^[A-Za-z0-9_-]{1,80}$/;
// Characters SQS accepts in message bodies and string attributes (XML 1.0 character range).
const INVALID_MESSAGE_CHARACTER = /[^\x09\x0A\x0D\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

// Defaults of a new standard queue. MaximumMessageSize follows the 1 MiB limit SQS adopted in 2025.
const DEFAULT_ATTRIBUTES: Readonly<Record<string, string>> = {
  DelaySeconds: '0',
  MaximumMessageSize: '1048576',
  MessageRetentionPeriod: '345600',
  ReceiveMessageWaitTimeSeconds: '0',
  VisibilityTimeout: '30',
  SqsManagedSseEnabled: 'true',
};

// Attributes a caller may set. Numeric ones carry their valid range.
const SETTABLE_ATTRIBUTES: Readonly<Record<string, { min: number; max: number } | 'json' | 'text'>> = {
  DelaySeconds: { min: 0, max: MAX_DELAY_SECONDS },
  MaximumMessageSize: { min: 1024, max: 1_048_576 },
  MessageRetentionPeriod: { min: 60, max: 1_209_600 },
  ReceiveMessageWaitTimeSeconds: { min: 0, max: MAX_WAIT_TIME_SECONDS },
  VisibilityTimeout: { min: 0, max: MAX_VISIBILITY_TIMEOUT },
  KmsDataKeyReusePeriodSeconds: { min: 60, max: 86_400 },
  RedrivePolicy: 'json',
  RedriveAllowPolicy: 'json',
  Policy: 'json',
  KmsMasterKeyId: 'text',
  SqsManagedSseEnabled: 'text',
};

const COMPUTED_ATTRIBUTES = [
  'QueueArn',
  'ApproximateNumberOfMessages',
  'ApproximateNumberOfMessagesNotVisible',
  'ApproximateNumberOfMessagesDelayed',
  'CreatedTimestamp',
  'LastModifiedTimestamp',
] as const;
// Emulator extension: real SQS has no such queue attribute (CloudWatch publishes
// ApproximateAgeOfOldestMessage as a metric). It is returned only when asked for by name, never
// for "All", so code written against the emulator cannot come to rely on it by accident.
const AGE_OF_OLDEST_MESSAGE = 'ApproximateAgeOfOldestMessage';
// FIFO-only attributes are valid names on a standard queue; SQS simply returns nothing for them.
const FIFO_ATTRIBUTES = new Set(['FifoQueue', 'ContentBasedDeduplication', 'DeduplicationScope', 'FifoThroughputLimit']);

const SYSTEM_ATTRIBUTES = [
  'ApproximateReceiveCount',
  'ApproximateFirstReceiveTimestamp',
  'SentTimestamp',
  'SenderId',
  'AWSTraceHeader',
  'DeadLetterQueueSourceArn',
] as const;

// ---------------------------------------------------------------------------------------------
// Errors

// Wire codes the SDK maps back to its modelled exceptions. With `awsQueryCompatible` the SDK reads
// the code from the `x-amzn-query-error` header first and looks it up by the schema's
// `awsQueryError` trait, so the header must carry these legacy codes (e.g.
// AWS.SimpleQueueService.NonExistentQueue -> QueueDoesNotExist). Unmodelled codes fall back to
// `__type`, which becomes the error's `name`.
const ERROR_WIRE = {
  QueueDoesNotExist: { queryCode: 'AWS.SimpleQueueService.NonExistentQueue', status: 400 },
  QueueNameExists: { queryCode: 'QueueAlreadyExists', status: 400 },
  InvalidAddress: { queryCode: 'InvalidAddress', status: 404 },
  ReceiptHandleIsInvalid: { queryCode: 'ReceiptHandleIsInvalid', status: 404 },
  MessageNotInflight: { queryCode: 'AWS.SimpleQueueService.MessageNotInflight', status: 400 },
  EmptyBatchRequest: { queryCode: 'AWS.SimpleQueueService.EmptyBatchRequest', status: 400 },
  TooManyEntriesInBatchRequest: { queryCode: 'AWS.SimpleQueueService.TooManyEntriesInBatchRequest', status: 400 },
  BatchEntryIdsNotDistinct: { queryCode: 'AWS.SimpleQueueService.BatchEntryIdsNotDistinct', status: 400 },
  InvalidBatchEntryId: { queryCode: 'AWS.SimpleQueueService.InvalidBatchEntryId', status: 400 },
  BatchRequestTooLong: { queryCode: 'AWS.SimpleQueueService.BatchRequestTooLong', status: 400 },
  UnsupportedOperation: { queryCode: 'AWS.SimpleQueueService.UnsupportedOperation', status: 400 },
  InvalidAttributeName: { queryCode: 'InvalidAttributeName', status: 400 },
  InvalidAttributeValue: { queryCode: 'InvalidAttributeValue', status: 400 },
  InvalidMessageContents: { queryCode: 'InvalidMessageContents', status: 400 },
  InvalidParameterValue: { queryCode: 'InvalidParameterValue', status: 400 },
  MissingParameter: { queryCode: 'MissingParameter', status: 400 },
  SerializationException: { queryCode: 'SerializationException', status: 400 },
  InternalFailure: { queryCode: 'InternalFailure', status: 500 },
} as const satisfies Record<string, { queryCode: string; status: number }>;

type ErrorCode = keyof typeof ERROR_WIRE;

class SqsError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

// ---------------------------------------------------------------------------------------------
// State

interface MessageAttributeValue {
  DataType: string;
  StringValue?: string;
  /** Base64, as blobs travel in the JSON protocol. */
  BinaryValue?: string;
}

interface StoredMessage {
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
  /** Handle of the latest receive; undefined until received (used to tell delayed from in flight). */
  receiptHandle?: string;
  /**
   * The consumer set the visibility itself (ChangeMessageVisibility, e.g. a retry's delay) since
   * the latest receive: a schedule, kept across a restart, rather than a hold, which is not.
   */
  visibilityChanged?: boolean;
  deadLetterSourceArn?: string;
}

interface QueueState {
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

interface PersistedState {
  version: number;
  savedAt: number;
  queues: Array<{
    name: string;
    createdAt: number;
    lastModifiedAt: number;
    attributes: Record<string, string>;
    messages: StoredMessage[];
  }>;
}

/**
 * One line of the change log. Each record is a whole value (a queue's metadata, a message as it now
 * is) or a removal, never a delta, so replaying a log over a snapshot that already holds some of
 * it gives the same state: a crash between writing the snapshot and emptying the log is harmless.
 */
type JournalRecord =
  | { op: 'queue'; name: string; createdAt: number; lastModifiedAt: number; attributes: Record<string, string> }
  | { op: 'drop'; queue: string }
  | { op: 'purge'; queue: string }
  | { op: 'put'; queue: string; message: StoredMessage }
  | { op: 'del'; queue: string; id: string };

interface RedrivePolicy {
  deadLetterTargetArn: string;
  maxReceiveCount: number;
}

type Json = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// Input readers: the body is untrusted JSON, so every field is type-checked and a mismatch is a
// client error (400), never a crash.

function optionalString(input: Json, field: string): string | undefined {
  const value = input[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new SqsError('InvalidParameterValue', `Parameter ${field} must be a string.`);
  return value;
}

function requiredString(input: Json, field: string): string {
  const value = optionalString(input, field);
  if (value === undefined) throw new SqsError('MissingParameter', `The request must contain the parameter ${field}.`);
  return value;
}

function optionalInteger(input: Json, field: string, min: number, max: number): number | undefined {
  const value = input[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new SqsError(
      'InvalidParameterValue',
      `Value ${JSON.stringify(value)} for parameter ${field} is invalid. Reason: Must be an integer from ${min} to ${max}.`,
    );
  }
  return value;
}

function optionalStringList(input: Json, field: string): string[] {
  const value = input[field];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((item): item is string => typeof item === 'string')) {
    throw new SqsError('InvalidParameterValue', `Parameter ${field} must be a list of strings.`);
  }
  return value;
}

function optionalObject(input: Json, field: string): Json | undefined {
  const value = input[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new SqsError('InvalidParameterValue', `Parameter ${field} must be an object.`);
  }
  return value as Json;
}

function optionalStringMap(input: Json, field: string): Record<string, string> {
  const object = optionalObject(input, field) ?? {};
  for (const [key, value] of Object.entries(object)) {
    if (typeof value !== 'string') throw new SqsError('InvalidParameterValue', `Value of ${field}.${key} must be a string.`);
  }
  return object as Record<string, string>;
}

function batchEntries(input: Json, action: string): Json[] {
  const value = input.Entries;
  if (value === undefined || value === null || (Array.isArray(value) && value.length === 0)) {
    throw new SqsError('EmptyBatchRequest', `There should be at least one ${action}RequestEntry in the request.`);
  }
  if (!Array.isArray(value) || !value.every((entry) => typeof entry === 'object' && entry !== null && !Array.isArray(entry))) {
    throw new SqsError('InvalidParameterValue', 'Parameter Entries must be a list of objects.');
  }
  if (value.length > 10) {
    throw new SqsError('TooManyEntriesInBatchRequest', `Maximum number of entries per request are 10. You have sent ${value.length}.`);
  }
  const entries = value as Json[];
  const seen = new Set<string>();
  for (const entry of entries) {
    const id = requiredString(entry, 'Id');
    if (!BATCH_ENTRY_ID_PATTERN.test(id)) {
      throw new SqsError('InvalidBatchEntryId', 'A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.');
    }
    if (seen.has(id)) throw new SqsError('BatchEntryIdsNotDistinct', `Id ${id} repeated.`);
    seen.add(id);
  }
  return entries;
}

// ---------------------------------------------------------------------------------------------
// Digests, computed exactly as SQS does so SDK-side validation passes.

function md5Hex(data: string | Buffer): string {
  return createHash('md5').update(data).digest('hex');
}

function lengthPrefixed(bytes: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

// SQS's documented algorithm: attributes sorted by name; for each, length-prefixed name and data
// type, one transport byte (1 = string/number, 2 = binary) and the length-prefixed value.
function md5OfAttributes(attributes: Record<string, MessageAttributeValue>): string | undefined {
  const names = Object.keys(attributes).sort();
  if (names.length === 0) return undefined;
  const parts: Buffer[] = [];
  for (const name of names) {
    const attribute = attributes[name]!;
    parts.push(lengthPrefixed(Buffer.from(name, 'utf8')), lengthPrefixed(Buffer.from(attribute.DataType, 'utf8')));
    if (attribute.BinaryValue !== undefined) {
      parts.push(Buffer.from([2]), lengthPrefixed(Buffer.from(attribute.BinaryValue, 'base64')));
    } else {
      parts.push(Buffer.from([1]), lengthPrefixed(Buffer.from(attribute.StringValue ?? '', 'utf8')));
    }
  }
  return md5Hex(Buffer.concat(parts));
}

function parseMessageAttributes(input: Json, field: string): Record<string, MessageAttributeValue> {
  const raw = optionalObject(input, field) ?? {};
  const names = Object.keys(raw);
  if (names.length > MAX_MESSAGE_ATTRIBUTES) {
    throw new SqsError('InvalidParameterValue', `Number of message attributes [${names.length}] exceeds the allowed maximum [${MAX_MESSAGE_ATTRIBUTES}].`);
  }
  const result: Record<string, MessageAttributeValue> = {};
  for (const name of names) {
    if (!/^[A-Za-z0-9_.-]{1,256}$/.test(name) || name.startsWith('.') || name.endsWith('.') || name.includes('..') || /^(aws|amazon)\./i.test(name)) {
      throw new SqsError('InvalidParameterValue', `Message attribute name '${name}' is invalid.`);
    }
    const value = optionalObject(raw, name);
    if (!value) throw new SqsError('InvalidParameterValue', `Message attribute '${name}' must have a value.`);
    const dataType = optionalString(value, 'DataType');
    if (!dataType || !/^(String|Number|Binary)(\..+)?$/.test(dataType)) {
      throw new SqsError('InvalidParameterValue', `The message attribute '${name}' has an invalid message attribute type.`);
    }
    if (dataType.startsWith('Binary')) {
      const binary = optionalString(value, 'BinaryValue');
      if (binary === undefined || binary.length === 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(binary)) {
        throw new SqsError('InvalidParameterValue', `The message attribute '${name}' with type 'Binary' must use field 'Binary'.`);
      }
      result[name] = { DataType: dataType, BinaryValue: binary };
    } else {
      const text = optionalString(value, 'StringValue');
      if (text === undefined || text.length === 0) {
        throw new SqsError('InvalidParameterValue', `The message attribute '${name}' must contain non-empty message attribute value for message attribute type '${dataType}'.`);
      }
      if (dataType.startsWith('Number') && !Number.isFinite(Number(text))) {
        throw new SqsError('InvalidParameterValue', `Can't cast the value of message attribute '${name}' to a number.`);
      }
      if (INVALID_MESSAGE_CHARACTER.test(text)) {
        throw new SqsError('InvalidMessageContents', `Message attribute '${name}' contains invalid characters.`);
      }
      result[name] = { DataType: dataType, StringValue: text };
    }
  }
  return result;
}

function messageSize(body: string, attributes: Record<string, MessageAttributeValue>): number {
  let size = Buffer.byteLength(body, 'utf8');
  for (const [name, attribute] of Object.entries(attributes)) {
    size += Buffer.byteLength(name) + Buffer.byteLength(attribute.DataType);
    size += attribute.BinaryValue !== undefined ? Buffer.from(attribute.BinaryValue, 'base64').length : Buffer.byteLength(attribute.StringValue ?? '');
  }
  return size;
}

// Receipt handles encode the queue and message so a handle can be checked without a lookup table;
// the random part makes every receive's handle distinct, as in SQS.
function encodeReceiptHandle(queueName: string, messageId: string): string {
  return Buffer.from(`${queueName}\n${messageId}\n${randomUUID()}`, 'utf8').toString('base64url');
}

function decodeReceiptHandle(handle: string): { queueName: string; messageId: string } | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(handle)) return undefined;
  const parts = Buffer.from(handle, 'base64url').toString('utf8').split('\n');
  if (parts.length !== 3 || !QUEUE_NAME_PATTERN.test(parts[0]!) || parts[1]!.length === 0) return undefined;
  return { queueName: parts[0]!, messageId: parts[1]! };
}

// ---------------------------------------------------------------------------------------------

class SqsEmulatorServer {
  private readonly queues = new Map<string, QueueState>();
  private readonly server: Server;
  private readonly now: () => number;
  private readonly logger: SqsEmulatorLogger | undefined;
  private readonly stateFile: string | undefined;
  private readonly journalFile: string | undefined;
  private baseUrl = '';
  /** Change-log lines made since the last commit; written before the next answer goes out. */
  private pending: string[] = [];
  private commitScheduled = false;
  private journalFd: number | undefined;
  private journalBytes = 0;
  private closing = false;

  constructor(
    private readonly options: SqsEmulatorOptions,
    readonly region: string,
  ) {
    this.now = options.now ?? Date.now;
    this.logger = options.logger;
    this.stateFile = options.dataDir ? join(options.dataDir, STATE_FILE) : undefined;
    this.journalFile = options.dataDir ? join(options.dataDir, JOURNAL_FILE) : undefined;
    this.server = createServer((req, res) => this.handle(req, res));
  }

  async start(): Promise<void> {
    if (this.options.dataDir) {
      await mkdir(this.options.dataDir, { recursive: true });
      await this.load();
      await this.replayJournal();
      this.releaseHeldMessages();
      // Fold what the last run logged into the snapshot, then log this run's changes afresh.
      this.compact();
    }
    const host = this.options.host ?? '127.0.0.1';
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(this.options.port ?? 0, host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    // A wildcard bind is not an address a client can dial, so advertise loopback in URLs.
    const advertised = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
    this.baseUrl = `http://${advertised}:${this.port}`;
    this.logger?.info(`SQS emulator listening on ${this.baseUrl}`);
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  get url(): string {
    return this.baseUrl;
  }

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

  async close(): Promise<void> {
    this.closing = true;
    // Pending long polls would otherwise hold their connections open until WaitTimeSeconds ends.
    for (const queue of this.queues.values()) this.notify(queue);
    // Let those answers reach their sockets before connections are torn down.
    await new Promise<void>((resolve) => setImmediate(resolve));
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      // SDK clients keep connections alive; without this close() would wait for them to time out.
      this.server.closeAllConnections();
    });
    this.compact();
    if (this.journalFd !== undefined) closeSync(this.journalFd);
    this.journalFd = undefined;
  }

  // ----- persistence --------------------------------------------------------------------------

  private async load(): Promise<void> {
    const file = this.stateFile!;
    const text = await readIfExists(file);
    if (text === undefined) return;
    // A corrupt file is reported rather than silently replaced: it holds someone's queued work.
    const state = JSON.parse(text) as PersistedState;
    if (state.version !== STATE_VERSION || !Array.isArray(state.queues)) {
      throw new Error(`Unsupported SQS emulator state in ${file} (version ${String(state.version)})`);
    }
    for (const saved of state.queues) {
      this.queues.set(saved.name, {
        name: saved.name,
        createdAt: saved.createdAt,
        lastModifiedAt: saved.lastModifiedAt,
        attributes: { ...DEFAULT_ATTRIBUTES, ...saved.attributes },
        messages: new Map(saved.messages.map((message) => [message.messageId, message])),
        waiters: new Set(),
        deleted: false,
      });
    }
    const messageCount = state.queues.reduce((sum, queue) => sum + queue.messages.length, 0);
    this.logger?.info(`SQS emulator restored ${state.queues.length} queue(s) with ${messageCount} message(s) from ${file}`);
  }

  private async replayJournal(): Promise<void> {
    const file = this.journalFile!;
    const text = await readIfExists(file);
    if (text === undefined) return;
    const lines = text.split('\n');
    // The text after the last newline is a record cut short by a kill mid-write: its request was
    // never answered, so it is dropped. Any other unreadable line means the log is corrupt.
    lines.pop();
    for (const [index, line] of lines.entries()) {
      let record: JournalRecord;
      try {
        record = JSON.parse(line) as JournalRecord;
      } catch {
        throw new Error(`Corrupt SQS emulator change log ${file} at line ${index + 1}`);
      }
      this.apply(record);
    }
    if (lines.length > 0) this.logger?.info(`SQS emulator replayed ${lines.length} change(s) from ${file}`);
  }

  /**
   * Makes the messages a consumer of the last run held (received, not deleted) visible now. Their
   * consumers died with that run, so nobody can delete them; SQS, which cannot know that, would
   * keep them hidden for the rest of the visibility timeout, and locally that timeout (two minutes
   * on the aggregation queue) only delays the work behind a restart. The receive count stays, so
   * the redrive policy still counts the attempt. A visibility the consumer chose itself (a retry's
   * delay) is kept: bringing it forward would spend a retry early at every restart.
   */
  private releaseHeldMessages(): void {
    const now = this.now();
    for (const queue of this.queues.values()) {
      for (const message of queue.messages.values()) {
        if (message.receiptHandle !== undefined && message.visibleAt > now && !message.visibilityChanged) message.visibleAt = now;
      }
    }
  }

  private apply(record: JournalRecord): void {
    switch (record.op) {
      case 'queue': {
        const existing = this.queues.get(record.name);
        if (existing) Object.assign(existing, { createdAt: record.createdAt, lastModifiedAt: record.lastModifiedAt, attributes: record.attributes });
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

  /** Notes a change for the log; it is written (commit) before the answer that reports it. */
  private record(record: JournalRecord): void {
    if (!this.stateFile) return;
    // Serialised now: the message object keeps changing after this point.
    this.pending.push(JSON.stringify(record));
    // A change no answer follows (a retention sweep) still reaches the log within a tick.
    if (!this.commitScheduled) {
      this.commitScheduled = true;
      setImmediate(() => {
        this.commitScheduled = false;
        try {
          this.commit();
        } catch (error) {
          this.logger?.error(`SQS emulator failed to log changes to ${this.journalFile}: ${String(error)}`);
        }
      });
    }
  }

  private recordQueue(queue: QueueState): void {
    const { name, createdAt, lastModifiedAt, attributes } = queue;
    this.record({ op: 'queue', name, createdAt, lastModifiedAt, attributes: { ...attributes } });
  }

  private recordMessage(queue: QueueState, message: StoredMessage): void {
    this.record({ op: 'put', queue: queue.name, message });
  }

  /**
   * Appends every pending change in one write. Once write() has returned the bytes belong to the
   * kernel, so they survive the process being killed (kill -9 included); an fsync per answer would
   * also cover a machine crash, at milliseconds per request, which a local emulator does not need.
   * Changes of the same tick share the write, which is what keeps a burst of sends cheap.
   */
  private commit(): void {
    if (this.pending.length === 0 || this.journalFd === undefined) return;
    const bytes = Buffer.from(`${this.pending.join('\n')}\n`, 'utf8');
    let written = 0;
    while (written < bytes.length) written += writeSync(this.journalFd, bytes, written);
    this.pending = [];
    this.journalBytes += bytes.length;
    if (this.journalBytes > COMPACT_JOURNAL_BYTES) this.compact();
  }

  flush(): Promise<void> {
    try {
      this.compact();
      return Promise.resolve();
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /**
   * Writes the whole state as the snapshot (temp file + fsync + rename: a crash leaves the old or
   * the new file, never a torn one) and only then empties the log.
   */
  private compact(): void {
    if (!this.stateFile || !this.journalFile) return;
    this.pending = [];
    const state: PersistedState = {
      version: STATE_VERSION,
      savedAt: this.now(),
      queues: [...this.queues.values()].map((queue) => ({
        name: queue.name,
        createdAt: queue.createdAt,
        lastModifiedAt: queue.lastModifiedAt,
        attributes: queue.attributes,
        messages: [...queue.messages.values()],
      })),
    };
    const temp = `${this.stateFile}.${process.pid}.${randomUUID()}.tmp`;
    try {
      const fd = openSync(temp, 'w');
      try {
        writeFileSync(fd, JSON.stringify(state));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
      renameSync(temp, this.stateFile);
    } catch (error) {
      rmSync(temp, { force: true });
      this.logger?.error(`SQS emulator failed to persist state to ${this.stateFile}: ${String(error)}`);
      throw error;
    }
    this.journalFd ??= openSync(this.journalFile, 'a');
    ftruncateSync(this.journalFd);
    this.journalBytes = 0;
  }

  // ----- HTTP ---------------------------------------------------------------------------------

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const requestId = randomUUID();
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_REQUEST_BYTES) tooLarge = true;
      else chunks.push(chunk);
    });
    req.on('error', () => res.destroy());
    req.on('end', () => {
      try {
        if (req.method !== 'POST') throw new SqsError('UnsupportedOperation', `Method ${String(req.method)} is not supported; use POST.`);
        if (tooLarge) throw new SqsError('InvalidParameterValue', `Request body exceeds ${MAX_REQUEST_BYTES} bytes.`);
        const target = req.headers['x-amz-target'];
        if (typeof target !== 'string' || !target.startsWith('AmazonSQS.')) {
          // Most likely an old SDK speaking the query protocol (form-encoded Action=...).
          throw new SqsError('UnsupportedOperation', 'Missing or invalid X-Amz-Target header; only the AWS JSON 1.0 protocol is supported.');
        }
        const input = this.parseBody(Buffer.concat(chunks));
        const action = target.slice('AmazonSQS.'.length);
        const result = this.dispatch(action, input, res);
        if (result instanceof Promise) {
          result.then(
            (output) => this.answer(res, requestId, output),
            (error: unknown) => this.sendError(res, requestId, error),
          );
        } else {
          this.answer(res, requestId, result);
        }
      } catch (error) {
        this.sendError(res, requestId, error);
      }
    });
  }

  private parseBody(body: Buffer): Json {
    if (body.length === 0) return {};
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      throw new SqsError('SerializationException', 'The request body is not valid JSON.');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new SqsError('SerializationException', 'The request body must be a JSON object.');
    }
    return parsed as Json;
  }

  /** A success is answered only once the changes it reports are in the log. */
  private answer(res: ServerResponse, requestId: string, output: Json): void {
    try {
      this.commit();
    } catch (error) {
      this.logger?.error(`SQS emulator failed to log changes to ${this.journalFile}: ${String(error)}`);
      return this.sendError(res, requestId, error);
    }
    this.send(res, requestId, 200, output);
  }

  private send(res: ServerResponse, requestId: string, status: number, body: Json, extraHeaders: Record<string, string> = {}): void {
    if (res.writableEnded || res.destroyed) return;
    const payload = JSON.stringify(body);
    res.writeHead(status, {
      'content-type': 'application/x-amz-json-1.0',
      'content-length': Buffer.byteLength(payload),
      'x-amzn-requestid': requestId,
      ...extraHeaders,
    });
    res.end(payload);
  }

  private sendError(res: ServerResponse, requestId: string, error: unknown): void {
    let sqsError: SqsError;
    if (error instanceof SqsError) {
      sqsError = error;
    } else {
      // Only a bug in the emulator gets here; bad input is always an SqsError.
      this.logger?.error(`SQS emulator internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`);
      sqsError = new SqsError('InternalFailure', 'The request processing has failed because of an unknown error.');
    }
    const wire: { queryCode: string; status: number } = ERROR_WIRE[sqsError.code];
    const fault = wire.status >= 500 ? 'Receiver' : 'Sender';
    this.send(
      res,
      requestId,
      wire.status,
      { __type: `com.amazonaws.sqs#${sqsError.code}`, message: sqsError.message },
      { 'x-amzn-query-error': `${wire.queryCode};${fault}` },
    );
  }

  private dispatch(action: string, input: Json, res: ServerResponse): Json | Promise<Json> {
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
      const invalid = (reason: string) => new SqsError('InvalidAttributeValue', `Invalid value for the parameter ${name}. Reason: ${reason}`);
      if (typeof rule === 'object') {
        const number = Number(value);
        if (!/^\d+$/.test(value) || number < rule.min || number > rule.max) throw invalid(`Must be an integer from ${rule.min} to ${rule.max}.`);
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
    const queue: QueueState = { name, createdAt: now, lastModifiedAt: now, attributes: stored, messages: new Map(), waiters: new Set(), deleted: false };
    this.queues.set(name, queue);
    this.recordQueue(queue);
    return { QueueUrl: this.queueUrl(name) };
  }

  private getQueueUrl(input: Json): Json {
    const name = requiredString(input, 'QueueName');
    const owner = optionalString(input, 'QueueOwnerAWSAccountId');
    if (owner !== undefined && owner !== SQS_EMULATOR_ACCOUNT_ID) throw new SqsError('QueueDoesNotExist', 'The specified queue does not exist.');
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
    if (names.length > maxResults) output.NextToken = Buffer.from(page[page.length - 1]!, 'utf8').toString('base64url');
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
      if (name !== 'All' && name !== AGE_OF_OLDEST_MESSAGE && !FIFO_ATTRIBUTES.has(name) && !(name in SETTABLE_ATTRIBUTES) && !(COMPUTED_ATTRIBUTES as readonly string[]).includes(name)) {
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
      if (name === AGE_OF_OLDEST_MESSAGE) attributes[name] = String(this.oldestAge(queue, now));
      else if (name in computed) attributes[name] = computed[name]!;
      else if (queue.attributes[name] !== undefined) attributes[name] = queue.attributes[name];
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
      throw new SqsError('InvalidMessageContents', 'Invalid binary character in the message body. Only characters in the XML 1.0 range are allowed.');
    }
    const delaySeconds = optionalInteger(entry, 'DelaySeconds', 0, MAX_DELAY_SECONDS) ?? this.numberAttribute(queue, 'DelaySeconds');
    const messageAttributes = parseMessageAttributes(entry, 'MessageAttributes');
    const systemAttributes = parseMessageAttributes(entry, 'MessageSystemAttributes');
    for (const name of Object.keys(systemAttributes)) {
      if (name !== 'AWSTraceHeader') throw new SqsError('InvalidParameterValue', `Message system attribute name '${name}' is invalid.`);
    }
    const maxSize = this.numberAttribute(queue, 'MaximumMessageSize');
    if (messageSize(body, messageAttributes) > maxSize) {
      throw new SqsError('InvalidParameterValue', `One or more parameters are invalid. Reason: Message must be shorter than ${maxSize} bytes.`);
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
      throw new SqsError('BatchRequestTooLong', `Batch requests cannot be longer than ${MAX_BATCH_PAYLOAD_BYTES} bytes. You have sent ${total} bytes.`);
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
    const visibilityTimeout = optionalInteger(input, 'VisibilityTimeout', 0, MAX_VISIBILITY_TIMEOUT) ?? this.numberAttribute(queue, 'VisibilityTimeout');
    const waitSeconds = optionalInteger(input, 'WaitTimeSeconds', 0, MAX_WAIT_TIME_SECONDS) ?? this.numberAttribute(queue, 'ReceiveMessageWaitTimeSeconds');
    // AttributeNames is the deprecated spelling of MessageSystemAttributeNames; SDKs still send it.
    const systemNames = new Set([...optionalStringList(input, 'AttributeNames'), ...optionalStringList(input, 'MessageSystemAttributeNames')]);
    const attributeNames = optionalStringList(input, 'MessageAttributeNames');
    const format = (messages: StoredMessage[]): Json =>
      messages.length > 0 ? { Messages: messages.map((message) => this.formatMessage(message, systemNames, attributeNames)) } : {};

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

  /** Marks up to `max` visible messages in flight, redriving those past maxReceiveCount. */
  private take(queue: QueueState, max: number, visibilityTimeout: number): StoredMessage[] {
    const now = this.now();
    this.sweepExpired(queue, now);
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
        (pattern) => pattern === 'All' || pattern === '.*' || pattern === name || (pattern.endsWith('.*') && name.startsWith(pattern.slice(0, -1))),
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
      throw new SqsError('MessageNotInflight', 'Value for parameter ReceiptHandle is invalid. Reason: Message does not exist or is not available for visibility timeout change.');
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

/** Starts the emulator and resolves once it accepts connections. */
export async function startSqsEmulator(options: SqsEmulatorOptions = {}): Promise<SqsEmulator> {
  const server = new SqsEmulatorServer(options, options.region ?? 'us-east-1');
  await server.start();
  return {
    url: server.url,
    port: server.port,
    region: server.region,
    accountId: SQS_EMULATOR_ACCOUNT_ID,
    queueUrl: (name) => server.queueUrl(name),
    queueArn: (name) => server.queueArn(name),
    oldestMessageAgeSeconds: (name) => server.oldestMessageAgeSeconds(name),
    flush: () => server.flush(),
    close: () => server.close(),
  };
}

/** A file's text, or undefined when there is none yet (a first start). */
async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
}
