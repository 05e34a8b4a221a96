import { createHmac } from 'node:crypto';
import { gunzipSync, gzipSync } from 'node:zlib';
import { MemoryFxRates } from '../functions/adapters/memory/fx-rates';
import { encodeAuditObject } from '../functions/domain/audit/encode';
import { decodeBody, parseJson } from '../functions/domain/ingest/batch-body';
import type { CapStore } from '../functions/domain/ingest/metering';
import { isValidSignature, signBody } from '../functions/domain/ingest/signature';
import { type TakeBatchPorts, takeBatch } from '../functions/domain/ingest/take-batch';
import { sampleBatch } from './event-validation';
import type { Report } from './support';

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
 * in one run on the same bytes, so the ratio does not depend on the machine.
 *
 * - ceiling: the bare primitives a batch cannot do without: HMAC-SHA256 of the gzip body,
 *   gunzip, JSON.parse, and gzip level 1 of the audit JSONL (already serialised: the very bytes
 *   the project compresses, taken from its first audit object, converted revenue included).
 * - project: the same batch through the code the handler runs, with every store stubbed out:
 *   the signature check, decodeBody, parseJson, then takeBatch with the decompressed body as its
 *   jsonText, as readEventRequest hands them over (batch shape, verdicts, audit lines, the audit
 *   object encoded by encodeAuditObject exactly as the AuditStore puts it).
 *
 * ingest_cpu_ratio = ceiling time / project time: 1 would be a service that adds nothing to the
 * primitives; higher is better. The goal is at least 0.7 (issue 41; 0.5 before, issue "Hardening from review").
 */
export const INGEST_CPU_BATCH = 100;
export const INGEST_CPU_RATIO_GOAL = 0.7;

type Timer = (work: () => unknown | Promise<unknown>, iterations: number) => Promise<number>;

export async function ingestCpuFigures(report: Report, best: Timer): Promise<void> {
  const now = Date.now();
  const secret = 'b'.repeat(64);
  const events = sampleBatch(INGEST_CPU_BATCH, now);
  const gz = gzipSync(Buffer.from(JSON.stringify({ events, sent_at_ms: now })));
  const signature = signBody(secret, gz);
  let jsonl: Buffer | undefined;

  let stored = 0;
  const ports: TakeBatchPorts = {
    caps: uncountedCaps,
    audit: {
      putBatch: async (_key, _batch, lines) => {
        const object = await encodeAuditObject(lines);
        jsonl ??= gunzipSync(object);
        stored += object.length;
      },
      bucket: 'audit-bucket',
    },
    aggregation: { send: async () => undefined },
    enrichment: { send: async () => undefined },
    // The sample batch's only currency is its impressions' USD: the rates are never read (the hot path the bench measures).
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

  // Interleaved rounds, so a burst of machine noise lands on both sides rather than one.
  let ceilingMs = Infinity;
  let projectMs = Infinity;
  for (let round = 0; round < 3; round++) {
    ceilingMs = Math.min(ceilingMs, await best(ceiling, 200));
    projectMs = Math.min(projectMs, await best(project, 200));
  }
  if (stored === 0) throw new Error('the project path never encoded an audit object');
  const ratio = ceilingMs / projectMs;
  const us = (ms: number) => Number((ms * 1000).toFixed(1));
  report(`${INGEST_CPU_BATCH}-event batch CPU, ceiling: HMAC + gunzip + JSON.parse + gzip 1 (µs)`, us(ceilingMs).toFixed(1), {
    ingest_cpu_ceiling_us: us(ceilingMs),
  });
  report(`${INGEST_CPU_BATCH}-event batch CPU, project: signature..audit object (µs)`, us(projectMs).toFixed(1), {
    ingest_cpu_project_us: us(projectMs),
  });
  report(`ingest CPU ratio, ceiling / project (goal >= ${INGEST_CPU_RATIO_GOAL})`, ratio.toFixed(2), {
    ingest_cpu_ratio: Number(ratio.toFixed(2)),
  });
}
