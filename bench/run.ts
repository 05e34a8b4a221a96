/**
 * `npm run bench`: the costs on the ingestion hot path, so choices are made with numbers
 * (docs/ingestion.md records a run). Each figure is the best of several rounds, to keep a busy
 * machine's noise out of the comparison.
 */
import { gzipSync, gunzipSync } from 'node:zlib';
import { decodeBody, parseBatch, parseJson } from '../functions/domain/ingest/batch-body';
import { judgeEvents, validateEvent } from '../functions/domain/ingest/event-validation';
import { auditKey, auditLines, toJsonLines } from '../functions/domain/ingest/audit-record';
import { sha256Hex } from '../functions/domain/common/hashing';
import { isValidSignature, signBody } from '../functions/domain/ingest/signature';
import { MAX_DECOMPRESSED_BYTES } from '../functions/domain/ingest/event-api';
import { batchContext, sampleBatch, validateWithZod } from './event-validation';

const ROUNDS = 5;
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
const report = (name: string, figure: string) => console.log(`${name.padEnd(64)} ${figure}`);

async function main(): Promise<void> {
  const now = Date.now();
  const events = sampleBatch(1000, now);
  const secret = 'a'.repeat(64);
  console.log(`node ${process.version}, ${ROUNDS} rounds each, best round reported\n`);

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
  report('validation, hand-written (events/s)', fmt(1000 / (handMs / 1000)));
  report('validation, zod 4 twin (events/s)', fmt(1000 / (zodMs / 1000)));
  report('validation, zod / hand-written time', `${(zodMs / handMs).toFixed(1)}x`);

  // Body handling of a 1,000-event batch.
  const json = Buffer.from(JSON.stringify({ events, sent_at_ms: now }));
  const gz = gzipSync(json);
  report('1,000-event batch: JSON / gzip size (bytes)', `${fmt(json.length)} / ${fmt(gz.length)}`);
  const gzipMs = await best(() => gzipSync(json), 20);
  report('gzip level 6 (MiB/s of JSON)', fmt(json.length / MiB / (gzipMs / 1000)));
  const gunzipSyncMs = await best(() => gunzipSync(gz), 50);
  report('gunzip, sync (MiB/s of JSON out)', fmt(json.length / MiB / (gunzipSyncMs / 1000)));
  const gunzipMs = await best(() => decodeBody(gz, 'gzip'), 50);
  report('gunzip, async 64 KiB chunks with cap (MiB/s out)', fmt(json.length / MiB / (gunzipMs / 1000)));
  const parseMs = await best(() => parseBatch(parseJson(json)), 50);
  report('strict UTF-8 decode + JSON.parse (MiB/s)', fmt(json.length / MiB / (parseMs / 1000)));
  const hmacMs = await best(() => isValidSignature(secret, gz, signBody(secret, gz)), 200);
  report('HMAC-SHA256 sign + verify, gzip body (µs)', (hmacMs * 1000).toFixed(1));

  // A gzip bomb: 960 MiB of zeros in under 1 MiB, stopped at the 8 MiB cap.
  const member = gzipSync(Buffer.alloc(64 * MiB), { level: 9 });
  const bomb = Buffer.concat(Array.from({ length: 15 }, () => member));
  const bombMs = await best(() => decodeBody(bomb, 'gzip').catch(() => undefined), 3);
  report(`gzip bomb (${fmt(bomb.length)} B -> 960 MiB) refused at ${MAX_DECOMPRESSED_BYTES / MiB} MiB (ms)`, bombMs.toFixed(1));

  // Everything the handler does between the signature and the writes, for one batch.
  const audit = { companyId: 'com_1', appId: 'app_1', receivedMs: now, bodySha256: sha256Hex(gz), clientIp: '198.51.100.7', sdkVersion: 'ios/1.0' };
  const pipelineMs = await best(async () => {
    const batch = parseBatch(parseJson(await decodeBody(gz, 'gzip')));
    const { verdicts } = judgeEvents(batch.events, batch.sent_at_ms, now);
    auditKey({ ...audit, bodySha256: sha256Hex(gz) });
    gzipSync(toJsonLines(auditLines(batch.events, verdicts, audit)));
  }, 20);
  report('whole batch in memory: inflate..audit gzip (ms / 1,000 events)', pipelineMs.toFixed(2));

  // The audit object's compression level: time per batch against bytes stored for years.
  const { verdicts } = judgeEvents(events, now, now);
  const jsonl = toJsonLines(auditLines(events, verdicts, audit));
  for (const level of [1, 6]) {
    const levelMs = await best(() => gzipSync(jsonl, { level }), 20);
    report(`audit JSONL gzip level ${level} (ms / bytes of ${fmt(Buffer.byteLength(jsonl))})`, `${levelMs.toFixed(2)} / ${fmt(gzipSync(jsonl, { level }).length)}`);
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
