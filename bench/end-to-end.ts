import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { type AppCredentials, buildBatch, eventBatchRequest, type SdkEvent } from '../client/event-client';
import { LinkStore } from '../functions/adapters/link-store';
import { resourceName } from '../functions/shared/config';
import { createTenant, type LocalStack } from '../test/support/local-stack';
import { MOBILE } from '../test/unit/links/user-agents';
import { poolOrder } from './pool-order';
import { percentile, type Report, sized } from './support';

/**
 * The whole local service under load, end to end over HTTP: autocannon drives signed SDK-like
 * event batches at POST /event, then tracking-link clicks at GET /l/{link_id}, each for a bounded
 * time, and reports requests and events (or recorded clicks) per second with the p50 and p99
 * latency the load generator saw. Before each load, a few requests one at a time give the
 * unloaded latency, which bench/cost.ts bills as the Lambda duration.
 *
 * The load generator runs in a child process, so that its own work does not take the event loop
 * of the runtime it measures (the runtime serves every route, the emulators and the queue
 * consumer from this one process). Every batch is distinct (its own event ids, signed over its
 * own bytes): a batch sent twice would be answered but counted once, so the child stops when the
 * pool runs out rather than repeat one, and events/s counts the `accepted` of each answer.
 * Clicks come from many /24 blocks of 198.18.0.0/15 (RFC 2544's benchmarking range) through
 * X-Forwarded-For, which the runtime believes with trustProxy, so the per-/24 rate limit (120
 * clicks a minute) does not refuse them; a click counts when its 302 carries a click id.
 *
 * Aggregation runs meanwhile, as the runtime's queue consumer does; afterwards the bench waits for
 * the queue to drain, so the phases after it start from an empty queue, and reports how long the
 * backlog took. The event load is the SDK's mix (an install's first batch to three later ones);
 * the same load of new installs' first batches only follows it, with its own drain.
 */
const LOAD_SECONDS = sized(10, 2);
const CONNECTIONS = 8;
/** Enough distinct batches for LOAD_SECONDS at well above what a 2-core machine serves. */
const POOL_BATCHES = sized(4000, 800);
const BATCHES_PER_INSTALL = 4;
/**
 * Installs per wave of the pool: an install's next batch is sent WAVE_INSTALLS requests after the
 * one before, by then answered (CONNECTIONS are in flight at a time), as an SDK sends in order.
 */
const WAVE_INSTALLS = 8 * CONNECTIONS;
const UNLOADED_SAMPLES = sized(30, 5);
const CLICK_BLOCKS = 512;

/** A recorded click's Location carries the click id the server made (Android: inside the Play referrer, encoded). */
const RECORDED = /click_id(=|%3D)/i;

type PlannedRequest = { path: string; headers: Record<string, string>; body?: Buffer };

/** A batch of 20 to 50 events of one install: its first starts with the install, then sessions, level-ups, a purchase now and then. */
function sdkBatch(installUuid: string, index: number, batch: number, nowMs: number): SdkEvent[] {
  const size = 20 + ((index * 7 + batch * 13) % 31);
  const startMs = nowMs - 30 * 60_000 + batch * 5 * 60_000;
  return Array.from({ length: size }, (_, i): SdkEvent => {
    const event: SdkEvent = {
      event_id: `${installUuid.slice(0, 8)}-${batch}-${i}`,
      event_name: i % 4 === 0 ? 'session' : 'level_up',
      install_uuid: installUuid,
      ts_ms: startMs + i * 1000,
    };
    if (batch === 0 && i === 0) {
      Object.assign(event, { event_name: 'install', platform: index % 2 === 0 ? 'ios' : 'android' });
      if (index % 3 === 0) event.device_id = `device-${installUuid}`;
    } else if (i % 25 === 11) {
      Object.assign(event, { event_name: 'purchase', revenue_usd: i % 50 === 11 ? 0.99 : 4.99 });
    }
    return event;
  });
}

/**
 * POOL_BATCHES signed batches of new installs. The SDK's mix: BATCHES_PER_INSTALL batches of each
 * install in waves of WAVE_INSTALLS (poolOrder), an install's first batch to three later ones.
 * New installs only: each install's first batch alone, so however much of the pool a load takes,
 * every batch it sends is an install to attribute.
 */
function eventRequests(credentials: AppCredentials, kind: 'mix' | 'new installs'): { requests: PlannedRequest[]; events: number } {
  const nowMs = Date.now();
  const perInstall = kind === 'mix' ? BATCHES_PER_INSTALL : 1;
  const installs = Array.from({ length: Math.ceil(POOL_BATCHES / perInstall) }, () => randomUUID());
  const requests: PlannedRequest[] = [];
  let events = 0;
  for (const [index, batch] of poolOrder(installs.length, perInstall, WAVE_INSTALLS)) {
    const batchEvents = sdkBatch(installs[index]!, index, batch, nowMs);
    events += batchEvents.length;
    const { headers, body } = eventBatchRequest(credentials, buildBatch(batchEvents, nowMs));
    requests.push({ path: '/event', headers, body });
  }
  return { requests, events };
}

