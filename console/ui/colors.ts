/**
 * One colour per partner and per event name, the same on every page and in every session: the
 * first time the console meets a name it gets the lowest free slot of its kind, kept in
 * localStorage. Twelve colours told apart with the common colour-vision deficiencies come first;
 * slot 12 on repeats them under a pattern (stripes, dots, cross-hatch), so two series never look
 * the same. The slot logic is DOM-free (`SlotRegistry`), the canvas patterns are drawn on demand.
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

const registry = new SlotRegistry(typeof localStorage === 'undefined' ? undefined : localStorage);

/** The kinds of series that keep colours: partners, event names (and any dimension's values). */
export type SeriesKind = 'partner' | 'event_name' | 'campaign' | 'country' | 'platform' | string;

export const seriesStyle = (kind: SeriesKind, name: string): SeriesStyle => styleOfSlot(registry.slotOf(kind, name));

const patterns = new Map<string, CanvasPattern | string>();

/** A fill for bars and areas: the colour, or the colour under its pattern. */
export function seriesFill(kind: SeriesKind, name: string): CanvasPattern | string {
  const style = seriesStyle(kind, name);
  if (style.pattern === 'solid' || typeof document === 'undefined') return style.color;
  const key = `${style.color}:${style.pattern}`;
  let fill = patterns.get(key);
  if (!fill) {
    const canvas = document.createElement('canvas');
    canvas.width = canvas.height = 8;
    const context = canvas.getContext('2d');
    if (!context) return style.color;
    context.fillStyle = style.color;
    context.fillRect(0, 0, 8, 8);
    context.strokeStyle = '#ffffff';
    context.fillStyle = '#ffffff';
    context.lineWidth = 2;
    if (style.pattern === 'stripes' || style.pattern === 'cross') {
      context.beginPath();
      context.moveTo(0, 8);
      context.lineTo(8, 0);
      context.stroke();
    }
    if (style.pattern === 'cross') {
      context.beginPath();
      context.moveTo(0, 0);
      context.lineTo(8, 8);
      context.stroke();
    }
    if (style.pattern === 'dots') context.fillRect(3, 3, 2, 2);
    fill = context.createPattern(canvas, 'repeat') ?? style.color;
    patterns.set(key, fill);
  }
  return fill;
}

/** A line's dash for its pattern (lines have no fill): solid, dashed, dotted, dash-dot. */
export function seriesDash(kind: SeriesKind, name: string): number[] {
  switch (seriesStyle(kind, name).pattern) {
    case 'solid':
      return [];
    case 'stripes':
      return [6, 3];
    case 'dots':
      return [2, 3];
    case 'cross':
      return [8, 3, 2, 3];
  }
}
