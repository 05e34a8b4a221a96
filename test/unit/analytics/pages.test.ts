import { randomBytes } from 'node:crypto';
import { compactApp, compactPages, MAX_PAGE_BYTES, type PageStore, packedPageBytes } from '../../../functions/domain/analytics/pages';
import { decodePerfPage, PERF_COUNTERS } from '../../../functions/domain/analytics/performance';
import { answerPerformance } from '../../../functions/domain/analytics/performance-report';
import { MemoryPerformance } from './memory-performance';

const APP = 'app_pages';
const KEY = `srv_${'b'.repeat(48)}`;
const SINCE = Date.parse('2025-03-01T00:00:00Z');

async function campaigns(store: MemoryPerformance) {
  const answer = await answerPerformance(
    {
      keys: { serverKey: async () => ({ app_id: APP, revoked: false }), appTimeZone: async () => 'UTC' },
      rows: store,
      nowMs: () => SINCE + 10 * 86_400_000,
    },
    {
      authorization: `Bearer ${KEY}`,
      params: { since_ms: String(SINCE), until_ms: String(SINCE + 5 * 86_400_000), group_by: 'day,campaign', limit: '1000' },
    },
  );
  if (answer.kind !== 'page') throw new Error('expected a page');
  return answer.body.rows.map((row) => [row.day, row.campaign, row.installs, row.cost_usd]);
}

