import { createHmac, timingSafeEqual } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import type { Exchange } from './proxy';
import type { RuleId } from './rules';

/** One breach of a rule, naming the request that shows it (when one does). */
export interface Finding {
  readonly rule: RuleId;
  readonly detail: string;
  readonly request?: string;
}

export interface CheckInput {
  readonly exchanges: readonly Exchange[];
  readonly marks: readonly { name: string; ms: number }[];
  readonly companyKey: string;
  readonly appKey: string;
  readonly signingSecret: string;
  /** Conformance events the SDK was asked to track (seq 0 to events - 1). */
  readonly events: number;
  readonly requireConsent: boolean;
  /** Whether the scenario lets the SDK deliver every event (not when its secret expires). */
  readonly delivers: boolean;
  /** How many conformance events the runtime's own events report counts. */
  readonly countedByRuntime?: number;
}

export const CONFORMANCE_EVENT = 'conformance_event';
/** Requests the protocol signs (docs/sdk-protocol.md, P-SIGN). */
const SIGNED_PATHS = new Set(['/event', '/sdk/v1/attribution', '/privacy/delete']);
/** How much later than the first batch a concurrent first-launch call may arrive (two connections race). */
const FIRST_LAUNCH_SLACK_MS = 1_000;
/** Clock slack for Retry-After: the proxy stamps the answer when written, the SDK times it when read. */
const RETRY_AFTER_SLACK_MS = 100;
/** A retry loop: this many failed attempts of one batch each retried within RETRY_LOOP_MS. */
const RETRY_LOOP_ATTEMPTS = 5;
const RETRY_LOOP_MS = 5;
/** How long around a restart mark a request may be the killed process's (nearRestart). */
const RESTART_GRACE_MS = 1_000;
const FORBIDDEN_FIELDS = ['ip', 'ip_address', 'client_ip', 'idfa', 'gaid', 'advertising_id', 'adid', 'idfv_ip'];

interface SentEvent {
  readonly event_id: string;
  readonly event_name: string;
  readonly seq?: number;
  readonly fields: Record<string, unknown>;
}

interface Batch {
  readonly exchange: Exchange;
  readonly events: readonly SentEvent[];
  readonly sentAtMs?: number;
}

export function describe(exchange: Exchange, batch?: Batch): string {
  const what = batch ? ` (${batch.events.length} events, sent_at_ms ${batch.sentAtMs ?? 'missing'})` : '';
  const heard = exchange.heardStatus === undefined ? 'connection dropped' : `answered ${exchange.heardStatus}`;
  return `#${exchange.n} ${exchange.method} ${exchange.path}${what}, ${heard} (${exchange.fault.kind})`;
}

/** Every finding of the record against the checked rules (conformance/rules.ts). */
export function check(input: CheckInput): Finding[] {
  const findings: Finding[] = [];
  const add = (rule: RuleId, detail: string, exchange?: Exchange, batch?: Batch) =>
    findings.push({ rule, detail, ...(exchange && { request: describe(exchange, batch) }) });
  const batches: Batch[] = [];

  for (const exchange of input.exchanges) {
    if (exchange.method === 'OPTIONS') continue;
    if (input.requireConsent) {
      const consent = input.marks.find((mark) => mark.name === 'consent');
      if (!consent || exchange.receivedMs < consent.ms) add('P-CONSENT-1', 'sent before the app gave consent', exchange);
    }
    if (!SIGNED_PATHS.has(exchange.path) || exchange.method !== 'POST') continue;
    checkHeaders(input, exchange, add);
    const batch = exchange.path === '/event' ? readBatch(exchange, add) : undefined;
    if (batch) batches.push(batch);
  }

  checkBatches(batches, input.marks, add);
  checkRetries(batches, input.marks, add);
  checkFirstLaunch(input, batches, add);
  if (input.delivers) checkOnce(input, batches, add);
  else checkStopsAfter401(batches, add);
  return findings;
}

type Add = (rule: RuleId, detail: string, exchange?: Exchange, batch?: Batch) => void;

function checkHeaders(input: CheckInput, exchange: Exchange, add: Add): void {
  const { headers } = exchange;
  const missing = ['x-service-company-key', 'x-service-app-key', 'x-service-signature', 'x-service-sdk'].filter((name) => !headers[name]);
  if (missing.length > 0) add('P-HDR-1', `missing ${missing.join(', ')}`, exchange);
  else if (headers['x-service-company-key'] !== input.companyKey || headers['x-service-app-key'] !== input.appKey)
    add('P-HDR-1', "the company or app key is not the scenario's app's", exchange);
  if (!/^application\/json\b/i.test(headers['content-type'] ?? ''))
    add('P-HDR-1', `content-type is ${headers['content-type'] ?? 'missing'}`, exchange);
  const sent = headers['x-service-signature'] ?? '';
  const expected = createHmac('sha256', input.signingSecret).update(exchange.body).digest('hex');
  if (!/^[0-9a-f]{64}$/.test(sent) || !timingSafeEqual(Buffer.from(sent), Buffer.from(expected)))
    add('P-SIGN-1', 'the signature is not the HMAC-SHA256 of the body bytes as sent', exchange);
}

