import type { RejectionReason } from '../ingest/event-validation';
import { type HealthReport, withDeadline } from './health';
import { EVENTS_ACCEPTED, EVENTS_REJECTED, REJECTION_REASONS, rejectedMetric } from './ingestion-metrics';

/**
 * The operators' health view (`admin health`, the console's Health page; docs/operations.md,
 * "The health view"): ingestion per hour, aggregation lag, dead-letter queues, postback failures
 * by partner, the health probe and the stack's alarms, in one answer with one verdict. Where each
 * figure comes from is the sources' business: CloudWatch, SQS and the stores in AWS, the local
 * runtime and its emulators locally (admin/health-sources.ts). Each part is read on its own with a
 * deadline, so a store that is down shows as that part's error and a problem, never as no answer.
 */

/** Hours of ingestion and postback attempts the view covers, ending now. */
export const WINDOW_HOURS = 24;
/** How long one part may take before it is reported as `timeout`. */
export const PART_TIMEOUT_MS = 5000;
const HOUR_MS = 3_600_000;

export interface QueueDepth {
  readonly queue: string;
  /** Messages waiting to be received. */
  readonly messages: number;
  /** Received and not yet deleted (being handled, or waiting out a visibility timeout). */
  readonly in_flight: number;
  /** Age of the oldest message, seconds; null when the source has no figure (an empty queue in AWS). */
  readonly oldest_age_seconds: number | null;
  /** The queue's age alarm (lib/manifest.ts `ageAlarm`), if it has one. */
  readonly alarm_after_seconds: number | null;
  readonly dead_letter_messages: number;
}

export interface PostbackAttempt {
  readonly partner: string;
  readonly outcome: string;
}

export interface AlarmState {
  readonly name: string;
  readonly state: string;
  readonly reason: string;
  readonly updated_at: string | null;
}

/** What the view reads, one adapter per environment. */
export interface HealthSources {
  readonly environment: 'local' | 'aws';
  /** Sums per UTC hour (keyed by the hour's start, ms) of the named metrics, over [fromMs, toMs). */
  metricHours(names: readonly string[], fromMs: number, toMs: number, signal: AbortSignal): Promise<Map<number, Record<string, number>>>;
  queues(signal: AbortSignal): Promise<QueueDepth[]>;
  /** Delivery attempts since sinceMs, every app; truncated when an app had more than the source reads. */
  postbackAttempts(sinceMs: number, signal: AbortSignal): Promise<{ attempts: PostbackAttempt[]; truncated: boolean }>;
  probe(signal: AbortSignal): Promise<HealthReport>;
  /** The stack's alarms; null where there are none to read (the local runtime). */
  alarms(signal: AbortSignal): Promise<AlarmState[] | null>;
}

export interface IngestionHour {
  readonly hour: string;
  readonly accepted: number;
  readonly rejected: number;
  readonly rejected_by_reason: Partial<Record<RejectionReason, number>>;
}

export interface PartnerPostbacks {
  readonly partner: string;
  readonly attempts: number;
  readonly failed: number;
  /** failed / attempts, rounded to 3 decimals. */
  readonly failure_rate: number;
}

/** A part that could not be read: why, in the probe's words (timeout, unreachable, error: <name>). */
export interface PartError {
  readonly error: string;
}
type Part<T> = T | PartError;

export interface OperatorHealth {
  readonly status: 'ok' | 'broken';
  /** What is wrong, one sentence each; empty when status is ok. */
  readonly problems: string[];
  readonly checked_at: string;
  readonly environment: 'local' | 'aws';
  readonly ingestion: Part<{ window_hours: number; hours: IngestionHour[] }>;
  readonly aggregation: Part<{
    oldest_message_age_seconds: number | null;
    messages: number;
    in_flight: number;
    alarm_after_seconds: number | null;
  }>;
  readonly dead_letter_queues: Part<{ queue: string; messages: number }[]>;
  readonly postbacks: Part<{ window_hours: number; partners: PartnerPostbacks[]; truncated: boolean }>;
  readonly probe: Part<HealthReport>;
  readonly alarms: Part<{ source: 'cloudwatch'; alarms: AlarmState[] } | { source: 'none'; alarms: [] }>;
}