/** Clicks from an iPhone or an Android phone, spread over CLICK_BLOCKS /24 blocks. */
function clickRequests(linkId: string): PlannedRequest[] {
  return Array.from({ length: CLICK_BLOCKS * 4 }, (_, i) => {
    const block = i % CLICK_BLOCKS;
    const ip = `198.${18 + (block >> 8)}.${block & 255}.${1 + (Math.floor(i / CLICK_BLOCKS) % 254)}`;
    return {
      path: `/l/${linkId}?click_id=bench-${i}&sub1=creative_${i % 3}`,
      headers: {
        'user-agent': i % 3 === 2 ? MOBILE.chromeAndroid : MOBILE.iosSafari,
        'x-forwarded-for': ip,
        'cloudfront-viewer-country': 'US',
      },
    };
  });
}

/**
 * The child's script: autocannon over the pool, each request taken in turn, `accepted` summed
 * from the answers. With `once`, it stops when the pool is used up instead of starting it again.
 */
const LOAD_SCRIPT = `
const autocannon = require(process.env.BENCH_AUTOCANNON);
const spec = JSON.parse(require('node:fs').readFileSync(process.argv[1], 'utf8'));
const pool = spec.requests.map((r) => ({ method: spec.method, path: r.path, headers: r.headers, body: r.body ? Buffer.from(r.body, 'base64') : undefined }));
let next = 0, exhausted = false, accepted = 0;
const instance = autocannon({
  url: spec.url, connections: spec.connections, duration: spec.seconds,
  requests: [{
    setupRequest: (request) => {
      if (next === pool.length) {
        next = 0;
        if (spec.once && !exhausted) { exhausted = true; setImmediate(() => instance.stop()); }
      }
      return { ...request, ...pool[next++] };
    },
    onResponse: (status, body, context, headers) => {
      if (spec.method === 'POST' && status === 200) accepted += JSON.parse(body).accepted;
      if (spec.method === 'GET' && status === 302 && /click_id(=|%3D)/i.test(String(headers.location ?? headers.Location ?? ''))) accepted++;
    },
  }],
}, (error, result) => {
  if (error) { console.error(error); process.exit(1); }
  process.stdout.write(JSON.stringify({
    seconds: result.duration, requests: result.requests.total, ok: result['2xx'] + result['3xx'], non2xx: result.non2xx,
    errors: result.errors, timeouts: result.timeouts, p50: result.latency.p50, p99: result.latency.p99, accepted, exhausted,
  }));
});
`;

interface LoadResult {
  seconds: number;
  requests: number;
  ok: number;
  non2xx: number;
  errors: number;
  timeouts: number;
  p50: number;
  p99: number;
  accepted: number;
  exhausted: boolean;
}

