import type { InstallSignals, NetworkPort, SchedulerPort, StoragePort } from '@attribution/sdk-core';
import type { AsyncStorageModule, FetchLike, PlayInstallReferrerModule } from './modules.js';

/** The core's storage on AsyncStorage: `setItem` has resolved once the value is on disk. */
export function asyncStoragePort(storage: AsyncStorageModule): StoragePort {
  return {
    get: async (key) => (await storage.getItem(key)) ?? undefined,
    set: (key, value) => storage.setItem(key, value),
    remove: (key) => storage.removeItem(key),
  };
}

/** What React Native provides globally, typed here without the DOM's or Node's declarations. */
interface Host {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  fetch?: FetchLike;
  AbortController?: new () => { signal: unknown; abort(): void };
  crypto?: { randomUUID?: () => string; getRandomValues?: (array: Uint8Array) => Uint8Array };
}
const host = globalThis as unknown as Host;

export const realScheduler: SchedulerPort = {
  now: () => Date.now(),
  setTimeout: (callback, ms) => {
    const handle = host.setTimeout(callback, ms);
    return () => host.clearTimeout(handle);
  },
};

/**
 * The core's network port on `fetch` (the bytes sent as signed), with the request's timeout: an
 * AbortController where the platform has one, and a timer that rejects in any case.
 */
export function fetchNetwork(fetchImpl: FetchLike | undefined = host.fetch, scheduler: SchedulerPort = realScheduler): NetworkPort {
  if (!fetchImpl) throw new Error('no fetch: pass `fetch` in the modules');
  return (request) =>
    new Promise((resolve, reject) => {
      const controller = host.AbortController ? new host.AbortController() : undefined;
      const cancel = scheduler.setTimeout(() => {
        controller?.abort();
        reject(new Error(`timed out after ${request.timeoutMs} ms`));
      }, request.timeoutMs);
      fetchImpl(request.url, { method: request.method, headers: { ...request.headers }, body: request.body, signal: controller?.signal })
        .then(async (response) => ({
          status: response.status,
          headers: { 'retry-after': response.headers.get('retry-after') ?? undefined },
          body: await response.text(),
        }))
        .then(resolve, reject)
        .finally(cancel);
    });
}

/** A random UUID v4 from the platform's secure source (react-native-get-random-values on Hermes). */
export function secureUuid(): string {
  if (host.crypto?.randomUUID) return host.crypto.randomUUID();
  if (!host.crypto?.getRandomValues) {
    throw new Error('no secure random source: import react-native-get-random-values before the SDK, or pass randomUuid');
  }
  const bytes = host.crypto.getRandomValues(new Uint8Array(16));
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x40;
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80;
  const hex = Array.from(bytes, (byte) => byte.toString(16).padStart(2, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** The interface's limit on `attribution.referrer` (docs/ingestion.md): a longer one would have the install event refused. */
const MAX_REFERRER_CHARS = 2_048;

/**
 * Google Play's install referrer (react-native-play-install-referrer), the deterministic Android
 * match: the referrer string and its times in ms. Undefined when the store has none, the module
 * fails, or it does not answer (the caller bounds the wait).
 */
export function playInstallReferrer(module: PlayInstallReferrerModule): () => Promise<InstallSignals | undefined> {
  return () =>
    new Promise((resolve) => {
      module.getInstallReferrerInfo((info, error) => {
        const referrer = info?.installReferrer;
        if (error || typeof referrer !== 'string' || referrer.length === 0 || referrer.length > MAX_REFERRER_CHARS)
          return resolve(undefined);
        const ms = (seconds: number) => (Number.isFinite(seconds) && seconds > 0 ? Math.round(seconds * 1_000) : undefined);
        const click = ms(info?.referrerClickTimestampSeconds ?? 0);
        const begin = ms(info?.installBeginTimestampSeconds ?? 0);
        resolve({
          install_referrer: referrer,
          ...(click !== undefined && { referrer_click_ms: click }),
          ...(begin !== undefined && { install_begin_ms: begin }),
        });
      });
    });
}

/** A promise's value, or `fallback` once `ms` have passed (a native module that never calls back must not hold the launch). */
export function within<T>(scheduler: SchedulerPort, ms: number, promise: Promise<T>, fallback: T): Promise<T> {
  return new Promise((resolve) => {
    const cancel = scheduler.setTimeout(() => resolve(fallback), ms);
    promise.then(
      (value) => {
        cancel();
        resolve(value);
      },
      () => {
        cancel();
        resolve(fallback);
      },
    );
  });
}
