// Issue 23, item 1: report days are the app's local days (docs/reports.md, "Time zones"). The
// aggregator counts on in-memory stores, and the report is answered from its rows with the
// Reporting API's own use case.

import fc from 'fast-check';
import { memoryRebuildStores } from '../../../functions/adapters/memory/rebuild-stores';
import { differences, rebuildRows, rowOf } from '../../../functions/domain/aggregation/rebuild';
import { REPORT_FAMILIES, ROW_GROUPS } from '../../../functions/domain/aggregation/rows';
import { answerAppReport, type ReportRows } from '../../../functions/domain/reports/answer-report';
import type { ReportName } from '../../../functions/domain/reports/reports';
import { APP, world } from './world';

const HOUR = 3_600_000;
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

/** The oracle: Intl's calendar date of an instant in a zone (en-CA writes YYYY-MM-DD). */
const intlDay = (ms: number, zone: string) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms);

type World = ReturnType<typeof world>;

/** Installs, each sent in its own batch a second after it happened, with a purchase a minute later. */
async function installsAt(w: World, instants: readonly number[]): Promise<void> {
  const bodies = instants.map((tsMs, i) =>
    w.upload(
      [
        { event_id: `i-${i}`, event_name: 'install', install_uuid: uuid(i), ts_ms: tsMs, platform: 'ios' },
        { event_id: `p-${i}`, event_name: 'purchase', install_uuid: uuid(i), ts_ms: tsMs + 60_000, revenue_usd: 1 },
      ],
      { receivedMs: tsMs + 61_000 },
    ),
  );
  for (const body of bodies) expect((await w.deliver([body]))[0]?.kind).toBe('counted');
}

/** The report's days as GET /api/v1/reports/{report} answers them from the world's rows. */
async function reportDays(w: World, report: ReportName, timeZone: string, sinceMs: number, untilMs: number): Promise<string[]> {
  const rows: ReportRows = {
    page: async (appId, family, window, count) =>
      w.rows
        .rowsOf(appId, family)
        .filter((row) => row.key.day >= window.firstDay && row.key.day <= window.lastDay)
        .slice(0, count)
        .map((row) => ({
          day: row.key.day,
          ...Object.fromEntries(ROW_GROUPS[family].map((column, i) => [column, row.key.group[i]])),
          ...row.counters,
        })),
  };
  const answer = await answerAppReport(
    { rows, nowMs: () => untilMs },
    { appId: APP, timeZone },
    { report, params: { since_ms: String(sinceMs), until_ms: String(untilMs), limit: '1000' } },
  );
  if (answer.kind !== 'page') throw new Error('expected a page');
  return answer.body.rows.map((row) => String(row.day));
}

/** Counters of a family by day, summed over its groups. */
function byDay(w: World, family: 'attribution' | 'cohorts' | 'events' | 'revenue', counter: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const row of w.rows.rowsOf(APP, family)) out[row.key.day] = (out[row.key.day] ?? 0) + (row.counters[counter] ?? 0);
  return out;
}

