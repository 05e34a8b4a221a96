import * as fc from 'fast-check';
import { missingFigures } from '../../../bench/support';

describe('the bench figures nobody made', () => {
  it('finds none in figures that are all finite numbers and strings, at any depth', () => {
    const figures = {
      command: 'npm run bench -- --quick',
      e2e_events_per_s: 2928,
      report_p95_ms: { one_day: 11.1, cohorts_365: 21.1 },
      bundles: [{ name: 'ingest', bytes: 610_876, load_ms: 329.8 }],
      hottest_key_at_10k: { '1': { key: 'ledger:lane#3', wcu_per_s: 767 } },
    };
    expect(missingFigures(figures)).toEqual([]);
  });

  it('names each null, undefined, NaN or infinite figure by its path', () => {
    const figures = {
      e2e_events_per_s: Number.NaN,
      report_p95_ms: { one_day: 11.1, cohorts_365: null },
      bundles: [{ name: 'ingest', bytes: 610_876, load_ms: undefined }],
      cost_per_million_events_usd: Number.POSITIVE_INFINITY,
    };
    expect(missingFigures(figures)).toEqual([
      'figures.e2e_events_per_s is NaN',
      'figures.report_p95_ms.cohorts_365 is null',
      'figures.bundles[0].load_ms is undefined',
      'figures.cost_per_million_events_usd is Infinity',
    ]);
  });

  it('flags a figures object exactly when some leaf is not a finite number or a string', () => {
    const leaf = fc.oneof(fc.double(), fc.string(), fc.constant(null), fc.constant(undefined));
    const tree = fc.letrec((tie) => ({
      node: fc.oneof(
        { depthSize: 'small' },
        leaf,
        fc.array(tie('node'), { maxLength: 4 }),
        fc.dictionary(fc.string(), tie('node'), { maxKeys: 4 }),
      ),
    })).node;
    // The oracle: every leaf, collected without the function under test.
    const leaves = (value: unknown): unknown[] =>
      Array.isArray(value)
        ? value.flatMap(leaves)
        : value !== null && typeof value === 'object'
          ? Object.values(value).flatMap(leaves)
          : [value];
    // (fc.assert of a synchronous property returns nothing; Biome cannot tell its overloads apart.)
    expect(() =>
      fc.assert(
        fc.property(tree, (figures) => {
          const bad = leaves(figures).filter(
            (value) => typeof value !== 'string' && !(typeof value === 'number' && Number.isFinite(value)),
          );
          expect(missingFigures(figures)).toHaveLength(bad.length);
        }),
      ),
    ).not.toThrow();
  });
});
