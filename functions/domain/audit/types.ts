import type { AdServicesAnswer } from '../adservices/answers';

/**
 * The audit record (docs/ingestion.md, "The audit object"): one gzip JSON Lines object per batch,
 * one line per event, accepted and rejected, in input order, and one message per object on the
 * aggregation queue. Ingest writes them (encode.ts), the aggregator, `admin rebuild` and the
 * privacy drain read them back (decode.ts).
 */

/** The batch an audit object records: what names the object and what every line shares. */
export interface AuditBatch {
  readonly companyId: string;
  readonly appId: string;
  readonly receivedMs: number;
  /** SHA-256 of the raw body as sent: the object's name, so a retried batch lands on the same key. */
  readonly bodySha256: string;
  readonly clientIp: string;
  readonly sdkVersion?: string;
  /** The request's viewer country (CloudFront-Viewer-Country, ISO 3166-1 alpha-2), when the edge gave one. */
  readonly country?: string;
}

export interface AuditLine {
  index: number;
  status: 'accepted' | 'rejected';
  reason?: string;
  received_ms: number;
  corrected_ts?: number;
  client_ip: string;
  sdk_version: string | null;
  /** The batch request's viewer country, from the edge (an install's country when no click matched: docs/analytics.md). */
  country?: string;
  /** Lower-cased, whenever the event carries a well-formed one. */
  install_uuid?: string;
  /**
   * SHA-256 of "<app_id>:<device_id>", or of "<app_id>:<its JSON text>" for a device_id that is no
   * string (a rejected event's number, array or object): the device id itself is never stored.
   */
  device_hash?: string;
  /**
   * The event as sent, minus device_id (unless null); null for an entry too deeply nested to store.
   * An event with `revenue` in a `currency` also holds the converted `revenue_usd`, which the
   * aggregator counts (docs/ingestion.md, "Currencies").
   */
  event: unknown;
  /** How a converted event's revenue_usd was made: its currency, amount as sent, the rate and the rate's day. */
  fx?: AuditFx;
  /**
   * Never stored in the object: Apple's answer to the line's AdServices token, which the aggregator
   * joins from the answers object beside it (functions/domain/adservices/answers.ts, docs/ios.md).
   */
  adservices?: AdServicesAnswer;
}

/** The conversion of an event's `revenue` in `currency` (functions/domain/fx/event-revenue.ts). */
export interface AuditFx {
  readonly currency: string;
  /** The event's `revenue` as sent. */
  readonly amount: number;
  /** US dollars per unit used. */
  readonly rate: number;
  /** The day the rate is of: the event's UTC day, or up to 7 days before it. */
  readonly rate_day: string;
}

/** The message on the aggregation queue, one per audit object. */
export interface AggregationMessage {
  version: 1;
  bucket: string;
  audit_key: string;
  company_id: string;
  app_id: string;
  accepted: number;
  rejected: number;
  received_ms: number;
  /**
   * Set when ingestion left the object's accepted events to the aggregator to add to its company's
   * monthly count (a company without a cap: docs/ingestion.md, "The free-tier cap, metered once").
   */
  meter?: true;
  /**
   * Set by adservices-enrich (docs/ios.md, section 4): Apple's answers to the object's AdServices
   * tokens are stored beside it (`<audit_key>.adservices.json`), for the aggregator to read.
   */
  enriched?: true;
}