const isError = <T>(part: Part<T>): part is PartError => typeof part === 'object' && part !== null && 'error' in part;

async function part<T>(read: (signal: AbortSignal) => Promise<T>, timeoutMs: number): Promise<Part<T>> {
  const result = await withDeadline(read, timeoutMs);
  return 'failure' in result ? { error: result.failure } : result.value;
}

/** The parts a verdict rests on besides the volumes: the queues (with their dead letters), the probe and the alarms. */
async function serviceParts(sources: HealthSources, timeoutMs: number) {
  const [queues, probe, alarms] = await Promise.all([
    part((signal) => sources.queues(signal), timeoutMs),
    part((signal) => sources.probe(signal), timeoutMs),
    part((signal) => sources.alarms(signal), timeoutMs),
  ]);
  const service: Pick<OperatorHealth, 'dead_letter_queues' | 'probe' | 'alarms'> = {
    dead_letter_queues: isError(queues) ? queues : queues.map((q) => ({ queue: q.queue, messages: q.dead_letter_messages })),
    probe,
    alarms: isError(alarms) ? alarms : alarms === null ? { source: 'none', alarms: [] } : { source: 'cloudwatch', alarms },
  };
  return { queues, ...service };
}

export async function operatorHealth(sources: HealthSources, nowMs: number, timeoutMs = PART_TIMEOUT_MS): Promise<OperatorHealth> {
  const toMs = Math.floor(nowMs / HOUR_MS) * HOUR_MS + HOUR_MS;
  const fromMs = toMs - WINDOW_HOURS * HOUR_MS;
  const names = [EVENTS_ACCEPTED, EVENTS_REJECTED, ...REJECTION_REASONS.map(rejectedMetric)];
  const [hours, attempts, { queues, ...service }] = await Promise.all([
    part((signal) => sources.metricHours(names, fromMs, toMs, signal), timeoutMs),
    part((signal) => sources.postbackAttempts(nowMs - WINDOW_HOURS * HOUR_MS, signal), timeoutMs),
    serviceParts(sources, timeoutMs),
  ]);
  const aggregation = isError(queues) ? queues : queues.find((q) => q.queue === 'aggregation');
  const view: Omit<OperatorHealth, 'status' | 'problems'> = {
    checked_at: new Date(nowMs).toISOString(),
    environment: sources.environment,
    ingestion: isError(hours) ? hours : { window_hours: WINDOW_HOURS, hours: ingestionHours(hours, fromMs, toMs) },
    aggregation: isError(aggregation)
      ? aggregation
      : aggregation
        ? {
            oldest_message_age_seconds: aggregation.oldest_age_seconds,
            messages: aggregation.messages,
            in_flight: aggregation.in_flight,
            alarm_after_seconds: aggregation.alarm_after_seconds,
          }
        : { error: 'no aggregation queue' },
    dead_letter_queues: service.dead_letter_queues,
    postbacks: isError(attempts)
      ? attempts
      : { window_hours: WINDOW_HOURS, partners: postbackFailures(attempts.attempts), truncated: attempts.truncated },
    probe: service.probe,
    alarms: service.alarms,
  };
  const problems = problemsOf(view, isError(queues) ? [] : queues);
  return { status: problems.length ? 'broken' : 'ok', problems, ...view };
}

export interface ServiceStatus {
  readonly status: 'ok' | 'broken';
  readonly problems: string[];
  readonly checked_at: string;
}

/**
 * The verdict alone, for every member (the `status` command): from the queues, the probe and the
 * alarms, the parts that name no company and count nothing of one. It reads neither the metrics
 * nor the postback attempts (every app's), which only the view's volumes need, so the header of
 * every page does not pay for them: its problems are the view's but for those two parts' "could
 * not be read".
 */
