import { createHmac, randomUUID } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { MemoryFxRates } from '../functions/adapters/memory/fx-rates';
import { decodeBody, parseJson } from '../functions/domain/ingest/batch-body';
import type { CapStore } from '../functions/domain/ingest/metering';
import { isValidSignature, signBody } from '../functions/domain/ingest/signature';
import { type TakeBatchPorts, takeBatch } from '../functions/domain/ingest/take-batch';
import { sampleBatch } from './event-validation';
import { percentile } from './support';

/** Counters that take every write at once: the bench measures taking a batch, not the store. */
const uncountedCaps: CapStore = {
  read: async (keys) => keys.map((key) => ({ key, n: 0, holds: new Map() })),
  hold: async () => true,
  join: async () => true,
  leave: async () => 0,
  release: async () => true,
  mark: async () => true,
  unhold: async () => undefined,
};

/**
 * The CPU of one 100-event POST /event against the least CPU that batch could cost, side by side
 * on the same bytes, so the ratio does not depend on the machine (bench/ingest-cpu.ts runs this
 * in bundled child processes and reports the figures).
 *
 * - ceiling: the bare primitives a batch cannot do without: HMAC-SHA256 of the gzip body,
 *   gunzip, JSON.parse, and gzip level 1 of the audit JSONL (already serialised: the very bytes
 *   the project compresses, taken from its first audit object, converted revenue included).
 * - project: the same batch through the code the handler runs, with every store stubbed out:
 *   the signature check, decodeBody, parseJson, then takeBatch with the decompressed body as its
 *   jsonText, as readEventRequest hands them over (batch shape, verdicts, audit lines, the audit
 *   object encoded by its record exactly as the AuditStore puts it).
 *
 * ratio = ceiling time / project time: 1 would be a service that adds nothing to the
 * primitives; higher is better.
 *
 * Two batches: the validation bench's (bench/event-validation.ts: a hundred installs, one event
 * in ten broken, every field the rules read), which the goal has always been measured on, and
 * the batch an SDK sends: one install's events as packages/sdk-core queues them, the advertising
 * id on every one (so every line has its device_id cut), a quarter of them ad impressions and a
 * purchase now and then.
 *
 * Timed one ceiling then one project, pair after pair: the ratio of each block of pairs, and the
 * median of the blocks (docs/benchmarks.md, "Timing the ratio pair by pair").
 */
export const INGEST_CPU_BATCH = 100;
const PAIRS_PER_BLOCK = 10;

export interface SideBySide {
  readonly ceilingUs: number;
  readonly projectUs: number;
  readonly ratio: number;
}

/** One process's figures: the validation bench's batch and an SDK's. */
export interface IngestCpuRun {
  readonly validation: SideBySide;
  readonly sdk: SideBySide;
}

/** Both batches, each timed pair by pair: `quick` warms and times fewer pairs. */
export async function measureIngestCpu(quick: boolean): Promise<IngestCpuRun> {
  const now = Date.now();
  const validation = await sideBySide(sampleBatch(INGEST_CPU_BATCH, now), now, quick);
  const sdk = await sideBySide(sdkBatch(INGEST_CPU_BATCH, now), now, quick);
  return { validation, sdk };
}

/**
 * One install's batch as packages/sdk-core's withEvent queues it (event_id, event_name,
 * install_uuid, ts_ms, platform, device_id, then the fields of track): sessions, level-ups with
 * their params, ad impressions (trackAdRevenue, in USD) and a purchase.
 */
