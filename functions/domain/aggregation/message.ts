import { AuditObjectError } from '../audit/decode';
import type { AggregationMessage } from '../audit/types';
import { isPlainObject } from '../common/json';

/**
 * The aggregation queue's message (one per audit object, docs/ingestion.md) as the aggregator
 * reads it, and the poison it refuses: a message that can never be processed.
 */

export type PoisonReason = 'bad_message' | 'unknown_version' | 'missing_object' | 'unreadable_object' | 'unknown_app';

/** A message that can never be processed: it goes back until SQS moves it to the DLQ. */
export class PoisonMessageError extends Error {
  constructor(
    readonly reason: PoisonReason,
    detail: string,
  ) {
    super(`${reason}: ${detail}`);
    this.name = 'PoisonMessageError';
  }
}

/**
 * For a read of an audit object: an object missing or unreadable (the codec's AuditObjectError)
 * never becomes readable, so its message is poison, with the same reason and detail; any other
 * failure (a store outage) is thrown as it is, and the message is retried.
 */
export function poisonIfUnreadable(error: unknown): never {
  throw error instanceof AuditObjectError ? new PoisonMessageError(error.reason, error.detail) : error;
}

export const MESSAGE_VERSION = 1;

export function parseMessage(body: string): AggregationMessage {
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    throw new PoisonMessageError('bad_message', 'the body is not JSON');
  }
  if (!isPlainObject(message)) throw new PoisonMessageError('bad_message', 'the body is not an object');
  if (message.version !== MESSAGE_VERSION) throw new PoisonMessageError('unknown_version', `version ${JSON.stringify(message.version)}`);
  const { bucket, audit_key, app_id, company_id, received_ms } = message;
  if (
    typeof bucket !== 'string' ||
    typeof audit_key !== 'string' ||
    typeof app_id !== 'string' ||
    typeof company_id !== 'string' ||
    typeof received_ms !== 'number'
  ) {
    throw new PoisonMessageError('bad_message', 'bucket, audit_key, app_id, company_id or received_ms missing');
  }
  return message as unknown as AggregationMessage;
}

/** The audit key a body announces, or nothing when the body is poison. */
export function auditKeyOf(body: string): string | undefined {
  try {
    return parseMessage(body).audit_key;
  } catch {
    return undefined;
  }
}
