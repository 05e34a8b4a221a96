import fc from 'fast-check';
import { compactApp } from '../../../functions/domain/analytics/pages';
import {
  type CostRow,
  type DimensionValues,
  GROUP_COLUMNS,
  type GroupColumn,
  PERF_COUNTERS,
  type PerfCounter,
} from '../../../functions/domain/analytics/performance';
import { answerPerformance, type PerformancePorts } from '../../../functions/domain/analytics/performance-report';
import { ServiceError } from '../../../functions/domain/common/errors';
import { MemoryPerformance } from './memory-performance';

// The performance report against an oracle that sums the writes themselves, whatever the report
// read: partner pages fresh or stale, partner rows, week pages fresh, partly stale (a write on
// one of their days after they were built), stale, missing or overflowing, fresh day pages, stale
// day pages (a write after the page was built), overflow markers, days with no page.

const KEY = `srv_${'a'.repeat(48)}`;
const APP = 'app_perf';
const DAY = 86_400_000;
const FIRST = Date.parse('2025-03-01T00:00:00Z');
// 20 days from a Saturday: the weeks of Monday 03-03 and 03-10 are whole, 03-17 is not.
const DAYS = Array.from({ length: 20 }, (_, i) => new Date(FIRST + i * DAY).toISOString().slice(0, 10));
const PARTNERS = ['meta', 'google', 'organic'];
const CAMPAIGNS = ['spring', 'summer', '(none)'];
const COUNTRIES = ['US', 'DE'];
const PLATFORMS = ['ios', 'android'];

function portsOf(store: MemoryPerformance, nowMs: number, zone = 'UTC'): PerformancePorts {
  return {
    keys: {
      serverKey: async (key) => (key === KEY ? { app_id: APP, revoked: false } : undefined),
      appTimeZone: async () => zone,
    },
    rows: store,
    nowMs: () => nowMs,
  };
}

const dims = fc.tuple(
  fc.constantFrom(...PARTNERS),
  fc.constantFrom(...CAMPAIGNS),
  fc.constantFrom(...COUNTRIES),
  fc.constantFrom(...PLATFORMS),
);
const counters = fc
  .subarray([...PERF_COUNTERS], { minLength: 1, maxLength: 4 })
  .chain((names) => fc.tuple(...names.map((name) => fc.integer({ min: 0, max: 5_000_000 }).map((value) => [name, value] as const))))
  .map((pairs) => Object.fromEntries(pairs) as Partial<Record<PerfCounter, number>>);
const costRow = dims.chain((d) =>
  fc.record({
    dims: fc.constant(d as DimensionValues),
    cost_micros: fc.integer({ min: 0, max: 90_000_000 }),
    network_clicks: fc.integer({ min: 0, max: 500 }),
    impressions: fc.integer({ min: 0, max: 50_000 }),
    currency: fc.constant('USD'),
    cost: fc.constant(0),
  }),
);
type Write =
  | { kind: 'perf'; day: string; dims: DimensionValues; add: Partial<Record<PerfCounter, number>> }
  | { kind: 'cost'; day: string; rows: CostRow[] };
const write: fc.Arbitrary<Write> = fc.oneof(
  fc.record({
    kind: fc.constant('perf' as const),
    day: fc.constantFrom(...DAYS),
    dims: dims as fc.Arbitrary<DimensionValues>,
    add: counters,
  }),
  fc.record({ kind: fc.constant('cost' as const), day: fc.constantFrom(...DAYS), rows: fc.array(costRow, { maxLength: 3 }) }),
);
const groupBy = fc.option(fc.shuffledSubarray([...GROUP_COLUMNS], { minLength: 1 }), { nil: undefined });
const MONDAYS = ['2025-03-03', '2025-03-10', '2025-03-17'];
const filter = (values: string[]) => fc.option(fc.subarray(values, { minLength: 1 }), { nil: undefined });