describe('the performance pages', () => {
  it('builds the page of a stale day at its stamp, merged with its cost, and leaves a fresh day alone', async () => {
    const store = new MemoryPerformance();
    store.addPerf('2025-03-01', ['meta', 'spring', 'US', 'ios'], { installs: 4 });
    store.addPerf('2025-03-02', ['meta', 'spring', 'US', 'ios'], { installs: 1 });
    store.putCost('2025-03-02', [
      { dims: ['meta', 'spring', 'US', 'ios'], cost_micros: 2_500_000, network_clicks: 9, impressions: 90, currency: 'USD', cost: 2.5 },
    ]);
    expect(await compactApp(store, APP)).toEqual({ pages: 2, overflows: 0, weeks: 1 });
    store.addPerf('2025-03-02', ['google', 'winter', 'DE', 'android'], { installs: 2 });
    const puts = jest.spyOn(store, 'putPage');

    expect(await compactApp(store, APP)).toEqual({ pages: 1, overflows: 0, weeks: 1 });
    expect(puts.mock.calls.map(([, kind, day, page]) => [kind, day, page.v])).toEqual([
      ['rows', '2025-03-02', 3],
      ['partner', '2025-03-02', 3],
    ]);
    const page = store.page.get('2025-03-02');
    if (!page || !('rows' in page)) throw new Error('no page');
    expect(decodePerfPage(page.rows).map((row) => [row.dims.join('/'), row.counters.installs, row.counters.cost_micros])).toEqual([
      ['google/winter/DE/android', 2, 0],
      ['meta/spring/US/ios', 1, 2_500_000],
    ]);
    expect(store.stamp.get('2025-03-02')).toEqual({ v: 3, page_v: 3 });
    expect(await store.staleDays()).toEqual([]);
  });

  it('leaves a day stale, never wrong, when a write lands while its page is built', async () => {
    const store = new MemoryPerformance();
    store.addPerf('2025-03-01', ['meta', 'spring', 'US', 'ios'], { installs: 4 });
    store.onDayRows = (day) => {
      store.onDayRows = undefined;
      store.addPerf(day, ['meta', 'autumn', 'US', 'ios'], { installs: 7 });
    };
    await compactApp(store, APP);
    expect(store.stamp.get('2025-03-01')).toEqual({ v: 2, page_v: 1 });
    expect(store.page.get('2025-03-01')?.v).toBe(1);
    expect(await store.staleDays()).toEqual([{ day: '2025-03-01', v: 2 }]);
    const truth = [
      ['2025-03-01', 'autumn', 7, 0],
      ['2025-03-01', 'spring', 4, 0],
    ];
    expect(await campaigns(store)).toEqual(truth);
    await compactApp(store, APP);
    expect(store.stamp.get('2025-03-01')).toEqual({ v: 2, page_v: 2 });
    const rowsRead = jest.spyOn(store, 'perfRows');
    expect(await campaigns(store)).toEqual(truth);
    expect(rowsRead.mock.calls.some(([, days]) => days.firstDay <= '2025-03-01' && days.lastDay >= '2025-03-01')).toBe(false);
  });

  it('never puts back a page older than the one stored (two runs that overlap)', async () => {
    const store = new MemoryPerformance();
    store.addPerf('2025-03-01', ['meta', 'spring', 'US', 'ios'], { installs: 4 });
    await store.putPage(APP, 'rows', '2025-03-01', { v: 5, rows: '[]' });
    await store.markBuilt(APP, '2025-03-01', 5);
    await compactApp(store, APP);
    expect(store.page.get('2025-03-01')).toEqual({ v: 5, rows: '[]' });
    expect(store.stamp.get('2025-03-01')?.page_v).toBe(5);
  });

  it('marks a day too big for one item, gzipped as it is stored, as overflow, and the report reads its rows', async () => {
    const store = new MemoryPerformance();
    // Campaign names gzip cannot shrink (random hex): about 110 bytes a row once stored.
    const rows = Math.ceil(MAX_PAGE_BYTES / 100);
    const name = (i: number) => `c${String(i).padStart(5, '0')}_${randomBytes(100).toString('hex')}`;
    for (let i = 0; i < rows; i++) store.addPerf('2025-03-03', ['meta', name(i), 'US', 'ios'], { installs: 1 });
    expect(await compactApp(store, APP)).toEqual({ pages: 1, overflows: 1, weeks: 1 });
    expect(store.page.get('2025-03-03')).toEqual({ v: rows, overflow: true });
    const page = await campaigns(store);
    const [day, campaign, installs] = page[0] ?? [];
    expect({ rows: page.length, day, campaign: String(campaign).slice(0, 7), installs }).toEqual({
      rows: 1000,
      day: '2025-03-03',
      campaign: 'c00000_',
      installs: 1,
    });
  });

  it('pages a busy day whose JSON is larger than an item but whose stored (gzipped) page fits, and reads it as its rows', async () => {
    // 2,000 combinations with every counter filled, as the bench's busy app: about 440 KB of JSON.
    const store = new MemoryPerformance();
    const counters = (i: number) =>
      Object.fromEntries(PERF_COUNTERS.map((name, c) => [name, 1_000_000 + ((i * 7919 + c * 104_729) % 9_000_000)]));
    for (let i = 0; i < 2000; i++) {
      const partner = `partner_${i % 10}`;
      const campaign = `${partner}_campaign_${Math.floor(i / 10) % 10}`;
      store.addPerf('2025-03-03', [partner, campaign, `C${Math.floor(i / 100) % 10}`, i < 1000 ? 'ios' : 'android'], counters(i));
    }
    const rowsRead = jest.spyOn(store, 'perfRows');
    const fromRows = await campaigns(store);
    expect(await compactApp(store, APP)).toEqual({ pages: 1, overflows: 0, weeks: 1 });
    const stored = store.page.get('2025-03-03');
    if (!stored || !('rows' in stored)) throw new Error('the busy day has no page');
    expect(Buffer.byteLength(stored.rows)).toBeGreaterThan(MAX_PAGE_BYTES);
    expect(packedPageBytes(stored.rows)).toBeLessThanOrEqual(MAX_PAGE_BYTES);
    rowsRead.mockClear();
    expect(await campaigns(store)).toEqual(fromRows);
    expect(rowsRead.mock.calls.some(([, days]) => days.firstDay <= '2025-03-03' && days.lastDay >= '2025-03-03')).toBe(false);
  });

  it('stops at the deadline and names the apps left for the next run', async () => {
    const store = new MemoryPerformance();
    store.addPerf('2025-03-01', ['meta', 'spring', 'US', 'ios'], { installs: 4 });
    let now = 0;
    const summary = await compactPages(store, ['a', 'b', 'c'], 1, () => now++);
    expect(summary).toEqual({ apps: 1, pages: 1, overflows: 0, weeks: 1, unfinished: ['b', 'c'], failed: [] });
  });

  it('marks a stored day outside 2000-01-01..2099-12-31 built without a page, and builds the app’s other days', async () => {
    // A cost row of 9999-12-27 taken before such dates were refused: its week would end past 9999-12-31 (issue 36).
    const store = new MemoryPerformance();
    store.putCost('9999-12-27', [
      { dims: ['meta', 'spring', 'US', 'ios'], cost_micros: 1, network_clicks: 0, impressions: 0, currency: 'USD', cost: 1 },
    ]);
    store.addPerf('2025-03-01', ['meta', 'spring', 'US', 'ios'], { installs: 4 });
    expect(await compactApp(store, APP)).toEqual({ pages: 1, overflows: 0, weeks: 1 });
    expect(store.page.has('9999-12-27')).toBe(false);
    expect(store.page.get('2025-03-01')).toMatchObject({ v: 1 });
    expect(await store.staleDays()).toEqual([]);
  });

  it("goes on with the other apps when one app's compaction fails, and names the app and its error", async () => {
    const stores = { a: new MemoryPerformance(), poisoned: new MemoryPerformance(), c: new MemoryPerformance() };
    for (const store of Object.values(stores)) store.addPerf('2025-03-01', ['meta', 'spring', 'US', 'ios'], { installs: 4 });
    const broken = new Error('BETWEEN operator requires upper bound >= lower bound');
    const byApp = (appId: string) => {
      if (appId === 'poisoned') throw broken;
      return stores[appId as keyof typeof stores];
    };
    const router: PageStore = {
      staleDays: async (appId) => byApp(appId).staleDays(),
      dayRows: (appId, day) => byApp(appId).dayRows(appId, day),
      putPage: (appId, kind, day, page) => byApp(appId).putPage(appId, kind, day, page),
      dayPages: (appId, kind, window) => byApp(appId).dayPages(appId, kind, window),
      putWeek: (appId, kind, monday, week) => byApp(appId).putWeek(appId, kind, monday, week),
      markBuilt: (appId, day, v) => byApp(appId).markBuilt(appId, day, v),
    };
    const summary = await compactPages(router, ['a', 'poisoned', 'c'], Number.POSITIVE_INFINITY, Date.now);
    expect(summary).toEqual({
      apps: 2,
      pages: 2,
      overflows: 0,
      weeks: 2,
      unfinished: [],
      failed: [{ app_id: 'poisoned', error: broken }],
    });
    for (const app of ['a', 'c'] as const) expect(stores[app].page.get('2025-03-01')).toMatchObject({ v: 1 });
    expect(stores.poisoned.page.size).toBe(0);
  });
});

describe('page lines stored before the re-engagement counters', () => {
  it('read their cost counters where they were and the re-engagement counters as 0', () => {
    // dims, the 12 counters pages had before issue 37, then cost_micros, network_clicks, impressions.
    const [row] = decodePerfPage(JSON.stringify([['meta', 'spring', 'US', 'ios', 1, 2, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 7, 8, 9]]));
    expect(row?.counters).toMatchObject({ clicks: 1, installs: 2, revenue_micros: 5, cost_micros: 7, network_clicks: 8, impressions: 9 });
    expect(row?.counters).toMatchObject({ reengagements: 0, recent_revenue_micros: 0 });
  });
});
