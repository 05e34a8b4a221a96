import { performance } from 'node:perf_hooks';
import type { AttributionDecision } from '../../domain/attribution/decision';
import { buildClick } from '../../domain/links/click';
import { runExport } from '../../domain/raw-data/export';
import { HOUR_MS } from '../../domain/raw-data/export-layout';
import {
  decodeStreamLines,
  encodeStreamLines,
  type StreamLine,
  streamAppPrefix,
  streamAttribution,
  streamName,
} from '../../domain/raw-data/stream-objects';
import { type ExportRequests, MemoryExportWorld } from './export-stores';

/**
 * The warehouse export on N events, in memory, for the bench (docs/raw-data.md#warehouse-exports,
 * "Cost and time"): stream objects as the aggregator writes them (gzip JSON Lines, decoded on each
 * read as the function does), one scheduled run over them, its time and the requests its real
 * adapters would send. Storage latency is left out: the function reads and writes 8 to 16
 * objects at once, so its time is mostly the CPU measured here.
 */

export interface ExportMeasureOptions {
  /** Events in the stream. */
  readonly events: number;
  /** Receive hours they are spread over (default 1). */
  readonly hours?: number;
  /** Events per stream object (default 100: an apply's events of one app). */
  readonly eventsPerObject?: number;
  /** One event in this many is an install, the others purchases with revenue (default 5). */
  readonly eventsPerInstall?: number;
  /** Clicks recorded per install (default 2). */
  readonly clicksPerInstall?: number;
}

export interface ExportMeasurement {
  readonly events: number;
  readonly installs: number;
  readonly clicks: number;
  /** Wall time of the run, milliseconds. */
  readonly ms: number;
  readonly files: number;
  /** Bytes of the Parquet files written, and of the stream objects read (gzip). */
  readonly parquet_bytes: number;
  readonly stream_bytes: number;
  /** What the run's real adapters would send: S3 LIST, GET, PUT, DELETE; DynamoDB Query (click_log's shards). */
  readonly requests: ExportRequests;
}

const DECISION: AttributionDecision = {
  partner: 'meta',
  attribution_type: 'deterministic',
  rule: 'click_id',
  reinstall: false,
  click_id: 'AAAAAAAAAAAAAAAAAAAAAA',
  link_id: 'LkAAAAAAAAAA',
  campaign: 'spring_sale',
  ext_click_id: 'partner-click-0000000001',
  sub1: 'creative-7',
  country: 'DE',
  click_ms: 0,
  window: { from_ms: 0, to_ms: 0, lookback_days: 7 },
  ctit_seconds: 95,
  fraud_reasons: [],
};

export async function measureExport(options: ExportMeasureOptions): Promise<ExportMeasurement> {
  const appId = 'app_bench00000000000000';
  const hours = options.hours ?? 1;
  const perObject = options.eventsPerObject ?? 100;
  const perInstall = options.eventsPerInstall ?? 5;
  const clicksPerInstall = options.clicksPerInstall ?? 2;
  const startMs = Date.UTC(2026, 0, 5, 10);
  const spanMs = hours * HOUR_MS;

  const world = new MemoryExportWorld();
  const encoded = new Map<string, Uint8Array>();
  let streamBytes = 0;
  let installs = 0;
  for (let first = 0, seq = 1; first < options.events; first += perObject, seq++) {
    const lines: StreamLine[] = [];
    for (let n = first; n < Math.min(options.events, first + perObject); n++) {
      const receivedMs = startMs + Math.floor((n / options.events) * spanMs);
      const install = n % perInstall === 0;
      if (install) installs += 1;
      lines.push(benchLine(n, receivedMs, install, perInstall));
    }
    const last = lines.at(-1)?.event.received_ms ?? startMs;
    const bytes = encodeStreamLines(lines);
    const name = streamName({ openedMs: last + 1_000, lane: seq % 64, seq });
    encoded.set(`${streamAppPrefix(appId)}${name}`, bytes);
    world.putStream(appId, name, [], bytes.byteLength);
    streamBytes += bytes.byteLength;
  }
  for (let n = 0; n < installs * clicksPerInstall; n++) {
    const tsMs = startMs + Math.floor((n / (installs * clicksPerInstall)) * spanMs);
    world.clicks.push(
      buildClick({
        clickId: Buffer.from(String(n).padStart(16, '0')).toString('base64url'),
        link: {
          link_id: 'LkAAAAAAAAAA',
          app_id: appId,
          company_id: 'co_bench',
          partner: 'meta',
          campaign: 'spring_sale',
          lookback_days: 7,
        },
        address: { ip: '198.51.100.7', block: '198.51.100.0/24' },
        userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Mobile/15E148',
        platform: 'ios',
        country: 'DE',
        asn: 3320,
        query: { click_id: `partner-click-${n}`, sub1: 'creative-7' },
        nowMs: tsMs,
      }),
    );
  }

  const ports = world.ports();
  const begin = performance.now();
  await runExport(
    {
      ...ports,
      stream: {
        listing: ports.stream.listing,
        objects: {
          get: async (key) => {
            await ports.stream.objects.get(key); // counts the GET
            const bytes = encoded.get(key);
            return bytes && decodeStreamLines(bytes);
          },
        },
      },
    },
    { apps: [{ app_id: appId, created_ms: startMs }], lanes: [], nowMs: startMs + spanMs + 10 * 60_000, skan: false },
  );
  const ms = performance.now() - begin;
  return {
    events: options.events,
    installs,
    clicks: world.clicks.length,
    ms: Math.round(ms),
    files: world.files.size,
    parquet_bytes: [...world.files.values()].reduce((sum, bytes) => sum + bytes.byteLength, 0),
    stream_bytes: streamBytes,
    requests: { ...world.requests },
  };
}

function benchLine(n: number, receivedMs: number, install: boolean, perInstall: number): StreamLine {
  const installN = n - (n % perInstall);
  const installUuid = `00000000-0000-4000-8000-${String(installN).padStart(12, '0')}`;
  const installEventId = `ev-${String(installN).padStart(10, '0')}`;
  return {
    o: `owner-${Math.floor(n / 50)}`,
    event: {
      event_id: `ev-${String(n).padStart(10, '0')}`,
      event_name: install ? 'install' : 'purchase',
      install_uuid: installUuid,
      ts_ms: receivedMs - 3_000,
      corrected_ts: receivedMs - 2_000,
      received_ms: receivedMs,
      revenue_usd: install ? null : 4.99,
      platform: 'ios',
      properties: install ? null : { sku: 'gems_500', level: n % 40 },
      country: 'DE',
      attribution: streamAttribution(DECISION, receivedMs - 2_000, installEventId),
    },
    ...(install ? { install: { first: true, previous_install_event_id: null, decision: DECISION } } : {}),
  };
}
