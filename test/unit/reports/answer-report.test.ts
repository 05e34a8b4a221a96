import fc from 'fast-check';
import { MemoryRowStore } from '../../../functions/adapters/memory/aggregate-store';
import { type RowFamily, sortKeyOf } from '../../../functions/domain/aggregation/rows';
import { DAY_MS } from '../../../functions/domain/common/days';
import { answerReport, type ReportPorts } from '../../../functions/domain/reports/answer-report';
import { renderRow } from '../../../functions/domain/reports/report-rows';
import { freshStamp } from '../../support/row-stamps';

const KEY_A = `srv_${'a'.repeat(48)}`;
const KEY_B = `srv_${'b'.repeat(48)}`;
const REVOKED = `srv_${'c'.repeat(48)}`;
const NOW = Date.UTC(2026, 10, 21, 12);

/** Rows in the in-memory row store (the aggregator's own), read in key order like the adapter. */
function world(timeZones: Record<string, string> = {}) {
  const store = new MemoryRowStore();
  let reads = 0;
  const ports: ReportPorts = {
    keys: {
      serverKey: async (key) =>
        ({
          [KEY_A]: { app_id: 'app_a', revoked: false },
          [KEY_B]: { app_id: 'app_b', revoked: false },
          [REVOKED]: { app_id: 'app_a', revoked: true },
        })[key],
      appTimeZone: async (appId) => timeZones[appId] ?? 'UTC',
    },
    rows: {
      page: async (appId, family, window, count) => {
        const rows = store
          .rowsOf(appId, family)
          .filter((row) => row.key.day >= window.firstDay && row.key.day <= window.lastDay)
          .slice(0, count)
          .map((row) => ({
            day: row.key.day,
            partner: row.key.group[0],
            attribution_type: row.key.group[1],
            event_name: row.key.group[0],
            ...row.counters,
          }));
        reads += rows.length;
        return rows;
      },
    },
    nowMs: () => NOW,
  };
  const add = (appId: string, family: RowFamily, day: string, group: string[], add: Record<string, number>) =>
    store.add(appId, { family, day, group, add }, freshStamp());
  return { ports, add, reads: () => reads };
}

const ask = (
  ports: ReportPorts,
  params: Record<string, string> = {},
  key = KEY_A,
  report: 'attribution' | 'revenue' | 'cohorts' | 'events' = 'attribution',
) => answerReport(ports, { report, authorization: `Bearer ${key}`, params });

describe('answering a report', () => {
  it('refuses a revoked or unknown key before reading any row', async () => {
    const w = world();
    await w.add('app_a', 'attribution', '2026-11-20', ['meta', 'deterministic'], { installs: 1 });
    for (const key of [REVOKED, `srv_${'d'.repeat(48)}`]) {
      await expect(ask(w.ports, {}, key)).rejects.toMatchObject({ statusCode: 401, code: 'invalid_or_revoked_key' });
    }
    expect(w.reads()).toBe(0);
  });

  it("renders the rows of the key's app only, whatever the query names", async () => {
    const w = world();
    await w.add('app_a', 'attribution', '2026-11-20', ['meta', 'deterministic'], { installs: 3, fraud_flagged: 1 });
    await w.add('app_b', 'attribution', '2026-11-20', ['google', 'organic'], { installs: 9, organic: 9 });
    const answer = await ask(w.ports, { app_id: 'app_b', app: 'app_b' });
    expect(answer.kind === 'page' && answer.body.rows).toEqual([
      { day: '2026-11-20', partner: 'meta', attribution_type: 'deterministic', installs: 3, organic: 0, reinstalls: 0, fraud_flagged: 1 },
    ]);
  });

  it('echoes the effective bounds, limit and offset, and reads no more than offset + limit rows', async () => {
    const w = world();
    for (let d = 1; d <= 20; d++) await w.add('app_a', 'cohorts', `2026-11-${String(d).padStart(2, '0')}`, [], { installs: d });
    const answer = await ask(w.ports, { limit: '3', offset: '4' }, KEY_A, 'cohorts');
    if (answer.kind !== 'page') throw new Error('expected a page');
    expect(answer.body.meta).toEqual({ since_ms: NOW - 30 * DAY_MS, until_ms: NOW, limit: 3, offset: 4, elapsed_ms: 0 });
    expect(answer.body.rows.map((r) => r.day)).toEqual(['2026-11-05', '2026-11-06', '2026-11-07']);
    expect(w.reads()).toBe(7);
  });

  it("reads the app's local days a window overlaps: a Tokyo day starts at 15:00 UTC the day before", async () => {
    const w = world({ app_a: 'Asia/Tokyo' });
    for (const day of ['2026-11-19', '2026-11-20', '2026-11-21', '2026-11-22']) await w.add('app_a', 'cohorts', day, [], { installs: 1 });
    const days = async (sinceMs: number, untilMs: number) => {
      const answer = await ask(w.ports, { since_ms: String(sinceMs), until_ms: String(untilMs) }, KEY_A, 'cohorts');
      return answer.kind === 'page' ? answer.body.rows.map((r) => r.day) : [];
    };
    // 2026-11-20 in Tokyo is [2026-11-19T15:00Z, 2026-11-20T15:00Z).
    const start = Date.UTC(2026, 10, 19, 15);
    expect(await days(start, start + DAY_MS)).toEqual(['2026-11-20']);
    expect(await days(start - 1, start + DAY_MS)).toEqual(['2026-11-19', '2026-11-20']);
    expect(await days(start, start + DAY_MS + 1)).toEqual(['2026-11-20', '2026-11-21']);
    // The UTC day 2026-11-20 overlaps the Tokyo days 2026-11-20 and 2026-11-21.
    expect(await days(Date.UTC(2026, 10, 20), Date.UTC(2026, 10, 21))).toEqual(['2026-11-20', '2026-11-21']);
  });

  it('answers 304 to an If-None-Match of the same page, and a new tag when the rows change', async () => {
    const w = world();
    await w.add('app_a', 'events', '2026-11-20', ['session'], { events: 2, unique_installs: 1 });
    const first = await ask(w.ports, {}, KEY_A, 'events');
    const again = await answerReport(w.ports, {
      report: 'events',
      authorization: `Bearer ${KEY_A}`,
      params: {},
      ifNoneMatch: `"x", ${first.etag}`,
    });
    expect(again).toEqual({ kind: 'not_modified', etag: first.etag, appId: 'app_a' });
    await w.add('app_a', 'events', '2026-11-20', ['session'], { events: 1 });
    const changed = await answerReport(w.ports, {
      report: 'events',
      authorization: `Bearer ${KEY_A}`,
      params: {},
      ifNoneMatch: first.etag,
    });
    expect(changed.kind).toBe('page');
    expect(changed.etag).not.toBe(first.etag);
  });

  it('pages through a window with limit 7, every row once and in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.tuple(fc.integer({ min: 1, max: 28 }), fc.constantFrom('a', 'b', 'a b', 'B', 'z')), { maxLength: 60 }),
        async (cells) => {
          const w = world();
          for (const [d, partner] of cells)
            await w.add('app_a', 'revenue', `2026-11-${String(d).padStart(2, '0')}`, [partner], { purchases: 1 });
          const seen: string[] = [];
          for (let offset = 0; ; offset += 7) {
            const month = { since_ms: String(Date.UTC(2026, 10, 1)), until_ms: String(Date.UTC(2026, 11, 1)) };
            const page = await ask(w.ports, { ...month, limit: '7', offset: String(offset) }, KEY_A, 'revenue');
            if (page.kind !== 'page') throw new Error('expected a page');
            seen.push(...page.body.rows.map((r) => sortKeyOf({ day: String(r.day), group: [String(r.partner)] })));
            if (page.body.rows.length < 7) break;
          }
          expect(seen).toEqual(
            [...new Set(cells.map(([d, p]) => sortKeyOf({ day: `2026-11-${String(d).padStart(2, '0')}`, group: [p] })))].sort(),
          );
        },
      ),
    );
  });
});

