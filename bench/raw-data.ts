import { randomUUID } from 'node:crypto';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import type { SdkEvent } from '../client/event-client';
import { exportPorts } from '../functions/adapters/export-store';
import { LedgerLaneReader } from '../functions/adapters/stream-reader';
import { pool } from '../functions/domain/common/pool';
import { runExport } from '../functions/domain/raw-data/export';
import { streamAppPrefix } from '../functions/domain/raw-data/stream-objects';
import { STREAM_SETTLE_MS } from '../functions/domain/raw-data/watermark';
import { clickTables } from '../functions/shared/click-tables';
import { dynamoClient, s3Client, sqsClient } from '../functions/shared/clients';
import { resourceName } from '../functions/shared/config';
import { createTenant, type LocalStack } from '../test/support/local-stack';
import { sender } from './batch-sizes';
import { lambdaInvocationUsd, memoryOf, PRICES } from './cost';
import { percentile, type Report, sized } from './support';
import { billedRequests, meteredConsumers, WriteMeter } from './write-units';

/**
 * Raw data out (docs/raw-data.md), measured on the local service: SDK-like traffic is aggregated
 * (the aggregator writes the event stream's objects), the whole stream is paged through GET
 * /api/v1/stream/events 1,000 events a page, and the app's hour is exported to Parquet. The
 * requests of each are metered as bench/write-units.ts meters them and priced with bench/cost.ts's
 * list prices, per million events:
 *
 * - stream: the aggregator's stream PUTs and a month of their storage (they expire after 30 days),
 *   plus reading every event once: per page the function (its memory, the page's measured time),
 *   API Gateway, CloudFront and the bytes out, and the LIST, GETs and lane reads behind it;
 * - export: the export run (the export function's memory for the measured time), its S3 requests
 *   and DynamoDB reads, and a month of the Parquet files' storage.
 *
 * The export's time for a million events is this run's time scaled linearly (said so in the
 * figure's name): the export reads stream objects and writes files in proportion to the events.
 */

const INSTALLS = sized(400, 20);
const EVENTS_PER_INSTALL = 50;
/** SDK-like batches: the install alone, then 10 events a batch. */
const EVENTS_PER_BATCH = 10;
const CONCURRENCY = 8;
const PAGE = 1000;
const MILLION = 1e6;
const GB = 1024 ** 3;

function installEvents(installUuid: string, nowMs: number): SdkEvent[][] {
  const events: SdkEvent[] = [
    { event_id: `${installUuid}-i`, event_name: 'install', install_uuid: installUuid, ts_ms: nowMs, platform: 'android' },
  ];
  for (let i = 1; i < EVENTS_PER_INSTALL; i++) {
    events.push({
      event_id: `${installUuid}-${i}`,
      event_name: i % 10 === 0 ? 'purchase' : 'session',
      install_uuid: installUuid,
      ts_ms: nowMs + i * 1000,
      ...(i % 10 === 0 ? { revenue_usd: 1.99, properties: { sku: 'gems_100' } } : { properties: { level: i } }),
    });
  }
  const [install, ...rest] = events;
  const batches: SdkEvent[][] = [[install as SdkEvent]];
  for (let i = 0; i < rest.length; i += EVENTS_PER_BATCH) batches.push(rest.slice(i, i + EVENTS_PER_BATCH));
  return batches;
}

async function listed(prefix: string): Promise<{ objects: number; bytes: number }> {
  let objects = 0;
  let bytes = 0;
  let ContinuationToken: string | undefined;
  do {
    const page = await s3Client().send(
      new ListObjectsV2Command({ Bucket: resourceName.exportBucket(), Prefix: prefix, ContinuationToken }),
    );
    for (const object of page.Contents ?? []) {
      objects++;
      bytes += object.Size ?? 0;
    }
    ContinuationToken = page.NextContinuationToken;
  } while (ContinuationToken);
  return { objects, bytes };
}

const round = (value: number, digits = 3) => Number(value.toFixed(digits));

