import { randomUUID } from 'node:crypto';
import { ScanCommand, type ScanCommandInput, type ScanCommandOutput } from '@aws-sdk/client-dynamodb';
import { SQSClient } from '@aws-sdk/client-sqs';
import { buildBatch, type EventBatchResult, EventClient, eventBatchRequest, type SdkEvent } from '../client/event-client';
import { AggregateStore } from '../functions/adapters/aggregate-store';
import { pool } from '../functions/domain/common/pool';
import { dynamoClient, s3Client, sqsClient } from '../functions/shared/clients';
import { resourceName } from '../functions/shared/config';
import { startQueuePollers } from '../local/queue-pollers';
import { createTenant, type LocalStack, type Tenant } from '../test/support/local-stack';
import { anonymousKey, backlogBatches, hottestKey, itemBytes, TARGET_EVENTS_PER_S } from './batch-figures';
import { type EventTraffic, percentile, type Report, sized } from './support';
import {
  eventTraffic,
  isPerInstall,
  type MeteredWrite,
  meteredConsumers,
  RESPONSE_HEADER_BYTES,
  requestBytes,
  unitsBy,
  unitsOf,
  WriteMeter,
} from './write-units';

/**
 * Real-time SDK traffic at 1, 10 and 50 events per batch, and a backlog (issue 21, item 4): the
 * figures the aggregation protocol's changes must beat, measured on the same local service and
 * meter as bench/write-units.ts.
 *
 * - At each batch size a fresh tenant's installs send the same events (an install event, then
 *   sessions, level-ups and purchases of today) in batches of that size while the aggregator
 *   consumes the queue: write units per accepted event, every other billed request (priced by
 *   bench/cost.ts), and the hottest app-wide partition key scaled to 10,000 events/s of one app
 *   and one company (its units in the run / events in the run x 10,000). Keys of one install (or
 *   device) are left out of the scaling: their load follows one device, not the app's rate.
 * - The backlog: BACKLOG_BATCHES one-event batches of one app, one event name and one day sent
 *   while nothing consumes the queue, then drained by the aggregator; then the largest item of
 *   the aggregates table, sized as DynamoDB sizes items (itemBytes).
 */

export const BATCH_SIZES = [1, 10, 50] as const;
/** Each batch size's traffic: INSTALLS installs of EVENTS_PER_INSTALL events each (600 events). */
const INSTALLS = sized(12, 3);
const EVENTS_PER_INSTALL = 50;
const CONCURRENCY = 8;
/** DynamoDB serves at most this many write units a second on one partition key. */
export const PARTITION_WRITE_UNITS_PER_S = 1000;

/**
 * One-event batches queued before the aggregator consumes any (issue 21 measured 3,000). The one
 * place to change it: `npm run bench -- --backlog-batches 500` for a quicker run.
 */
export const BACKLOG_BATCHES = backlogBatches(process.argv, sized(3000, 100));
const BACKLOG_INSTALLS = 50;

// ---------------------------------------------------------------------------------------------
// The traffic

function installEvents(installUuid: string, index: number, nowMs: number): SdkEvent[] {
  const startMs = nowMs - 30 * 60_000 + index * 1000;
  return Array.from({ length: EVENTS_PER_INSTALL }, (_, i): SdkEvent => {
    const event: SdkEvent = {
      event_id: `${installUuid.slice(0, 8)}-${i}`,
      event_name: i === 0 ? 'install' : i % 5 === 0 ? 'session' : 'level_up',
      install_uuid: installUuid,
      ts_ms: startMs + i * 10_000,
    };
    if (i === 0) event.platform = index % 2 === 0 ? 'ios' : 'android';
    if (i === 0 && index % 3 === 1) event.device_id = `device-${installUuid}`;
    if (i % 20 === 7) Object.assign(event, { event_name: 'purchase', revenue_usd: 4.99 });
    return event;
  });
}

const chunks = <T>(items: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, i) => items.slice(i * size, (i + 1) * size));

const round = (n: number, digits = 3) => Number(n.toFixed(digits));

/** What bench/cost.ts prices at one batch size. */
export type BatchSizeTraffic = { readonly traffic: EventTraffic; readonly ingestMs: number };

/** What one batch size's run measured. */
export interface BatchSizeRun {
  readonly batchSize: number;
  readonly events: number;
  readonly wcuPerEvent: number;
  readonly hottest: { key: string; wcu_per_s: number };
  readonly traffic: EventTraffic;
  /** The p50 of each install's first batch, sent one at a time: the ingest duration bench/cost.ts bills. */
  readonly ingestMs: number;
}

