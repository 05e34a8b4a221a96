import type { InstallHead, InstallStore } from '../../domain/aggregation/install-state';

/**
 * The install partitions in memory, standing in for functions/adapters/install-store.ts with the
 * same conditional semantics: `admin rebuild` and the unit tests run the aggregation use case on
 * it. Items are copied in and out, as a store would.
 */

export class MemoryInstallStore implements InstallStore {
  readonly items = new Map<string, Map<string, Record<string, unknown>>>();

  private partition(pk: string): Map<string, Record<string, unknown>> {
    let partition = this.items.get(pk);
    if (!partition) {
      partition = new Map();
      this.items.set(pk, partition);
    }
    return partition;
  }

  async get<T extends object>(pk: string, sk: string): Promise<T | undefined> {
    const item = this.items.get(pk)?.get(sk);
    return item && (structuredClone(item) as T);
  }

  async query<T extends object>(pk: string, skPrefix: string, after?: string): Promise<T[]> {
    const partition = this.items.get(pk);
    if (!partition) return [];
    return [...partition.keys()]
      .filter((sk) => sk.startsWith(skPrefix) && (after === undefined || sk > after))
      .sort()
      .map((sk) => structuredClone(partition.get(sk)) as T);
  }

  async claimItem<T extends { pk: string; sk: string }>(item: T): Promise<T> {
    const partition = this.partition(item.pk);
    const existing = partition.get(item.sk);
    if (existing) return structuredClone(existing) as T;
    partition.set(item.sk, structuredClone(item) as Record<string, unknown>);
    return structuredClone(item);
  }

  async claimAttributes(pk: string, sk: string, attributes: Readonly<Record<string, unknown>>): Promise<Record<string, unknown>> {
    const partition = this.partition(pk);
    const item = partition.get(sk) ?? { pk, sk };
    for (const [name, value] of Object.entries(attributes)) if (!(name in item)) item[name] = structuredClone(value);
    partition.set(sk, item);
    return Object.fromEntries(Object.keys(attributes).map((name) => [name, structuredClone(item[name])]));
  }

  async replaceHead(head: InstallHead, expectedMember: string | undefined): Promise<boolean> {
    const partition = this.partition(head.pk);
    const current = partition.get(head.sk) as InstallHead | undefined;
    if (current?.member !== expectedMember) return false;
    partition.set(head.sk, structuredClone(head) as unknown as Record<string, unknown>);
    return true;
  }
}