describe('rendering the rows', () => {
  it('renders revenue and ARPPU from micro-dollars to 6 decimals, rates to 4, zero without installs or payers', () => {
    expect(renderRow.revenue({ day: 'd', partner: 'p', purchases: 3, revenue_micros: 10_000_000, payers: 3 })).toEqual({
      day: 'd',
      partner: 'p',
      purchases: 3,
      revenue_usd: 10,
      arppu_usd: 3.333333,
    });
    expect(renderRow.revenue({ day: 'd', partner: 'p', purchases: 0, revenue_micros: 0, payers: 0 })).toMatchObject({
      revenue_usd: 0,
      arppu_usd: 0,
    });
    expect(renderRow.revenue({ day: 'd', partner: 'p', purchases: 1, revenue_micros: 1, payers: 1 })).toMatchObject({
      revenue_usd: 0.000001,
      arppu_usd: 0.000001,
    });
    expect(renderRow.cohorts({ day: 'd', installs: 3, d1: 2, d7: 1, d30: 0 })).toEqual({
      day: 'd',
      installs: 3,
      d1: 2,
      d7: 1,
      d30: 0,
      d1_rate: 0.6667,
      d7_rate: 0.3333,
      d30_rate: 0,
    });
    expect(renderRow.cohorts({ day: 'd', installs: 0, d1: 0, d7: 0, d30: 0 })).toMatchObject({ d1_rate: 0, d7_rate: 0, d30_rate: 0 });
    // A retention day that reached the row before its install's increment (retried after an outage).
    expect(renderRow.cohorts({ day: 'd', installs: 1, d1: 2, d7: 1, d30: 0 })).toMatchObject({ d1: 2, d1_rate: 1, d7_rate: 1 });
    expect(renderRow.cohorts({ day: 'd', installs: 0, d1: 1, d7: 0, d30: 0 })).toMatchObject({ d1_rate: 0 });
    expect(renderRow.events({ day: 'd', event_name: 'purchase', events: 2, unique_installs: 1, revenue_micros: 4_990_000 })).toEqual({
      day: 'd',
      event_name: 'purchase',
      events: 2,
      unique_installs: 1,
      revenue_usd: 4.99,
    });
  });

  it('keeps every rendered dollar figure within half a micro-dollar of the exact value', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 1e12 }), fc.integer({ min: 1, max: 1e6 }), (micros, payers) => {
        const row = renderRow.revenue({ day: 'd', partner: 'p', purchases: 1, revenue_micros: micros, payers });
        expect(Math.abs(Number(row.revenue_usd) * 1e6 - micros)).toBeLessThan(0.5);
        expect(Math.abs(Number(row.arppu_usd) - micros / payers / 1e6)).toBeLessThanOrEqual(0.5e-6 + 1e-9);
        expect(String(row.arppu_usd).split('.')[1]?.length ?? 0).toBeLessThanOrEqual(6);
      }),
    );
  });
});