/** Sends the tenant's batches to the local service and sums what was accepted and the bytes on the wire. */
export function sender(stack: LocalStack, tenant: Tenant) {
  const credentials = { companyKey: tenant.company.company_key, appKey: tenant.app.app_key, signingSecret: tenant.app.signing_secret };
  const client = new EventClient({ baseUrl: stack.baseUrl, ...credentials });
  let accepted = 0;
  const bytes = { request: 0, response: 0 };
  const send = async (batch: readonly SdkEvent[]) => {
    const request = eventBatchRequest(credentials, buildBatch(batch));
    const started = performance.now();
    const response = await client.post('/event', request);
    const ms = performance.now() - started;
    const result = response.body as EventBatchResult;
    if (response.status !== 200 || result.rejected > 0)
      throw new Error(`the bench's batch was refused in part: ${response.status} ${JSON.stringify(result)}`);
    bytes.request += requestBytes('POST', '/event', request.headers, request.body.length);
    bytes.response += RESPONSE_HEADER_BYTES + Buffer.byteLength(JSON.stringify(result));
    accepted += result.accepted;
    return ms;
  };
  return { send, bytes, accepted: () => accepted };
}

async function countedEvents(appId: string): Promise<number> {
  const rows = await new AggregateStore(resourceName.table('aggregates')).rows(appId, 'events');
  return rows.reduce((sum, row) => sum + Number(row.events ?? 0), 0);
}

/**
 * Runs the three batch sizes and the backlog on the local service, whose own queue pollers are
 * stopped (bench/write-units.ts leaves them so); its consumers are started here, as write-units.ts
 * does, so the meter tells the aggregator's writes from ingestion's. Returns the traffic per event
 * of each batch size for bench/cost.ts.
 */
export async function batchSizeFigures(report: Report, stack: LocalStack): Promise<Record<string, BatchSizeTraffic>> {
  await stack.pollers.stop();
  const sqs = new SQSClient({ region: stack.endpoints.region, endpoint: stack.endpoints.sqs });
  const runs: BatchSizeRun[] = [];
  try {
    for (const batchSize of BATCH_SIZES) runs.push(await runBatchSize(batchSize, stack, sqs));
    const bySize = <T>(value: (run: BatchSizeRun) => T) => Object.fromEntries(runs.map((run) => [String(run.batchSize), value(run)]));
    const sizes = runs.map((run) => run.batchSize).join(' / ');
    report(`write units per accepted event at ${sizes} events per batch`, runs.map((run) => run.wcuPerEvent.toFixed(3)).join(' / '), {
      wcu_per_event_by_batch: bySize((run) => round(run.wcuPerEvent)),
    });
    report(
      `hottest app-wide key, units/s at ${TARGET_EVENTS_PER_S.toLocaleString('en-US')} events/s of one app, at ${sizes}`,
      runs.map((run) => Math.round(run.hottest.wcu_per_s).toLocaleString('en-US')).join(' / '),
      {
        hottest_key_wcu_per_s_at_10k: bySize((run) => Math.round(run.hottest.wcu_per_s)),
        hottest_key_at_10k: bySize((run) => ({ key: run.hottest.key, wcu_per_s: Math.round(run.hottest.wcu_per_s) })),
      },
    );
    for (const run of runs) {
      const over =
        run.hottest.wcu_per_s > PARTITION_WRITE_UNITS_PER_S ? ` (over ${PARTITION_WRITE_UNITS_PER_S.toLocaleString('en-US')})` : '';
      report(`  ${run.batchSize}-event batches: hottest key${over}`, run.hottest.key, {});
    }
    await backlog(report, stack, sqs);
    return bySize((run) => ({ traffic: run.traffic, ingestMs: run.ingestMs }));
  } finally {
    sqs.destroy();
  }
}

