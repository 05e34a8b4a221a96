import fc from 'fast-check';
import { COLORS, SlotRegistry, type SlotStorage, styleOfSlot } from '../../../console/ui/color-slots';

/** localStorage's two methods over a Map. */
const fakeStorage = (): SlotStorage & { data: Map<string, string> } => {
  const data = new Map<string, string>();
  return { data, getItem: (key) => data.get(key) ?? null, setItem: (key, value) => void data.set(key, value) };
};

describe('series colours', () => {
  it('give each new name the lowest free slot of its kind, and the same slot ever after', () => {
    fc.assert(
      fc.property(
        fc.array(fc.tuple(fc.constantFrom('partner', 'event_name'), fc.string({ minLength: 1, maxLength: 6 })), { maxLength: 60 }),
        (seen) => {
          const registry = new SlotRegistry(fakeStorage());
          // Oracle: per kind, slots in order of first appearance.
          const first = new Map<string, string[]>();
          for (const [kind, name] of seen) {
            const names = first.get(kind) ?? [];
            if (!names.includes(name)) names.push(name);
            first.set(kind, names);
            expect(registry.slotOf(kind, name)).toBe(names.indexOf(name));
          }
        },
      ),
    );
  });

  it('keep slots across sessions through the storage, and fill a gap left by a forgotten name', () => {
    const storage = fakeStorage();
    const before = new SlotRegistry(storage);
    const slots = ['meta', 'google', 'tiktok'].map((name) => before.slotOf('partner', name));
    expect(slots).toEqual([0, 1, 2]);
    const after = new SlotRegistry(storage);
    // Met in another order in the next session: the same colours.
    expect(['tiktok', 'meta', 'google'].map((name) => after.slotOf('partner', name))).toEqual([2, 0, 1]);
    // Another kind counts on its own.
    expect(after.slotOf('event_name', 'purchase')).toBe(0);
    // A stored map with slot 1 gone: the next new name takes 1.
    storage.data.set('console.colors.partner', JSON.stringify({ meta: 0, tiktok: 2 }));
    expect(new SlotRegistry(storage).slotOf('partner', 'snap')).toBe(1);
    // Unreadable or refusing storage: colours still come, for the session.
    storage.data.set('console.colors.partner', '{not json');
    expect(new SlotRegistry(storage).slotOf('partner', 'x')).toBe(0);
    const refusing: SlotStorage = {
      getItem: () => null,
      setItem: () => {
        throw new Error('quota');
      },
    };
    const registry = new SlotRegistry(refusing);
    expect([registry.slotOf('partner', 'a'), registry.slotOf('partner', 'b'), registry.slotOf('partner', 'a')]).toEqual([0, 1, 0]);
  });

  it('repeat the twelve colours under patterns after the twelfth, so no two of 48 look the same', () => {
    expect(COLORS).toHaveLength(12);
    expect(new Set(COLORS).size).toBe(12);
    expect(styleOfSlot(0)).toEqual({ slot: 0, color: COLORS[0], pattern: 'solid' });
    expect(styleOfSlot(11).pattern).toBe('solid');
    expect(styleOfSlot(12)).toEqual({ slot: 12, color: COLORS[0], pattern: 'stripes' });
    expect(styleOfSlot(25)).toEqual({ slot: 25, color: COLORS[1], pattern: 'dots' });
    const looks = new Set(Array.from({ length: 48 }, (_, slot) => `${styleOfSlot(slot).color}/${styleOfSlot(slot).pattern}`));
    expect(looks.size).toBe(48);
  });
});
