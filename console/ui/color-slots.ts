/**
 * The DOM-free half of colors.ts (unit-tested in node): twelve colours, the patterns that repeat
 * them, and the registry that gives each name its lowest free slot once and keeps it.
 */

/** Okabe-Ito's eight, then four more distinct ones (Paul Tol's muted set). */
export const COLORS = [
  '#0072B2',
  '#E69F00',
  '#009E73',
  '#D55E00',
  '#CC79A7',
  '#56B4E9',
  '#F0E442',
  '#000000',
  '#882255',
  '#44AA99',
  '#999933',
  '#AA4499',
] as const;

export const PATTERNS = ['solid', 'stripes', 'dots', 'cross'] as const;
export type PatternName = (typeof PATTERNS)[number];

export interface SeriesStyle {
  readonly slot: number;
  readonly color: string;
  readonly pattern: PatternName;
}

/** The style of a slot: colour by slot mod 12, pattern by which round of twelve. */
export function styleOfSlot(slot: number): SeriesStyle {
  return {
    slot,
    color: COLORS[slot % COLORS.length] ?? COLORS[0],
    pattern: PATTERNS[Math.floor(slot / COLORS.length) % PATTERNS.length] ?? 'solid',
  };
}

export interface SlotStorage {
  getItem(key: string): string | null;
  setItem(key: string, value: string): void;
}

/** Names to slots, per kind, assigned once and then kept. */
export class SlotRegistry {
  private readonly slots = new Map<string, Record<string, number>>();

  constructor(private readonly storage: SlotStorage | undefined) {}

  slotOf(kind: string, name: string): number {
    const known = this.load(kind);
    const slot = known[name];
    if (slot !== undefined) return slot;
    const taken = new Set(Object.values(known));
    let free = 0;
    while (taken.has(free)) free += 1;
    known[name] = free;
    try {
      this.storage?.setItem(`console.colors.${kind}`, JSON.stringify(known));
    } catch {
      // Storage full or refused: the colour holds for this session.
    }
    return free;
  }

  private load(kind: string): Record<string, number> {
    let known = this.slots.get(kind);
    if (!known) {
      known = {};
      try {
        const stored = JSON.parse(this.storage?.getItem(`console.colors.${kind}`) ?? '{}') as unknown;
        if (stored && typeof stored === 'object' && !Array.isArray(stored)) {
          for (const [name, slot] of Object.entries(stored))
            if (Number.isInteger(slot) && (slot as number) >= 0) known[name] = slot as number;
        }
      } catch {
        // Unreadable: start again.
      }
      this.slots.set(kind, known);
    }
    return known;
  }
}
