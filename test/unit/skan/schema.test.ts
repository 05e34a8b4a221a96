import fc from 'fast-check';
import {
  COARSE_VALUES,
  type CoarseValue,
  estimateRevenueUsd,
  type PostbackWindow,
  type SkanSchema,
  validateSkanSchema,
} from '../../../functions/domain/skan/schema';

const EXAMPLE = {
  fine: [{ value: 63, revenue_usd: [10, 20], events: ['purchase'] }],
  coarse: [{ window: 0, value: 'high', revenue_usd: [5, 15], events: ['purchase'] }],
  lock: [{ window: 0, events: ['purchase'] }],
};

function valid(json: unknown): SkanSchema {
  const result = validateSkanSchema(json);
  if (!result.ok) throw new Error(`refused: ${result.field} ${result.message}`);
  return result.schema;
}

function fault(json: unknown): { field: string; message: string } {
  const result = validateSkanSchema(json);
  if (result.ok) throw new Error('accepted');
  return { field: result.field, message: result.message };
}

const withFine = (entry: unknown, others: unknown[] = []) => ({ fine: [...others, entry], coarse: [] });

describe('validating a conversion-value schema', () => {
  it('accepts the example of docs/ios.md as it is', () => {
    expect(valid(EXAMPLE)).toEqual(EXAMPLE);
  });

  it('fills in the optional members: events as none, lock as no rule', () => {
    expect(valid({ fine: [{ value: 0, revenue_usd: [0, 0] }], coarse: [] })).toEqual({
      fine: [{ value: 0, revenue_usd: [0, 0], events: [] }],
      coarse: [],
      lock: [],
    });
  });

  it('sorts entries into one canonical order: fine by value, coarse by window then low to high, lock by window', () => {
    const schema = valid({
      fine: [
        { value: 9, revenue_usd: [1, 2] },
        { value: 3, revenue_usd: [1, 2] },
      ],
      coarse: [
        { window: 1, value: 'low', revenue_usd: [0, 1] },
        { window: 0, value: 'high', revenue_usd: [0, 1] },
        { window: 0, value: 'low', revenue_usd: [0, 1] },
      ],
      lock: [
        { window: 2, events: ['a'] },
        { window: 0, events: ['b'] },
      ],
    });
    expect(schema.fine.map((e) => e.value)).toEqual([3, 9]);
    expect(schema.coarse.map((e) => `${e.window}${e.value}`)).toEqual(['0low', '0high', '1low']);
    expect(schema.lock.map((r) => r.window)).toEqual([0, 2]);
  });

  it.each([
    ['a file that is not an object', [], 'schema'],
    ['a missing fine', { coarse: [] }, 'fine'],
    ['a missing coarse', { fine: [] }, 'coarse'],
    ['an unknown top-level member', { fine: [], coarse: [], locks: [] }, 'locks'],
    ['fine that is not an array', { fine: {}, coarse: [] }, 'fine'],
    ['a fine entry that is not an object', withFine(7), 'fine[0]'],
    ['a fine value above 63', withFine({ value: 64, revenue_usd: [1, 2] }), 'fine[0].value'],
    ['a fine value below 0', withFine({ value: -1, revenue_usd: [1, 2] }), 'fine[0].value'],
    ['a fractional fine value', withFine({ value: 1.5, revenue_usd: [1, 2] }), 'fine[0].value'],
    ['a fine value given as text', withFine({ value: '3', revenue_usd: [1, 2] }), 'fine[0].value'],
    ['a fine entry without revenue', withFine({ value: 3 }), 'fine[0].revenue_usd'],
    ['a misspelt member of a fine entry', withFine({ value: 3, revenue_usd: [1, 2], event: ['a'] }), 'fine[0].event'],
    ['a range of one number', withFine({ value: 3, revenue_usd: [1] }), 'fine[0].revenue_usd'],
    ['a range whose min exceeds its max', withFine({ value: 3, revenue_usd: [5, 2] }), 'fine[0].revenue_usd'],
    ['a negative revenue', withFine({ value: 3, revenue_usd: [-1, 2] }), 'fine[0].revenue_usd'],
    ['a revenue above 1,000,000', withFine({ value: 3, revenue_usd: [1, 1_000_001] }), 'fine[0].revenue_usd'],
    ['a revenue given as text', withFine({ value: 3, revenue_usd: ['1', 2] }), 'fine[0].revenue_usd'],
    ['a fine value given twice', withFine({ value: 3, revenue_usd: [1, 2] }, [{ value: 3, revenue_usd: [0, 1] }]), 'fine[1].value'],
    ['an event name with a space', withFine({ value: 3, revenue_usd: [1, 2], events: ['ok', 'add to cart'] }), 'fine[0].events[1]'],
    ['an event name of 65 characters', withFine({ value: 3, revenue_usd: [1, 2], events: ['e'.repeat(65)] }), 'fine[0].events[0]'],
    ['an event named twice', withFine({ value: 3, revenue_usd: [1, 2], events: ['a', 'a'] }), 'fine[0].events[1]'],
    ['events that are not an array', withFine({ value: 3, revenue_usd: [1, 2], events: 'a' }), 'fine[0].events'],
    [
      '33 events on one entry',
      withFine({ value: 3, revenue_usd: [1, 2], events: Array.from({ length: 33 }, (_, i) => `e${i}`) }),
      'fine[0].events',
    ],
    ['65 fine entries', { fine: Array.from({ length: 65 }, () => ({ value: 0, revenue_usd: [0, 0] })), coarse: [] }, 'fine'],
    ['a coarse window of 3', { fine: [], coarse: [{ window: 3, value: 'low', revenue_usd: [0, 1] }] }, 'coarse[0].window'],
    ['a coarse value not low, medium or high', { fine: [], coarse: [{ window: 0, value: 'max', revenue_usd: [0, 1] }] }, 'coarse[0].value'],
    [
      'a (window, value) given twice',
      {
        fine: [],
        coarse: [
          { window: 1, value: 'low', revenue_usd: [0, 1] },
          { window: 1, value: 'low', revenue_usd: [2, 3] },
        ],
      },
      'coarse[1].value',
    ],
    ['a lock rule without events', { fine: [], coarse: [], lock: [{ window: 0, events: [] }] }, 'lock[0].events'],
    ['a lock rule without a window', { fine: [], coarse: [], lock: [{ events: ['a'] }] }, 'lock[0].window'],
    [
      'a window locked by two rules',
      {
        fine: [],
        coarse: [],
        lock: [
          { window: 2, events: ['a'] },
          { window: 2, events: ['b'] },
        ],
      },
      'lock[1].window',
    ],
  ])('refuses %s, naming the field at fault', (_, json, field) => {
    const refused = fault(json);
    expect(refused.field).toBe(field);
    expect(refused.message.length).toBeGreaterThan(0);
  });

  it('accepts the bounds: values 0 and 63, revenue 0 and 1,000,000, an event name of 64 characters', () => {
    const schema = valid({
      fine: [
        { value: 0, revenue_usd: [0, 0] },
        { value: 63, revenue_usd: [1_000_000, 1_000_000], events: ['e'.repeat(64)] },
      ],
      coarse: [],
    });
    expect(schema.fine).toHaveLength(2);
  });
});

