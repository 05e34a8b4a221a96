import fc from 'fast-check';
import {
  type BreakdownColumn,
  COHORTS,
  type Cohort,
  cellValue,
  chartData,
  checkFilters,
  columnsFor,
  csvFilename,
  csvRows,
  DEFAULT_SORT,
  METRIC_COLUMNS,
  nextSort,
  OTHER,
  pageSizeOf,
  parseSort,
  sortRows,
  TOP,
  totalsOf,
} from '../../../console/ui/breakdown-data';
import { toCsv } from '../../../console/ui/csv-text';
import { GROUP_COLUMNS, type GroupColumn, type ReportRow } from '../../../console/ui/report-rows';
import { parseCsv } from '../../support/parse-csv';

// A performance row as the API renders it, built from integers the oracle keeps: dollars are
// whole micro-dollars (the API's 6 decimals), ratios the API's own (4 decimals).
interface Truth {
  readonly counts: Record<string, number>;
  readonly micros: Record<string, bigint>;
  readonly mature: Record<Cohort, boolean>;
}
const COUNT_KEYS = ['clicks', 'installs', 'organic', 'reinstalls', 'fraud_flagged', 'network_clicks', 'impressions'];
const DRAWN_DOLLARS = [
  'cost_usd',
  'revenue_usd',
  'cohort_revenue_d0_usd',
  'cohort_revenue_d7_usd',
  'cohort_revenue_d30_usd',
  'ad_revenue_usd',
  'cohort_ad_revenue_d0_usd',
  'cohort_ad_revenue_d7_usd',
  'cohort_ad_revenue_d30_usd',
];
// total_revenue_usd is the API's purchases plus ad revenue of the row, not drawn on its own.
const DOLLAR_KEYS = [...DRAWN_DOLLARS, 'total_revenue_usd'];
const round4 = (x: number) => Math.round(x * 1e4) / 1e4;

const dayArb = fc.integer({ min: 0, max: 9 }).map((d) => `2026-03-${String(d + 1).padStart(2, '0')}`);
const nameArb = fc.oneof(fc.constantFrom('meta', 'google', 'tiktok', '(none)', 'US', 'DE', 'ios', 'android'), fc.string({ maxLength: 8 }));

