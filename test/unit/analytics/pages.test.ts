import { compactApp, compactPages, MAX_PAGE_BYTES } from '../../../functions/domain/analytics/pages';
import { decodePerfPage } from '../../../functions/domain/analytics/performance';
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

  it('marks a day too big for one item as overflow, and the report reads its rows', async () => {
    const store = new MemoryPerformance();
    const rows = Math.ceil(MAX_PAGE_BYTES / 60);
    for (let i = 0; i < rows; i++) store.addPerf('2025-03-03', ['meta', `campaign_${i}`, 'US', 'ios'], { installs: 1 });
    expect(await compactApp(store, APP)).toEqual({ pages: 1, overflows: 1, weeks: 1 });
    expect(store.page.get('2025-03-03')).toEqual({ v: rows, overflow: true });
    const page = await campaigns(store);
    expect({ rows: page.length, first: page[0] }).toEqual({ rows: 1000, first: ['2025-03-03', 'campaign_0', 1, 0] });
  });

  it('stops at the deadline and names the apps left for the next run', async () => {
    const store = new MemoryPerformance();
    store.addPerf('2025-03-01', ['meta', 'spring', 'US', 'ios'], { installs: 4 });
    let now = 0;
    const summary = await compactPages(store, ['a', 'b', 'c'], 1, () => now++);
    expect(summary).toEqual({ apps: 1, pages: 1, overflows: 0, weeks: 1, unfinished: ['b', 'c'] });
  });
});