export async function rawDataFigures(report: Report, stack: LocalStack): Promise<void> {
  await stack.pollers.stop();
  const sqs = new SQSClient({ region: stack.endpoints.region, endpoint: stack.endpoints.sqs });
  const meter = new WriteMeter(dynamoClient());
  meter.meter('s3', s3Client());
  meter.meter('sqs', sqsClient());
  let consumers: { drain(): Promise<void>; stop(): Promise<void> } | undefined;
  try {
    consumers = meteredConsumers(stack, sqs, meter).consumers;
    const tenant = await createTenant({ plan: 'paid' });
    const appId = tenant.app.app_id;
    const nowMs = Date.now();
    const plans = Array.from({ length: INSTALLS }, () => installEvents(randomUUID(), nowMs));
    const send = sender(stack, tenant);
    await pool(plans, CONCURRENCY, async (plan) => {
      for (const batch of plan) await send.send(batch);
    });
    const accepted = send.accepted();
    await consumers.drain();
    const stream = await listed(streamAppPrefix(appId));

    // The stream, paged through from its start once the watermark has passed the last apply.
    await new Promise((resolve) => setTimeout(resolve, STREAM_SETTLE_MS + 1_000));
    const pageMs: number[] = [];
    let responseBytes = 0;
    let streamed = 0;
    const reading = await meter.during('stream', async () => {
      let cursor: string | undefined;
      for (;;) {
        const query = new URLSearchParams({ limit: String(PAGE), ...(cursor ? { cursor } : {}) });
        const started = performance.now();
        const response = await fetch(`${stack.baseUrl}/api/v1/stream/events?${query}`, {
          headers: { authorization: `Bearer ${tenant.serverKey}` },
        });
        const text = await response.text();
        pageMs.push(performance.now() - started);
        if (response.status !== 200) throw new Error(`the stream answered ${response.status}: ${text}`);
        const body = JSON.parse(text) as { events: unknown[]; next_cursor: string; has_more: boolean };
        responseBytes += Buffer.byteLength(text) + 400;
        streamed += body.events.length;
        cursor = body.next_cursor;
        if (!body.has_more) break;
      }
    });
    if (streamed !== accepted) throw new Error(`the stream served ${streamed} of ${accepted} accepted events`);

    // The export of the app's data, timed.
    const lanes = await new LedgerLaneReader(resourceName.table('ledger')).lanes();
    const started = performance.now();
    let exported = 0;
    const exporting = await meter.during('export', async () => {
      const summary = await runExport(
        exportPorts({
          exportBucket: resourceName.exportBucket(),
          auditBucket: resourceName.bucket(),
          clickTables: clickTables(),
        }),
        { apps: [{ app_id: appId, created_ms: nowMs - 60_000 }], lanes, nowMs: Date.now(), skan: false },
      );
      exported = summary.tables.events.rows;
    });
    const exportS = (performance.now() - started) / 1000;
    if (exported !== accepted) throw new Error(`the export wrote ${exported} of ${accepted} accepted events`);
    const files = await listed(`events/app_id=${appId}/`);
    const installFiles = await listed(`installs/app_id=${appId}/`);

    const perMillion = MILLION / accepted;
    const s3 = PRICES.s3;
    // Stream: written once (PUTs, a month of storage), then read once, 1,000 events a page.
    const read = billedRequests(reading.requests);
    const pages = pageMs.length;
    const pageP50 = percentile(
      [...pageMs].sort((a, b) => a - b),
      0.5,
    );
    const streamWrite = (stream.objects * s3.per_thousand_put_copy_post_list) / 1000 + (stream.bytes / GB) * s3.standard_per_gb_month;
    const streamRead =
      pages *
        (lambdaInvocationUsd({ memoryMb: memoryOf('stream-events'), ms: pageP50 }) +
          PRICES.api_gateway.http_api_per_million_requests / MILLION +
          PRICES.cloudfront.per_10k_https_requests / 10_000) +
      (responseBytes / GB) * PRICES.cloudfront.per_gb_out_to_internet +
      (read.s3Tier1 * s3.per_thousand_put_copy_post_list) / 1000 +
      (read.s3Tier2 * s3.per_thousand_get_and_other) / 1000 +
      (read.dynamodbReadUnits * PRICES.dynamodb.per_million_read_request_units) / MILLION;
    const streamUsd = (streamWrite + streamRead) * perMillion;
    // Export: the function's time, its requests, a month of the files.
    const ex = billedRequests(exporting.requests);
    const exportUsd =
      (lambdaInvocationUsd({ memoryMb: memoryOf('export'), ms: exportS * 1000 }) +
        (ex.s3Tier1 * s3.per_thousand_put_copy_post_list) / 1000 +
        (ex.s3Tier2 * s3.per_thousand_get_and_other) / 1000 +
        (ex.dynamodbReadUnits * PRICES.dynamodb.per_million_read_request_units) / MILLION +
        ((files.bytes + installFiles.bytes) / GB) * s3.standard_per_gb_month) *
      perMillion;

    report(
      `event stream: objects written per 1,000 events / events per object`,
      `${round((stream.objects * 1000) / accepted, 2)} / ${round(accepted / stream.objects, 0)}`,
      {
        stream_objects_per_1k_events: round((stream.objects * 1000) / accepted, 2),
      },
    );
    report(
      `event stream: pages of ${PAGE} for ${accepted.toLocaleString('en-US')} events / page p50 (ms)`,
      `${pages} / ${pageP50.toFixed(1)}`,
      {
        stream_page_p50_ms: round(pageP50, 1),
      },
    );
    report('event stream: AWS cost per million events written and read once (USD)', streamUsd.toFixed(3), {
      stream_cost_per_million_events_usd: round(streamUsd, 3),
    });
    report(
      `warehouse export of ${accepted.toLocaleString('en-US')} events (s) / Parquet bytes per event`,
      `${exportS.toFixed(2)} / ${round(files.bytes / accepted, 1)}`,
      {
        export_s: round(exportS, 2),
        export_parquet_bytes_per_event: round(files.bytes / accepted, 1),
      },
    );
    report('warehouse export: s per million events (this run scaled linearly)', (exportS * perMillion).toFixed(1), {
      export_s_per_million_events: round(exportS * perMillion, 1),
    });
    report('warehouse export: AWS cost per million events (USD)', exportUsd.toFixed(3), {
      export_cost_per_million_events_usd: round(exportUsd, 3),
    });
  } finally {
    await consumers?.stop();
    meter.detach();
    sqs.destroy();
  }
}
