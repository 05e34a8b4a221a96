import type { SlotCounter } from '../../../functions/domain/links/sliding-window';

/** The SlotCounter contract in memory: each call is atomic, as one DynamoDB UpdateItem is. */
export class MemorySlotCounter implements SlotCounter {
  readonly keys = new Map<string, Map<number, number>>();

  async increment(key: string, slot: number): Promise<ReadonlyMap<number, number>> {
    const slots = this.keys.get(key) ?? new Map<number, number>();
    this.keys.set(key, slots);
    slots.set(slot, (slots.get(slot) ?? 0) + 1);
    return new Map(slots);
  }

  async tidy(key: string, change: { release?: number; stale: readonly number[] }): Promise<void> {
    const slots = this.keys.get(key);
    if (!slots) return;
    if (change.release !== undefined) slots.set(change.release, (slots.get(change.release) ?? 0) - 1);
    for (const slot of change.stale) slots.delete(slot);
  }
}
