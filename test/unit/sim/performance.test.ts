import fc from 'fast-check';
import { compareRowSets, formatDifference } from '../../../sim/check';
import { planRates, toMicroUsdOnDay } from '../../../sim/currencies';
import { addDays, clearOfMidnights, localDay, localDayEndMs } from '../../../sim/local-days';
import { addToCell, CELL_COUNTERS, cellKey, NONE, oracleRows, type PerfCells } from '../../../sim/oracle';
import {
  addCost,
  costIdentity,
  expectedPerformance,
  lastAccepted,
  normalizePerformance,
  type PerfQuery,
  planCost,
} from '../../../sim/performance';
import { Random } from '../../../sim/random';

const DAY = 86_400_000;
const NY = 'America/New_York';
const T = Date.UTC(2026, 10, 21, 15, 0); // 10:00 in New York
const WINDOW = { sinceMs: T - 60 * DAY, untilMs: T + DAY };

describe("the simulator's local days", () => {
  it('puts an instant on the zone’s calendar, daylight saving included', () => {
    expect(localDay(Date.UTC(2026, 10, 21, 3, 30), NY)).toBe('2026-11-20'); // 22:30 EST
    expect(localDay(Date.UTC(2026, 6, 21, 3, 30), NY)).toBe('2026-07-20'); // 23:30 EDT
    expect(localDay(Date.UTC(2026, 6, 21, 4, 30), NY)).toBe('2026-07-21'); // 00:30 EDT
    expect(localDay(Date.UTC(2026, 10, 21, 4, 30), NY)).toBe('2026-11-20'); // 23:30 EST
    expect(localDay(Date.UTC(2026, 10, 21, 23, 30), 'Asia/Tokyo')).toBe('2026-11-22');
    expect(localDay(Date.UTC(2026, 10, 21, 23, 30))).toBe('2026-11-21');
  });

  it('ends a local day at the next local midnight, 23 or 25 hours later on a daylight-saving change', () => {
    expect(localDayEndMs('2026-11-21', NY)).toBe(Date.UTC(2026, 10, 22, 5));
    expect(localDayEndMs('2026-11-01', NY) - localDayEndMs('2026-10-31', NY)).toBe(25 * 3_600_000);
    expect(localDayEndMs('2026-03-08', NY) - localDayEndMs('2026-03-07', NY)).toBe(23 * 3_600_000);
    expect(localDayEndMs('2026-11-21')).toBe(Date.UTC(2026, 10, 22));
  });

  it('keeps times clear of both midnights, and leaves others alone', () => {
    const nyMidnight = Date.UTC(2026, 10, 21, 5, 0);
    expect(clearOfMidnights(nyMidnight + 500, NY, 2_000)).toBe(nyMidnight + 2_000);
    expect(clearOfMidnights(nyMidnight - 500, NY, 2_000)).toBe(nyMidnight - 2_000);
    expect(clearOfMidnights(Date.UTC(2026, 10, 21) + 1, NY, 2_000)).toBe(Date.UTC(2026, 10, 21) + 2_000);
    expect(clearOfMidnights(T, NY, 2_000)).toBe(T);
    // Summer: New York's midnight is at 04:00 UTC.
    const summer = Date.UTC(2026, 6, 21, 4, 0);
    expect(clearOfMidnights(summer - 1, NY, 2_000)).toBe(summer - 2_000);
  });
});

