import { isPlainObject } from '../common/json';
import { checkDestination, type DestinationPolicy, DestinationRefused, type Resolve, type ResolvedAddress } from './destination';
import type { PostbackMessage, PostbackRecord, PostbackState } from './trigger';

/**
 * The postback sender's use case (docs/postbacks.md): one queue message, one
 * attempt. The record is claimed for the attempt (a duplicate message finds it claimed or
 * finished and sends nothing), the destination checked again, the partner called once with a
 * 5 s limit and no redirect followed, and the attempt recorded whatever happens.
 *
 * - 2xx: delivered.
 * - network error, timeout, 429 or 5xx: tried again after the next delay of the schedule (the
 *   message stays on the queue, invisible that long); the last attempt fails for good and the
 *   message goes to the DLQ, whose alarm fires.
 * - any other status (3xx, 4xx): failed, not retried: the partner said no, or sent us elsewhere.
 * - a destination that is not allowed any more: refused, never called.
 */

/** Delays before attempts 2..5: 5 min, 1 h, 6 h, 12 h (about 19 hours in all). SQS allows at most 12 h. */
export const DEFAULT_RETRY_DELAYS_SECONDS = [300, 3600, 21_600, 43_200] as const;
export const MAX_ATTEMPTS = DEFAULT_RETRY_DELAYS_SECONDS.length + 1;
export const SEND_TIMEOUT_MS = 5000;
/** Longer than a send can take, so two copies of one message never call the partner together. */
export const ATTEMPT_LEASE_MS = 60_000;

export type AttemptOutcome = 'delivered' | 'retry' | 'failed' | 'refused' | 'dead';

export interface AttemptRecord {
  readonly app_id: string;
  readonly postback_id: string;
  /** The postback's app_install: the privacy drain deletes an install's attempts with its postbacks. */
  readonly app_install?: string;
  readonly partner: string;
  readonly kind: PostbackRecord['kind'];
  readonly event_name: string;
  readonly attempt: number;
  readonly at_ms: number;
  readonly outcome: AttemptOutcome | 'withheld';
  readonly response_code?: number;
  readonly error?: string;
  readonly duration_ms?: number;
}

/** An attempt's log line for a postback record: who, what, which attempt, when and how it ended. */
export function attemptOf(record: PostbackRecord, attempt: number, atMs: number, outcome: AttemptRecord['outcome']): AttemptRecord {
  return {
    app_id: record.app_id,
    postback_id: record.postback_id,
    app_install: record.app_install,
    partner: record.partner,
    kind: record.kind,
    event_name: record.event_name,
    attempt,
    at_ms: atMs,
    outcome,
  };
}

export interface HttpResult {
  readonly status: number;
}

/** The postback records and their attempt log (functions/adapters/postback-store.ts). */
export interface DeliveryRecords {
  get(appId: string, postbackId: string): Promise<PostbackRecord | undefined>;
  /** Takes the record for one attempt unless another holds it or it is finished; false otherwise. */
  claim(appId: string, postbackId: string, nowMs: number, leaseMs: number): Promise<boolean>;
  /** Sets the record's state and lets go of the attempt. */
  settle(appId: string, postbackId: string, state: PostbackState): Promise<void>;
  logAttempt(attempt: AttemptRecord): Promise<void>;
}

export interface DeliveryPorts {
  readonly records: DeliveryRecords;
  readonly resolve: Resolve;
  /** One request to the checked address, Host and TLS name from the URL; throws on network errors and timeout. */
  send(request: { url: URL; address: ResolvedAddress; method: 'GET' | 'POST'; body?: string; timeoutMs: number }): Promise<HttpResult>;
}

export interface DeliveryOptions {
  readonly policy: DestinationPolicy;
  readonly retryDelaysSeconds: readonly number[];
  readonly nowMs: () => number;
}

export type DeliveryResult =
  | { readonly kind: 'done'; readonly outcome?: AttemptOutcome | 'duplicate' | 'unknown' }
  /** Comes back after delaySeconds (the message is left invisible that long). */
  | { readonly kind: 'retry'; readonly delaySeconds: number; readonly outcome: 'retry' | 'busy' }
  /** The last attempt failed: the message goes on to the DLQ. */
  | { readonly kind: 'dead' };

export class BadPostbackMessage extends Error {
  constructor(detail: string) {
    super(`bad postback message: ${detail}`);
    this.name = 'BadPostbackMessage';
  }
}

export function parsePostbackMessage(body: string): PostbackMessage {
  let message: unknown;
  try {
    message = JSON.parse(body);
  } catch {
    throw new BadPostbackMessage('not JSON');
  }
  if (!isPlainObject(message) || message.version !== 1 || typeof message.app_id !== 'string' || typeof message.postback_id !== 'string') {
    throw new BadPostbackMessage('not a version 1 postback message');
  }
  return message as unknown as PostbackMessage;
}

