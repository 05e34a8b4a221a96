import { sha256Hex } from '../common/hashing';
import { aggregationMessage, auditKey, auditLines, type AggregationMessage, type AuditBatch, type AuditLine } from './audit-record';
import { parseBatch } from './batch-body';
import { capReached, type CountedBatch } from './cap';
import { EventApiError } from './event-api';
import { eventTexts } from './event-text';
import { judgeEvents, type EventVerdict } from './event-validation';

/** The steps that touch a store, in the order they run; a failure names its step. */
export type BatchStep = 'cap_read' | 'audit_write' | 'hand_off' | 'cap_count';

export interface TakeBatchPorts {
  /** The company's accepted events in the month of nowMs. */
  acceptedThisMonth(companyId: string, nowMs: number): Promise<number>;
  /**
   * Writes the audit object once: where the key is taken (the same bytes retried the same day), the
   * object stored first stays, with the received_ms and corrected times the live rows were counted
   * from, and the write resolves all the same, so the retry hands off and counts like the first.
   */
  putAudit(key: string, batch: AuditBatch, lines: readonly AuditLine[]): Promise<unknown>;
  /** Where putAudit writes: the hand-off message names it. */
  readonly auditBucket: string;
  /** Puts the message on the aggregation queue. */
  handOff(message: AggregationMessage): Promise<void>;
  /** Adds the accepted events to the month, once per batch however often it is retried. */
  countOnce(batch: CountedBatch): Promise<unknown>;
  /** Told of a step that failed, before the batch is refused (metric and log). */
  failed(step: BatchStep, batch: AuditBatch, error: unknown): void;
}

/** An authenticated POST /event, body decoded and parsed. */
export interface BatchRequest {
  readonly companyId: string;
  readonly appId: string;
  /** The company's monthly cap; null is no cap. */
  readonly monthlyCap: number | null;
  /** The body bytes as sent: their SHA-256 names the audit object. */
  readonly raw: Uint8Array;
  /** The parsed JSON, not yet known to be a batch. */
  readonly body: unknown;
  /** The JSON text `body` was parsed from (the body decompressed): the audit record copies each event from it. */
  readonly jsonText?: Uint8Array;
  readonly clientIp: string;
  readonly sdkVersion?: string;
  readonly receivedMs: number;
}

export interface TakenBatch {
  readonly accepted: number;
  readonly rejected: number;
  readonly verdicts: readonly EventVerdict[];
  readonly auditKey: string;
}

/**
 * POST /event after authentication, in the order of DESIGN section 5: the batch shape, the cap,
 * the per-event verdicts, the audit object, the hand-off and only then the count, so a refused
 * batch counts nothing and a retried batch (same bytes, same audit key) counts once. A retry
 * whose first attempt stopped after the audit write still hands the object off: the hand-off is
 * sent again on every attempt, and the aggregator counts an audit key once.
 *
 * A refusal is thrown as an EventApiError: bad_batch_shape, cap_exceeded, or audit_write_failed
 * when any store step fails (the client retries the same bytes).
 */
export async function takeBatch(ports: TakeBatchPorts, request: BatchRequest): Promise<TakenBatch> {
  const batch = parseBatch(request.body);
  const audit: AuditBatch = {
    companyId: request.companyId,
    appId: request.appId,
    receivedMs: request.receivedMs,
    bodySha256: sha256Hex(request.raw),
    clientIp: request.clientIp,
    sdkVersion: request.sdkVersion,
  };

  const { monthlyCap } = request;
  if (monthlyCap !== null) {
    const acceptedThisMonth = await storing(ports, audit, 'cap_read', () => ports.acceptedThisMonth(audit.companyId, audit.receivedMs));
    if (capReached(acceptedThisMonth, monthlyCap)) throw new EventApiError('cap_exceeded');
  }

  // Where each entry is in the body: the audit record copies it from there, and an entry the text
  // shows nested no deeper than the limit is not walked again for the depth rule.
  const texts = request.jsonText === undefined ? undefined : eventTexts(request.jsonText, batch.events.length);
  const { verdicts, accepted, rejected } = judgeEvents(batch.events, batch.sent_at_ms, audit.receivedMs, texts?.depths);
  const key = auditKey(audit);
  await storing(ports, audit, 'audit_write', () => ports.putAudit(key, audit, auditLines(batch.events, verdicts, audit, texts)));
  await storing(ports, audit, 'hand_off', () => ports.handOff(aggregationMessage(ports.auditBucket, key, audit, { accepted, rejected })));
  await storing(ports, audit, 'cap_count', () => ports.countOnce({ ...audit, accepted }));
  return { accepted, rejected, verdicts, auditKey: key };
}

/** One step of taking the batch: a failure is reported to the ports and refuses the whole batch. */
async function storing<T>(ports: TakeBatchPorts, batch: AuditBatch, step: BatchStep, write: () => Promise<T>): Promise<T> {
  try {
    return await write();
  } catch (error) {
    ports.failed(step, batch, error);
    throw new EventApiError('audit_write_failed');
  }
}
