import { adServicesTokenOf } from '../adservices/token';
import { eventTexts } from '../audit/event-text';
import { auditKey } from '../audit/keys';
import { aggregationMessage } from '../audit/message';
import { type AuditRecord, auditRecord } from '../audit/record';
import type { AggregationMessage, AuditBatch } from '../audit/types';
import { sha256Hex } from '../common/hashing';
import type { MessageSink } from '../common/message-sink';
import { convertRevenue } from '../fx/event-revenue';
import type { FxRateStore } from '../fx/rates';
import { parseBatch } from './batch-body';
import { capReached } from './cap';
import { EventApiError } from './event-api';
import { type EventVerdict, judgeEvents } from './event-validation';
import { type BatchHold, type CapStore, giveBack, type MonthCount, readMonth, reserve, settle } from './metering';

/**
 * The steps that touch a store, in the order they run; a failure names its step. cap_count is the
 * batch's events counted (metering.ts, reserve), cap_mark the count settled once it is stored.
 */
export type BatchStep = 'cap_read' | 'fx_read' | 'cap_count' | 'audit_write' | 'hand_off' | 'cap_mark';

/** Where the audit objects go (functions/adapters/audit-store.ts). */
export interface AuditDestination {
  /**
   * Writes the audit object once: where the key is taken (the same bytes retried the same day), the
   * object stored first stays, with the received_ms and corrected times the live rows were counted
   * from, and the write resolves all the same, so the retry hands off and counts like the first.
   */
  putBatch(key: string, batch: AuditBatch, record: AuditRecord): Promise<unknown>;
  /** Where putBatch writes: the hand-off message names it. */
  readonly bucket: string;
}

export interface TakeBatchPorts {
  /** The month's counters and the batch marks. */
  readonly caps: CapStore;
  readonly audit: AuditDestination;
  /** The aggregation queue, which the hand-off message goes on. */
  readonly aggregation: MessageSink<AggregationMessage>;
  /**
   * The enrichment queue, which takes the hand-off instead when an accepted install carries an
   * AdServices token (docs/ios.md, section 4): Apple's answers are stored before aggregation.
   */
  readonly enrichment: MessageSink<AggregationMessage>;
  /** The exchange rates revenue in a currency is converted with (fx_rates), read only for such events (fx_read). */
  readonly rates: FxRateStore;
  /**
   * Told of a step that failed (metric and log): before the batch is refused, or, for cap_mark,
   * after it was taken (counted, stored and handed off) with its hold left for a retry to settle.
   */
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
  /** The viewer country the edge gave (CloudFront-Viewer-Country): kept on each audit line. */
  readonly country?: string;
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
 * POST /event after authentication, in the order of docs/ingestion.md: the batch shape, the cap,
 * the per-event verdicts, the count, the audit object, the hand-off. For a company with a cap the
 * accepted events are counted before anything is stored, by a conditional write that refuses once the cap is reached
 * (metering.ts), so a refused batch writes nothing and concurrent batches cannot take a company
 * past its cap by more than one batch. A batch that then fails to be stored is taken off the count
 * again; one that is stored settles its count with its mark, so a retried batch (same bytes, same
 * audit key) counts once, whatever step an earlier attempt died at. A company without a cap is
 * counted by the aggregator instead, once per audit object (the message's `meter`): nothing here. A retry whose first attempt
 * stopped after the audit write still hands the object off: the hand-off is sent again on every
 * attempt, and the aggregator counts an audit key once.
 *
 * A refusal is thrown as an EventApiError: bad_batch_shape, cap_exceeded, or audit_write_failed
 * when a store step fails (the client retries the same bytes).
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
    country: request.country,
  };

  const { monthlyCap } = request;
  let month: MonthCount | undefined;
  if (monthlyCap !== null) {
    month = await storing(ports, audit, 'cap_read', () => readMonth(ports.caps, audit));
    // A batch an earlier attempt already counted (its hold is there) is not new to the cap.
    if (capReached(month.total, monthlyCap) && month.held === undefined) throw new EventApiError('cap_exceeded');
  }

  // Where each entry is in the body: the audit record copies it from there, and an entry the text
  // shows nested no deeper than the limit is not walked again for the depth rule.
  const texts = request.jsonText === undefined ? undefined : eventTexts(request.jsonText, batch.events.length);
  const judged = judgeEvents(batch.events, batch.sent_at_ms, audit.receivedMs, texts?.depths);
  // Revenue in a currency converted before the count: an event with no rate is rejected (bad_currency).
  const { verdicts, accepted, rejected, conversions } = await storing(ports, audit, 'fx_read', () =>
    convertRevenue(ports.rates, batch.events, judged),
  );
  let hold: BatchHold | undefined;
  // A company without a cap is counted by the aggregator, once per audit object, with no write
  // here (the hand-off message says so): only a cap needs the count before the batch is taken.
  if (accepted > 0 && monthlyCap !== null && month !== undefined) {
    const counted = await storing(ports, audit, 'cap_count', () => reserve(ports.caps, audit, accepted, monthlyCap, month));
    if (counted === 'cap_exceeded') throw new EventApiError('cap_exceeded');
    hold = counted;
  }

  const key = auditKey(audit);
  try {
    await storing(ports, audit, 'audit_write', () =>
      ports.audit.putBatch(key, audit, auditRecord(batch.events, verdicts, audit, texts, conversions)),
    );
    // Only a batch with an Apple Ads token waits for Apple; every other goes straight to aggregation.
    const withToken =
      judged.adServicesTokens !== 0 &&
      batch.events.some((event, i) => verdicts[i]?.status === 'accepted' && adServicesTokenOf(event) !== undefined);
    await storing(ports, audit, 'hand_off', () =>
      (withToken ? ports.enrichment : ports.aggregation).send(
        aggregationMessage(ports.audit.bucket, key, audit, { accepted, rejected }, monthlyCap === null && accepted > 0),
      ),
    );
  } catch (error) {
    // Not stored: the count is taken back, so the client's retry (the same bytes or new ones) counts once.
    if (hold !== undefined) await giveBack(ports.caps, hold).catch(() => undefined);
    throw error;
  }
  // Taken: counted, stored and handed off. Should the mark fail, the hold stays counted, and a
  // copy of the same bytes settles it; the batch is answered all the same.
  if (hold !== undefined) await settle(ports.caps, hold).catch((error: unknown) => ports.failed('cap_mark', audit, error));
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
