/**
 * A server key's last use (`server-key list`'s `last_used_ms`), kept to the hour: the Reporting
 * API, the stream and the cost route note each accepted key, and the key's item is written at most
 * once an hour. The write is a conditional update (its last use older than an hour, or none), so
 * however many function instances see the key, one write an hour succeeds; each instance also
 * remembers what it knows of the key, so it tries at most once an hour too (a refused conditional
 * write still costs a write unit). docs/console.md, "Server keys: names and last use".
 */

export const KEY_USE_INTERVAL_MS = 3_600_000;

/** The tenants table's side (TenantStore.recordServerKeyUse). */
export interface KeyUseWriter {
  /** Sets the key's last use to nowMs unless it is already within the interval; false when the condition refused it. */
  recordServerKeyUse(keyHash: string, nowMs: number, intervalMs: number): Promise<boolean>;
}

/** A key as the key check found it: its hash and the last use its (possibly cached) item holds. */
export interface UsedKey {
  readonly key_hash: string;
  readonly last_used_ms?: number;
}

/**
 * Whether a use at nowMs is to be written, given the last use known (none: yes): the store's
 * condition, `last_used_ms < :now - interval`, seen from the instance.
 */
export const keyUseDue = (lastUsedMs: number | undefined, nowMs: number, intervalMs = KEY_USE_INTERVAL_MS): boolean =>
  lastUsedMs === undefined || lastUsedMs < nowMs - intervalMs;

/**
 * One instance's notes of key uses. `note` never throws and never makes the caller wait: the
 * write runs in the background and a failure goes to `onError` (logged), since a request must not
 * fail or slow down because its key's last use could not be kept. The write's promise is returned
 * for tests.
 */
export class KeyUseRecorder {
  /** The last use each key is known to have, by this instance's writes or the items it read. */
  private readonly known = new Map<string, number>();

  constructor(
    private readonly writer: KeyUseWriter,
    private readonly nowMs: () => number,
    private readonly onError: (error: unknown, keyHash: string) => void,
    private readonly intervalMs = KEY_USE_INTERVAL_MS,
    /** Keys remembered at most (a few per app); the oldest is forgotten first. */
    private readonly maxKeys = 10_000,
  ) {}

  note(key: UsedKey): Promise<void> | undefined {
    const now = this.nowMs();
    const remembered = this.known.get(key.key_hash);
    const last = Math.max(remembered ?? Number.NEGATIVE_INFINITY, key.last_used_ms ?? Number.NEGATIVE_INFINITY);
    if (!keyUseDue(Number.isFinite(last) ? last : undefined, now, this.intervalMs)) return undefined;
    // Taken before the write, so the requests that arrive while it runs do not write too; a failed
    // write is not retried before the hour is up (a store in trouble gets no extra load from it).
    this.remember(key.key_hash, now);
    return this.writer.recordServerKeyUse(key.key_hash, now, this.intervalMs).then(
      () => undefined,
      (error: unknown) => {
        this.onError(error, key.key_hash);
      },
    );
  }

  private remember(keyHash: string, ms: number): void {
    this.known.delete(keyHash);
    if (this.known.size >= this.maxKeys) this.known.delete(this.known.keys().next().value as string);
    this.known.set(keyHash, ms);
  }
}