const rowArb = (groups: readonly GroupColumn[]) =>
  fc
    .record({
      group: fc.record(Object.fromEntries(groups.map((g) => [g, g === 'day' ? dayArb : nameArb])) as Record<string, fc.Arbitrary<string>>),
      installs: fc.nat({ max: 500 }),
      organicShare: fc.double({ min: 0, max: 1, noNaN: true }),
      clicks: fc.nat({ max: 5000 }),
      reinstalls: fc.nat({ max: 20 }),
      fraud_flagged: fc.nat({ max: 20 }),
      network_clicks: fc.nat({ max: 5000 }),
      impressions: fc.nat({ max: 100_000 }),
      retained: fc.tuple(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.double({ min: 0, max: 1, noNaN: true }),
      ),
      micros: fc.tuple(...DRAWN_DOLLARS.map(() => fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 5_000_000_000 })))),
      mature: fc.tuple(fc.boolean(), fc.boolean(), fc.boolean(), fc.boolean()),
    })
    .map((r) => {
      const organic = Math.floor(r.installs * r.organicShare);
      const [d1, d7, d30] = r.retained.map((share) => Math.floor(r.installs * share)) as [number, number, number];
      const counts: Record<string, number> = {
        clicks: r.clicks,
        installs: r.installs,
        organic,
        reinstalls: r.reinstalls,
        fraud_flagged: r.fraud_flagged,
        network_clicks: r.network_clicks,
        impressions: r.impressions,
        retained_d1: d1,
        retained_d7: d7,
        retained_d30: d30,
      };
      const micros = Object.fromEntries(DRAWN_DOLLARS.map((k, i) => [k, BigInt(r.micros[i] ?? 0)]));
      micros.total_revenue_usd = (micros.revenue_usd ?? 0n) + (micros.ad_revenue_usd ?? 0n);
      const mature = Object.fromEntries(COHORTS.map((c, i) => [c, r.mature[i] ?? true])) as Record<Cohort, boolean>;
      const usd = (k: string) => Number(micros[k]) / 1e6;
      const cost = usd('cost_usd');
      const row: ReportRow = {
        ...r.group,
        ...Object.fromEntries(COUNT_KEYS.map((k) => [k, counts[k] ?? 0])),
        cost_usd: cost,
        ecpi_usd: r.installs - organic > 0 ? Math.round((cost / (r.installs - organic)) * 1e6) / 1e6 : 0,
        revenue_usd: usd('revenue_usd'),
        cohort_revenue_d0_usd: usd('cohort_revenue_d0_usd'),
        cohort_revenue_d7_usd: usd('cohort_revenue_d7_usd'),
        cohort_revenue_d30_usd: usd('cohort_revenue_d30_usd'),
        roas_d0: cost > 0 ? round4(usd('cohort_revenue_d0_usd') / cost) : 0,
        roas_d7: cost > 0 ? round4(usd('cohort_revenue_d7_usd') / cost) : 0,
        roas_d30: cost > 0 ? round4(usd('cohort_revenue_d30_usd') / cost) : 0,
        ad_revenue_usd: usd('ad_revenue_usd'),
        cohort_ad_revenue_d0_usd: usd('cohort_ad_revenue_d0_usd'),
        cohort_ad_revenue_d7_usd: usd('cohort_ad_revenue_d7_usd'),
        cohort_ad_revenue_d30_usd: usd('cohort_ad_revenue_d30_usd'),
        total_revenue_usd: usd('total_revenue_usd'),
        total_roas_d7: cost > 0 ? round4((usd('cohort_revenue_d7_usd') + usd('cohort_ad_revenue_d7_usd')) / cost) : 0,
        total_roas_d30: cost > 0 ? round4((usd('cohort_revenue_d30_usd') + usd('cohort_ad_revenue_d30_usd')) / cost) : 0,
        retained_d1: d1,
        retained_d7: d7,
        retained_d30: d30,
        d1_rate: r.installs ? round4(d1 / r.installs) : 0,
        d7_rate: r.installs ? round4(d7 / r.installs) : 0,
        d30_rate: r.installs ? round4(d30 / r.installs) : 0,
        d0_mature: mature.d0,
        d1_mature: mature.d1,
        d7_mature: mature.d7,
        d30_mature: mature.d30,
      };
      return { row, truth: { counts, micros, mature } satisfies Truth };
    });

const groupsArb = fc.subarray([...GROUP_COLUMNS], { minLength: 1 });
const windowArb = groupsArb.chain((groups) =>
  fc.record({ groups: fc.constant(groups), rows: fc.array(rowArb(groups), { maxLength: 40 }) }),
);

/** The oracle's ratio: numerator over denominator from integer sums, undefined over 0. */
const oracleRatio = (n: number, d: number) => (d > 0 ? n / d : undefined);
const closeTo = (actual: number | undefined, expected: number | undefined) =>
  actual === undefined || expected === undefined
    ? actual === expected
    : Math.abs(actual - expected) <= 1e-12 * Math.max(1, Math.abs(expected));

