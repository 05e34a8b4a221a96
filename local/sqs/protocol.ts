// The wire side of the SQS emulator: the AWS JSON 1.0 protocol as @aws-sdk/client-sqs speaks it.
// Limits and attribute names SQS accepts, the error codes and how they travel, readers that
// type-check the untrusted request body, the MD5 digests the SDK validates, and receipt handles.
// Nothing here holds state.

import { createHash, randomUUID } from 'node:crypto';

export const SQS_EMULATOR_ACCOUNT_ID = '000000000000';

// Generous because JSON escaping can inflate a 1 MiB batch several times over.
export const MAX_REQUEST_BYTES = 8 * 1024 * 1024;
export const MAX_BATCH_PAYLOAD_BYTES = 1024 * 1024;
export const MAX_VISIBILITY_TIMEOUT = 43_200;
// Messages received and not yet deleted (in flight) per standard queue; beyond it ReceiveMessage
// answers OverLimit. A delayed message is not in flight.
export const MAX_IN_FLIGHT_MESSAGES = 120_000;
export const MAX_DELAY_SECONDS = 900;
export const MAX_WAIT_TIME_SECONDS = 20;
export const MAX_MESSAGE_ATTRIBUTES = 10;
export const QUEUE_NAME_PATTERN = /^[A-Za-z0-9_-]{1,80}$/;
export const BATCH_ENTRY_ID_PATTERN = /^[A-Za-z0-9_-]{1,80}$/;
// Characters SQS accepts in message bodies and string attributes (XML 1.0 character range).
export const INVALID_MESSAGE_CHARACTER = /[^\t\n\r\x20-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/u;

// Defaults of a new standard queue. MaximumMessageSize follows the 1 MiB limit SQS adopted in 2025.
export const DEFAULT_ATTRIBUTES: Readonly<Record<string, string>> = {
  DelaySeconds: '0',
  MaximumMessageSize: '1048576',
  MessageRetentionPeriod: '345600',
  ReceiveMessageWaitTimeSeconds: '0',
  VisibilityTimeout: '30',
  SqsManagedSseEnabled: 'true',
};

// Attributes a caller may set. Numeric ones carry their valid range.
export const SETTABLE_ATTRIBUTES: Readonly<Record<string, { min: number; max: number } | 'json' | 'text'>> = {
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

export const COMPUTED_ATTRIBUTES = [
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
export const AGE_OF_OLDEST_MESSAGE = 'ApproximateAgeOfOldestMessage';
// FIFO-only attributes are valid names on a standard queue; SQS simply returns nothing for them.
export const FIFO_ATTRIBUTES = new Set(['FifoQueue', 'ContentBasedDeduplication', 'DeduplicationScope', 'FifoThroughputLimit']);

export const SYSTEM_ATTRIBUTES = [
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
export const ERROR_WIRE = {
  QueueDoesNotExist: { queryCode: 'AWS.SimpleQueueService.NonExistentQueue', status: 400 },
  QueueNameExists: { queryCode: 'QueueAlreadyExists', status: 400 },
  InvalidAddress: { queryCode: 'InvalidAddress', status: 404 },
  ReceiptHandleIsInvalid: { queryCode: 'ReceiptHandleIsInvalid', status: 404 },
  MessageNotInflight: { queryCode: 'AWS.SimpleQueueService.MessageNotInflight', status: 400 },
  OverLimit: { queryCode: 'OverLimit', status: 403 },
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

export type ErrorCode = keyof typeof ERROR_WIRE;

export class SqsError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export interface MessageAttributeValue {
  DataType: string;
  StringValue?: string;
  /** Base64, as blobs travel in the JSON protocol. */
  BinaryValue?: string;
}

export type Json = Record<string, unknown>;

// ---------------------------------------------------------------------------------------------
// Input readers: the body is untrusted JSON, so every field is type-checked and a mismatch is a
// client error (400), never a crash.

export function optionalString(input: Json, field: string): string | undefined {
  const value = input[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new SqsError('InvalidParameterValue', `Parameter ${field} must be a string.`);
  return value;
}

export function requiredString(input: Json, field: string): string {
  const value = optionalString(input, field);
  if (value === undefined) throw new SqsError('MissingParameter', `The request must contain the parameter ${field}.`);
  return value;
}

export function optionalInteger(input: Json, field: string, min: number, max: number): number | undefined {
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

export function optionalStringList(input: Json, field: string): string[] {
  const value = input[field];
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value) || !value.every((item): item is string => typeof item === 'string')) {
    throw new SqsError('InvalidParameterValue', `Parameter ${field} must be a list of strings.`);
  }
  return value;
}

export function optionalObject(input: Json, field: string): Json | undefined {
  const value = input[field];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw new SqsError('InvalidParameterValue', `Parameter ${field} must be an object.`);
  }
  return value as Json;
}

export function optionalStringMap(input: Json, field: string): Record<string, string> {
  const object = optionalObject(input, field) ?? {};
  for (const [key, value] of Object.entries(object)) {
    if (typeof value !== 'string') throw new SqsError('InvalidParameterValue', `Value of ${field}.${key} must be a string.`);
  }
  return object as Record<string, string>;
}

export function batchEntries(input: Json, action: string): Json[] {
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
      throw new SqsError(
        'InvalidBatchEntryId',
        'A batch entry id can only contain alphanumeric characters, hyphens and underscores. It can be at most 80 letters long.',
      );
    }
    if (seen.has(id)) throw new SqsError('BatchEntryIdsNotDistinct', `Id ${id} repeated.`);
    seen.add(id);
  }
  return entries;
}

// ---------------------------------------------------------------------------------------------
// Digests, computed exactly as SQS does so SDK-side validation passes.

export function md5Hex(data: string | Buffer): string {
  return createHash('md5').update(data).digest('hex');
}

function lengthPrefixed(bytes: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

// SQS's documented algorithm: attributes sorted by name; for each, length-prefixed name and data
// type, one transport byte (1 = string/number, 2 = binary) and the length-prefixed value.
export function md5OfAttributes(attributes: Record<string, MessageAttributeValue>): string | undefined {
  // Sorted by name as Array.prototype.sort orders strings (UTF-16 code units); names are unique.
  const sorted = Object.entries(attributes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  if (sorted.length === 0) return undefined;
  const parts: Buffer[] = [];
  for (const [name, attribute] of sorted) {
    parts.push(lengthPrefixed(Buffer.from(name, 'utf8')), lengthPrefixed(Buffer.from(attribute.DataType, 'utf8')));
    if (attribute.BinaryValue !== undefined) {
      parts.push(Buffer.from([2]), lengthPrefixed(Buffer.from(attribute.BinaryValue, 'base64')));
    } else {
      parts.push(Buffer.from([1]), lengthPrefixed(Buffer.from(attribute.StringValue ?? '', 'utf8')));
    }
  }
  return md5Hex(Buffer.concat(parts));
}

export function parseMessageAttributes(input: Json, field: string): Record<string, MessageAttributeValue> {
  const raw = optionalObject(input, field) ?? {};
  const names = Object.keys(raw);
  if (names.length > MAX_MESSAGE_ATTRIBUTES) {
    throw new SqsError(
      'InvalidParameterValue',
      `Number of message attributes [${names.length}] exceeds the allowed maximum [${MAX_MESSAGE_ATTRIBUTES}].`,
    );
  }
  const result: Record<string, MessageAttributeValue> = {};
  for (const name of names) {
    if (
      !/^[A-Za-z0-9_.-]{1,256}$/.test(name) ||
      name.startsWith('.') ||
      name.endsWith('.') ||
      name.includes('..') ||
      /^(aws|amazon)\./i.test(name)
    ) {
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
        throw new SqsError(
          'InvalidParameterValue',
          `The message attribute '${name}' must contain non-empty message attribute value for message attribute type '${dataType}'.`,
        );
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

export function messageSize(body: string, attributes: Record<string, MessageAttributeValue>): number {
  let size = Buffer.byteLength(body, 'utf8');
  for (const [name, attribute] of Object.entries(attributes)) {
    size += Buffer.byteLength(name) + Buffer.byteLength(attribute.DataType);
    size +=
      attribute.BinaryValue !== undefined
        ? Buffer.from(attribute.BinaryValue, 'base64').length
        : Buffer.byteLength(attribute.StringValue ?? '');
  }
  return size;
}

// Receipt handles encode the queue and message so a handle can be checked without a lookup table;
// the random part makes every receive's handle distinct, as in SQS.
export function encodeReceiptHandle(queueName: string, messageId: string): string {
  return Buffer.from(`${queueName}\n${messageId}\n${randomUUID()}`, 'utf8').toString('base64url');
}

export function decodeReceiptHandle(handle: string): { queueName: string; messageId: string } | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(handle)) return undefined;
  const [queueName, messageId, nonce, ...rest] = Buffer.from(handle, 'base64url').toString('utf8').split('\n');
  if (queueName === undefined || messageId === undefined || nonce === undefined || rest.length > 0) return undefined;
  if (!QUEUE_NAME_PATTERN.test(queueName) || messageId.length === 0) return undefined;
  return { queueName, messageId };
}
