import fc from 'fast-check';
import { MAX_RETIRED_SECRETS, rotated, type SigningKeys, verifyingSecrets } from '../../../functions/domain/tenants/signing-keys';

// Rotations of an app's signing secret (docs/secrets.md): which secrets verify at a time, against
// an independent model that remembers every secret ever issued with the end of its grace.
const DAY = 86_400_000;

describe('signing secret rotation', () => {
  it('keeps the replaced secret verifying for its grace, and not after', () => {
    const keys = rotated({ current: 'a', previous: [] }, 'b', 1_000, 7 * DAY);
    expect(verifyingSecrets(keys, 1_000)).toEqual(['b', 'a']);
    expect(verifyingSecrets(keys, 1_000 + 7 * DAY - 1)).toEqual(['b', 'a']);
    expect(verifyingSecrets(keys, 1_000 + 7 * DAY)).toEqual(['b']);
  });

  it('with no grace, retires the old secret at once', () => {
    expect(verifyingSecrets(rotated({ current: 'a', previous: [] }, 'b', 1_000, 0), 1_000)).toEqual(['b']);
  });

  it('verifies exactly the current secret and those whose grace has not ended, up to the bound, over any rotations', () => {
    const rotation = fc.record({ afterMs: fc.integer({ min: 0, max: 30 * DAY }), graceDays: fc.integer({ min: 0, max: 60 }) });
    fc.assert(
      fc.property(fc.array(rotation, { maxLength: 12 }), fc.integer({ min: 0, max: 90 * DAY }), (rotations, checkAfterMs) => {
        let keys: SigningKeys = { current: 's0', previous: [] };
        // The model: every secret with the time its grace ends (the current one never ends).
        const ends = new Map<string, number>([['s0', Number.POSITIVE_INFINITY]]);
        let now = 0;
        rotations.forEach(({ afterMs, graceDays }, index) => {
          now += afterMs;
          const next = `s${index + 1}`;
          ends.set(keys.current, now + graceDays * DAY);
          ends.set(next, Number.POSITIVE_INFINITY);
          keys = rotated(keys, next, now, graceDays * DAY);
        });
        const at = now + checkAfterMs;
        const verifying = verifyingSecrets(keys, at);
        const expected = [...ends].filter(([, end]) => end > at).map(([secret]) => secret);
        expect(verifying[0]).toBe(keys.current);
        expect(keys.previous.length).toBeLessThanOrEqual(MAX_RETIRED_SECRETS);
        // Every secret that verifies is one the model says may; all of them, unless the bound dropped some.
        for (const secret of verifying) expect(expected).toContain(secret);
        if (expected.length <= MAX_RETIRED_SECRETS + 1) expect(new Set(verifying)).toEqual(new Set(expected));
      }),
    );
  });
});