describe("the breakdown's totals", () => {
  it('sum counters and micro-dollars, recompute every ratio from the sums, and blank a cohort unless every row is mature', () => {
    fc.assert(
      fc.property(windowArb, ({ rows }) => {
        const totals = totalsOf(rows.map((r) => r.row));
        const count = (k: string) => rows.reduce((s, r) => s + (r.truth.counts[k] ?? 0), 0);
        const micros = (k: string) => rows.reduce((s, r) => s + (r.truth.micros[k] ?? 0n), 0n);
        const mature = (c: Cohort) => rows.every((r) => r.truth.mature[c]);
        expect(totals.rows).toBe(rows.length);
        for (const k of [...COUNT_KEYS, 'retained_d1', 'retained_d7', 'retained_d30']) expect(totals.sums[k as 'installs']).toBe(count(k));
        for (const k of DOLLAR_KEYS) expect(totals.sums[k as 'cost_usd']).toBe(Number(micros(k)) / 1e6);
        for (const c of COHORTS) expect(totals.mature[c]).toBe(mature(c));
        const cost = Number(micros('cost_usd'));
        const expected: Record<string, number | undefined> = {
          clicks: count('clicks'),
          impressions: count('impressions'),
          installs: count('installs'),
          organic: count('organic'),
          reinstalls: count('reinstalls'),
          fraud_flagged: count('fraud_flagged'),
          cost_usd: cost / 1e6,
          ecpi_usd: oracleRatio(cost / 1e6, count('installs') - count('organic')),
          revenue_usd: Number(micros('revenue_usd')) / 1e6,
          ad_revenue_usd: Number(micros('ad_revenue_usd')) / 1e6,
          total_revenue_usd: Number(micros('revenue_usd') + micros('ad_revenue_usd')) / 1e6,
          cohort_ad_revenue_d7_usd: mature('d7') ? Number(micros('cohort_ad_revenue_d7_usd')) / 1e6 : undefined,
          total_roas_d7: mature('d7')
            ? oracleRatio(Number(micros('cohort_revenue_d7_usd') + micros('cohort_ad_revenue_d7_usd')), cost)
            : undefined,
          total_roas_d30: mature('d30')
            ? oracleRatio(Number(micros('cohort_revenue_d30_usd') + micros('cohort_ad_revenue_d30_usd')), cost)
            : undefined,
          cohort_revenue_d0_usd: mature('d0') ? Number(micros('cohort_revenue_d0_usd')) / 1e6 : undefined,
          cohort_revenue_d7_usd: mature('d7') ? Number(micros('cohort_revenue_d7_usd')) / 1e6 : undefined,
          cohort_revenue_d30_usd: mature('d30') ? Number(micros('cohort_revenue_d30_usd')) / 1e6 : undefined,
          roas_d0: mature('d0') ? oracleRatio(Number(micros('cohort_revenue_d0_usd')), cost) : undefined,
          roas_d7: mature('d7') ? oracleRatio(Number(micros('cohort_revenue_d7_usd')), cost) : undefined,
          roas_d30: mature('d30') ? oracleRatio(Number(micros('cohort_revenue_d30_usd')), cost) : undefined,
          d1_rate: mature('d1') ? oracleRatio(count('retained_d1'), count('installs')) : undefined,
          d7_rate: mature('d7') ? oracleRatio(count('retained_d7'), count('installs')) : undefined,
          d30_rate: mature('d30') ? oracleRatio(count('retained_d30'), count('installs')) : undefined,
        };
        for (const column of METRIC_COLUMNS) {
          if (!closeTo(totals.values[column.key], expected[column.key]))
            throw new Error(`${column.key}: ${totals.values[column.key]} is not ${expected[column.key]}`);
        }
      }),
    );
  });

  it('are not the sum of the rows’ ratios', () => {
    const row = (installs: number, retained: number): ReportRow => ({
      installs,
      retained_d1: retained,
      d1_rate: retained / installs,
      d1_mature: true,
    });
    // 1 of 2 and 9 of 10 retained: 10 of 12, not (0.5 + 0.9) / 2.
    expect(totalsOf([row(2, 1), row(10, 9)]).values.d1_rate).toBeCloseTo(10 / 12, 12);
  });
});

describe("the breakdown's cells", () => {
  it('are blank for an immature cohort and for a ratio over 0, and the API’s number otherwise', () => {
    fc.assert(
      fc.property(windowArb, ({ rows }) => {
        for (const { row, truth } of rows) {
          for (const column of METRIC_COLUMNS) {
            const value = cellValue(row, column);
            const denominator: Record<string, number> = {
              ecpi_usd: (truth.counts.installs ?? 0) - (truth.counts.organic ?? 0),
              roas_d0: Number(truth.micros.cost_usd),
              roas_d7: Number(truth.micros.cost_usd),
              roas_d30: Number(truth.micros.cost_usd),
              total_roas_d7: Number(truth.micros.cost_usd),
              total_roas_d30: Number(truth.micros.cost_usd),
              d1_rate: truth.counts.installs ?? 0,
              d7_rate: truth.counts.installs ?? 0,
              d30_rate: truth.counts.installs ?? 0,
            };
            const blank = (column.cohort !== undefined && !truth.mature[column.cohort]) || denominator[column.key] === 0;
            expect(value).toBe(blank ? undefined : row[column.key]);
          }
        }
      }),
    );
  });
});