describe("the simulator's exchange rates", () => {
  const rates = planRates('2026-11-01', '2026-11-21');

  it('converts at the day’s rate, else the latest earlier within 7 days, to the micro-dollar', () => {
    const eur = rates.get('2026-11-01')?.EUR ?? 0;
    expect(toMicroUsdOnDay(rates, 4.99, 'EUR', '2026-11-01')).toBe(Math.round(4.99 * eur * 1e6));
    expect(toMicroUsdOnDay(rates, 4.99, 'EUR', '2026-11-02')).toBe(Math.round(4.99 * eur * 1e6));
    expect(toMicroUsdOnDay(rates, 1.5, 'USD', '2030-01-01')).toBe(1_500_000);
    expect(toMicroUsdOnDay(rates, 4.99, 'EUR', '2026-10-31')).toBeUndefined();
    expect(toMicroUsdOnDay(rates, 4.99, 'QQQ', '2026-11-05')).toBeUndefined();
    expect(toMicroUsdOnDay(planRates('2026-11-01', '2026-11-01'), 1, 'EUR', '2026-11-09')).toBeUndefined();
    expect(toMicroUsdOnDay(planRates('2026-11-01', '2026-11-01'), 1, 'EUR', '2026-11-08')).toBeDefined();
  });

  it('gives every day a rate and converts cents to whole micro-dollars', () => {
    for (let day = '2026-11-01'; day <= '2026-11-21'; day = addDays(day, 1)) {
      for (const currency of ['EUR', 'JPY']) {
        const micros = toMicroUsdOnDay(rates, 19.99, currency, day);
        expect(micros).toBeDefined();
        const rate = [0, 1, 2].map((b) => rates.get(addDays(day, -b))?.[currency]).find((r) => r !== undefined) ?? 0;
        expect(Math.abs((micros ?? 0) - 19.99 * rate * 1e6)).toBeLessThan(1e-6);
      }
    }
  });
});

describe('the performance oracle', () => {
  const install = { installUuid: 'u1', eventId: 'i1', name: 'install', tsMs: T, platform: 'ios', country: 'DE' };
  const events = [
    install,
    { installUuid: 'u1', eventId: 'p0', name: 'purchase', tsMs: T + 3_600_000, revenueUsd: 1.5 },
    { installUuid: 'u1', eventId: 's1', name: 'session_start', tsMs: T + DAY + 60_000 },
    { installUuid: 'u1', eventId: 'p3', name: 'purchase', tsMs: T + 3 * DAY, revenueUsd: 2.25 },
    { installUuid: 'u1', eventId: 'p20', name: 'purchase', tsMs: T + 20 * DAY, revenueUsd: 10 },
    { installUuid: 'u2', eventId: 'i2', name: 'install', tsMs: T + 10_000, platform: 'android', country: 'JP' },
  ];
  const cells: PerfCells = new Map();
  oracleRows(
    events,
    (e) =>
      e.installUuid === 'u1'
        ? { partner: 'meta', type: 'deterministic', fraud: false, campaign: 'spring', clickCountry: 'US' }
        : { partner: 'organic', type: 'organic', fraud: false },
    { timeZone: NY, performance: cells },
  );

  it("counts installs on the install's local day and dimensions: the click's country first, else the request's", () => {
    expect(cells.get(cellKey('2026-11-21', ['meta', 'spring', 'US', 'ios']))).toMatchObject({
      installs: 1,
      cohort_d0_micros: 1_500_000,
      cohort_d7_micros: 3_750_000,
      cohort_d30_micros: 13_750_000,
      retained_d1: 1,
      revenue_micros: 1_500_000,
    });
    expect(cells.get(cellKey('2026-11-21', ['organic', NONE, 'JP', 'android']))).toEqual({ installs: 1, organic: 1 });
  });

  it("counts revenue on the event's local day, under the install's dimensions", () => {
    expect(cells.get(cellKey('2026-11-24', ['meta', 'spring', 'US', 'ios']))).toEqual({
      revenue_micros: 2_250_000,
      recent_revenue_micros: 2_250_000,
    });
    expect(cells.get(cellKey('2026-12-11', ['meta', 'spring', 'US', 'ios']))).toEqual({
      revenue_micros: 10_000_000,
      recent_revenue_micros: 10_000_000,
    });
  });

  it('renders cost, eCPI, revenue, cohort revenue, ROAS and retention', () => {
    const withCost: PerfCells = new Map([...cells].map(([k, v]) => [k, { ...v }]));
    addCost(
      withCost,
      [
        {
          date: '2026-11-21',
          partner: 'meta',
          campaign: 'spring',
          country: 'US',
          platform: 'ios',
          cost: 3,
          currency: 'USD',
          clicks: 1,
          impressions: 2,
        },
      ],
      new Map(),
    );
    const [row] = expectedPerformance(withCost, { groupBy: ['partner'], filters: { partner: ['meta'] } }, WINDOW, NY, T + 20 * DAY);
    expect(row).toEqual({
      partner: 'meta',
      clicks: 0,
      installs: 1,
      organic: 0,
      reinstalls: 0,
      fraud_flagged: 0,
      reengagements: 0,
      network_clicks: 1,
      impressions: 2,
      cost_usd: 3,
      ecpi_usd: 3,
      // The window ends on Nov 22: the later purchases count in the cohort, not in the day's revenue.
      revenue_usd: 1.5,
      recent_revenue_usd: 1.5,
      refunds: 0,
      refunds_usd: 0,
      cohort_revenue_d0_usd: 1.5,
      cohort_revenue_d7_usd: 3.75,
      cohort_revenue_d30_usd: 13.75,
      roas_d0: 0.5,
      roas_d7: 1.25,
      roas_d30: 4.5833,
      ad_revenue_usd: 0,
      cohort_ad_revenue_d0_usd: 0,
      cohort_ad_revenue_d7_usd: 0,
      cohort_ad_revenue_d30_usd: 0,
      total_revenue_usd: 1.5,
      total_roas_d0: 0.5,
      total_roas_d7: 1.25,
      total_roas_d30: 4.5833,
      retained_d1: 1,
      retained_d7: 0,
      retained_d30: 0,
      d1_rate: 1,
      d7_rate: 0,
      d30_rate: 0,
      // Without a day the row's latest install day is the window's last, Nov 22; now is Dec 11.
      d0_mature: true,
      d1_mature: true,
      d7_mature: true,
      d30_mature: false,
    });
  });
});

