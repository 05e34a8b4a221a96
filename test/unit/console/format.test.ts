import fc from 'fast-check';
import { BLANK, change, count, csvPct, csvUsd, orBlank, pct, ratio, usd } from '../../../console/ui/format';

// Oracles on integers: cents and tenths of a percent written out digit by digit.
const grouped = (n: number) => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
const dollars = (cents: number) =>
  `${cents < 0 ? '-' : ''}$${grouped(Math.floor(Math.abs(cents) / 100))}.${String(Math.abs(cents) % 100).padStart(2, '0')}`;

describe('console number formats', () => {
  it('write dollars with two decimals and separators', () => {
    fc.assert(fc.property(fc.integer({ min: -1e11, max: 1e11 }), (cents) => expect(usd(cents / 100)).toBe(dollars(cents))));
    expect(usd(1234.5)).toBe('$1,234.50');
    expect(usd(0.123456)).toBe('$0.12');
    expect(csvUsd(1234.5)).toBe('1234.50');
  });

  it('write rates as percentages to one decimal on screen and two in the CSV', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 999_999 }), (tenths) => {
        expect(pct(tenths / 1000)).toBe(`${grouped(Math.floor(tenths / 10))}.${tenths % 10} %`);
      }),
    );
    expect(pct(0.1234)).toBe('12.3 %');
    expect(csvPct(0.1234)).toBe('12.34%');
  });

  it('write counts with separators', () => {
    fc.assert(fc.property(fc.integer({ min: 0, max: 1e12 }), (n) => expect(count(n)).toBe(grouped(n))));
  });

  it('leave a ratio over 0 blank, never 0', () => {
    expect(ratio(5, 0)).toBeUndefined();
    expect(orBlank(ratio(5, 0), usd)).toBe(BLANK);
    expect(orBlank(ratio(5, 2), usd)).toBe('$2.50');
    expect(orBlank(Number.NaN, pct)).toBe(BLANK);
  });

  it('say the change against the previous period with its direction', () => {
    expect(change(110, 100)).toEqual({ text: '+10.0 %', direction: 'up' });
    expect(change(90, 100)).toEqual({ text: '-10.0 %', direction: 'down' });
    expect(change(5, 0)).toEqual({ text: 'new', direction: 'up' });
    expect(change(0, 0)).toEqual({ text: 'no change', direction: 'flat' });
    expect(change(undefined, 3)).toEqual({ text: BLANK, direction: 'none' });
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e6 }), fc.integer({ min: 1, max: 1e6 }), (current, previous) => {
        const { text, direction } = change(current, previous);
        const relative = (current - previous) / previous;
        if (Math.abs(relative) < 0.0005) expect(direction).toBe('flat');
        else {
          expect(direction).toBe(relative > 0 ? 'up' : 'down');
          // The text is the relative change in percent, to one decimal.
          const shown = Number(text.replace(/[ %,+]/g, ''));
          expect(Math.abs(shown - relative * 100)).toBeLessThanOrEqual(0.05 + 1e-9);
        }
      }),
    );
  });
});
