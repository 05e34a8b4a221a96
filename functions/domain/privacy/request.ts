import { EventApiError } from '../ingest/event-api';
import { type PrivacyMessage, type PrivacyReceipt, parseDeletionRequest, privacyRequest } from './privacy';

/** Where a taken request goes: its receipt kept and its message queued for the nightly drain. */
export interface PrivacyRequestSink {
  /**
   * Keeps the receipt, then queues the message; throws when either fails, and then leaves no
   * receipt that says "queued" for a request the queue never got.
   */
  submit(receipt: PrivacyReceipt, message: PrivacyMessage): Promise<void>;
}

export interface PrivacyRequestPorts {
  readonly requests: PrivacyRequestSink;
  /** A fresh id for each request: the receipt's key and the message's name for it. */
  newRequestId(): string;
  /** Told of a request that could not be queued (metric and log), before it is refused. */
  failed(receipt: PrivacyReceipt, error: unknown): void;
}

/** An authenticated POST /privacy/delete, body decoded and parsed. */
export interface DeletionRequest {
  readonly appId: string;
  readonly companyId: string;
  /** The parsed JSON, not yet known to name an install. */
  readonly body: unknown;
  readonly receivedMs: number;
}

/**
 * POST /privacy/delete after authentication (docs/privacy.md): the install the body names, then
 * a receipt and a queued request for the nightly drain. Nothing is deleted here. Refused with an
 * EventApiError: bad_json or bad_install_uuid for the body, queue_write_failed when the request
 * could not be kept and queued (the client retries).
 */
export async function takePrivacyRequest(ports: PrivacyRequestPorts, request: DeletionRequest): Promise<PrivacyReceipt> {
  const installUuid = parseDeletionRequest(request.body);
  const { receipt, message } = privacyRequest({
    requestId: ports.newRequestId(),
    appId: request.appId,
    companyId: request.companyId,
    installUuid,
    receivedMs: request.receivedMs,
  });
  try {
    await ports.requests.submit(receipt, message);
  } catch (error) {
    ports.failed(receipt, error);
    throw new EventApiError('queue_write_failed');
  }
  return receipt;
}