async function runBatchSize(batchSize: number, stack: LocalStack, sqs: SQSClient): Promise<BatchSizeRun> {
  const meter = new WriteMeter(dynamoClient());
  meter.meter('s3', s3Client());
  meter.meter('sqs', sqsClient());
  meter.meter('sqs', sqs);
  let consumers: ReturnType<typeof startQueuePollers> | undefined;
  try {
    const { consumers: queueConsumers, aggregator } = meteredConsumers(stack, sqs, meter);
    consumers = queueConsumers;
    const tenant = await createTenant({ plan: 'paid' });
    let firstBatchMs = 0;
    const nowMs = Date.now();
    const plans = Array.from({ length: INSTALLS }, (_, i) => chunks(installEvents(randomUUID(), i, nowMs), batchSize));
    const batches = plans.reduce((sum, plan) => sum + plan.length, 0);
    const send = sender(stack, tenant);
    const { writes, requests } = await meter.during('ingest', async () => {
      // Each install's first batch one at a time: its latency is the ingest duration billed (bench/cost.ts).
      const unloaded: number[] = [];
      for (const plan of plans) {
        const [first] = plan;
        if (first) unloaded.push(await send.send(first));
      }
      firstBatchMs = percentile(
        unloaded.sort((a, b) => a - b),
        0.5,
      );
      await pool(plans, CONCURRENCY, async (plan) => {
        for (const batch of plan.slice(1)) await send.send(batch);
      });
      await queueConsumers.drain();
    });
    const accepted = send.accepted();
    const counted = await countedEvents(tenant.app.app_id);
    if (counted !== accepted)
      throw new Error(`at ${batchSize} events per batch the aggregator counted ${counted} of ${accepted} accepted events`);
    if (!writes.some((write) => write.writer === 'aggregator')) throw new Error('the write meter missed the aggregation writes');
    const appWide = unitsBy(
      writes.filter((write: MeteredWrite) => !isPerInstall(write)),
      (write) => anonymousKey(write.partition, tenant.app.app_id, tenant.company.company_id),
    );
    const traffic = eventTraffic({ accepted, batches, writes, requests, aggregator, bytes: send.bytes });
    return {
      batchSize,
      events: accepted,
      wcuPerEvent: unitsOf(writes) / accepted,
      hottest: hottestKey(appWide, accepted),
      traffic,
      ingestMs: firstBatchMs,
    };
  } finally {
    await consumers?.stop();
    meter.detach();
  }
}

async function backlog(report: Report, stack: LocalStack, sqs: SQSClient): Promise<void> {
  const tenant = await createTenant({ plan: 'paid' });
  const send = sender(stack, tenant);
  const installs = Array.from({ length: BACKLOG_INSTALLS }, () => randomUUID());
  const nowMs = Date.now();
  // One app, one event name, one day: sessions of a few installs, a millisecond apart, within the last minute.
  const events = Array.from(
    { length: BACKLOG_BATCHES },
    (_, i): SdkEvent => ({
      event_id: `backlog-${i}`,
      event_name: 'session',
      install_uuid: installs[i % installs.length] as string,
      ts_ms: nowMs - 60_000 + Math.floor((i * 50_000) / BACKLOG_BATCHES),
    }),
  );
  // Nothing consumes the queue while the backlog is sent (the runtime's pollers are stopped).
  await pool(events, CONCURRENCY, async (event) => {
    await send.send([event]);
  });
  const started = performance.now();
  const consumers = startQueuePollers({ sqs, queueUrls: stack.endpoints.queues, onError: (error) => console.error(error) });
  try {
    await consumers.drain();
  } finally {
    await consumers.stop();
  }
  const drainS = (performance.now() - started) / 1000;
  const counted = await countedEvents(tenant.app.app_id);
  if (counted !== send.accepted()) throw new Error(`after the backlog the aggregator counted ${counted} of ${send.accepted()} events`);

  let largest = { bytes: 0, key: '' };
  let largestOfBacklog = 0;
  const raw = dynamoClient() as unknown as { send(command: ScanCommand): Promise<ScanCommandOutput> };
  let ExclusiveStartKey: ScanCommandInput['ExclusiveStartKey'];
  do {
    const page = await raw.send(new ScanCommand({ TableName: resourceName.table('aggregates'), ExclusiveStartKey }));
    for (const item of page.Items ?? []) {
      const bytes = itemBytes(item);
      const key = `${item.pk?.S ?? ''} ${item.sk?.S ?? ''}`;
      if (bytes > largest.bytes) largest = { bytes, key };
      if (key.startsWith(tenant.app.app_id)) largestOfBacklog = Math.max(largestOfBacklog, bytes);
    }
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  const shown = anonymousKey(largest.key, tenant.app.app_id, tenant.company.company_id);
  report(`backlog of ${BACKLOG_BATCHES.toLocaleString('en-US')} one-event batches, one app/name/day: drain (s)`, drainS.toFixed(1), {
    backlog_batches: BACKLOG_BATCHES,
    backlog_drain_s: round(drainS, 1),
  });
  report(
    'largest aggregates item then (bytes: backlog app / table)',
    `${largestOfBacklog.toLocaleString('en-US')} / ${largest.bytes.toLocaleString('en-US')} (${shown})`,
    {
      max_aggregate_item_bytes: largest.bytes,
      max_aggregate_item_bytes_backlog_app: largestOfBacklog,
      max_aggregate_item_key: shown,
    },
  );
}