describe("the breakdown's sort", () => {
  const orderArb = fc.record({ column: fc.integer({ min: 0, max: 100 }), direction: fc.constantFrom('asc' as const, 'desc' as const) });

  it('keeps every row once, puts values in order with blanks last, and keeps the API’s order between equal values', () => {
    fc.assert(
      fc.property(windowArb, orderArb, ({ rows, groups }, pick) => {
        const columns = columnsFor(groups);
        const column = columns[pick.column % columns.length] as BreakdownColumn;
        const input = rows.map((r) => r.row);
        const sorted = sortRows(input, { key: column.key, direction: pick.direction }, columns);
        const position = new Map(input.map((row, i) => [row, i]));
        expect([...sorted].sort((a, b) => (position.get(a) ?? 0) - (position.get(b) ?? 0))).toEqual(input);
        for (let i = 1; i < sorted.length; i += 1) {
          const [a, b] = [sorted[i - 1] as ReportRow, sorted[i] as ReportRow];
          const [x, y] = [cellValue(a, column), cellValue(b, column)];
          if (x === undefined) expect(y).toBeUndefined();
          else if (y !== undefined && x !== y) expect(pick.direction === 'asc' ? x < y : x > y).toBe(true);
          else if (x === y) expect(position.get(a) ?? 0).toBeLessThan(position.get(b) ?? 0);
        }
      }),
    );
  });

  it('reads sort=column:direction from the URL, falls back to most installs first, and turns around on a second click', () => {
    const columns = columnsFor(['campaign']);
    expect(parseSort('cost_usd:asc', columns)).toEqual({ key: 'cost_usd', direction: 'asc' });
    expect(parseSort('cost_usd', columns)).toEqual({ key: 'cost_usd', direction: 'desc' });
    expect(parseSort('country:asc', columns)).toEqual(DEFAULT_SORT);
    expect(parseSort(undefined, columns)).toEqual(DEFAULT_SORT);
    const campaign = columns[0] as BreakdownColumn;
    const installs = columns.find((c) => c.key === 'installs') as BreakdownColumn;
    expect(nextSort(DEFAULT_SORT, installs)).toEqual({ key: 'installs', direction: 'asc' });
    expect(nextSort(DEFAULT_SORT, campaign)).toEqual({ key: 'campaign', direction: 'asc' });
    expect(nextSort({ key: 'campaign', direction: 'asc' }, installs)).toEqual({ key: 'installs', direction: 'desc' });
  });
});

describe("the breakdown's CSV", () => {
  it('has every row with the API’s columns as they are, then dollars to the cent and rates as percentages, blank where the screen is', () => {
    fc.assert(
      fc.property(windowArb, ({ rows }) => {
        fc.pre(rows.length > 0);
        const [header, ...lines] = parseCsv(toCsv(csvRows(rows.map((r) => r.row))));
        const apiColumns = Object.keys(rows[0]?.row ?? {});
        const usdColumns = [
          'cost_usd',
          'ecpi_usd',
          'revenue_usd',
          'ad_revenue_usd',
          'total_revenue_usd',
          'cohort_revenue_d0_usd',
          'cohort_revenue_d7_usd',
          'cohort_revenue_d30_usd',
          'cohort_ad_revenue_d7_usd',
        ];
        const rateColumns = ['roas_d0', 'roas_d7', 'roas_d30', 'total_roas_d7', 'total_roas_d30', 'd1_rate', 'd7_rate', 'd30_rate'];
        expect(header).toEqual([...apiColumns, ...usdColumns.map((c) => `${c}_display`), ...rateColumns.map((c) => `${c}_pct`)]);
        expect(lines).toHaveLength(rows.length);
        for (const [i, line] of lines.entries()) {
          const { row } = rows[i] as { row: ReportRow };
          const field = (name: string) => line[(header ?? []).indexOf(name)];
          for (const name of apiColumns) {
            const text = String(row[name]);
            // A text that a spreadsheet would take for a formula is written with a leading quote.
            expect(field(name)).toBe(/^[\t\r]/.test(text) || (/^[=+\-@]/.test(text) && Number.isNaN(Number(text))) ? `'${text}` : text);
          }
          for (const column of METRIC_COLUMNS) {
            const shown = cellValue(row, column);
            if (column.kind === 'usd') {
              const display = field(`${column.key}_display`) ?? '';
              if (shown === undefined) expect(display).toBe('');
              else {
                // Cents, checked in integers: within half a cent of the exact micro-dollars.
                expect(display).toMatch(/^\d+\.\d{2}$/);
                const cents = BigInt(display.replace('.', ''));
                const micros = BigInt(Math.round(Number(shown) * 1e6));
                const gap = cents * 10_000n - micros;
                expect(gap <= 5000n && gap >= -5000n).toBe(true);
              }
            } else if (column.kind === 'rate') {
              const display = field(`${column.key}_pct`) ?? '';
              if (shown === undefined) expect(display).toBe('');
              else {
                expect(display).toMatch(/^\d+\.\d{2}%$/);
                expect(Math.abs(Number(display.slice(0, -1)) - Number(shown) * 100)).toBeLessThanOrEqual(0.005 + 1e-9);
              }
            }
          }
        }
      }),
    );
  });

  it('is named after the app, the period and the grouping', () => {
    expect(csvFilename('My App (iOS)', '2026-03-01', '2026-03-07', ['campaign', 'country'], false)).toBe(
      'breakdown_my-app-ios_2026-03-01_2026-03-07_by-campaign-country.csv',
    );
    expect(csvFilename('!!', '2026-03-01', '2026-03-01', ['partner'], true)).toBe(
      'breakdown_app_2026-03-01_2026-03-01_by-partner_filtered.csv',
    );
  });
});

