import fc from 'fast-check';
import { DEFAULT_METRICS, METRIC_COLUMNS } from '../../../console/ui/breakdown-data';
import { type ChoiceStorage, choiceKey, chosenColumns, storeChoice } from '../../../console/ui/column-choice';

/** localStorage's three calls over a Map. */
function memoryStorage(): ChoiceStorage & { readonly items: Map<string, string> } {
  const items = new Map<string, string>();
  return {
    items,
    getItem: (key) => items.get(key) ?? null,
    setItem: (key, value) => void items.set(key, value),
    removeItem: (key) => void items.delete(key),
  };
}

const ALL = METRIC_COLUMNS.map((column) => column.key);

describe('the column choice', () => {
  it('shows the defaults, in the table’s order, until the user chooses', () => {
    expect(chosenColumns(memoryStorage(), choiceKey('breakdown', 'local', 'A1'), ALL, DEFAULT_METRICS)).toEqual(
      ALL.filter((key) => DEFAULT_METRICS.includes(key)),
    );
    // Fraud and ad revenue are among the figures shown at first, beside purchases.
    expect(DEFAULT_METRICS).toEqual(expect.arrayContaining(['fraud_flagged', 'ad_revenue_usd', 'total_roas_d7', 'roas_d7']));
  });

  it('remembers each user’s choice per app, in the table’s order, and never one of another user or app', () => {
    const names = fc.string({ minLength: 1, maxLength: 12 });
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.tuple(names, names), { minLength: 2, maxLength: 5, selector: ([user, app]) => `${user}\u0000${app}` }),
        fc.array(fc.subarray(ALL), { minLength: 5, maxLength: 5 }),
        (owners, choices) => {
          const storage = memoryStorage();
          for (const [i, [user, app]] of owners.entries()) storeChoice(storage, choiceKey('breakdown', user, app), choices[i] ?? []);
          for (const [i, [user, app]] of owners.entries()) {
            const chosen = choices[i] ?? [];
            const shown = chosenColumns(storage, choiceKey('breakdown', user, app), ALL, DEFAULT_METRICS);
            // An empty choice is no choice: the defaults.
            const oracle = chosen.length ? ALL.filter((key) => chosen.includes(key)) : ALL.filter((key) => DEFAULT_METRICS.includes(key));
            expect(shown).toEqual(oracle);
          }
        },
      ),
    );
  });

  it('ignores a stored value that is not a list of existing column names', () => {
    const storage = memoryStorage();
    const key = choiceKey('breakdown', 'local', 'A1');
    const defaults = ALL.filter((name) => DEFAULT_METRICS.includes(name));
    for (const stored of ['{', '"installs"', '{"a":1}', '["gone", 7]', '[]']) {
      storage.setItem(key, stored);
      expect(chosenColumns(storage, key, ALL, DEFAULT_METRICS)).toEqual(defaults);
    }
    storage.setItem(key, '["gone", "cost_usd", 7]');
    expect(chosenColumns(storage, key, ALL, DEFAULT_METRICS)).toEqual(['cost_usd']);
    expect(chosenColumns(undefined, key, ALL, DEFAULT_METRICS)).toEqual(defaults);
  });

  it('keys a choice so that no user or app name reaches another’s key', () => {
    for (const [user, app] of [
      ['a.b', 'c'],
      ['a/b', 'c'],
      ['a', 'b/c'],
      ['a%2Fb', 'c'],
    ])
      expect(choiceKey('breakdown', user, app)).not.toBe(choiceKey('breakdown', 'a', 'b.c'));
    expect(choiceKey('breakdown', 'a/b', 'c')).not.toBe(choiceKey('breakdown', 'a', 'b/c'));
  });
});
