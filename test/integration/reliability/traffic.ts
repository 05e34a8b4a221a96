import { randomUUID } from 'node:crypto';
import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { eventBatchRequest, type SignedRequest, signedRequest } from '../../../client/event-client';
import { CapCounter } from '../../../functions/adapters/cap-counter';
import { sha256Hex } from '../../../functions/domain/common/hashing';
import { sqsClient } from '../../../functions/shared/clients';
import { resourceName } from '../../../functions/shared/config';
import { dropZeros, type OracleEvent, type OracleRows, oracleRows } from '../../support/aggregation-oracle';
import { errorOf, type HttpAnswer, httpCall } from '../../support/documented-answers';
import type { LocalStack, Tenant } from '../../support/local-stack';

/**
 * SDK-like traffic for the load and fault tests, and what it must add up to. Every batch is
 * recorded with every answer it got; the events a 200 answered `accepted` are the ones the
 * reports must count, each exactly once, whatever was retried or re-sent.
 *
 * The events are chosen so that the rows do not depend on the order the aggregator sees them:
 * one install event per install (a re-sent one is the same identity), no clicks (every install
 * is organic), no device ids. Times stay 20 minutes clear of UTC midnight and of the retention
 * edges, so the seconds a retry adds to the clock-skew correction never move an event to
 * another day or window, and the oracle can use ts_ms as the corrected time.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const MARGIN = 20 * 60_000;
/** Offsets from the install: same day, a few hours, day 1 and day 2, all clear of the edges. */
const OFFSETS = [5 * 60_000, 2 * HOUR, 20 * HOUR, 26 * HOUR, 30 * HOUR, 47 * HOUR + 10 * 60_000, 50 * HOUR];
const NAMES = ['session', 'purchase', 'level_up'] as const;

const nearMidnight = (ms: number) => {
  const ofDay = ms % DAY;
  return ofDay < MARGIN || ofDay > DAY - MARGIN;
};

interface Install {
  uuid: string;
  tsMs: number;
}

export interface TrafficEvent {
  event_id: string;
  event_name: string;
  install_uuid: string;
  ts_ms: number;
  platform?: 'ios' | 'android';
  revenue_usd?: number;
}

export interface Batch {
  events: (TrafficEvent | Record<string, unknown>)[];
  request: SignedRequest;
  /** SHA-256 of the body: what the service names the audit object and the count's mark after. */
  sha: string;
  answers: { status: number; code?: string }[];
  /** The body of the 200, once there is one. */
  taken?: { accepted: number; rejected: number; results: { event_id: string; status: string }[]; audit_key: string };
}

export interface TrafficOptions {
  /** Installs to spread the events over. */
  installs?: number;
  random?: () => number;
}

export class Traffic {
  readonly batches: Batch[] = [];
  private readonly installs: Install[] = [];
  private readonly random: () => number;
  private sequence = 0;

  constructor(
    private readonly baseUrl: string,
    private readonly tenant: Tenant,
    options: TrafficOptions = {},
  ) {
    this.random = options.random ?? Math.random;
    const now = Date.now();
    while (this.installs.length < (options.installs ?? 60)) {
      const tsMs = now - HOUR - Math.floor(this.random() * 60 * HOUR);
      if (!nearMidnight(tsMs)) this.installs.push({ uuid: randomUUID(), tsMs });
    }
  }