async function load(baseUrl: string, method: 'GET' | 'POST', requests: readonly PlannedRequest[], once: boolean): Promise<LoadResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'attribution-load-'));
  try {
    const spec = path.join(dir, 'spec.json');
    writeFileSync(
      spec,
      JSON.stringify({
        url: baseUrl,
        method,
        connections: CONNECTIONS,
        seconds: LOAD_SECONDS,
        once,
        requests: requests.map((r) => ({ ...r, body: r.body?.toString('base64') })),
      }),
    );
    const stdout = await new Promise<string>((resolve, reject) =>
      execFile(
        process.execPath,
        ['-e', LOAD_SCRIPT, spec],
        { env: { ...process.env, BENCH_AUTOCANNON: require.resolve('autocannon') }, maxBuffer: 16 * 1024 * 1024 },
        (error, out, err) => (error ? reject(new Error(`the load generator failed: ${err || error.message}`)) : resolve(out)),
      ),
    );
    return JSON.parse(stdout) as LoadResult;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** p50 of UNLOADED_SAMPLES requests made one at a time, each checked with `check`. */
async function unloadedP50(
  baseUrl: string,
  method: 'GET' | 'POST',
  requests: readonly PlannedRequest[],
  check: (response: Response) => Promise<void>,
): Promise<number> {
  const samples: number[] = [];
  for (const request of requests) {
    const started = performance.now();
    const response = await fetch(`${baseUrl}${request.path}`, { method, headers: request.headers, body: request.body, redirect: 'manual' });
    await check(response);
    samples.push(performance.now() - started);
  }
  return percentile(
    samples.sort((a, b) => a - b),
    0.5,
  );
}

const round = (n: number, digits = 1) => Number(n.toFixed(digits));
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

export async function endToEndFigures(report: Report, stack: LocalStack): Promise<void> {
  const { app, company } = await createTenant({ plan: 'paid' });
  const link = await new LinkStore(resourceName.table('links')).create(app, { partner: 'bench_network', campaign: 'load' });
  const credentials = { companyKey: company.company_key, appKey: app.app_key, signingSecret: app.signing_secret };

  const { requests: batches, events: pooled } = eventRequests(credentials, 'mix');
  const eventsPerBatch = pooled / batches.length;
  const eventUnloadedMs = await unloadedP50(stack.baseUrl, 'POST', batches.slice(0, UNLOADED_SAMPLES), async (response) => {
    const body = (await response.json()) as { accepted?: number; rejected?: number };
    if (response.status !== 200 || body.rejected !== 0)
      throw new Error(`an unloaded bench batch was refused: ${response.status} ${JSON.stringify(body)}`);
  });
  const events = await load(stack.baseUrl, 'POST', batches.slice(UNLOADED_SAMPLES), true);
  if (events.accepted === 0 || events.non2xx > 0 || events.errors > 0)
    throw new Error(`the event load was refused: ${JSON.stringify(events)}`);
  const drainStarted = performance.now();
  await stack.pollers.drain();
  const drainS = (performance.now() - drainStarted) / 1000;
  // The same load of new installs only (a launch, a featured day): each first batch is an install
  // to attribute, the aggregator's costliest object (docs/benchmarks.md, "The load's mix").
  const surge = await load(stack.baseUrl, 'POST', eventRequests(credentials, 'new installs').requests, true);
  if (surge.accepted === 0 || surge.non2xx > 0 || surge.errors > 0)
    throw new Error(`the new-install load was refused: ${JSON.stringify(surge)}`);
  const surgeDrainStarted = performance.now();
  await stack.pollers.drain();
  const surgeDrainS = (performance.now() - surgeDrainStarted) / 1000;

  const clicks = clickRequests(link.link_id);
  const clickUnloadedMs = await unloadedP50(stack.baseUrl, 'GET', clicks.slice(0, UNLOADED_SAMPLES), async (response) => {
    await response.arrayBuffer();
    if (response.status !== 302 || !RECORDED.test(response.headers.get('location') ?? ''))
      throw new Error(`an unloaded bench click was not recorded: ${response.status} ${response.headers.get('location')}`);
  });
  const clickLoad = await load(stack.baseUrl, 'GET', clicks.slice(UNLOADED_SAMPLES), false);
  if (clickLoad.accepted === 0 || clickLoad.errors > 0) throw new Error(`the click load was refused: ${JSON.stringify(clickLoad)}`);

  const requestsPerS = events.requests / events.seconds;
  const eventsPerS = events.accepted / events.seconds;
  const clicksPerS = clickLoad.accepted / clickLoad.seconds;
  const ran = (result: LoadResult) => `${result.seconds.toFixed(0)} s${result.exhausted ? ', pool used up' : ''}`;
  report(
    `POST /event, ${CONNECTIONS} connections, ~${Math.round(eventsPerBatch)}-event batches (${ran(events)}): requests/s`,
    fmt(requestsPerS),
    {
      e2e_requests_per_s: round(requestsPerS),
      e2e_events_per_batch: round(eventsPerBatch),
    },
  );
  report('  accepted events/s', fmt(eventsPerS), { e2e_events_per_s: Math.round(eventsPerS) });
  report('  latency p50 / p99 (ms)', `${events.p50} / ${events.p99}`, { e2e_event_p50_ms: events.p50, e2e_event_p99_ms: events.p99 });
  report('  unloaded latency p50, one at a time (ms)', eventUnloadedMs.toFixed(1), { e2e_event_unloaded_p50_ms: round(eventUnloadedMs) });
  report('  aggregation backlog drained after the load (s)', drainS.toFixed(1), { e2e_aggregation_drain_s: round(drainS) });
  report(
    `POST /event, new installs' first batches only (${ran(surge)}): accepted events/s, backlog drained after (s)`,
    `${fmt(surge.accepted / surge.seconds)}, ${surgeDrainS.toFixed(1)}`,
    { e2e_new_install_events_per_s: Math.round(surge.accepted / surge.seconds), e2e_new_install_drain_s: round(surgeDrainS) },
  );
  report(`GET /l/{link_id}, ${CONNECTIONS} connections (${ran(clickLoad)}): recorded clicks/s`, fmt(clicksPerS), {
    e2e_clicks_per_s: Math.round(clicksPerS),
    e2e_click_requests_per_s: round(clickLoad.requests / clickLoad.seconds),
  });
  report('  latency p50 / p99 (ms)', `${clickLoad.p50} / ${clickLoad.p99}`, {
    e2e_click_p50_ms: clickLoad.p50,
    e2e_click_p99_ms: clickLoad.p99,
  });
  report('  unloaded latency p50, one at a time (ms)', clickUnloadedMs.toFixed(1), { e2e_click_unloaded_p50_ms: round(clickUnloadedMs) });
}
