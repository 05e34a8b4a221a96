import { ServiceError } from '../common/errors';

/**
 * The failures of the event API (POST /event and POST /privacy/delete) and their statuses, as
 * the interface (docs/openapi.yaml) lists them, 415 and the privacy 503 included. One table, so
 * the handlers, the tests ("only documented codes") and docs/ingestion.md cannot disagree.
 */
export const EVENT_API_ERRORS = {
  missing_auth_headers: 400,
  empty_body: 400,
  bad_json: 400,
  bad_batch_shape: 400,
  bad_gzip: 400,
  bad_install_uuid: 400,
  unknown_app_key: 401,
  unknown_company_key: 401,
  company_suspended: 401,
  app_company_mismatch: 401,
  bad_signature: 401,
  body_too_large: 413,
  decompressed_too_large: 413,
  unsupported_content_encoding: 415,
  cap_exceeded: 429,
  audit_write_failed: 503,
  queue_write_failed: 503,
} as const;

export type EventApiErrorCode = keyof typeof EVENT_API_ERRORS;

/**
 * The members of a batch a bad_batch_shape can name, in the order they are checked: the first at
 * fault is named. A body that is not a JSON object names none.
 */
export const BATCH_FIELDS = ['events', 'sent_at_ms'] as const;
export type BatchField = (typeof BATCH_FIELDS)[number];

/**
 * A request the event API refuses as a whole: a ServiceError whose status is the table's, so the
 * shared HTTP middleware renders it as {"error": code} like any other, with the field at fault
 * beside the code when there is one ({"error":"bad_batch_shape","field":"sent_at_ms"}): a missing
 * sent_at_ms and an empty events read differently. The interface leaves this body's shape open;
 * the codes stay its own (docs/ingestion.md, "Which field is at fault").
 */
export class EventApiError extends ServiceError {
  declare readonly code: EventApiErrorCode;

  constructor(
    code: EventApiErrorCode,
    readonly field?: BatchField,
  ) {
    super(EVENT_API_ERRORS[code], code);
    this.name = 'EventApiError';
  }

  override body(): { readonly error: string; readonly field?: BatchField } {
    return this.field === undefined ? super.body() : { error: this.code, field: this.field };
  }
}

/** Limits of docs/ingestion.md. */
export const MAX_RAW_BODY_BYTES = 1024 * 1024;
export const MAX_DECOMPRESSED_BYTES = 8 * 1024 * 1024;
export const MAX_EVENTS_PER_BATCH = 1000;