/** POSTBACK_RETRY_DELAYS_SECONDS="1,1,2,2" (tests) or the default schedule; at most 12 h each. */
export function retryDelaysFromEnv(value: string | undefined): readonly number[] {
  if (!value) return DEFAULT_RETRY_DELAYS_SECONDS;
  const delays = value.split(',').map((part) => Number(part.trim()));
  if (delays.length === 0 || delays.some((delay) => !Number.isInteger(delay) || delay < 0 || delay > 43_200)) {
    throw new Error('POSTBACK_RETRY_DELAYS_SECONDS is a comma-separated list of whole seconds, each 0 to 43200');
  }
  return delays;
}

/** `receiveCount` is the queue's count of this message's receives: attempt n is the n-th. */
export async function deliverPostback(
  ports: DeliveryPorts,
  message: PostbackMessage,
  receiveCount: number,
  options: DeliveryOptions,
): Promise<DeliveryResult> {
  const record = await ports.records.get(message.app_id, message.postback_id);
  if (!record) return { kind: 'done', outcome: 'unknown' };
  // A dead postback's message keeps failing until SQS moves it to the DLQ.
  if (record.state === 'dead') return { kind: 'dead' };
  if (record.state !== 'new' && record.state !== 'queued') return { kind: 'done', outcome: 'duplicate' };
  const started = options.nowMs();
  if (!(await ports.records.claim(record.app_id, record.postback_id, started, ATTEMPT_LEASE_MS))) {
    // Another copy of the message holds it: come back once its attempt is over, and find it settled.
    return { kind: 'retry', delaySeconds: Math.ceil(ATTEMPT_LEASE_MS / 1000), outcome: 'busy' };
  }
  const attempt = Math.max(1, receiveCount);
  const last = attempt >= options.retryDelaysSeconds.length + 1;
  const log = (outcome: AttemptRecord['outcome'], detail: { response_code?: number; error?: string } = {}) =>
    ports.records.logAttempt({ ...attemptOf(record, attempt, started, outcome), duration_ms: options.nowMs() - started, ...detail });

  let target: Awaited<ReturnType<typeof checkDestination>>;
  try {
    target = await checkDestination(record.url, options.policy, ports.resolve);
  } catch (error) {
    if (!(error instanceof DestinationRefused)) throw error;
    // A name that does not resolve now may later (a DNS outage): that is a network error.
    if (error.reason !== 'unresolvable') {
      await log('refused', { error: error.message });
      await ports.records.settle(record.app_id, record.postback_id, 'refused');
      return { kind: 'done', outcome: 'refused' };
    }
    return retryOrDie(ports, record, last, attempt, options, () => log(last ? 'dead' : 'retry', { error: error.message }));
  }

  let status: number;
  try {
    ({ status } = await ports.send({
      url: target.url,
      address: target.address,
      method: record.method,
      body: record.body,
      timeoutMs: SEND_TIMEOUT_MS,
    }));
  } catch (error) {
    return retryOrDie(ports, record, last, attempt, options, () => log(last ? 'dead' : 'retry', { error: networkError(error) }));
  }
  if (status >= 200 && status < 300) {
    await log('delivered', { response_code: status });
    await ports.records.settle(record.app_id, record.postback_id, 'delivered');
    return { kind: 'done', outcome: 'delivered' };
  }
  if (status === 429 || status >= 500) {
    return retryOrDie(ports, record, last, attempt, options, () =>
      log(last ? 'dead' : 'retry', { response_code: status, error: `HTTP ${status}` }),
    );
  }
  const why = status >= 300 && status < 400 ? `HTTP ${status}: redirects are not followed` : `HTTP ${status}: not retried`;
  await log('failed', { response_code: status, error: why });
  await ports.records.settle(record.app_id, record.postback_id, 'failed');
  return { kind: 'done', outcome: 'failed' };
}

async function retryOrDie(
  ports: DeliveryPorts,
  record: PostbackRecord,
  last: boolean,
  attempt: number,
  options: DeliveryOptions,
  log: () => Promise<void>,
): Promise<DeliveryResult> {
  await log();
  await ports.records.settle(record.app_id, record.postback_id, last ? 'dead' : 'queued');
  // Attempt n is retried after the n-th delay; the attempt after the last delay is the last one.
  const delaySeconds = options.retryDelaysSeconds[attempt - 1];
  if (last || delaySeconds === undefined) return { kind: 'dead' };
  return { kind: 'retry', delaySeconds, outcome: 'retry' };
}

function networkError(error: unknown): string {
  const err = error as NodeJS.ErrnoException;
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return `no answer within ${SEND_TIMEOUT_MS / 1000} s`;
  return err.code ? `${err.code}: ${err.message}` : err.message;
}