const DIM_VALUES = {
  partner: ['meta', 'tiktok', 'organic'],
  campaign: ['a', 'b', NONE],
  country: ['US', 'JP', NONE],
  platform: ['ios', 'android'],
};
const cellArb = fc.record({
  day: fc.constantFrom('2026-11-19', '2026-11-20', '2026-11-21'),
  partner: fc.constantFrom(...DIM_VALUES.partner),
  campaign: fc.constantFrom(...DIM_VALUES.campaign),
  country: fc.constantFrom(...DIM_VALUES.country),
  platform: fc.constantFrom(...DIM_VALUES.platform),
  counters: fc.record(Object.fromEntries(CELL_COUNTERS.map((c) => [c, fc.nat(5_000_000)]))),
});

describe('grouping and filtering', () => {
  it('sums a finer grouping into a coarser one, and a filter keeps only its values', () => {
    fc.assert(
      fc.property(fc.array(cellArb, { maxLength: 40 }), fc.subarray(['US', 'JP', NONE], { minLength: 1 }), (list, countries) => {
        const cells: PerfCells = new Map();
        for (const c of list) addToCell(cells, cellKey(c.day, [c.partner, c.campaign, c.country, c.platform]), c.counters);
        const fine: PerfQuery = { groupBy: ['day', 'partner', 'campaign', 'country', 'platform'], filters: { country: countries } };
        const coarse: PerfQuery = { groupBy: ['partner'], filters: { country: countries } };
        const sum = (rows: ReturnType<typeof expectedPerformance>, partner: string, column: string) =>
          rows.filter((r) => r.partner === partner).reduce((n, r) => n + Number(r[column]), 0);
        const fineRows = expectedPerformance(cells, fine, WINDOW, 'UTC', T);
        const coarseRows = expectedPerformance(cells, coarse, WINDOW, 'UTC', T);
        for (const row of fineRows) expect(countries).toContain(row.country);
        for (const partner of DIM_VALUES.partner) {
          for (const column of ['clicks', 'installs', 'retained_d7'])
            expect(sum(coarseRows, partner, column)).toBe(sum(fineRows, partner, column));
          const micros = (rows: typeof fineRows, column: string) => Math.round(sum(rows, partner, column) * 1e6);
          for (const column of ['cost_usd', 'revenue_usd', 'cohort_revenue_d30_usd'])
            expect(micros(coarseRows, column)).toBe(micros(fineRows, column));
        }
        // Independently: the coarse row's installs are the sum of the matching cells'.
        for (const row of coarseRows) {
          const want = list
            .filter((c) => c.partner === row.partner && countries.includes(c.country))
            .reduce((n, c) => n + (c.counters.installs ?? 0), 0);
          expect(row.installs).toBe(want);
        }
      }),
    );
  });

  it('leaves out the days outside the window, on the local calendar', () => {
    const cells: PerfCells = new Map();
    addToCell(cells, cellKey('2026-11-20', ['meta', 'a', 'US', 'ios']), { installs: 1 });
    addToCell(cells, cellKey('2026-11-21', ['meta', 'a', 'US', 'ios']), { installs: 2 });
    // [05:00 UTC Nov 21, +1 day) is New York's Nov 21 whole: Nov 20 is outside.
    const window = { sinceMs: Date.UTC(2026, 10, 21, 5), untilMs: Date.UTC(2026, 10, 22, 5) };
    expect(expectedPerformance(cells, { groupBy: ['day'] }, window, NY, T).map((r) => [r.day, r.installs])).toEqual([['2026-11-21', 2]]);
    expect(expectedPerformance(cells, { groupBy: ['day'] }, window, 'UTC', T).map((r) => [r.day, r.installs])).toEqual(
      [
        ['2026-11-21', 2],
        ['2026-11-22', undefined],
      ].filter(([, n]) => n !== undefined),
    );
  });
});

