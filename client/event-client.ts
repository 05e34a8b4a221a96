import type { BatchField } from '../functions/domain/ingest/event-api';
import type { EventFaultField, RejectionReason, SdkEvent } from '../functions/domain/ingest/event-validation';
import { backoffMs, signedBody } from '../packages/sdk-core/src';

/**
 * A small typed server-to-server client of the event API (POST /event, POST /privacy/delete), used
 * by the tests, the README and the traffic simulator. It builds a batch, gzips it from 10 events
 * (the interface's recommendation), signs the bytes exactly as sent, and retries 429 and 503 (and
 * network failures) with capped exponential backoff and full jitter. The gzip, the signature and
 * the backoff are the SDK core's (packages/sdk-core: signedBody, backoffMs), so the repository has
 * one implementation of each; this client adds what a server wants instead of the core's
 * persisted queue: one call per batch, a bounded number of attempts, the answer returned.
 *
 * Each attempt of a batch is stamped with its own sent_at_ms and signed again (docs/architecture.md section 14,
 * docs/ingestion.md "What an SDK must do"): the service corrects each event's time by
 * received_ms - sent_at_ms, so a stamp kept from an earlier attempt would move every event by the
 * time spent waiting (seconds of backoff, or hours offline). The events themselves are sent
 * unchanged, event_ids included, so an event that an earlier attempt did store is counted once.
 */
export type { BatchField, EventFaultField, RejectionReason, SdkEvent };

export interface EventResult {
  event_id: string;
  status: 'accepted' | 'rejected';
  reason?: RejectionReason;
  /** On a rejected result, the field to fix (`sent_at_ms` when only the batch's stamp put the time out of range). */
  field?: EventFaultField;
}

export interface EventBatchResult {
  accepted: number;
  rejected: number;
  results: EventResult[];
  audit_key: string;
}

export interface EventBatch {
  events: unknown[];
  sent_at_ms: number;
}

export interface AppCredentials {
  companyKey: string;
  appKey: string;
  signingSecret: string;
}

export interface SignedRequest {
  headers: Record<string, string>;
  body: Buffer;
}

export const DEFAULT_SDK_VERSION = 'attribution-client-ts/1.0.0';
export const GZIP_FROM_EVENTS = 10;

export function buildBatch(events: readonly unknown[], sentAtMs = Date.now()): EventBatch {
  return { events: [...events], sent_at_ms: sentAtMs };
}

/** Serialises a payload, gzips it when asked, and signs the bytes that will go on the wire. */
export function signedRequest(
  credentials: AppCredentials,
  payload: unknown,
  options: { gzip?: boolean; sdkVersion?: string } = {},
): SignedRequest {
  const { body, headers } = signedBody(credentials, payload, {
    gzip: options.gzip ?? false,
    sdkVersion: options.sdkVersion ?? DEFAULT_SDK_VERSION,
  });
  return { headers, body: Buffer.from(body.buffer, body.byteOffset, body.byteLength) };
}

/** The request for a batch: gzip from GZIP_FROM_EVENTS events unless told otherwise. */
export function eventBatchRequest(
  credentials: AppCredentials,
  batch: EventBatch,
  options: { gzip?: boolean; sdkVersion?: string } = {},
): SignedRequest {
  return signedRequest(credentials, batch, {
    gzip: options.gzip ?? batch.events.length >= GZIP_FROM_EVENTS,
    sdkVersion: options.sdkVersion,
  });
}

/**
 * The request was refused (a 4xx) or still failing after the last attempt. `field` is the member
 * of the batch a bad_batch_shape names (`events` or `sent_at_ms`), when the answer names one.
 */
export class EventApiRequestError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    readonly attempts: number,
    readonly field?: string,
  ) {
    super(`event API answered ${status} ${code}${field === undefined ? '' : ` (field ${field})`} after ${attempts} attempt(s)`);
    this.name = 'EventApiRequestError';
  }
}

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export interface EventClientOptions extends AppCredentials {
  baseUrl: string;
  sdkVersion?: string;
  retry?: Partial<RetryPolicy>;
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
  /** The device's clock, read for each attempt's sent_at_ms (Date.now). */
  now?: () => number;
}

