/**
 * How long to wait before the next attempt: exponential with full jitter (a random wait up to
 * base x 2^(failures-1), capped), or what the service's Retry-After asks when it asks for longer.
 */
export interface BackoffPolicy {
  readonly baseMs: number;
  readonly maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffPolicy = { baseMs: 1_000, maxMs: 5 * 60_000 };
/** A Retry-After longer than this is read as this: a wrong header must not silence an app for days. */
export const MAX_RETRY_AFTER_MS = 60 * 60_000;

export function backoffMs(failures: number, random: number, policy: BackoffPolicy, retryAfter?: string): number {
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(Math.max(failures - 1, 0), 30));
  const jittered = Math.floor(random * ceiling);
  const asked = retryAfterMs(retryAfter);
  return asked === undefined ? jittered : Math.max(jittered, asked);
}

/** Retry-After in seconds (the service sends seconds); an HTTP date or anything else is ignored. */
export function retryAfterMs(value: string | undefined): number | undefined {
  if (value === undefined || !/^\d{1,7}$/.test(value.trim())) return undefined;
  return Math.min(Number(value.trim()) * 1_000, MAX_RETRY_AFTER_MS);
}