describe('the cost the simulator uploads', () => {
  it('sends every row, restates some, and counts the last upload of each', () => {
    const cells: PerfCells = new Map();
    addToCell(cells, cellKey('2026-11-21', ['meta', 'a', 'US', 'ios']), { installs: 10, organic: 0 });
    addToCell(cells, cellKey('2026-11-21', ['tiktok', 'b', 'JP', 'android']), { installs: 4 });
    addToCell(cells, cellKey('2026-11-21', ['organic', NONE, 'US', 'ios']), { installs: 9, organic: 9 });
    const requests = planCost(new Random('cost'), cells, { meta: 2.4, tiktok: 1.7 }, { meta: ['a'], tiktok: ['b'] }, [
      '2026-11-10',
      '2026-11-11',
    ]);
    const final = lastAccepted(requests.flat());
    const [first = [], ...later] = requests;
    expect(new Set(first.map(costIdentity))).toEqual(new Set(final.keys()));
    expect([...final.keys()].some((k) => k.startsWith('2026-11-21|organic'))).toBe(false);
    for (const row of later.flat()) expect(final.get(costIdentity(row))).toEqual(row);
    // Without the service's currencies, every row is in dollars.
    const dollarsOnly = planCost(
      new Random('usd'),
      cells,
      { meta: 2.4, tiktok: 1.7 },
      { meta: ['a'], tiktok: ['b'] },
      ['2026-11-10'],
      false,
    );
    expect(new Set(dollarsOnly.flat().map((r) => r.currency))).toEqual(new Set(['USD']));
    const meta = final.get(cellKey('2026-11-21', ['meta', 'a', 'US', 'ios']));
    expect(meta?.cost).toBeGreaterThanOrEqual(10 * 2.4 * 0.85 * (meta?.currency === 'EUR' ? 1 / 1.08 : 1) - 0.01);
    expect(meta?.cost).toBeLessThanOrEqual(10 * 2.4 * 1.15 + 0.01);
  });
});

describe('comparing performance rows', () => {
  it('forgives float noise but not a micro-dollar, and names the query, row and column', () => {
    const want = [{ partner: 'meta', cost_usd: 0.3, roas_d7: 1.25, installs: 2 }];
    const noise = [{ partner: 'meta', cost_usd: 0.1 + 0.2, roas_d7: 1.25, installs: 2 }];
    const off = [{ partner: 'meta', cost_usd: 0.300001, roas_d7: 1.25, installs: 2 }];
    expect(compareRowSets('performance?group_by=partner', ['partner'], want, noise, normalizePerformance)).toEqual([]);
    const [d] = compareRowSets('performance?group_by=partner', ['partner'], want, off, normalizePerformance);
    expect(d && formatDifference(d)).toBe('performance?group_by=partner [meta] cost_usd: expected 0.3, got 0.300001');
    const [missing] = compareRowSets('q', ['partner'], want, [], normalizePerformance);
    expect(missing && formatDifference(missing)).toBe('q [meta] missing row: expected cost_usd=0.3 roas_d7=1.25 installs=2');
  });
});
