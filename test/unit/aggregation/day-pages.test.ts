import fc from 'fast-check';
import {
  type DayPage,
  decodePageRows,
  encodePageRows,
  MAX_PAGE_ROWS_BYTES,
  mergePage,
  type PageRow,
  pageReportRows,
} from '../../../functions/domain/aggregation/day-pages';
import { sortKeyOf } from '../../../functions/domain/aggregation/rows';

const DAY = '2026-11-20';
const GROUPS = [
  ['meta', 'deterministic'],
  ['meta', 'probabilistic'],
  ['google', 'deterministic'],
  ['organic', 'organic'],
  ['tiktök', 'deterministic'],
  ['𝔵', 'deterministic'],
  ['\uffff', 'deterministic'],
];
const byUtf8 = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

type Step = { kind: 'write'; group: number; installs: number } | { kind: 'snapshot' | 'read' | 'put'; refresher: number };

/**
 * A page refreshed by several refreshers at once, as concurrent aggregator invocations do: each
 * takes a snapshot of the rows, reads the page with its version, merges, and writes only if the
 * version is unchanged (else reads again). Rows are written between any two steps.
 */
function simulate(steps: readonly Step[]) {
  const rows = new Map<number, { installs: number; v: number }>();
  /** Each row's counters at each version: what a page row at version v must say. */
  const history = new Map<string, number>();
  let page: { ver: number; page: DayPage } | undefined;
  const refreshers = Array.from({ length: 3 }, () => ({
    snapshot: undefined as PageRow[] | undefined,
    read: undefined as { ver: number; page?: DayPage } | undefined,
    saw: [] as PageRow[][],
  }));
  const snapshotOf = (): PageRow[] => [...rows].map(([g, row]) => ({ group: GROUPS[g], counters: { installs: row.installs }, v: row.v }));
  const put = (r: (typeof refreshers)[number]) => {
    if (!r.snapshot || !r.read) return;
    if ((page?.ver ?? 0) !== r.read.ver) {
      r.read = undefined; // replaced meanwhile: read again
      return;
    }
    const merged = mergePage('attribution', DAY, r.read.page, r.snapshot);
    if (merged) page = { ver: r.read.ver + 1, page: merged };
    r.saw.push(r.snapshot);
    r.snapshot = undefined;
    r.read = undefined;
  };
  const read = (r: (typeof refreshers)[number]) => {
    if (r.snapshot) r.read = { ver: page?.ver ?? 0, page: page?.page };
  };
  for (const step of steps) {
    if (step.kind === 'write') {
      const row = rows.get(step.group) ?? { installs: 0, v: 0 };
      rows.set(step.group, { installs: row.installs + step.installs, v: row.v + 1 });
      history.set(`${step.group}@${row.v + 1}`, row.installs + step.installs);
      continue;
    }
    const r = refreshers[step.refresher];
    if (step.kind === 'snapshot' && !r.snapshot) r.snapshot = snapshotOf();
    if (step.kind === 'read') read(r);
    if (step.kind === 'put') put(r);
  }
  // Every refresher under way finishes, retrying as the adapter does.
  for (const r of refreshers) {
    while (r.snapshot) {
      read(r);
      put(r);
    }
  }
  return { rows, history, page: page?.page, refreshers, snapshotOf };
}

describe('day pages', () => {
  it("converge: every row a finished refresh saw is on the page at that version or newer, with that version's counters", () => {
    const step = fc.oneof(
      fc.record({
        kind: fc.constant('write' as const),
        group: fc.integer({ min: 0, max: GROUPS.length - 1 }),
        installs: fc.integer({ min: 1, max: 5 }),
      }),
      fc.record({ kind: fc.constantFrom('snapshot' as const, 'read' as const, 'put' as const), refresher: fc.integer({ min: 0, max: 2 }) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 60 }), (steps) => {
        const { page, history, refreshers, rows } = simulate(steps);
        const onPage = new Map((page && !page.overflow ? page.rows : []).map((row) => [sortKeyOf({ day: DAY, group: row.group }), row]));
        for (const r of refreshers) {
          for (const snapshot of r.saw) {
            for (const seen of snapshot) {
              const held = onPage.get(sortKeyOf({ day: DAY, group: seen.group }));
              expect(held && held.v >= seen.v).toBe(true);
            }
          }
        }
        for (const row of onPage.values()) {
          expect(row.counters.installs).toBe(history.get(`${GROUPS.findIndex((g) => g.join() === row.group.join())}@${row.v}`));
        }
        // A refresh after the last write brings the page to the rows exactly, in the rows' key order.
        const last =
          mergePage(
            'attribution',
            DAY,
            page,
            [...rows].map(([g, row]) => ({ group: GROUPS[g], counters: { installs: row.installs }, v: row.v })),
          ) ?? page;
        const expected = [...rows]
          .map(([g, row]) => ({ sk: sortKeyOf({ day: DAY, group: GROUPS[g] }), installs: row.installs }))
          .sort((a, b) => byUtf8(a.sk, b.sk));
        const got =
          last && !last.overflow
            ? last.rows.map((row) => ({ sk: sortKeyOf({ day: DAY, group: row.group }), installs: row.counters.installs }))
            : [];
        expect(got).toEqual(expected);
      }),
      { numRuns: 500 },
    );
  });

  it('writes nothing when the page already holds the snapshot, and keeps a newer row against an older snapshot', () => {
    const newer: PageRow = { group: ['meta', 'deterministic'], counters: { installs: 5 }, v: 3 };
    const page = mergePage('attribution', DAY, undefined, [newer]);
    expect(page).toEqual({ overflow: false, rows: [newer] });
    expect(mergePage('attribution', DAY, page, [newer])).toBeUndefined();
    expect(mergePage('attribution', DAY, page, [{ ...newer, counters: { installs: 4 }, v: 2 }])).toBeUndefined();
    // An empty day still gets its page: the reader then knows the day was refreshed.
    expect(mergePage('attribution', DAY, undefined, [])).toEqual({ overflow: false, rows: [] });
  });

  it('encodes compactly and decodes to the same rows, and renders them as a report row', () => {
    const rows: PageRow[] = [
      { group: ['meta', 'deterministic'], counters: { installs: 3, organic: 0, reinstalls: 1, fraud_flagged: 2 }, v: 7 },
    ];
    const text = encodePageRows('attribution', rows);
    expect(text).toBe('[["meta","deterministic",3,0,1,2,7]]');
    expect(decodePageRows('attribution', text)).toEqual(rows);
    expect(pageReportRows('attribution', DAY, text, 10)).toEqual([
      { day: DAY, partner: 'meta', attribution_type: 'deterministic', installs: 3, organic: 0, reinstalls: 1, fraud_flagged: 2 },
    ]);
    expect(pageReportRows('attribution', DAY, encodePageRows('attribution', [...rows, ...rows]), 1)).toHaveLength(1);
  });

  it('turns a day too big for one item into an overflow marker, which stays one', () => {
    const many: PageRow[] = Array.from({ length: 6000 }, (_, i) => ({
      group: [`partner_with_a_long_name_${i}`, 'deterministic'],
      counters: { installs: 1 },
      v: 1,
    }));
    expect(Buffer.byteLength(encodePageRows('attribution', many))).toBeGreaterThan(MAX_PAGE_ROWS_BYTES);
    const page = mergePage('attribution', DAY, undefined, many);
    expect(page).toEqual({ overflow: true });
    expect(mergePage('attribution', DAY, page, [{ group: ['meta', 'deterministic'], counters: { installs: 1 }, v: 1 }])).toBeUndefined();
  });
});