export async function serviceStatus(sources: HealthSources, nowMs: number, timeoutMs = PART_TIMEOUT_MS): Promise<ServiceStatus> {
  const { queues, ...service } = await serviceParts(sources, timeoutMs);
  const problems = problemsOf(service, isError(queues) ? [] : queues);
  return { status: problems.length ? 'broken' : 'ok', problems, checked_at: new Date(nowMs).toISOString() };
}

/** Every hour of the window, oldest first, zeros where nothing was recorded. */
export function ingestionHours(sums: ReadonlyMap<number, Record<string, number>>, fromMs: number, toMs: number): IngestionHour[] {
  const hours: IngestionHour[] = [];
  for (let start = fromMs; start < toMs; start += HOUR_MS) {
    const sum = sums.get(start) ?? {};
    const byReason: Partial<Record<RejectionReason, number>> = {};
    for (const reason of REJECTION_REASONS) {
      const count = sum[rejectedMetric(reason)] ?? 0;
      if (count > 0) byReason[reason] = count;
    }
    hours.push({
      hour: new Date(start).toISOString().replace(':00.000Z', 'Z'),
      accepted: sum[EVENTS_ACCEPTED] ?? 0,
      rejected: sum[EVENTS_REJECTED] ?? 0,
      rejected_by_reason: byReason,
    });
  }
  return hours;
}

/**
 * Attempts and failed attempts per partner, most attempts first. An attempt fails when it was not
 * delivered: a retry, a failure, a refusal or the last attempt dead. An attempt withheld for
 * consent is no delivery and no failure: it is left out.
 */
export function postbackFailures(attempts: readonly PostbackAttempt[]): PartnerPostbacks[] {
  const partners = new Map<string, { attempts: number; failed: number }>();
  for (const { partner, outcome } of attempts) {
    if (outcome === 'withheld') continue;
    const counts = partners.get(partner) ?? { attempts: 0, failed: 0 };
    counts.attempts += 1;
    if (outcome !== 'delivered') counts.failed += 1;
    partners.set(partner, counts);
  }
  return [...partners]
    .map(([partner, c]) => ({ partner, ...c, failure_rate: Math.round((c.failed / c.attempts) * 1000) / 1000 }))
    .sort((a, b) => b.attempts - a.attempts || (a.partner < b.partner ? -1 : 1));
}

/** What makes the view say "broken": a part unreadable, the probe failing, a dead letter, a queue past its age alarm, an alarm firing. */
function problemsOf(
  view: Pick<OperatorHealth, 'dead_letter_queues' | 'probe' | 'alarms'> & Partial<Pick<OperatorHealth, 'ingestion' | 'postbacks'>>,
  queues: readonly QueueDepth[],
): string[] {
  const problems: string[] = [];
  const parts = {
    ingestion: view.ingestion,
    'queues and dead-letter queues': view.dead_letter_queues,
    postbacks: view.postbacks,
    'health probe': view.probe,
    alarms: view.alarms,
  };
  for (const [name, value] of Object.entries(parts))
    if (value !== undefined && isError(value)) problems.push(`${name}: could not be read (${value.error})`);
  if (!isError(view.probe) && view.probe.status !== 'ok') {
    for (const [binding, state] of Object.entries(view.probe.bindings))
      if (state !== 'ok') problems.push(`health probe: ${binding} is failing (${state})`);
  }
  for (const q of queues) {
    if (q.dead_letter_messages > 0) problems.push(`dead-letter queue of ${q.queue} holds ${q.dead_letter_messages} messages`);
    if (q.alarm_after_seconds !== null && q.oldest_age_seconds !== null && q.oldest_age_seconds > q.alarm_after_seconds)
      problems.push(`${q.queue} lags: its oldest message is ${q.oldest_age_seconds} s old (alarm after ${q.alarm_after_seconds} s)`);
  }
  if (!isError(view.alarms))
    for (const alarm of view.alarms.alarms) if (alarm.state === 'ALARM') problems.push(`alarm ${alarm.name} is firing`);
  return problems;
}