// Generated schemas, kept as the plain tables the oracle reads: a slot per fine value, a cell per (window, coarse value).
type Range = [number, number];
const range = fc
  .tuple(fc.integer({ min: 0, max: 100_000_000 }), fc.integer({ min: 0, max: 100_000_000 }))
  .map(([a, b]) => [Math.min(a, b) / 100, Math.max(a, b) / 100] as Range);
const tables = fc.record({
  fine: fc.array(fc.option(range, { nil: undefined }), { minLength: 64, maxLength: 64 }),
  coarse: fc.array(fc.array(fc.option(range, { nil: undefined }), { minLength: 3, maxLength: 3 }), { minLength: 3, maxLength: 3 }),
});
type Tables = { fine: (Range | undefined)[]; coarse: (Range | undefined)[][] };

/** The schema file of the tables, its entries in an order the generator chose. */
function fileOf(t: Tables, order: number[]): unknown {
  const fine = t.fine.flatMap((r, value) => (r ? [{ value, revenue_usd: r }] : []));
  const coarse = t.coarse.flatMap((row, window) => row.flatMap((r, v) => (r ? [{ window, value: COARSE_VALUES[v], revenue_usd: r }] : [])));
  const shuffle = <T>(xs: T[]) =>
    xs
      .map((x, i) => [order[i % order.length] ?? 0, i, x] as const)
      .sort((a, b) => a[0] - b[0] || a[1] - b[1])
      .map(([, , x]) => x);
  return { fine: shuffle(fine), coarse: shuffle(coarse) };
}