function apply(store: MemoryPerformance, w: Write): void {
  if (w.kind === 'perf') store.addPerf(w.day, w.dims, w.add);
  else store.putCost(w.day, w.rows);
}

/** What the writes add up to, by day and dimensions: the perf counters, and each cost row's last value. */
function truth(writes: readonly Write[]) {
  const facts: { day: string; dims: DimensionValues; c: Record<string, number> }[] = [];
  const cost = new Map<string, { day: string; row: CostRow }>();
  for (const w of writes) {
    if (w.kind === 'perf') facts.push({ day: w.day, dims: w.dims, c: { ...w.add } });
    else for (const row of w.rows) cost.set(`${w.day}|${row.dims.join('|')}`, { day: w.day, row });
  }
  for (const { day, row } of cost.values())
    facts.push({
      day,
      dims: row.dims,
      c: { cost_micros: row.cost_micros, network_clicks: row.network_clicks, impressions: row.impressions },
    });
  return facts;
}

const r = (x: number, d: number) => Math.round(x * 10 ** d) / 10 ** d;

function oracle(
  writes: readonly Write[],
  q: {
    firstDay: string;
    lastDay: string;
    groupBy: GroupColumn[];
    filters: Record<string, string[]>;
    offset: number;
    limit: number;
    nowMs: number;
  },
) {
  const columns = GROUP_COLUMNS.filter((c) => q.groupBy.includes(c));
  const groups = new Map<string, { key: string[]; c: Record<string, number> }>();
  for (const f of truth(writes)) {
    if (f.day < q.firstDay || f.day > q.lastDay) continue;
    const value = (c: GroupColumn) => (c === 'day' ? f.day : (f.dims[['partner', 'campaign', 'country', 'platform'].indexOf(c)] as string));
    if (Object.entries(q.filters).some(([dim, kept]) => !kept.includes(value(dim as GroupColumn)))) continue;
    const key = columns.map(value);
    const g = groups.get(JSON.stringify(key)) ?? { key, c: {} };
    for (const [name, v] of Object.entries(f.c)) g.c[name] = (g.c[name] ?? 0) + v;
    groups.set(JSON.stringify(key), g);
  }
  const today = new Date(q.nowMs).toISOString().slice(0, 10);
  const rows = [...groups.values()]
    .filter((g) => Object.values(g.c).some((v) => v !== 0))
    .sort((a, b) => {
      for (let i = 0; i < a.key.length; i++) if (a.key[i] !== b.key[i]) return (a.key[i] as string) < (b.key[i] as string) ? -1 : 1;
      return 0;
    })
    .slice(q.offset, q.offset + q.limit);
  return rows.map(({ key, c }) => {
    const n = (name: string) => c[name] ?? 0;
    const net = (window: string) => n(`cohort_${window}_micros`) - n(`cohort_refund_${window}_micros`);
    const installs = n('installs');
    const paid = installs - n('organic');
    const costUsd = n('cost_micros') / 1e6;
    const latest = columns.includes('day') ? (key[0] as string) : ([q.lastDay, today].sort()[0] as string);
    const ageMs = q.nowMs - (Date.parse(`${latest}T00:00:00Z`) + DAY);
    const share = (x: number) => (installs === 0 ? 0 : r(Math.min(x, installs) / installs, 4));
    return {
      ...Object.fromEntries(columns.map((column, i) => [column, key[i]])),
      clicks: n('clicks'),
      installs,
      organic: n('organic'),
      reinstalls: n('reinstalls'),
      fraud_flagged: n('fraud_flagged'),
      reengagements: n('reengagements'),
      network_clicks: n('network_clicks'),
      impressions: n('impressions'),
      cost_usd: costUsd,
      ecpi_usd: paid > 0 ? r(costUsd / paid, 6) : 0,
      // Refunds netted from purchases (docs/analytics.md, "Refunds").
      revenue_usd: (n('revenue_micros') - n('refund_micros')) / 1e6,
      recent_revenue_usd: (n('recent_revenue_micros') - n('recent_refund_micros')) / 1e6,
      refunds: n('refunds'),
      refunds_usd: n('refund_micros') / 1e6,
      cohort_revenue_d0_usd: net('d0') / 1e6,
      cohort_revenue_d7_usd: net('d7') / 1e6,
      cohort_revenue_d30_usd: net('d30') / 1e6,
      roas_d0: costUsd === 0 ? 0 : r(net('d0') / n('cost_micros'), 4),
      roas_d7: costUsd === 0 ? 0 : r(net('d7') / n('cost_micros'), 4),
      roas_d30: costUsd === 0 ? 0 : r(net('d30') / n('cost_micros'), 4),
      ad_revenue_usd: n('ad_revenue_micros') / 1e6,
      cohort_ad_revenue_d0_usd: n('cohort_ad_d0_micros') / 1e6,
      cohort_ad_revenue_d7_usd: n('cohort_ad_d7_micros') / 1e6,
      cohort_ad_revenue_d30_usd: n('cohort_ad_d30_micros') / 1e6,
      total_revenue_usd: (n('revenue_micros') - n('refund_micros') + n('ad_revenue_micros')) / 1e6,
      total_roas_d0: costUsd === 0 ? 0 : r((net('d0') + n('cohort_ad_d0_micros')) / n('cost_micros'), 4),
      total_roas_d7: costUsd === 0 ? 0 : r((net('d7') + n('cohort_ad_d7_micros')) / n('cost_micros'), 4),
      total_roas_d30: costUsd === 0 ? 0 : r((net('d30') + n('cohort_ad_d30_micros')) / n('cost_micros'), 4),
      retained_d1: n('retained_d1'),
      retained_d7: n('retained_d7'),
      retained_d30: n('retained_d30'),
      d1_rate: share(n('retained_d1')),
      d7_rate: share(n('retained_d7')),
      d30_rate: share(n('retained_d30')),
      d0_mature: ageMs >= DAY,
      d1_mature: ageMs >= 2 * DAY,
      d7_mature: ageMs >= 8 * DAY,
      d30_mature: ageMs >= 31 * DAY,
    };
  });
}

