/**
 * A small time-bounded cache for hot-path look-ups (keys, links). Bounded in size so a flood of
 * random keys cannot grow it without limit; the oldest entry goes first (Map keeps insertion order).
 */
export class TtlCache<V> {
  private readonly entries = new Map<string, { value: V; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** ttlFor lets a caller keep some values (a miss, say) for less time than others. */
  async getOrLoad(key: string, load: () => Promise<V>, ttlFor: (value: V) => number = () => this.ttlMs): Promise<V> {
    const hit = this.entries.get(key);
    if (hit && hit.expiresAt > this.now()) return hit.value;
    const value = await load();
    const ttlMs = ttlFor(value);
    if (ttlMs > 0) {
      if (this.entries.size >= this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
      this.entries.delete(key);
      this.entries.set(key, { value, expiresAt: this.now() + ttlMs });
    }
    return value;
  }

  delete(key: string): void {
    this.entries.delete(key);
  }
}
