/**
 * What the core needs of the platform it runs on (a browser, React Native, Node), passed in at
 * `createSdk`. The core itself imports no Node built-in and no DOM API.
 */

/** Durable key-value storage: `set` has resolved once the value survives a crash or a reload. */
export interface StoragePort {
  get(key: string): Promise<string | undefined>;
  set(key: string, value: string): Promise<void>;
  remove(key: string): Promise<void>;
}

export interface HttpRequest {
  readonly url: string;
  readonly method: 'GET' | 'POST';
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Uint8Array;
  /** Give up after this long; the promise then rejects, as for a network failure. */
  readonly timeoutMs: number;
}

export interface HttpResponse {
  readonly status: number;
  /** Lower-case names; only `retry-after` and `etag` (GET /sdk/v1/skan-schema) are read. */
  readonly headers: Readonly<Record<string, string | undefined>>;
  readonly body: string;
}

/** Sends a request; rejects on a network failure or a timeout (the core retries both). */
export type NetworkPort = (request: HttpRequest) => Promise<HttpResponse>;

/** Timers, so tests (and hosts with their own schedulers) can drive time. Returns a cancel function. */
export interface SchedulerPort {
  now(): number;
  setTimeout(callback: () => void, ms: number): () => void;
}

export interface PlatformPort {
  /** What events carry as `platform` (the service knows `ios` and `android`; web sends none). */
  readonly platform?: 'ios' | 'android';
  /** A name for the POST /sdk/v1/attribution body: `ios`, `android` or `web`. */
  readonly kind: 'ios' | 'android' | 'web';
  readonly appVersion: string;
  /** A random UUID (v4) from a secure source: crypto.randomUUID where the platform has it. */
  randomUuid(): string;
  /** Uniform in [0, 1), for the backoff's jitter. */
  random(): number;
}
