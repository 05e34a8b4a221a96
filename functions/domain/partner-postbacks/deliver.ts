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
 * - network error, timeout, 429 or 5xx: tried again after the next delay of the schedule; the
 *   last attempt fails for good and the message goes to the DLQ, whose alarm fires.
 *
 * A retry is a new message carrying its attempt and its time (`not_before_ms`), sent with a delay
 * of at most 15 minutes (SQS's DelaySeconds); received before its time, it is sent on again with
 * the next hop's delay. So no message waits in flight (SQS holds at most 120,000 in flight per
 * queue, and one dead partner would otherwise stop every partner's postbacks) and no visibility
 * ends more than 12 h after its receive. The next message is sent before the attempt is recorded:
 * if it cannot be sent, the received message comes back and the attempt is made again, rather
 * than the postback being lost. Copies are harmless: the record counts the attempts made, and a
 * message for an attempt already made sends nothing.
 * - any other status (3xx, 4xx): failed, not retried: the partner said no, or sent us elsewhere.
 * - a destination that is not allowed any more: refused, never called.
 */

/** Delays before attempts 2..5: 5 min, 1 h, 6 h, 12 h (about 19 hours in all). */
export const DEFAULT_RETRY_DELAYS_SECONDS = [300, 3600, 21_600, 43_200] as const;
export const MAX_ATTEMPTS = DEFAULT_RETRY_DELAYS_SECONDS.length + 1;
/** The longest delay SQS gives a message it is sent (DelaySeconds): one hop of a longer wait. */
export const MAX_HOP_SECONDS = 900;
/** Bounds a message's attempt number: far above any schedule the environment can set. */
const MAX_MESSAGE_ATTEMPT = 100;
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
  /**
   * Takes the record for one attempt unless another holds it, it is finished or `attempt` was made
   * already (its attempts are `attempt` or more); false otherwise.
   */
  claim(appId: string, postbackId: string, nowMs: number, leaseMs: number, attempt: number): Promise<boolean>;
  /** Sets the record's state and the attempts made, and lets go of the attempt. */
  settle(appId: string, postbackId: string, state: PostbackState, attempts: number): Promise<void>;
  logAttempt(attempt: AttemptRecord): Promise<void>;
}

/** The postback queue (functions/adapters/message-queue.ts). */
export interface PostbackQueue {
  /** Sends the message, received no sooner than `delaySeconds` (0..MAX_HOP_SECONDS) from now. */
  send(message: PostbackMessage, delaySeconds: number): Promise<void>;
}

/** The next message could not be sent: the received one must come back, not be acknowledged. */
export class RequeueFailed extends Error {
  constructor(
    readonly reason: Requeued['reason'],
    readonly cause: unknown,
  ) {
    super(`the postback's next message could not be sent (${reason})`);
    this.name = 'RequeueFailed';
  }
}

export interface DeliveryPorts {
  readonly records: DeliveryRecords;
  readonly queue: PostbackQueue;
  readonly resolve: Resolve;
  /** One request to the checked address, Host and TLS name from the URL; throws on network errors and timeout. */
  send(request: { url: URL; address: ResolvedAddress; method: 'GET' | 'POST'; body?: string; timeoutMs: number }): Promise<HttpResult>;
}

export interface DeliveryOptions {
  readonly policy: DestinationPolicy;
  readonly retryDelaysSeconds: readonly number[];
  readonly nowMs: () => number;
}

/**
 * The message's work goes on in a new message, sent with `delaySeconds`: a retry, a copy that
 * found another copy attempting (busy), or a message early for its time (waiting, one hop).
 * The received message is finished with.
 */
export interface Requeued {
  readonly kind: 'requeued';
  readonly reason: 'retry' | 'busy' | 'waiting';
  readonly attempt: number;
  readonly delaySeconds: number;
}

export type DeliveryResult =
  | { readonly kind: 'done'; readonly outcome?: AttemptOutcome | 'duplicate' | 'unknown' }
  | Requeued
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
  const { attempt, not_before_ms: notBefore } = message;
  if (attempt !== undefined && !(Number.isInteger(attempt) && (attempt as number) >= 1 && (attempt as number) <= MAX_MESSAGE_ATTEMPT)) {
    throw new BadPostbackMessage(`attempt is a whole number from 1 to ${MAX_MESSAGE_ATTEMPT}`);
  }
  if (notBefore !== undefined && !Number.isSafeInteger(notBefore)) throw new BadPostbackMessage('not_before_ms is epoch milliseconds');
  return message as unknown as PostbackMessage;
}