describe('report days in the app time zone', () => {
  it('counts an install at 23:30 UTC on the next local day for an app in Asia/Tokyo, in attribution and cohorts', async () => {
    const tsMs = Date.UTC(2026, 5, 1, 23, 30);
    const tokyo = world({ timeZone: 'Asia/Tokyo' });
    await installsAt(tokyo, [tsMs]);
    expect(tokyo.table().attribution).toEqual({ '2026-06-02|organic|organic': { installs: 1, organic: 1 } });
    expect(tokyo.table().cohorts).toEqual({ '2026-06-02': { installs: 1 } });
    expect(tokyo.table().revenue).toEqual({ '2026-06-02|organic': { purchases: 1, revenue_micros: 1_000_000, payers: 1 } });
    // The Tokyo day 2026-06-02 is [2026-06-01T15:00Z, 2026-06-02T15:00Z).
    const start = Date.UTC(2026, 5, 1, 15);
    for (const report of ['attribution', 'cohorts'] as const) {
      expect(await reportDays(tokyo, report, 'Asia/Tokyo', start, start + 24 * HOUR)).toEqual(['2026-06-02']);
      expect(await reportDays(tokyo, report, 'Asia/Tokyo', start - 24 * HOUR, start)).toEqual([]);
    }
    // The same install of a UTC app is on 2026-06-01.
    const utc = world();
    await installsAt(utc, [tsMs]);
    expect(utc.table().cohorts).toEqual({ '2026-06-01': { installs: 1 } });
    expect(await reportDays(utc, 'attribution', 'UTC', Date.UTC(2026, 5, 1), Date.UTC(2026, 5, 2))).toEqual(['2026-06-01']);
  });

  it('puts Europe/Berlin installs on their local days across the daylight-saving changes of 2026-03-29 and 2026-10-25', async () => {
    const berlin = world({ timeZone: 'Europe/Berlin' });
    const at = (iso: string) => Date.parse(iso);
    await installsAt(berlin, [
      at('2026-03-28T22:58:00Z'), // 23:58 CET, 28 March
      at('2026-03-28T23:00:00Z'), // 00:00 CET, 29 March (a day of 23 hours)
      at('2026-03-29T21:58:00Z'), // 23:58 CEST, 29 March
      at('2026-03-29T22:00:00Z'), // 00:00 CEST, 30 March
      at('2026-10-24T21:58:00Z'), // 23:58 CEST, 24 October
      at('2026-10-24T22:00:00Z'), // 00:00 CEST, 25 October (a day of 25 hours)
      at('2026-10-25T22:58:00Z'), // 23:58 CET, 25 October
      at('2026-10-25T23:00:00Z'), // 00:00 CET, 26 October
    ]);
    const perDay = { '2026-03-28': 1, '2026-03-29': 2, '2026-03-30': 1, '2026-10-24': 1, '2026-10-25': 2, '2026-10-26': 1 };
    expect(byDay(berlin, 'cohorts', 'installs')).toEqual(perDay);
    expect(byDay(berlin, 'attribution', 'installs')).toEqual(perDay);
    // The purchases a minute after each install are on the install's day; one a minute after 23:59 would not be.
    expect(byDay(berlin, 'revenue', 'purchases')).toEqual(perDay);
    expect(byDay(berlin, 'events', 'events')).toEqual(Object.fromEntries(Object.entries(perDay).map(([day, n]) => [day, 2 * n])));
    // A window of the 25-hour local day 25 October, and one a millisecond short at each end.
    const start = at('2026-10-24T22:00:00Z');
    const end = at('2026-10-25T23:00:00Z');
    expect(await reportDays(berlin, 'cohorts', 'Europe/Berlin', start, end)).toEqual(['2026-10-25']);
    expect(await reportDays(berlin, 'cohorts', 'Europe/Berlin', start - 1, end)).toEqual(['2026-10-24', '2026-10-25']);
    expect(await reportDays(berlin, 'cohorts', 'Europe/Berlin', start, end + 1)).toEqual(['2026-10-25', '2026-10-26']);
    // The 23-hour day 29 March: 24 hours from its start reach into 30 March.
    const march = at('2026-03-28T23:00:00Z');
    expect(await reportDays(berlin, 'attribution', 'Europe/Berlin', march, march + 23 * HOUR)).toEqual(['2026-03-29']);
    expect(await reportDays(berlin, 'attribution', 'Europe/Berlin', march, march + 24 * HOUR)).toEqual(['2026-03-29', '2026-03-30']);
  });

  it('agrees with an Intl oracle on the install days and on which days a window overlaps', async () => {
    const changes = [Date.UTC(2026, 2, 29, 1), Date.UTC(2026, 9, 25, 1)];
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('Europe/Berlin', 'Asia/Tokyo', 'America/Santiago', 'Australia/Lord_Howe', 'UTC'),
        fc.uniqueArray(
          fc.tuple(fc.constantFrom(...changes), fc.integer({ min: -30 * HOUR, max: 30 * HOUR })).map(([change, offset]) => change + offset),
          { minLength: 1, maxLength: 8 },
        ),
        fc.tuple(fc.integer({ min: -40 * HOUR, max: 40 * HOUR }), fc.integer({ min: 1, max: 50 * HOUR })),
        async (zone, instants, [from, length]) => {
          const w = world({ timeZone: zone });
          await installsAt(w, instants);
          const expected: Record<string, number> = {};
          for (const tsMs of instants) expected[intlDay(tsMs, zone)] = (expected[intlDay(tsMs, zone)] ?? 0) + 1;
          expect(byDay(w, 'cohorts', 'installs')).toEqual(expected);
          // A day is in the window when some instant of [since, until) is on it.
          const sinceMs = changes[0] + from;
          const untilMs = sinceMs + length;
          const inWindow = Object.keys(expected)
            .filter((day) => intlDay(sinceMs, zone) <= day && day <= intlDay(untilMs - 1, zone))
            .sort();
          expect(await reportDays(w, 'cohorts', zone, sinceMs, untilMs)).toEqual(inWindow);
        },
      ),
      { numRuns: 60 },
    );
  });

  it("rebuilds an app's rows on its local days: a zone change is restated by rebuild --apply", async () => {
    const w = world({ timeZone: 'Asia/Tokyo' });
    await installsAt(w, [Date.UTC(2026, 5, 1, 14, 59), Date.UTC(2026, 5, 1, 15, 0)]);
    const keys = [...w.objects.keys()];
    const rebuild = (timeZone: string) =>
      rebuildRows(
        {
          appId: APP,
          companyId: 'com_x',
          probabilistic: false,
          timeZone,
          keysOfDay: async (day) => keys.filter((key) => key.startsWith(`audit/${day.split('-').join('/')}/`)),
          lines: async (key) => w.objects.get(key) ?? [],
          recordedDecision: async () => undefined,
          decideAfresh: (facts) => w.ports.decide(facts),
        },
        '2026-06-01',
        '2026-06-02',
        memoryRebuildStores(),
      );
    const live = REPORT_FAMILIES.flatMap((family) =>
      w.rows.rowsOf(APP, family).map((row) => rowOf(family, row.key.day, row.key.group, row.counters)),
    );
    const reportRows = (rows: Awaited<ReturnType<typeof rebuild>>['rows']) =>
      rows.filter((row) => (REPORT_FAMILIES as readonly string[]).includes(row.family));
    expect(differences(live, reportRows((await rebuild('Asia/Tokyo')).rows))).toEqual([]);
    // In UTC both installs are on 2026-06-01: the rows of the Tokyo days differ, and --apply would write these.
    const utc = reportRows((await rebuild('UTC')).rows);
    expect(utc.filter((row) => row.family === 'cohorts')).toEqual([rowOf('cohorts', '2026-06-01', [], { installs: 2 })]);
    expect(differences(live, utc).map((d) => `${d.family} ${d.day}`)).toContain('cohorts 2026-06-02');
  });
});
