import type { CapStore, CounterItem, Hold } from '../../functions/domain/ingest/metering';

/**
 * The cap counters and batch marks in memory, each call one atomic conditional write as
 * functions/adapters/cap-counter.ts makes it against DynamoDB (the adapter's unit test holds it to
 * the same conditions). Every write that changed something is recorded by name, in order.
 */
export class MemoryCapStore implements CapStore {
  readonly items = new Map<string, { n: number; holds: Map<string, Hold> }>();
  readonly marks = new Map<string, string>();
  readonly writes: string[] = [];

  /** The count over every item. */
  total(): number {
    return [...this.items.values()].reduce((sum, item) => sum + item.n, 0);
  }

  /** Holds on any item: batches counted and not yet settled. */
  holdsLeft(): number {
    return [...this.items.values()].reduce((sum, item) => sum + item.holds.size, 0);
  }

  /** Sets an item's count, as earlier batches would have. */
  preset(key: string, n: number): void {
    this.item(key).n = n;
  }

  async read(keys: readonly string[]): Promise<CounterItem[]> {
    return keys.map((key) => {
      const item = this.items.get(key);
      return { key, n: item?.n ?? 0, holds: new Map(item?.holds ?? []) };
    });
  }

  async hold(key: string, holdId: string, token: string, accepted: number, below: number | null): Promise<boolean> {
    const item = this.items.get(key);
    if (item?.holds.has(holdId)) return false;
    if (below !== null && item !== undefined && item.n >= below) return false;
    const written = this.item(key);
    written.n += accepted;
    written.holds.set(holdId, { token, accepted, refs: 1 });
    this.writes.push('hold');
    return true;
  }

  async join(key: string, holdId: string, token: string): Promise<boolean> {
    const hold = this.holdOf(key, holdId, token);
    if (hold === undefined) return false;
    this.items.get(key)!.holds.set(holdId, { ...hold, refs: hold.refs + 1 });
    this.writes.push('join');
    return true;
  }

  async leave(key: string, holdId: string, token: string): Promise<number | undefined> {
    const hold = this.holdOf(key, holdId, token);
    if (hold === undefined) return undefined;
    this.items.get(key)!.holds.set(holdId, { ...hold, refs: hold.refs - 1 });
    this.writes.push('leave');
    return hold.refs - 1;
  }

  async release(key: string, holdId: string, token: string, accepted: number, lastOnly: boolean): Promise<boolean> {
    const hold = this.holdOf(key, holdId, token);
    if (hold === undefined || (lastOnly && hold.refs !== 0)) return false;
    const item = this.items.get(key)!;
    item.n -= accepted;
    item.holds.delete(holdId);
    this.writes.push('release');
    return true;
  }

  async mark(markKey: string, token: string, _accepted: number, _expiresAtS: number): Promise<boolean> {
    const marked = this.marks.get(markKey);
    if (marked !== undefined && marked !== token) return false;
    this.marks.set(markKey, token);
    this.writes.push('mark');
    return true;
  }

  async unhold(key: string, holdId: string, token: string): Promise<void> {
    if (this.holdOf(key, holdId, token) === undefined) return;
    this.items.get(key)!.holds.delete(holdId);
    this.writes.push('unhold');
  }

  private item(key: string) {
    const found = this.items.get(key);
    if (found !== undefined) return found;
    const item = { n: 0, holds: new Map() };
    this.items.set(key, item);
    return item;
  }

  private holdOf(key: string, holdId: string, token: string): Hold | undefined {
    const hold = this.items.get(key)?.holds.get(holdId);
    return hold?.token === token ? hold : undefined;
  }
}