/** A message's wait, at most one hop: how long until its time, or 0 when it is due. */
export function hopSeconds(message: PostbackMessage, nowMs: number): number {
  if (message.not_before_ms === undefined || message.not_before_ms <= nowMs) return 0;
  return Math.min(MAX_HOP_SECONDS, Math.ceil((message.not_before_ms - nowMs) / 1000));
}

/** Sends `message` for its next hop; a failure is RequeueFailed, so the received message comes back. */
async function requeue(
  ports: DeliveryPorts,
  message: PostbackMessage,
  delaySeconds: number,
  reason: Requeued['reason'],
): Promise<Requeued> {
  try {
    await ports.queue.send(message, delaySeconds);
  } catch (error) {
    throw new RequeueFailed(reason, error);
  }
  return { kind: 'requeued', reason, attempt: message.attempt ?? 1, delaySeconds };
}

/** POSTBACK_RETRY_DELAYS_SECONDS="1,1,2,2" (tests) or the default schedule; at most 12 h each (a bound, not SQS's: a wait is chained hops). */
export function retryDelaysFromEnv(value: string | undefined): readonly number[] {
  if (!value) return DEFAULT_RETRY_DELAYS_SECONDS;
  const delays = value.split(',').map((part) => Number(part.trim()));
  if (delays.length === 0 || delays.some((delay) => !Number.isInteger(delay) || delay < 0 || delay > 43_200)) {
    throw new Error('POSTBACK_RETRY_DELAYS_SECONDS is a comma-separated list of whole seconds, each 0 to 43200');
  }
  return delays;
}

/** One received message: its attempt when due, or its next hop when early. */
export async function deliverPostback(ports: DeliveryPorts, message: PostbackMessage, options: DeliveryOptions): Promise<DeliveryResult> {
  const hop = hopSeconds(message, options.nowMs());
  if (hop > 0) return requeue(ports, message, hop, 'waiting');
  const record = await ports.records.get(message.app_id, message.postback_id);
  if (!record) return { kind: 'done', outcome: 'unknown' };
  // A dead postback's message keeps failing until SQS moves it to the DLQ.
  if (record.state === 'dead') return { kind: 'dead' };
  if (record.state !== 'new' && record.state !== 'queued') return { kind: 'done', outcome: 'duplicate' };
  const attempt = message.attempt ?? 1;
  if ((record.attempts ?? 0) >= attempt) return { kind: 'done', outcome: 'duplicate' };
  const started = options.nowMs();
  if (!(await ports.records.claim(record.app_id, record.postback_id, started, ATTEMPT_LEASE_MS, attempt))) {
    // Another copy of the message holds it (or has just made this attempt): come back once its
    // attempt is over, and find it made.
    return requeue(ports, message, Math.ceil(ATTEMPT_LEASE_MS / 1000), 'busy');
  }
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
      await ports.records.settle(record.app_id, record.postback_id, 'refused', attempt);
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
    await ports.records.settle(record.app_id, record.postback_id, 'delivered', attempt);
    return { kind: 'done', outcome: 'delivered' };
  }
  if (status === 429 || status >= 500) {
    return retryOrDie(ports, record, last, attempt, options, () =>
      log(last ? 'dead' : 'retry', { response_code: status, error: `HTTP ${status}` }),
    );
  }
  const why = status >= 300 && status < 400 ? `HTTP ${status}: redirects are not followed` : `HTTP ${status}: not retried`;
  await log('failed', { response_code: status, error: why });
  await ports.records.settle(record.app_id, record.postback_id, 'failed', attempt);
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
  // Attempt n is retried after the n-th delay; the attempt after the last delay is the last one.
  const delaySeconds = options.retryDelaysSeconds[attempt - 1];
  if (last || delaySeconds === undefined) {
    await ports.records.settle(record.app_id, record.postback_id, 'dead', attempt);
    return { kind: 'dead' };
  }
  const next: PostbackMessage = {
    version: 1,
    app_id: record.app_id,
    postback_id: record.postback_id,
    attempt: attempt + 1,
    not_before_ms: options.nowMs() + delaySeconds * 1000,
  };
  // Sent before the attempt is recorded: if it is not sent, this attempt is made again.
  const requeued = await requeue(ports, next, Math.min(MAX_HOP_SECONDS, delaySeconds), 'retry');
  await ports.records.settle(record.app_id, record.postback_id, 'queued', attempt);
  return requeued;
}

function networkError(error: unknown): string {
  const err = error as NodeJS.ErrnoException;
  if (err.name === 'TimeoutError' || err.name === 'AbortError') return `no answer within ${SEND_TIMEOUT_MS / 1000} s`;
  return err.code ? `${err.code}: ${err.message}` : err.message;
}
