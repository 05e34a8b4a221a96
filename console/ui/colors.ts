/**
 * One colour per partner and per event name, the same on every page and in every session: the
 * first time the console meets a name it gets the lowest free slot of its kind, kept in
 * localStorage. Twelve colours told apart with the common colour-vision deficiencies come first;
 * slot 12 on repeats them under a pattern (stripes, dots, cross-hatch), so two series never look
 * the same. The slot logic is DOM-free (`SlotRegistry`), the canvas patterns are drawn on demand.
 */

import { type SeriesStyle, SlotRegistry, styleOfSlot } from './color-slots';

export { COLORS, PATTERNS, type PatternName, type SeriesStyle, SlotRegistry, type SlotStorage, styleOfSlot } from './color-slots';

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
