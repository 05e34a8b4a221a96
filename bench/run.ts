/**
 * `npm run bench`: every figure of docs/benchmarks.md, measured side by side in one run. The costs
 * on the ingestion hot path, so choices are made with numbers (docs/ingestion.md), the CPU of a
 * 100-event batch against its bare-primitive ceiling (bench/ingest-cpu.ts), each function's bundle
 * size and cold module load (bench/bundles.ts); then, on one local runtime, events and clicks under
 * load end to end (bench/end-to-end.ts), the DynamoDB write units and every other billed request
 * per click and per accepted event (bench/write-units.ts), the same at 1, 10 and 50 events per
 * batch with the hottest partition key at 10,000 events/s, and the largest report item after a
 * backlog of one-event batches (bench/batch-sizes.ts), the report handlers' p50 and p95
 * latency on a year of rows (bench/report-latency.ts); last, what a million events and a million
 * clicks cost on AWS from those counts (bench/cost.ts). Each in-memory timing is the best of
 * several rounds, to keep a busy machine's noise out of the comparison.
 *
 * `npm run --silent bench -- --json` prints every figure as one JSON object and nothing else
 * (--silent keeps npm's own banner off stdout). `--quick` runs every phase on small loads (QUICK in
 * bench/support.ts), which .ci/run does so that the bench cannot break unnoticed again. Either way
 * the run fails if a figure of the contract in bench/support.ts (REQUIRED_FIGURES) is missing, or
 * if any figure is not a finite number or a string (missingFigures).
 */
import { cpus, totalmem } from 'node:os';
import { gunzipSync, gzipSync } from 'node:zlib';
import { encodeAuditObject, toJsonLines } from '../functions/domain/audit/encode';
import { auditKey } from '../functions/domain/audit/keys';
import { auditLines } from '../functions/domain/audit/lines';
import { sha256Hex } from '../functions/domain/common/hashing';
import { decodeBody, parseBatch, parseJson } from '../functions/domain/ingest/batch-body';
import { MAX_DECOMPRESSED_BYTES } from '../functions/domain/ingest/event-api';
import { judgeEvents, validateEvent } from '../functions/domain/ingest/event-validation';
import { isValidSignature, signBody } from '../functions/domain/ingest/signature';
import { startLocalStack } from '../test/support/local-stack';
import { type BatchSizeTraffic, batchSizeFigures } from './batch-sizes';
import { bundleFigures } from './bundles';
import { costFigures } from './cost';
import { endToEndFigures } from './end-to-end';
import { batchContext, sampleBatch, validateWithZod } from './event-validation';
import { firstLaunchFigures } from './first-launch';
import { ingestCpuFigures } from './ingest-cpu';
import { performanceReportFigures } from './performance-report';
import { rawDataFigures } from './raw-data';
import { reportLatencyFigures } from './report-latency';
import { sdkWebFigures } from './sdk-web';
import {
  type ClickTraffic,
  contractViolations,
  type EventTraffic,
  type Figure,
  missingFigures,
  QUICK,
  type Report,
  sized,
} from './support';
import { writeUnitFigures } from './write-units';

const ROUNDS = sized(5, 2);
const MiB = 1024 * 1024;

async function best(work: () => unknown | Promise<unknown>, iterations: number): Promise<number> {
  let fastest = Infinity;
  for (let round = 0; round < ROUNDS; round++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < iterations; i++) await work();
    fastest = Math.min(fastest, Number(process.hrtime.bigint() - started) / 1e6 / iterations);
  }
  return fastest; // ms per iteration
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const round = (n: number, digits = 1) => Number(n.toFixed(digits));

const json = process.argv.includes('--json');
// In --json mode stdout carries the JSON object only: whatever else writes to it (a handler's
// Powertools logger, an emulator) is sent to stderr instead.
const stdout = process.stdout.write.bind(process.stdout);
if (json) process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;

const flags = [...(QUICK ? ['--quick'] : []), ...(json ? ['--json'] : [])];
const COMMAND = `npm run bench${flags.length ? ` -- ${flags.join(' ')}` : ''}`;
const machine = `${cpus().length} x ${cpus()[0]?.model.trim() ?? 'unknown CPU'}, ${Math.round(totalmem() / 1024 ** 3)} GiB`;
const figures: Record<string, Figure> = { command: COMMAND, node: process.version, machine };
const isTable = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const report: Report = (name, figure, values) => {
  // Two phases may fill one table of figures (report_p95_ms: the four reports and the performance report).
  for (const [key, value] of Object.entries(values)) {
    const before = figures[key];
    figures[key] = isTable(before) && isTable(value) ? ({ ...before, ...value } as Figure) : value;
  }
  if (!json) console.log(`${name.padEnd(72)} ${figure}`);
};