/** The oracle: docs/ios.md's rule read straight off the tables, the middle as min plus half the width. */
function expected(t: Tables, window: PostbackWindow, fine: number | undefined, coarse: CoarseValue | undefined): number {
  const mid = (r: Range | undefined) => (r ? r[0] + (r[1] - r[0]) / 2 : 0);
  if (window === 0 && fine !== undefined) return mid(t.fine[fine]);
  if (coarse === undefined) return 0;
  return mid(t.coarse[window]?.[COARSE_VALUES.indexOf(coarse)]);
}

const postback = fc.record({
  window: fc.constantFrom<PostbackWindow>(0, 1, 2),
  fine: fc.option(fc.integer({ min: 0, max: 63 }), { nil: undefined }),
  coarse: fc.option(fc.constantFrom<CoarseValue>('low', 'medium', 'high'), { nil: undefined }),
});

describe('estimating the revenue of a postback', () => {
  it('decodes the example: fine 63 in window 0 is 15, coarse high in window 0 is 10, high in window 1 is 0', () => {
    const schema = valid(EXAMPLE);
    expect(estimateRevenueUsd(schema, { window: 0, fine: 63, coarse: 'high' })).toBe(15);
    expect(estimateRevenueUsd(schema, { window: 0, coarse: 'high' })).toBe(10);
    expect(estimateRevenueUsd(schema, { window: 1, coarse: 'high' })).toBe(0);
  });

  it('is 0 with no schema, with no value, and for a fine value absent from the schema (never its coarse value instead)', () => {
    const schema = valid(EXAMPLE);
    expect(estimateRevenueUsd(undefined, { window: 0, fine: 63 })).toBe(0);
    expect(estimateRevenueUsd(schema, { window: 0 })).toBe(0);
    expect(estimateRevenueUsd(schema, { window: 0, fine: 62, coarse: 'high' })).toBe(0);
  });

  it('reads the coarse value in windows 1 and 2 even when a fine value is given', () => {
    const schema = valid({ ...EXAMPLE, coarse: [{ window: 2, value: 'low', revenue_usd: [1, 2] }] });
    expect(estimateRevenueUsd(schema, { window: 2, fine: 63, coarse: 'low' })).toBe(1.5);
  });

  it('equals the rule read off the tables, whatever the order of the entries in the file', () => {
    fc.assert(
      fc.property(
        tables,
        fc.array(fc.nat(1000), { minLength: 1, maxLength: 80 }),
        fc.array(postback, { maxLength: 20 }),
        (t, order, values) => {
          const schema = valid(fileOf(t, order));
          for (const v of values) {
            const estimate = estimateRevenueUsd(schema, v);
            expect(estimate).toBeCloseTo(expected(t, v.window, v.fine, v.coarse), 6);
          }
        },
      ),
    );
  });

  it('validates a schema to the same canonical schema whatever the order of its entries, and a valid schema to itself', () => {
    fc.assert(
      fc.property(tables, fc.array(fc.nat(1000), { minLength: 1, maxLength: 80 }), (t, order) => {
        const shuffled = valid(fileOf(t, order));
        expect(shuffled).toEqual(valid(fileOf(t, [0])));
        expect(valid(JSON.parse(JSON.stringify(shuffled)))).toEqual(shuffled);
      }),
    );
  });
});