describe("the breakdown's chart", () => {
  const days = Array.from({ length: 10 }, (_, d) => `2026-03-${String(d + 1).padStart(2, '0')}`);

  it('counts every install once: per day of the period (0 on a day without rows) when grouped by day, else per group, twelve names and "other" at most', () => {
    fc.assert(
      fc.property(windowArb, ({ rows, groups }) => {
        const input = rows.map((r) => r.row);
        const chart = chartData(input, groups, days);
        const installs = (its: readonly { truth: Truth }[]) => its.reduce((s, r) => s + (r.truth.counts.installs ?? 0), 0);
        expect(chart.series.length * (chart.mode === 'days' ? 1 : chart.labels.length)).toBeLessThanOrEqual(TOP + 1);
        if (chart.mode === 'days') {
          expect(chart.labels).toEqual(days);
          for (const [i, day] of days.entries())
            expect(chart.series.reduce((s, series) => s + (series.values[i] ?? 0), 0)).toBe(
              installs(rows.filter((r) => r.row.day === day)),
            );
          expect(chart.dimension).toBe(groups.find((g) => g !== 'day'));
        } else {
          expect(groups).not.toContain('day');
          expect(chart.series).toHaveLength(1);
          expect((chart.series[0]?.values ?? []).reduce((a, b) => a + b, 0)).toBe(installs(rows));
          expect(chart.colorKeys).toHaveLength(chart.labels.length);
          if (chart.labels.includes(OTHER) && chart.labels.length === TOP + 1) expect(chart.colorKeys.at(-1)).toBe(OTHER);
        }
      }),
    );
  });
});

describe("the breakdown's filters", () => {
  it('send two-letter countries upper-case and refuse anything else in plain words', () => {
    fc.assert(
      fc.property(fc.array(fc.stringMatching(/^[A-Za-z]{2}$/), { minLength: 1, maxLength: 5 }), (countries) => {
        expect(checkFilters({ country: countries.join(', ') })).toEqual({
          filters: { country: countries.map((c) => c.toUpperCase()).join(',') },
        });
      }),
    );
    expect(checkFilters({ country: 'US,USA' }).error).toEqual({
      filter: 'country',
      message: expect.stringMatching(/^Country must be two-letter codes/),
    });
    expect(checkFilters({ country: '(none),de' }).filters).toEqual({ country: '(none),DE' });
    expect(checkFilters({ partner: 'meta,,google ', campaign: ' , ' })).toEqual({ filters: { partner: 'meta,google' } });
  });

  it('take page_size= from 1 to 1000 only', () => {
    expect(pageSizeOf('25')).toBe(25);
    for (const bad of [undefined, '', '0', '1001', '2.5', 'x']) expect(pageSizeOf(bad)).toBeUndefined();
  });
});
