import { randomUUID } from 'node:crypto';
import type { NetworkPort, Ports, SdkConfig, StoragePort } from '../../packages/sdk-core/src';
import { Sdk } from '../../packages/sdk-core/src';
import type { HarnessContext, SdkUnderTest } from '../kit';

export interface SdkCoreHarnessOptions {
  readonly name?: string;
  /** Settings over the harness's own (a deliberately broken SDK's, in the kit's tests). */
  readonly config?: Partial<SdkConfig>;
  /** Wraps the network port (a deliberately broken SDK rewrites what it sends). */
  readonly network?: (network: NetworkPort, ctx: HarnessContext) => NetworkPort;
}

/**
 * packages/sdk-core on Node as an SDK under test: an Android app over an in-memory device storage
 * that outlives each run of the app, Node's fetch as its network. A restart kills the running app
 * while an event request is in flight (nothing it has in flight reaches storage, the network or
 * its timers again, as when the process dies) and starts it again over the same storage.
 */
export function sdkCoreHarness(options: SdkCoreHarnessOptions = {}): SdkUnderTest {
  return {
    name: options.name ?? 'packages/sdk-core on Node',
    capabilities: { consent: true, abort: true },
    run: (ctx) => runApp(ctx, options),
  };
}

async function runApp(ctx: HarnessContext, options: SdkCoreHarnessOptions): Promise<void> {
  const kept = new Map<string, string>();
  const storage: StoragePort = {
    get: async (key) => kept.get(key),
    set: async (key, value) => void kept.set(key, value),
    remove: async (key) => void kept.delete(key),
  };
  const plain = fetchPort(ctx.fetch ?? fetch);
  const network = options.network ? options.network(plain, ctx) : plain;
  const config: SdkConfig = {
    baseUrl: ctx.baseUrl,
    companyKey: ctx.companyKey,
    appKey: ctx.appKey,
    signingSecret: ctx.signingSecret,
    batchSize: 10,
    flushIntervalMs: 100,
    backoff: { baseMs: 50, maxMs: 400 },
    requireConsent: ctx.requireConsent,
    ...options.config,
  };
  const base: Omit<Ports, 'network'> = {
    storage,
    scheduler: { now: Date.now, setTimeout: (callback, ms) => clearTimeout.bind(null, setTimeout(callback, ms)) },
    platform: { platform: 'android', kind: 'android', appVersion: '1.0.0', randomUuid: randomUUID, random: Math.random },
  };
  let app = launch(base, network);
  let sdk = await Sdk.start(config, app.ports);
  const restartAfter = new Set(Array.from({ length: ctx.restarts }, (_, r) => Math.floor((ctx.events * (r + 1)) / (ctx.restarts + 1))));
  for (let seq = 0; seq < ctx.events; seq++) {
    await sdk.track('conformance_event', { params: { seq } });
    if (!restartAfter.has(seq + 1)) continue;
    // Killed at its next event request, once that request is on the wire.
    await app.killAtNextSend();
    sdk.stop();
    ctx.mark('restart');
    app = launch(base, network);
    sdk = await Sdk.start(config, app.ports);
  }
  if (ctx.requireConsent) {
    ctx.mark('consent');
    await sdk.setConsent(true);
  }
  while (sdk.diagnostics().queued > 0 && !ctx.signal.aborted) await new Promise((resolve) => setTimeout(resolve, 20));
  sdk.stop();
}

/** Node's fetch as the core's network port, with its timeout (and headers a test adds, such as X-Forwarded-For). */
export function fetchPort(fetchImpl: typeof fetch, extraHeaders: Readonly<Record<string, string>> = {}): NetworkPort {
  return async (request) => {
    const response = await fetchImpl(request.url, {
      method: request.method,
      headers: { ...request.headers, ...extraHeaders },
      ...(request.body ? { body: request.body } : {}),
      signal: AbortSignal.timeout(request.timeoutMs),
    });
    return {
      status: response.status,
      headers: { 'retry-after': response.headers.get('retry-after') ?? undefined, etag: response.headers.get('etag') ?? undefined },
      body: await response.text(),
    };
  };
}

/** One run of the app: its ports stop answering once it is killed. */
function launch(base: Omit<Ports, 'network'>, network: NetworkPort) {
  let dead = false;
  let armed: (() => void) | undefined;
  const never = new Promise<never>(() => undefined);
  const alive = async <T>(work: () => Promise<T>): Promise<T> => {
    if (dead) return never;
    const result = await work();
    return dead ? never : result;
  };
  const ports: Ports = {
    ...base,
    storage: {
      get: (key) => alive(() => base.storage.get(key)),
      set: (key, value) => alive(() => base.storage.set(key, value)),
      remove: (key) => alive(() => base.storage.remove(key)),
    },
    network: (request) =>
      alive(() => {
        const answer = network(request);
        if (armed && request.url.endsWith('/event')) {
          // The request has left; the process dies before its answer, after a moment on the wire.
          const kill = armed;
          armed = undefined;
          setTimeout(kill, 5);
        }
        return answer;
      }),
  };
  return {
    ports,
    killAtNextSend: () =>
      new Promise<void>((resolve) => {
        armed = () => {
          dead = true;
          resolve();
        };
      }),
  };
}
