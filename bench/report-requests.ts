import { randomUUID } from 'node:crypto';
import type { HttpEvent } from '../functions/shared/http';
import { originVerifyHeader } from '../lib/manifest';
import { normalizeResult } from '../local/api-gateway';
import { invoke } from '../local/lambda';
import { LOCAL_ORIGIN_SECRET_VARIABLE } from '../local/origin-secret';
import { percentile, sized } from './support';

/**
 * The report phases' requests (report-latency.ts, performance-report.ts): an API Gateway v2 event
 * for `GET <path>?<params>` as the local edge builds it, and its handler invoked in-process and
 * timed, so that the figure is the handler's and not the HTTP hop's.
 */
export function reportGetEvent(path: string, params: Readonly<Record<string, string>>, serverKey: string): HttpEvent {
  const routeKey = `GET ${path}`;
  const nowMs = Date.now();
  return {
    version: '2.0',
    routeKey,
    rawPath: path,
    rawQueryString: new URLSearchParams(params).toString(),
    // As CloudFront sends it: the handlers refuse a request without the origin secret.
    headers: {
      host: 'localhost',
      authorization: `Bearer ${serverKey}`,
      'user-agent': 'bench',
      [originVerifyHeader]: process.env[LOCAL_ORIGIN_SECRET_VARIABLE] ?? '',
    },
    queryStringParameters: { ...params },
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: 'localhost',
      domainPrefix: 'local',
      http: { method: 'GET', path, protocol: 'HTTP/1.1', sourceIp: '203.0.113.9', userAgent: 'bench' },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: new Date(nowMs).toUTCString(),
      timeEpoch: nowMs,
    },
    isBase64Encoded: false,
  };
}

/** The function's handler (loaded from the manifest as the local edge does) on the event: its answer and the ms it took. */
export async function timedInvoke(functionName: string, event: HttpEvent): Promise<{ ms: number; status?: number; body?: string }> {
  const started = process.hrtime.bigint();
  const result = normalizeResult(await invoke(functionName, event));
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  return { ms, status: result.statusCode, body: result.body };
}

const WARMUP = sized(5, 1);
export const SAMPLES = sized(50, 5);
const round = (n: number) => Number(n.toFixed(1));

/**
 * p50 and p95 (ms, to 0.1) of each read, after WARMUP rounds: SAMPLES rounds, round-robin, so
 * whatever the machine does meanwhile (GC, the emulator's compaction of fresh rows) falls on
 * every read alike and their ratios stay fair.
 */
export async function readLatencies<R>(
  reads: readonly R[],
  time: (read: R) => Promise<number>,
): Promise<{ read: R; p50: number; p95: number }[]> {
  for (let i = 0; i < WARMUP; i++) for (const read of reads) await time(read);
  const timed = reads.map((read) => ({ read, samples: [] as number[] }));
  for (let i = 0; i < SAMPLES; i++) for (const { read, samples } of timed) samples.push(await time(read));
  return timed.map(({ read, samples }) => {
    const sorted = [...samples].sort((a, b) => a - b);
    return { read, p50: round(percentile(sorted, 0.5)), p95: round(percentile(sorted, 0.95)) };
  });
}