function readBatch(exchange: Exchange, add: Add): Batch | undefined {
  let text: string;
  try {
    text = (exchange.headers['content-encoding'] === 'gzip' ? gunzipSync(exchange.body) : exchange.body).toString('utf8');
  } catch {
    add('P-BATCH-1', 'content-encoding gzip, but the body is not gzip', exchange);
    return undefined;
  }
  let payload: { events?: unknown; sent_at_ms?: unknown };
  try {
    payload = JSON.parse(text) as typeof payload;
  } catch {
    add('P-BATCH-1', 'the body is not JSON', exchange);
    return undefined;
  }
  if (!Array.isArray(payload.events) || payload.events.length < 1 || payload.events.length > 1000) {
    add('P-BATCH-1', 'events is not an array of 1 to 1,000 events', exchange);
    return undefined;
  }
  const events: SentEvent[] = [];
  for (const raw of payload.events as Record<string, unknown>[]) {
    if (typeof raw?.event_id !== 'string' || typeof raw.event_name !== 'string' || typeof raw.install_uuid !== 'string') {
      add('P-BATCH-1', 'an event without a string event_id, event_name or install_uuid', exchange);
      return undefined;
    }
    const properties = raw.properties as Record<string, unknown> | undefined;
    const seq = raw.event_name === CONFORMANCE_EVENT && typeof properties?.seq === 'number' ? properties.seq : undefined;
    events.push({ event_id: raw.event_id, event_name: raw.event_name, ...(seq !== undefined && { seq }), fields: raw });
  }
  const batch: Batch = { exchange, events, ...(typeof payload.sent_at_ms === 'number' && { sentAtMs: payload.sent_at_ms }) };
  if (batch.sentAtMs === undefined) add('P-STAMP-1', 'no numeric sent_at_ms', exchange, batch);
  if (events.length >= 10 && exchange.headers['content-encoding'] !== 'gzip')
    add('P-GZIP-1', `${events.length} events sent without Content-Encoding: gzip`, exchange, batch);
  for (const event of events) {
    const fields = { ...event.fields, ...((event.fields.properties as Record<string, unknown> | undefined) ?? {}) };
    const forbidden = FORBIDDEN_FIELDS.filter((name) => name in fields);
    if (forbidden.length > 0) add('P-PRIV-1', `event ${event.event_id} carries ${forbidden.join(', ')}`, exchange, batch);
  }
  return batch;
}

function checkBatches(batches: readonly Batch[], marks: CheckInput['marks'], add: Add): void {
  // P-ID-1: a conformance event (by its seq) under one event_id only.
  const idOfSeq = new Map<number, { id: string; batch: Batch }>();
  for (const batch of batches) {
    for (const event of batch.events) {
      if (event.seq === undefined) continue;
      const first = idOfSeq.get(event.seq);
      if (!first) idOfSeq.set(event.seq, { id: event.event_id, batch });
      else if (first.id !== event.event_id)
        add(
          'P-ID-1',
          `seq ${event.seq} sent as ${event.event_id}, first as ${first.id} in #${first.batch.exchange.n}`,
          batch.exchange,
          batch,
        );
    }
  }
  // P-SEND-1: no two event requests of the install in flight at once.
  for (const [i, batch] of batches.entries()) {
    const previous = batches[i - 1];
    if (
      previous &&
      !nearRestart(marks, previous, batch) &&
      previous.exchange.answeredMs !== undefined &&
      batch.exchange.receivedMs < previous.exchange.answeredMs - 1
    )
      add('P-SEND-1', `sent while #${previous.exchange.n} was still in flight`, batch.exchange, batch);
  }
}

/**
 * A request of a process killed mid-send can reach the proxy after its relaunch's first ones, in
 * any order with them: two requests either of which arrived within RESTART_GRACE_MS of a restart
 * mark are not held to the order rules (P-SEND-1, P-STAMP-1).
 */
function nearRestart(marks: CheckInput['marks'], ...batches: Batch[]): boolean {
  return marks.some(
    (mark) => mark.name === 'restart' && batches.some(({ exchange }) => Math.abs(exchange.receivedMs - mark.ms) <= RESTART_GRACE_MS),
  );
}

