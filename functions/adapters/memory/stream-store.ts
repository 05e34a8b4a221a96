import type { StreamLine, StreamObjects } from '../../domain/raw-data/stream-objects';

/** The event stream's objects in memory (functions/adapters/stream-store.ts), for the unit tests. */
export class MemoryStreamStore implements StreamObjects {
  readonly objects = new Map<string, StreamLine[]>();

  async get(key: string): Promise<StreamLine[] | undefined> {
    const lines = this.objects.get(key);
    return lines && structuredClone(lines);
  }

  async put(key: string, lines: readonly StreamLine[]): Promise<void> {
    this.objects.set(key, structuredClone([...lines]));
  }

  async delete(key: string): Promise<void> {
    this.objects.delete(key);
  }

  /** Every line, in key order (the order the stream serves them in). */
  lines(): StreamLine[] {
    return [...this.objects.keys()].sort().flatMap((key) => this.objects.get(key) ?? []);
  }
}