/** Seconds each phase took (`phase_seconds`): what to shorten when the quick run outgrows CI's budget. */
const phaseSeconds: Record<string, number> = {};
async function phase<T>(name: string, work: () => Promise<T> | T): Promise<T> {
  const started = performance.now();
  try {
    return await work();
  } finally {
    phaseSeconds[name] = round((performance.now() - started) / 1000);
  }
}

async function main(): Promise<void> {
  const now = Date.now();
  const events = sampleBatch(1000, now);
  const secret = 'a'.repeat(64);
  if (!json)
    console.log(`$ ${COMMAND}\nnode ${process.version} on ${machine}; in-memory timings: ${ROUNDS} rounds each, best round reported\n`);
  const started = performance.now();

  // Validation: the same 1,000 events through the hand-written rules and the zod twin.
  const agree = events.every((e) => validateEvent(e, batchContext(now)) === validateWithZod(e, batchContext(now)));
  if (!agree) throw new Error('the zod twin disagrees with the hand-written validator; fix the twin before comparing');
  const handMs = await best(() => {
    const context = batchContext(now);
    for (const e of events) validateEvent(e, context);
  }, 50);
  const zodMs = await best(() => {
    const context = batchContext(now);
    for (const e of events) validateWithZod(e, context);
  }, 20);
  report('validation, hand-written (events/s)', fmt(1000 / (handMs / 1000)), {
    validation_hand_written_events_per_s: Math.round(1000 / (handMs / 1000)),
  });
  report('validation, zod 4 twin (events/s)', fmt(1000 / (zodMs / 1000)), {
    validation_zod_events_per_s: Math.round(1000 / (zodMs / 1000)),
  });
  report('validation, zod / hand-written time', `${(zodMs / handMs).toFixed(1)}x`, {
    validation_zod_over_hand_written_time: round(zodMs / handMs),
  });

  // Body handling of a 1,000-event batch.
  const body = Buffer.from(JSON.stringify({ events, sent_at_ms: now }));
  const gz = gzipSync(body);
  report('1,000-event batch: JSON / gzip size (bytes)', `${fmt(body.length)} / ${fmt(gz.length)}`, {
    batch_1000_json_bytes: body.length,
    batch_1000_gzip_bytes: gz.length,
  });
  const mibPerS = (ms: number) => body.length / MiB / (ms / 1000);
  const gzipMs = await best(() => gzipSync(body), 20);
  report('gzip level 6 (MiB/s of JSON)', fmt(mibPerS(gzipMs)), { gzip_level6_mib_per_s: Math.round(mibPerS(gzipMs)) });
  const gunzipSyncMs = await best(() => gunzipSync(gz), 50);
  report('gunzip, sync (MiB/s of JSON out)', fmt(mibPerS(gunzipSyncMs)), { gunzip_sync_mib_per_s: Math.round(mibPerS(gunzipSyncMs)) });
  const gunzipMs = await best(() => decodeBody(gz, 'gzip'), 50);
  report('gunzip, async 64 KiB chunks with cap (MiB/s out)', fmt(mibPerS(gunzipMs)), {
    gunzip_async_capped_mib_per_s: Math.round(mibPerS(gunzipMs)),
  });
  const parseMs = await best(() => parseBatch(parseJson(body)), 50);
  report('strict UTF-8 decode + JSON.parse (MiB/s)', fmt(mibPerS(parseMs)), { utf8_json_parse_mib_per_s: Math.round(mibPerS(parseMs)) });
  const hmacMs = await best(() => isValidSignature(secret, gz, signBody(secret, gz)), 200);
  report('HMAC-SHA256 sign + verify, gzip body (µs)', (hmacMs * 1000).toFixed(1), { hmac_sign_verify_us: round(hmacMs * 1000) });

  // A gzip bomb: 960 MiB of zeros in under 1 MiB, stopped at the 8 MiB cap.
  const member = gzipSync(Buffer.alloc(64 * MiB), { level: 9 });
  const bomb = Buffer.concat(Array.from({ length: 15 }, () => member));
  const bombMs = await best(() => decodeBody(bomb, 'gzip').catch(() => undefined), 3);
  report(`gzip bomb (${fmt(bomb.length)} B -> 960 MiB) refused at ${MAX_DECOMPRESSED_BYTES / MiB} MiB (ms)`, bombMs.toFixed(1), {
    gzip_bomb_refused_ms: round(bombMs),
  });

  // Everything the handler does between the signature and the writes, for one batch.
  const audit = {
    companyId: 'com_1',
    appId: 'app_1',
    receivedMs: now,
    bodySha256: sha256Hex(gz),
    clientIp: '198.51.100.7',
    sdkVersion: 'ios/1.0',
  };
  const pipelineMs = await best(async () => {
    const batch = parseBatch(parseJson(await decodeBody(gz, 'gzip')));
    const { verdicts } = judgeEvents(batch.events, batch.sent_at_ms, now);
    auditKey({ ...audit, bodySha256: sha256Hex(gz) });
    await encodeAuditObject(auditLines(batch.events, verdicts, audit));
  }, 20);
  report('whole batch in memory: inflate..audit gzip (ms / 1,000 events)', pipelineMs.toFixed(2), {
    batch_pipeline_ms_per_1000_events: round(pipelineMs, 2),
  });

  // The audit object's compression level: time per batch against bytes stored for years.
  const { verdicts } = judgeEvents(events, now, now);
  const jsonl = toJsonLines(auditLines(events, verdicts, audit));
  figures.audit_jsonl_bytes = Buffer.byteLength(jsonl);
  for (const level of [1, 6]) {
    const levelMs = await best(() => gzipSync(jsonl, { level }), 20);
    const bytes = gzipSync(jsonl, { level }).length;
    report(`audit JSONL gzip level ${level} (ms / bytes of ${fmt(Buffer.byteLength(jsonl))})`, `${levelMs.toFixed(2)} / ${fmt(bytes)}`, {
      [`audit_gzip_level${level}_ms`]: round(levelMs, 2),
      [`audit_gzip_level${level}_bytes`]: bytes,
    });
  }

  // One 100-event batch through the handler's own code, against the primitives it cannot avoid.
  if (!json) console.log('');
  await phase('ingest_cpu', () => ingestCpuFigures(report));

  // What each function loads at a cold start.
  if (!json) console.log('');
  await phase('bundles', () => bundleFigures(report, sized(5, 1)));
  await phase('sdk_web', () => sdkWebFigures(report));

  // The whole local service, in one runtime for every phase, each with its own tenant: events
  // and clicks under load (bench/end-to-end.ts, which leaves the queue drained), the write units
  // and billed requests of clicks and events (bench/write-units.ts), the same by batch size and
  // after a backlog (bench/batch-sizes.ts), then the report latency on a
  // year of rows (bench/report-latency.ts). trustProxy lets clicks come from many addresses.
  const stack = await startLocalStack({ trustProxy: true, onError: (error) => console.error(error) });
  let byBatch: Record<string, BatchSizeTraffic> | undefined;
  try {
    if (!json) console.log('');
    await phase('end_to_end', () => endToEndFigures(report, stack));
    if (!json) console.log('');
    await phase('write_units', () => writeUnitFigures(report, stack));
    if (!json) console.log('');
    byBatch = await phase('batch_sizes', () => batchSizeFigures(report, stack));
    if (!json) console.log('');
    await phase('report_latency', () => reportLatencyFigures(report, stack));
    if (!json) console.log('');
    await phase('performance_report', () => performanceReportFigures(report, stack));
    if (!json) console.log('');
    await phase('raw_data', () => rawDataFigures(report, stack));
    if (!json) console.log('');
    await phase('first_launch', () => firstLaunchFigures(report, stack));
  } finally {
    await stack.stop();
  }

  // What the counts above cost on AWS.
  if (!json) console.log('');
  costFigures(report, {
    trafficPerEvent: figures.traffic_per_event as EventTraffic,
    trafficPerClick: figures.traffic_per_click as ClickTraffic,
    ingestMs: figures.e2e_event_unloaded_p50_ms as number,
    redirectMs: figures.e2e_click_unloaded_p50_ms as number,
    byBatch,
  });

  const seconds = (performance.now() - started) / 1000;
  figures.bench_seconds = Number(seconds.toFixed(1));
  figures.phase_seconds = phaseSeconds;
  if (!json)
    console.log(
      `\n${COMMAND}: ${seconds.toFixed(0)} s (${Object.entries(phaseSeconds)
        .map(([name, s]) => `${name} ${s}`)
        .join(', ')})`,
    );
  const violations = [...contractViolations(figures), ...missingFigures(figures)];
  if (violations.length > 0) throw new Error(`the bench's figures break their contract (bench/support.ts):\n  ${violations.join('\n  ')}`);
}

main().then(
  () => {
    if (json) stdout(`${JSON.stringify(figures, null, 2)}\n`);
  },
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