  private pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)];
  }

  /** A batch of `size` events over a few installs, now and then with an event the service rejects. */
  batch(size: number, options: { gzip?: boolean; withRejected?: boolean } = {}): Batch {
    const now = Date.now();
    const events: Batch['events'] = [];
    while (events.length < size) {
      const install = this.pick(this.installs);
      if (this.random() < 0.15) {
        events.push({ event_id: 'install', event_name: 'install', install_uuid: install.uuid, ts_ms: install.tsMs, platform: 'ios' });
        continue;
      }
      const tsMs = install.tsMs + this.pick(OFFSETS);
      if (tsMs > now - 10 * 60_000 || nearMidnight(tsMs)) continue;
      const name = this.pick(NAMES);
      events.push({
        event_id: `e-${++this.sequence}-${Math.floor(this.random() * 1e9)}`,
        event_name: name,
        install_uuid: install.uuid,
        ts_ms: tsMs,
        ...(name === 'purchase' ? { revenue_usd: (1 + Math.floor(this.random() * 9_999)) / 100 } : {}),
      });
    }
    if (options.withRejected)
      events.push({
        event_id: `bad-${++this.sequence}`,
        event_name: 'not a name!',
        install_uuid: this.pick(this.installs).uuid,
        ts_ms: now,
      });
    return this.record(events, options.gzip);
  }

  /** The same events in other bytes (re-encoded, reordered): a client that rebuilt its batch. */
  reencoded(batch: Batch): Batch {
    return this.record([...batch.events].reverse(), batch.request.headers['content-encoding'] !== 'gzip');
  }

  private record(events: Batch['events'], gzip?: boolean): Batch {
    const request = eventBatchRequest(
      { companyKey: this.tenant.company.company_key, appKey: this.tenant.app.app_key, signingSecret: this.tenant.app.signing_secret },
      { events, sent_at_ms: Date.now() },
      { gzip },
    );
    const batch: Batch = { events, request, sha: sha256Hex(request.body), answers: [] };
    this.batches.push(batch);
    return batch;
  }

  /** POSTs the batch's bytes as they are (no client retries) through the local edge, and records the answer. */
  async send(batch: Batch, ip = '198.51.100.77'): Promise<HttpAnswer | undefined> {
    let answer: HttpAnswer;
    try {
      answer = await httpCall(this.baseUrl, {
        method: 'POST',
        target: '/event',
        headers: { ...batch.request.headers, 'x-forwarded-for': ip },
        body: batch.request.body,
      });
    } catch (error) {
      batch.answers.push({ status: 0, code: (error as NodeJS.ErrnoException).code ?? (error as Error).message });
      return undefined;
    }
    batch.answers.push({ status: answer.status, code: errorOf(answer) });
    if (answer.status === 200) {
      const body = JSON.parse(answer.text) as NonNullable<Batch['taken']>;
      // A retry of the same bytes must be answered as the first 200 was.
      if (batch.taken && JSON.stringify(batch.taken.results) !== JSON.stringify(body.results)) {
        batch.answers.push({ status: -1, code: 'a retry got other verdicts than the first 200' });
      }
      batch.taken ??= body;
    }
    return answer;
  }

  /** A signed POST /privacy/delete for an install of no batch (the drain is not run; the answer is what counts). */
  deleteRequest(n: number): Promise<HttpAnswer> {
    const request = signedRequest(
      { companyKey: this.tenant.company.company_key, appKey: this.tenant.app.app_key, signingSecret: this.tenant.app.signing_secret },
      { install_uuid: randomUUID() },
    );
    return httpCall(this.baseUrl, {
      method: 'POST',
      target: '/privacy/delete',
      headers: { ...request.headers, 'x-forwarded-for': `198.18.0.${n % 250}` },
      body: request.body,
    });
  }

  /** Re-sends the same bytes on 503 (and on a dropped connection) until a 200 or another refusal, or the deadline. */
  async sendUntilAnswered(batch: Batch, deadlineMs: number, ip?: string): Promise<void> {
    for (;;) {
      const answer = await this.send(batch, ip);
      if (answer && answer.status !== 503) return;
      if (Date.now() > deadlineMs) return;
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.floor(this.random() * 200)));
    }
  }

  /** Every event some 200 answered `accepted`, once per batch body. */
  acceptedEvents(): OracleEvent[] {
    const out: OracleEvent[] = [];
    for (const batch of this.batches) {
      batch.taken?.results.forEach((result, i) => {
        if (result.status !== 'accepted') return;
        const event = batch.events[i] as TrafficEvent;
        out.push({
          installUuid: event.install_uuid,
          eventId: event.event_id,
          name: event.event_name,
          tsMs: event.ts_ms,
          revenueUsd: event.revenue_usd,
        });
      });
    }
    return out;
  }

  /** The rows of all four families that the accepted events must make, each counted once. */
  expectedRows(): OracleRows {
    return dropZeros(oracleRows(this.acceptedEvents(), () => ({ partner: 'organic', type: 'organic', fraud: false })));
  }

  /** What the month's cap count must be: each distinct body's accepted events, once. */
  expectedCapCount(): number {
    const bodies = new Map<string, number>();
    for (const batch of this.batches) if (batch.taken) bodies.set(batch.sha, batch.taken.accepted);
    return [...bodies.values()].reduce((sum, n) => sum + n, 0);
  }
}

export { storedRows } from '../../support/stored-rows';

/** The events report as served over HTTP, keyed as the oracle keys its events family. */
export async function eventsReport(baseUrl: string, serverKey: string): Promise<Record<string, Record<string, number>>> {
  const now = Date.now();
  const answer = await httpCall(baseUrl, {
    method: 'GET',
    target: `/api/v1/reports/events?since_ms=${now - 10 * DAY}&until_ms=${now + HOUR}&limit=1000`,
    headers: { authorization: `Bearer ${serverKey}` },
  });
  if (answer.status !== 200) throw new Error(`events report answered ${answer.status} ${answer.text}`);
  const rows = (
    JSON.parse(answer.text) as { rows: { day: string; event_name: string; events: number; unique_installs: number; revenue_usd: number }[] }
  ).rows;
  return Object.fromEntries(
    rows.map((row) => [
      `${row.day}|${row.event_name}`,
      Object.fromEntries(
        Object.entries({
          events: row.events,
          unique_installs: row.unique_installs,
          revenue_micros: Math.round(row.revenue_usd * 1_000_000),
        }).filter(([, v]) => v !== 0),
      ),
    ]),
  );
}

export const capCount = (companyId: string) =>
  new CapCounter(resourceName.table('counters'), resourceName.table('ledger')).acceptedThisMonth(companyId, Date.now());

/** Messages on a queue, visible, in flight or delayed. */
export async function queueDepth(queueUrl: string): Promise<number> {
  const { Attributes = {} } = await sqsClient().send(
    new GetQueueAttributesCommand({
      QueueUrl: queueUrl,
      AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'ApproximateNumberOfMessagesDelayed'],
    }),
  );
  return Object.values(Attributes).reduce((sum, n) => sum + Number(n), 0);
}

/**
 * Waits until the aggregation queue holds nothing at all (a message in flight or waiting out its
 * visibility timeout counts) and the pollers are idle; throws after timeoutMs.
 */
export async function aggregationSettled(stack: LocalStack, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const queueUrl = resourceName.queueUrl('aggregation');
  for (;;) {
    await stack.pollers.drain();
    if ((await queueDepth(queueUrl)) === 0) {
      await stack.pollers.drain();
      if ((await queueDepth(queueUrl)) === 0) return;
    }
    if (Date.now() > deadline)
      throw new Error(`the aggregation queue still holds ${await queueDepth(queueUrl)} message(s) after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