/** P-STAMP-1, P-BACKOFF-1 and -2: each attempt against the one before it that carried the same events. */
function checkRetries(batches: readonly Batch[], marks: CheckInput['marks'], add: Add): void {
  const lastAttemptOf = new Map<string, Batch>();
  let loop: Batch[] = [];
  for (const batch of batches) {
    const earlier = batch.events.map((event) => lastAttemptOf.get(event.event_id)).find((found) => found !== undefined);
    if (earlier) {
      if (
        batch.sentAtMs !== undefined &&
        earlier.sentAtMs !== undefined &&
        batch.sentAtMs <= earlier.sentAtMs &&
        !nearRestart(marks, earlier, batch)
      )
        add(
          'P-STAMP-1',
          `retry of #${earlier.exchange.n} with sent_at_ms ${batch.sentAtMs}, not after its ${earlier.sentAtMs}`,
          batch.exchange,
          batch,
        );
      const heardAt = earlier.exchange.answeredMs ?? earlier.exchange.receivedMs;
      if (
        earlier.exchange.retryAfterS !== undefined &&
        batch.exchange.receivedMs < heardAt + earlier.exchange.retryAfterS * 1000 - RETRY_AFTER_SLACK_MS
      )
        add(
          'P-BACKOFF-2',
          `retried ${batch.exchange.receivedMs - heardAt} ms after #${earlier.exchange.n} asked for Retry-After: ${earlier.exchange.retryAfterS}`,
          batch.exchange,
          batch,
        );
      loop = batch.exchange.receivedMs - heardAt < RETRY_LOOP_MS ? [...loop, batch] : [];
      if (loop.length === RETRY_LOOP_ATTEMPTS)
        add('P-BACKOFF-1', `${RETRY_LOOP_ATTEMPTS} retries in a row each within ${RETRY_LOOP_MS} ms of the failure`, batch.exchange, batch);
    }
    for (const event of batch.events) lastAttemptOf.set(event.event_id, batch);
  }
}

function checkFirstLaunch(input: CheckInput, batches: readonly Batch[], add: Add): void {
  // Only an app install (an install event with a platform) asks for its attribution; a web page has none.
  const install = batches
    .flatMap((batch) => batch.events.map((event) => ({ event, batch })))
    .find(({ event }) => event.event_name === 'install');
  if (!install) return;
  const firstBatch = batches[0];
  const call = input.exchanges.find((exchange) => exchange.path === '/sdk/v1/attribution' && exchange.method === 'POST');
  if (!call) add('P-FIRST-1', 'an install sent, but no POST /sdk/v1/attribution', install.batch.exchange, install.batch);
  else if (firstBatch && call.receivedMs > firstBatch.exchange.receivedMs + FIRST_LAUNCH_SLACK_MS)
    add('P-FIRST-1', `the first-launch call came ${call.receivedMs - firstBatch.exchange.receivedMs} ms after the first batch`, call);
}

/** The seqs of the conformance events the runtime has accepted so far (the external SDK's progress). */
export function acceptedSeqs(exchanges: readonly Exchange[]): Set<number> {
  const batches = exchanges.flatMap((exchange) =>
    exchange.path === '/event' && exchange.method === 'POST' ? [readBatch(exchange, () => 0)] : [],
  );
  const seqOf = new Map<string, number>();
  for (const batch of batches) for (const event of batch?.events ?? []) if (event.seq !== undefined) seqOf.set(event.event_id, event.seq);
  const seqs = new Set<number>();
  for (const batch of batches) {
    if (batch?.exchange.runtime?.status !== 200) continue;
    for (const id of acceptedIds(batch.exchange.runtime.text)) {
      const seq = seqOf.get(id);
      if (seq !== undefined) seqs.add(seq);
    }
  }
  return seqs;
}

function checkOnce(input: CheckInput, batches: readonly Batch[], add: Add): void {
  const seqOf = new Map<string, number>();
  for (const batch of batches) for (const event of batch.events) if (event.seq !== undefined) seqOf.set(event.event_id, event.seq);
  const accepted = new Map<number, Set<string>>();
  const acceptedIn = new Map<number, Batch[]>();
  for (const batch of batches) {
    const answer = batch.exchange.runtime;
    if (answer?.status !== 200) continue;
    for (const id of acceptedIds(answer.text)) {
      const seq = seqOf.get(id);
      if (seq === undefined) continue;
      accepted.set(seq, (accepted.get(seq) ?? new Set()).add(id));
      acceptedIn.set(seq, [...(acceptedIn.get(seq) ?? []), batch]);
    }
  }
  for (let seq = 0; seq < input.events; seq++) {
    const ids = accepted.get(seq);
    if (!ids) add('P-ONCE-1', `seq ${seq} was never accepted: lost`);
    else if (ids.size > 1) {
      const [, second] = acceptedIn.get(seq) ?? [];
      add('P-ONCE-1', `seq ${seq} accepted under ${ids.size} event_ids (${[...ids].join(', ')}): doubled`, second?.exchange, second);
    }
  }
  if (input.countedByRuntime !== undefined && input.countedByRuntime !== input.events)
    add('P-ONCE-1', `the runtime's events report counts ${input.countedByRuntime} ${CONFORMANCE_EVENT} events, not ${input.events}`);
}

function checkStopsAfter401(batches: readonly Batch[], add: Add): void {
  const refused = batches.find((batch) => batch.exchange.heardStatus === 401);
  if (!refused) return;
  for (const batch of batches)
    if (batch.exchange.receivedMs > (refused.exchange.answeredMs ?? refused.exchange.receivedMs))
      add('P-AUTH-1', `sent after #${refused.exchange.n} was answered 401`, batch.exchange, batch);
}

function acceptedIds(text: string): string[] {
  try {
    const body = JSON.parse(text) as { results?: { event_id?: unknown; status?: unknown }[] };
    return (body.results ?? []).flatMap((result) =>
      result.status === 'accepted' && typeof result.event_id === 'string' ? [result.event_id] : [],
    );
  } catch {
    return [];
  }
}