async function page(ports: PerformancePorts, params: Record<string, string | undefined>) {
  const answer = await answerPerformance(ports, { authorization: `Bearer ${KEY}`, params });
  if (answer.kind !== 'page') throw new Error('expected a page');
  return answer.body.rows;
}

describe('the performance report', () => {
  it('equals the oracle over the writes, from week, day and partner pages fresh or stale, overflow markers and bare rows', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(write, { maxLength: 40 }),
        fc.array(write, { maxLength: 8 }),
        fc.boolean(),
        fc.array(write, { maxLength: 6 }),
        fc.subarray(DAYS),
        fc.subarray(MONDAYS),
        fc.subarray(MONDAYS),
        fc.record({
          first: fc.integer({ min: 0, max: DAYS.length - 1 }),
          length: fc.integer({ min: 1, max: DAYS.length }),
          groupBy,
          partner: filter(PARTNERS),
          campaign: filter(CAMPAIGNS),
          country: filter(COUNTRIES),
          platform: filter(PLATFORMS),
          offset: fc.integer({ min: 0, max: 8 }),
          limit: fc.integer({ min: 1, max: 40 }),
          nowDays: fc.integer({ min: 0, max: 40 }),
        }),
        async (before, middle, compactAgain, after, overflowDays, lostWeeks, overflowWeeks, q) => {
          const store = new MemoryPerformance();
          for (const w of before) apply(store, w);
          await compactApp(store, APP);
          for (const w of middle) apply(store, w);
          // Again: some weeks rebuilt from a mix of old and new day pages.
          if (compactAgain) await compactApp(store, APP);
          for (const w of after) apply(store, w);
          for (const day of overflowDays) {
            const v = store.stamp.get(day)?.v;
            if (v !== undefined) store.page.set(day, { v, overflow: true });
          }
          // A run cut short before its weeks, and weeks too big for one item.
          for (const monday of lostWeeks) for (const kind of ['rows', 'partner'] as const) store.weeksOf(kind).delete(monday);
          for (const monday of overflowWeeks) {
            const week = store.week.get(monday);
            if (week) store.week.set(monday, { vs: week.vs, overflow: true });
          }
          const nowMs = FIRST + q.nowDays * DAY + 3_600_000;
          const sinceMs = FIRST + q.first * DAY + 1000;
          const untilMs = sinceMs + (q.length - 1) * DAY + 5000;
          const filters = Object.fromEntries(
            (['partner', 'campaign', 'country', 'platform'] as const).flatMap((dim) => (q[dim] ? [[dim, q[dim] as string[]]] : [])),
          );
          const rows = await page(portsOf(store, nowMs), {
            since_ms: String(sinceMs),
            until_ms: String(untilMs),
            group_by: q.groupBy?.join(','),
            ...Object.fromEntries(Object.entries(filters).map(([dim, values]) => [dim, values.join(',')])),
            offset: String(q.offset),
            limit: String(q.limit),
          });
          const expected = oracle([...before, ...middle, ...after], {
            firstDay: new Date(sinceMs).toISOString().slice(0, 10),
            lastDay: new Date(untilMs - 1).toISOString().slice(0, 10),
            groupBy: q.groupBy ?? ['day', 'partner'],
            filters,
            offset: q.offset,
            limit: q.limit,
            nowMs,
          });
          expect(rows).toEqual(expected);
        },
      ),
      { numRuns: 400 },
    );
  });

  it('reads a fresh page instead of the rows, and the rows once a write makes it stale', async () => {
    const store = new MemoryPerformance();
    store.addPerf('2025-03-02', ['meta', 'spring', 'US', 'ios'], { installs: 3 });
    await compactApp(store, APP);
    const perfRows = jest.spyOn(store, 'perfRows');
    const params = { since_ms: String(FIRST), until_ms: String(FIRST + 3 * DAY), group_by: 'campaign' };
    expect((await page(portsOf(store, FIRST), params)).map((row) => row.installs)).toEqual([3]);
    // Only the days without a stamp (no writes: nothing to read) are queried as rows.
    expect(perfRows.mock.calls.map(([, days]) => days)).toEqual([
      { firstDay: '2025-03-01', lastDay: '2025-03-01' },
      { firstDay: '2025-03-03', lastDay: '2025-03-03' },
    ]);
    store.addPerf('2025-03-02', ['meta', 'spring', 'US', 'ios'], { installs: 2 });
    expect((await page(portsOf(store, FIRST), params)).map((row) => row.installs)).toEqual([5]);
    // The stale day joins the unstamped days around it: one read of the run.
    expect(perfRows).toHaveBeenLastCalledWith(APP, { firstDay: '2025-03-01', lastDay: '2025-03-03' });
  });

  it('reads the partner pages when only the partner is grouped or filtered, and the partner rows of a day changed since', async () => {
    const store = new MemoryPerformance();
    store.addPerf('2025-03-02', ['meta', 'spring', 'US', 'ios'], { installs: 3 });
    store.addPerf('2025-03-03', ['meta', 'summer', 'DE', 'ios'], { installs: 4 });
    await compactApp(store, APP);
    const [partnerRows, pages] = [jest.spyOn(store, 'partnerRows'), jest.spyOn(store, 'pages')];
    const params = { since_ms: String(FIRST), until_ms: String(FIRST + 3 * DAY), group_by: 'partner', partner: 'meta' };
    expect(await page(portsOf(store, FIRST), params)).toEqual([expect.objectContaining({ partner: 'meta', installs: 7 })]);
    expect(pages.mock.calls.map(([, kind]) => kind)).toEqual(['partner']);
    // 03-01 has no stamp (nothing written): its rows are read, and are none.
    expect(partnerRows.mock.calls.map(([, days]) => days)).toEqual([{ firstDay: '2025-03-01', lastDay: '2025-03-01' }]);
    store.addPerf('2025-03-03', ['meta', 'summer', 'DE', 'ios'], { installs: 1 });
    expect(await page(portsOf(store, FIRST), params)).toEqual([expect.objectContaining({ partner: 'meta', installs: 8 })]);
    expect(partnerRows).toHaveBeenLastCalledWith(APP, { firstDay: '2025-03-03', lastDay: '2025-03-03' });
  });

  it('reads a whole week from its week page while its 7 stamps are the ones it recorded, else its days', async () => {
    const store = new MemoryPerformance();
    for (const day of DAYS.slice(0, 16)) store.addPerf(day, ['meta', 'spring', 'US', 'ios'], { installs: 1 });
    await compactApp(store, APP);
    expect(store.week.get('2025-03-03')?.vs).toEqual([1, 1, 1, 1, 1, 1, 1]);
    const [pages, weeks, perfRows] = [jest.spyOn(store, 'pages'), jest.spyOn(store, 'weeks'), jest.spyOn(store, 'perfRows')];
    // 03-01 to 03-16: the days 03-01 and 03-02 and two whole weeks.
    const params = { since_ms: String(FIRST), until_ms: String(FIRST + 16 * DAY), group_by: 'campaign' };
    expect((await page(portsOf(store, FIRST), params)).map((row) => row.installs)).toEqual([16]);
    expect(weeks.mock.calls.map(([, kind, window]) => [kind, window])).toEqual([
      ['rows', { firstDay: '2025-03-03', lastDay: '2025-03-10' }],
    ]);
    expect(pages.mock.calls.map(([, , window]) => window)).toEqual([{ firstDay: '2025-03-01', lastDay: '2025-03-02' }]);
    expect(perfRows).not.toHaveBeenCalled();

    // A write on 03-12 after the weeks were built: that week is read from its days, 03-12 from its rows.
    store.addPerf('2025-03-12', ['meta', 'spring', 'US', 'ios'], { installs: 5 });
    pages.mockClear();
    expect((await page(portsOf(store, FIRST), params)).map((row) => row.installs)).toEqual([21]);
    expect(pages.mock.calls.map(([, , window]) => window)).toEqual([
      { firstDay: '2025-03-01', lastDay: '2025-03-02' },
      { firstDay: '2025-03-10', lastDay: '2025-03-16' },
    ]);
    expect(perfRows.mock.calls.map(([, days]) => days)).toEqual([{ firstDay: '2025-03-12', lastDay: '2025-03-12' }]);

    // By day, no week page is read.
    weeks.mockClear();
    await page(portsOf(store, FIRST), { ...params, group_by: 'day,campaign' });
    expect(weeks).not.toHaveBeenCalled();
  });

  it('takes the window and the maturity on the app local days', async () => {
    const store = new MemoryPerformance();
    store.addPerf('2025-03-02', ['meta', 'spring', 'US', 'ios'], { installs: 1 });
    store.addPerf('2025-03-03', ['meta', 'spring', 'US', 'ios'], { installs: 2 });
    // 2025-03-02 in Tokyo is [03-01T15:00Z, 03-02T15:00Z): a window from 03-02T14:00Z to 03-02T16:00Z meets both local days.
    const since = Date.parse('2025-03-02T14:00:00Z');
    const ports = portsOf(store, Date.parse('2025-03-04T15:00:00Z'), 'Asia/Tokyo');
    const rows = await page(ports, { since_ms: String(since), until_ms: String(since + 2 * 3_600_000), group_by: 'day' });
    expect(rows.map((row) => [row.day, row.installs, row.d0_mature, row.d1_mature])).toEqual([
      ['2025-03-02', 1, true, true],
      ['2025-03-03', 2, true, false],
    ]);
  });

  it('answers a window reaching 9999-12-31 at once with no rows, even beside rows stored there (issue 36)', async () => {
    const store = new MemoryPerformance();
    // A poisoned app: rows of the last week of 9999, stored before such dates were refused.
    for (const day of ['9999-12-27', '9999-12-31']) {
      store.addPerf(day, ['meta', 'spring', 'US', 'ios'], { installs: 5 });
      store.putCost(day, [
        { dims: ['meta', 'spring', 'US', 'ios'], cost_micros: 1, network_clicks: 0, impressions: 0, currency: 'USD', cost: 1 },
      ]);
    }
    const since = 253_402_214_400_000; // 9999-12-31T00:00:00Z
    const windows = [
      [since, since + 2 * DAY],
      [since - 10 * DAY, since + 2 * DAY],
      [8.64e15 - 365 * DAY, 8.64e15],
      [-8.64e15, -8.64e15 + 365 * DAY],
      [Date.parse('0000-01-01T00:00:00Z'), Date.parse('0000-01-03T00:00:00Z')],
    ];
    const startedMs = Date.now();
    for (const zone of ['UTC', 'Pacific/Kiritimati', 'Pacific/Pago_Pago'])
      for (const group_by of ['partner', 'day,partner', 'campaign', 'day,country'])
        for (const [from, to] of windows) {
          const rows = await page(portsOf(store, FIRST, zone), { since_ms: String(from), until_ms: String(to), group_by });
          expect(rows).toEqual([]);
        }
    expect(Date.now() - startedMs).toBeLessThan(1000);
  });

  it('reads the days of 2099 and none past it for a window across 2100-01-01', async () => {
    const store = new MemoryPerformance();
    store.addPerf('2099-12-31', ['meta', 'spring', 'US', 'ios'], { installs: 3 });
    const since = Date.parse('2099-12-30T00:00:00Z');
    const rows = await page(portsOf(store, FIRST), { since_ms: String(since), until_ms: String(since + 365 * DAY), group_by: 'day' });
    expect(rows.map((row) => [row.day, row.installs])).toEqual([['2099-12-31', 3]]);
  });

  it.each([
    ['an empty group_by', { group_by: '' }, 'invalid_group_by'],
    ['an unknown column', { group_by: 'day,os' }, 'invalid_group_by'],
    ['a repeated column', { group_by: 'partner,partner' }, 'invalid_group_by'],
    ['an empty name in the list', { group_by: 'day,,partner' }, 'invalid_group_by'],
    ['an empty filter', { country: '' }, 'invalid_filter'],
    ['an empty value in a filter', { partner: 'meta,' }, 'invalid_filter'],
    ['a bad window before a bad group_by', { group_by: 'x', since_ms: 'x' }, 'invalid_since_until'],
  ])('refuses %s with 400 %s', async (_name, params, code) => {
    const error = await answerPerformance(portsOf(new MemoryPerformance(), FIRST), { authorization: `Bearer ${KEY}`, params }).catch(
      (e) => e,
    );
    expect(error).toBeInstanceOf(ServiceError);
    expect({ status: error.statusCode, code: error.code }).toEqual({ status: 400, code });
  });

  it('answers 304 to the ETag of an unchanged page, and a page once a row changes', async () => {
    const store = new MemoryPerformance();
    store.addPerf('2025-03-02', ['meta', 'spring', 'US', 'ios'], { installs: 1 });
    const request = { authorization: `Bearer ${KEY}`, params: { since_ms: String(FIRST), until_ms: String(FIRST + 3 * DAY) } };
    const first = await answerPerformance(portsOf(store, FIRST), request);
    expect((await answerPerformance(portsOf(store, FIRST), { ...request, ifNoneMatch: first.etag })).kind).toBe('not_modified');
    store.addPerf('2025-03-02', ['meta', 'spring', 'US', 'ios'], { installs: 1 });
    expect((await answerPerformance(portsOf(store, FIRST), { ...request, ifNoneMatch: first.etag })).kind).toBe('page');
  });
});