export function sdkBatch(size: number, now: number): unknown[] {
  const installUuid = randomUUID();
  const advertisingId = randomUUID().toUpperCase();
  return Array.from({ length: size }, (_, i) => {
    const event: Record<string, unknown> = {
      event_id: randomUUID(),
      event_name: 'level_up',
      install_uuid: installUuid,
      ts_ms: now - (size - i) * 15_000,
      platform: 'ios',
      device_id: advertisingId,
    };
    if (i % 10 === 0) Object.assign(event, { event_name: 'session_start', properties: { session_count: 3 + i / 10 } });
    else if (i % 4 === 1) {
      event.event_name = 'ad_revenue';
      event.ad_revenue = {
        source: 'applovin_max',
        network: 'AppLovin',
        format: 'interstitial',
        placement: 'level_end',
        revenue: 0.0123,
        currency: 'USD',
        precision: 'exact',
        impression_id: randomUUID(),
      };
    } else if (i % 25 === 7) Object.assign(event, { event_name: 'purchase', revenue_usd: 4.99, properties: { sku: 'gems_100' } });
    else event.properties = { level: i, score: 1000 + 7 * i };
    return event;
  });
}

/** The ceiling and the project of one batch, pair by pair: each side's median µs and the median ratio of the blocks. */
async function sideBySide(events: readonly unknown[], now: number, quick: boolean): Promise<SideBySide> {
  const secret = 'b'.repeat(64);
  const gz = gzipSync(Buffer.from(JSON.stringify({ events, sent_at_ms: now })));
  const signature = signBody(secret, gz);
  let jsonl: Buffer | undefined;

  let stored = 0;
  const ports: TakeBatchPorts = {
    caps: uncountedCaps,
    audit: {
      putBatch: async (_key, _batch, record) => {
        const object = await record.encode();
        jsonl ??= gunzipSync(object);
        stored += object.length;
      },
      bucket: 'audit-bucket',
    },
    aggregation: { send: async () => undefined },
    enrichment: { send: async () => undefined },
    // The sample batches' only currency is their impressions' USD: the rates are never read (the hot path the bench measures).
    rates: new MemoryFxRates(),
    failed: (_step, _batch, error) => {
      throw error;
    },
  };
  const project = async () => {
    if (!isValidSignature(secret, gz, signature)) throw new Error('the bench batch must pass its own signature');
    const jsonText = await decodeBody(gz, 'gzip');
    const body = parseJson(jsonText);
    await takeBatch(ports, {
      companyId: 'com_1',
      appId: 'app_1',
      monthlyCap: 1_000_000,
      raw: gz,
      jsonText,
      body,
      clientIp: '198.51.100.7',
      sdkVersion: 'ios/1.0',
      receivedMs: now,
    });
  };

  // One batch first, for the JSONL it compresses.
  await project();
  const written = jsonl;
  if (written === undefined) throw new Error('the project path never encoded an audit object');
  const ceiling = () => {
    createHmac('sha256', secret).update(gz).digest();
    JSON.parse(gunzipSync(gz).toString('utf8'));
    gzipSync(written, { level: 1 });
  };

  for (let i = 0; i < (quick ? 100 : 300); i++) {
    ceiling();
    await project();
  }
  const ceilings: number[] = [];
  const projects: number[] = [];
  const ratios: number[] = [];
  for (let block = 0; block < (quick ? 20 : 60); block++) {
    let ceilingNs = 0n;
    let projectNs = 0n;
    for (let i = 0; i < PAIRS_PER_BLOCK; i++) {
      const started = process.hrtime.bigint();
      ceiling();
      const between = process.hrtime.bigint();
      await project();
      ceilingNs += between - started;
      projectNs += process.hrtime.bigint() - between;
    }
    ceilings.push(Number(ceilingNs) / PAIRS_PER_BLOCK / 1000);
    projects.push(Number(projectNs) / PAIRS_PER_BLOCK / 1000);
    ratios.push(Number(ceilingNs) / Number(projectNs));
  }
  if (stored === 0) throw new Error('the project path never encoded an audit object');
  return { ceilingUs: median(ceilings), projectUs: median(projects), ratio: median(ratios) };
}

/** The middle of the samples (nearest rank). */
export const median = (values: readonly number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    0.5,
  );