export interface RawResponse {
  status: number;
  body: unknown;
  attempts: number;
}

const RETRIED_STATUSES = new Set([429, 503]);
const DEFAULT_RETRY: RetryPolicy = { maxAttempts: 5, baseDelayMs: 200, maxDelayMs: 5000 };

export class EventClient {
  private readonly retry: RetryPolicy;
  private readonly fetch: typeof fetch;
  private readonly sleep: (ms: number) => Promise<void>;
  private readonly random: () => number;
  private readonly now: () => number;

  constructor(private readonly options: EventClientOptions) {
    this.retry = { ...DEFAULT_RETRY, ...options.retry };
    this.fetch = options.fetch ?? globalThis.fetch;
    this.sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.random = options.random ?? Math.random;
    this.now = options.now ?? (() => Date.now());
  }

  /**
   * Sends one batch (1 to 1,000 events); resolves with the per-event results. Each attempt is
   * stamped with the clock and signed again; `sentAtMs` pins the stamp of every attempt instead
   * (a test that needs the very same bytes twice), which an SDK must not do.
   */
  async sendEvents(events: readonly SdkEvent[], options: { sentAtMs?: number; gzip?: boolean } = {}): Promise<EventBatchResult> {
    const attempt = () =>
      eventBatchRequest(this.options, buildBatch(events, options.sentAtMs ?? this.now()), {
        gzip: options.gzip,
        sdkVersion: this.options.sdkVersion,
      });
    return (await this.expect(200, '/event', attempt)) as EventBatchResult;
  }

  /** Asks for an install's data to be deleted; the service queues it and answers 202. */
  async deleteInstall(installUuid: string): Promise<{ ok: true; queued: true }> {
    const request = signedRequest(this.options, { install_uuid: installUuid }, { sdkVersion: this.options.sdkVersion });
    return (await this.expect(202, '/privacy/delete', request)) as { ok: true; queued: true };
  }

  /**
   * POSTs a signed request, retrying 429, 503 and network failures; any other answer is returned
   * as it is. Given a function, it makes each attempt's request when the attempt is made.
   */
  async post(path: string, request: SignedRequest | (() => SignedRequest)): Promise<RawResponse> {
    const url = new URL(path, this.options.baseUrl);
    for (let attempt = 1; ; attempt++) {
      const { headers, body } = typeof request === 'function' ? request() : request;
      let response: Response | undefined;
      try {
        response = await this.fetch(url, { method: 'POST', headers, body });
      } catch (error) {
        if (attempt >= this.retry.maxAttempts) throw error;
      }
      if (response) {
        const body = await readJson(response);
        if (!RETRIED_STATUSES.has(response.status) || attempt >= this.retry.maxAttempts) {
          return { status: response.status, body, attempts: attempt };
        }
      }
      await this.sleep(this.backoffMs(attempt));
    }
  }

  /** Full jitter: a random wait up to base * 2^(attempt-1), capped (AWS Architecture Blog, "Exponential Backoff and Jitter"). */
  backoffMs(attempt: number): number {
    return backoffMs(attempt, this.random(), { baseMs: this.retry.baseDelayMs, maxMs: this.retry.maxDelayMs });
  }

  private async expect(status: number, path: string, request: SignedRequest | (() => SignedRequest)): Promise<unknown> {
    const response = await this.post(path, request);
    if (response.status !== status) {
      const { error: code, field } = (response.body ?? {}) as { error?: unknown; field?: unknown };
      throw new EventApiRequestError(
        response.status,
        typeof code === 'string' ? code : `http_${response.status}`,
        response.attempts,
        typeof field === 'string' ? field : undefined,
      );
    }
    return response.body;
  }
}

async function readJson(response: Response): Promise<unknown> {
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
