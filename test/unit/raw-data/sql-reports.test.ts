// The four reports' SQL (functions/domain/raw-data/report-sql.ts) on DuckDB over export files
// made by hand, against an oracle written here from the aggregator's rules
// (functions/domain/aggregation/contributions.ts), not from the SQL: random installs with
// reinstalls, organic ones and fraud flags; events that came before any install of their uuid
// (install_event_id null: applied to the uuid's first install); event ids that repeat across
// uuids; retention at exactly 1, 7 and 30 days and a millisecond either side; revenue whose
// payer average falls on half a micro-dollar; rows of another app in the same files.

import fc from 'fast-check';
import { DuckDbTables } from '../../../functions/adapters/duckdb-sql';
import { DAY_MS, dayOf } from '../../../functions/domain/common/days';
import type { ExportRow } from '../../../functions/domain/raw-data/export-rows';
import {
  athenaNamedQueries,
  REPORT_COLUMNS,
  type ReportScope,
  reportParameterValues,
  reportQuery,
  reportScope,
  sqlLiteral,
} from '../../../functions/domain/raw-data/report-sql';
import { renderRow, type StoredCounters } from '../../../functions/domain/reports/report-rows';
import { REPORT_NAMES, type ReportName } from '../../../functions/domain/reports/reports';
import { exportFolder, type PlacedRow, writeExportFiles } from '../../support/raw-sql-files';

const APP = 'app_sql';
const OTHER_APP = 'app_other';
const START_MS = Date.parse('2026-03-01T00:00:00Z');
const HOUR_MS = 3_600_000;

interface Install {
  readonly uuid: string;
  readonly id: string;
  readonly tsMs: number;
  readonly receivedMs: number;
  readonly partner: string;
  readonly type: string;
  readonly reinstall: boolean;
  readonly fraud: readonly string[];
  readonly first: boolean;
}

interface Event {
  readonly uuid: string;
  readonly id: string;
  readonly name: string;
  readonly tsMs: number;
  readonly receivedMs: number;
  readonly micros: number;
  /** The install it counts against; null when it came before any install of its uuid. */
  readonly installId: string | null;
}

interface World {
  readonly installs: readonly Install[];
  readonly events: readonly Event[];
}

// --- The oracle: the rules, one report at a time -------------------------------------------------

const inWindow = (day: string, scope: ReportScope) => day >= scope.firstDay && day <= scope.lastDay;
/** The scope's local day of an instant, by Intl's calendar (en-CA writes YYYY-MM-DD), not days.ts. */
const dayIn = (ms: number, scope: ReportScope) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: scope.timeZone ?? 'UTC', year: 'numeric', month: '2-digit', day: '2-digit' }).format(ms);

/** The install an event is applied to: the one it names, else its uuid's first install. */
function appliedTo(world: World, event: Event): Install | undefined {
  return world.installs.find((i) => i.uuid === event.uuid && (event.installId === null ? i.first : i.id === event.installId));
}

function oracle(report: ReportName, world: World, scope: ReportScope): Record<string, string | number>[] {
  const rows = new Map<string, Record<string, string | number>>();
  const row = (key: readonly string[], init: () => Record<string, string | number>) => {
    const id = key.join('\u0000');
    const found = rows.get(id) ?? init();
    rows.set(id, found);
    return found;
  };
  const add = (target: Record<string, string | number>, name: string, by: number) => {
    target[name] = Number(target[name] ?? 0) + by;
  };
  const distinct = new Map<string, Set<string>>();
  const count = (key: string, member: string) => {
    const set = distinct.get(key) ?? new Set<string>();
    set.add(member);
    distinct.set(key, set);
    return set.size;
  };

  if (report === 'attribution') {
    for (const install of world.installs) {
      const day = dayIn(install.tsMs, scope);
      if (!inWindow(day, scope)) continue;
      const r = row([day, install.partner, install.type], () => ({ day, partner: install.partner, attribution_type: install.type }));
      add(r, 'installs', 1);
      add(r, 'organic', install.type === 'organic' ? 1 : 0);
      add(r, 'reinstalls', install.reinstall ? 1 : 0);
      add(r, 'fraud_flagged', install.fraud.length > 0 ? 1 : 0);
    }
  }
  if (report === 'cohorts') {
    for (const install of world.installs) {
      const day = dayIn(install.tsMs, scope);
      if (!inWindow(day, scope)) continue;
      const r = row([day], () => ({ day }));
      add(r, 'installs', 1);
      for (const n of [1, 7, 30]) {
        const retained = world.events.some((event) => {
          if (appliedTo(world, event) !== install) return false;
          const since = event.tsMs - install.tsMs;
          return since >= n * DAY_MS && since < (n + 1) * DAY_MS;
        });
        add(r, `d${n}`, retained ? 1 : 0);
      }
    }
  }
  if (report === 'revenue') {
    for (const event of world.events) {
      const day = dayIn(event.tsMs, scope);
      const install = appliedTo(world, event);
      if (!inWindow(day, scope) || event.micros <= 0 || !install) continue;
      const r = row([day, install.partner], () => ({ day, partner: install.partner }));
      add(r, 'purchases', 1);
      add(r, 'revenue_micros', event.micros);
      r.payers = count(`${day}\u0000${install.partner}`, event.uuid);
    }
  }
  if (report === 'events') {
    for (const event of world.events) {
      const day = dayIn(event.tsMs, scope);
      if (!inWindow(day, scope)) continue;
      const r = row([day, event.name], () => ({ day, event_name: event.name }));
      add(r, 'events', 1);
      add(r, 'revenue_micros', Math.max(0, event.micros));
      r.unique_installs = count(`${day}\u0000${event.name}`, event.uuid);
    }
  }
  // Day, then the grouping columns: the order of the stored rows' keys (all ASCII here).
  const sorted = [...rows.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, r]) => r);
  return sorted.map((r) => renderRow[report](r as StoredCounters));
}

// --- Export rows of the world --------------------------------------------------------------------

function installRowOf(install: Install): ExportRow {
  return {
    install_uuid: install.uuid,
    install_event_id: install.id,
    ts_ms: install.tsMs - 1_500,
    corrected_ts: install.tsMs,
    received_ms: install.receivedMs,
    install_day: dayOf(install.tsMs),
    platform: 'android',
    partner: install.partner,
    attribution_type: install.type,
    is_reinstall: install.reinstall,
    fraud_reasons: JSON.stringify(install.fraud),
    first_install: install.first,
  };
}

function eventRowOf(world: World, event: Event): ExportRow {
  const install = event.installId === null ? undefined : world.installs.find((i) => i.uuid === event.uuid && i.id === event.installId);
  return {
    event_id: event.id,
    event_name: event.name,
    install_uuid: event.uuid,
    ts_ms: event.tsMs,
    corrected_ts: event.tsMs,
    received_ms: event.receivedMs,
    event_day: dayOf(event.tsMs),
    revenue_usd: event.micros > 0 ? event.micros / 1e6 : null,
    revenue_micros: event.micros,
    partner: install?.partner ?? null,
    attribution_type: install?.type ?? null,
    is_reinstall: install?.reinstall ?? null,
    fraud_reasons: install ? JSON.stringify(install.fraud) : null,
    install_corrected_ts: install?.tsMs ?? null,
    install_event_id: install?.id ?? null,
  };
}

function placed(world: World, appId: string): PlacedRow[] {
  return [
    ...world.installs.map((install) => ({ table: 'installs' as const, appId, receivedMs: install.receivedMs, row: installRowOf(install) })),
    ...world.events.map((event) => ({ table: 'events' as const, appId, receivedMs: event.receivedMs, row: eventRowOf(world, event) })),
  ];
}

// --- Random worlds -------------------------------------------------------------------------------

const PARTNERS = ['google', 'meta', 'organic', 'tiktok'];
const FRAUD = ['ctit_under_10s', 'click_injection', 'honeypot_ip'];
/** Offsets from an install that sit on and beside the retention edges, and some anywhere. */
const EDGES = [1, 7, 8, 30, 31].flatMap((n) => [n * DAY_MS - 1, n * DAY_MS, n * DAY_MS + 1]);
const offset = fc.oneof(fc.constantFrom(...EDGES, 0, 2 * DAY_MS - 1, -5_000), fc.integer({ min: -2 * DAY_MS, max: 40 * DAY_MS }));
/** Revenue: none mostly, whole dollars, odd micro-dollars (an average of two payers on half a micro-dollar). */
const micros = fc.oneof(
  fc.constant(0),
  fc.constant(0),
  fc.constantFrom(1, 999_999, 1_000_001, 2_500_000),
  fc.integer({ min: 1, max: 9_999_999 }),
);
/** An accepted event is received at most an hour before its corrected time (docs/ingestion.md). */
const delay = fc.oneof(fc.constantFrom(-HOUR_MS, 0, HOUR_MS), fc.integer({ min: -HOUR_MS, max: 3 * DAY_MS }));

const uuidArb = fc.record({
  installs: fc.array(
    fc.record({
      // Some a minute after midnight: received up to an hour earlier, on the day before (the dt filter's edge).
      at: fc.oneof(
        fc.integer({ min: 0, max: 35 * DAY_MS }),
        fc.integer({ min: 0, max: 35 }).map((day) => day * DAY_MS + 60_000),
      ),
      delay,
      partner: fc.constantFrom(...PARTNERS),
      probabilistic: fc.boolean(),
      reinstall: fc.boolean(),
      fraud: fc.subarray(FRAUD),
    }),
    { minLength: 0, maxLength: 3 },
  ),
  events: fc.array(
    fc.record({
      name: fc.constantFrom('open', 'purchase', 'level_up'),
      install: fc.option(fc.nat(), { nil: null }),
      offset,
      delay,
      micros,
    }),
    { maxLength: 6 },
  ),
});

type UuidSpec = typeof uuidArb extends fc.Arbitrary<infer T> ? T : never;

/** Ids are short and repeat across uuids (an event_id is unique within its install_uuid only). */
const IDS = 'abcdefghijk'.split('');

function worldOf(uuids: readonly UuidSpec[]): World {
  const installs: Install[] = [];
  const events: Event[] = [];
  uuids.forEach((spec, u) => {
    const uuid = `u${u}`;
    const ids = [...IDS];
    const own = [...spec.installs]
      .sort((a, b) => a.at - b.at)
      .map((i, k): Install => {
        const tsMs = START_MS + i.at;
        return {
          uuid,
          id: ids.shift() ?? `i${k}`,
          tsMs,
          receivedMs: tsMs + i.delay,
          partner: i.partner,
          type: i.partner === 'organic' ? 'organic' : i.probabilistic ? 'probabilistic' : 'deterministic',
          reinstall: k > 0 || i.reinstall,
          fraud: i.fraud,
          first: k === 0,
        };
      });
    installs.push(...own);
    for (const e of spec.events) {
      // An event names one of its uuid's installs, or none (it came before them): then it waits for the first.
      const install = e.install === null || own.length === 0 ? undefined : own[e.install % own.length];
      const base = install ?? own[0];
      const tsMs = (base?.tsMs ?? START_MS) + e.offset;
      events.push({
        uuid,
        id: ids.shift() ?? `e${events.length}`,
        name: e.micros > 0 ? 'purchase' : e.name,
        tsMs,
        receivedMs: tsMs + e.delay,
        micros: e.micros,
        installId: install?.id ?? null,
      });
    }
  });
  return { installs, events };
}

const scopeArb = fc
  .record({
    first: fc.oneof(fc.integer({ min: -3, max: 45 }), fc.integer({ min: 0, max: 3 })),
    length: fc.integer({ min: 0, max: 45 }),
    // Local days of zones ahead of and behind UTC, two of them across their March change.
    timeZone: fc.constantFrom('UTC', 'Asia/Tokyo', 'Europe/Berlin', 'America/Los_Angeles'),
  })
  .map(
    ({ first, length, timeZone }): ReportScope => ({
      appId: APP,
      timeZone,
      firstDay: dayOf(START_MS + first * DAY_MS),
      lastDay: dayOf(START_MS + (first + length) * DAY_MS),
    }),
  );

async function reportRows(tables: DuckDbTables, report: ReportName, scope: ReportScope) {
  const query = reportQuery(report);
  return (await tables.report(query, reportParameterValues(query, scope))).rows;
}

describe('the report SQL on DuckDB', () => {
  it('equals the rules for random installs, events, windows and edges, each of the four reports', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(uuidArb, { minLength: 1, maxLength: 7 }),
        fc.array(uuidArb, { maxLength: 2 }),
        scopeArb,
        async (uuids, others, scope) => {
          const world = worldOf(uuids);
          const folder = exportFolder();
          try {
            writeExportFiles(folder.dir, [...placed(world, APP), ...placed(worldOf(others), OTHER_APP)]);
            const tables = await DuckDbTables.load(folder.dir);
            try {
              for (const report of REPORT_NAMES)
                expect([report, await reportRows(tables, report, scope)]).toEqual([report, oracle(report, world, scope)]);
            } finally {
              tables.close();
            }
          } finally {
            folder.remove();
          }
        },
      ),
      { numRuns: 40 },
    );
  }, 120_000);

  describe('on one hand-made app', () => {
    const folder = exportFolder();
    let tables: DuckDbTables;
    const install = (over: Partial<Install>): Install => ({
      uuid: 'u1',
      id: 'i1',
      tsMs: START_MS + 10 * HOUR_MS,
      receivedMs: START_MS + 10 * HOUR_MS,
      partner: 'meta',
      type: 'deterministic',
      reinstall: false,
      fraud: [],
      first: true,
      ...over,
    });
    const first = install({});
    const reinstall = install({
      id: 'i2',
      tsMs: first.tsMs + 3 * DAY_MS,
      receivedMs: first.tsMs + 3 * DAY_MS,
      reinstall: true,
      first: false,
      partner: 'google',
    });
    const organic = install({ uuid: 'u2', id: 'i1', partner: 'organic', type: 'organic', fraud: ['ctit_under_10s'] });
    const event = (over: Partial<Event>): Event => ({
      uuid: 'u1',
      id: 'e',
      name: 'open',
      tsMs: first.tsMs,
      receivedMs: first.tsMs,
      micros: 0,
      installId: 'i1',
      ...over,
    });
    const world: World = {
      installs: [first, reinstall, organic],
      events: [
        // Before any install of u1: applied to its first install (meta), at exactly one day after it.
        event({
          id: 'held',
          name: 'purchase',
          installId: null,
          tsMs: first.tsMs + DAY_MS,
          receivedMs: first.tsMs - HOUR_MS + DAY_MS,
          micros: 1_000_001,
        }),
        // The reinstall's own: google's revenue, and its retention one millisecond short of 7 days.
        event({
          id: 'r7',
          name: 'purchase',
          installId: 'i2',
          tsMs: reinstall.tsMs + 7 * DAY_MS - 1,
          receivedMs: reinstall.tsMs + 7 * DAY_MS,
          micros: 2_000_000,
        }),
        // u2 (organic) pays a micro-dollar on the same day, also a day after its install.
        event({ uuid: 'u2', id: 'held', name: 'purchase', installId: 'i1', tsMs: first.tsMs + DAY_MS, micros: 1 }),
        event({ uuid: 'u2', id: 'd30', tsMs: first.tsMs + 30 * DAY_MS }),
      ],
    };

    beforeAll(async () => {
      writeExportFiles(folder.dir, placed(world, APP));
      tables = await DuckDbTables.load(folder.dir);
    });
    afterAll(() => {
      tables?.close();
      folder.remove();
    });

    const scope: ReportScope = { appId: APP, firstDay: '2026-03-01', lastDay: '2026-04-30' };

    it('counts installs, organic ones, reinstalls and fraud flags by install day, partner and type', async () => {
      expect(await reportRows(tables, 'attribution', scope)).toEqual([
        { day: '2026-03-01', partner: 'meta', attribution_type: 'deterministic', installs: 1, organic: 0, reinstalls: 0, fraud_flagged: 0 },
        { day: '2026-03-01', partner: 'organic', attribution_type: 'organic', installs: 1, organic: 1, reinstalls: 0, fraud_flagged: 1 },
        {
          day: '2026-03-04',
          partner: 'google',
          attribution_type: 'deterministic',
          installs: 1,
          organic: 0,
          reinstalls: 1,
          fraud_flagged: 0,
        },
      ]);
    });

    it('applies an event that came before its install to the first install, and retention on [n, n + 1) days', async () => {
      expect(await reportRows(tables, 'cohorts', scope)).toEqual([
        { day: '2026-03-01', installs: 2, d1: 2, d7: 0, d30: 1, d1_rate: 1, d7_rate: 0, d30_rate: 0.5 },
        { day: '2026-03-04', installs: 1, d1: 0, d7: 0, d30: 0, d1_rate: 0, d7_rate: 0, d30_rate: 0 },
      ]);
    });

    it('puts revenue under the partner of the install it is applied to, in dollars, with the average per payer rounded to the micro-dollar', async () => {
      expect(await reportRows(tables, 'revenue', scope)).toEqual([
        { day: '2026-03-02', partner: 'meta', purchases: 1, revenue_usd: 1.000001, arppu_usd: 1.000001 },
        { day: '2026-03-02', partner: 'organic', purchases: 1, revenue_usd: 0.000001, arppu_usd: 0.000001 },
        { day: '2026-03-11', partner: 'google', purchases: 1, revenue_usd: 2, arppu_usd: 2 },
      ]);
    });

    it('counts every event by day and name, held ones included, with distinct installs', async () => {
      expect(await reportRows(tables, 'events', scope)).toEqual([
        { day: '2026-03-02', event_name: 'purchase', events: 2, unique_installs: 2, revenue_usd: 1.000002 },
        { day: '2026-03-11', event_name: 'purchase', events: 1, unique_installs: 1, revenue_usd: 2 },
        { day: '2026-03-31', event_name: 'open', events: 1, unique_installs: 1, revenue_usd: 0 },
      ]);
    });

    it("answers only the window's days, whole days, as the Reporting API reads since_ms and until_ms", async () => {
      // until_ms is exclusive: a window ending at midnight leaves that day out.
      const window = reportScope(
        APP,
        { since_ms: String(Date.parse('2026-03-04T23:59:59Z')), until_ms: String(Date.parse('2026-03-12T00:00:00Z')) },
        START_MS,
      );
      expect(window).toEqual({ appId: APP, timeZone: 'UTC', firstDay: '2026-03-04', lastDay: '2026-03-11' });
      expect(await reportRows(tables, 'revenue', window)).toEqual([
        { day: '2026-03-11', partner: 'google', purchases: 1, revenue_usd: 2, arppu_usd: 2 },
      ]);
      expect(await reportRows(tables, 'attribution', { ...scope, appId: OTHER_APP })).toEqual([]);
    });
  });
});

describe('the report queries', () => {
  it('name each parameter once per ?, the app before each table it reads', () => {
    for (const report of REPORT_NAMES) {
      const query = reportQuery(report);
      expect(query.sql.split('?').length - 1).toBe(query.parameters.length);
      expect(query.parameters[0]).toBe('app_id');
      expect(query.sql).not.toMatch(/\{\{/);
      // Comments without quotes: nothing a parser or Athena's parameter binding could take for a literal.
      for (const comment of query.sql.match(/--[^\n]*/g) ?? []) expect(comment).not.toMatch(/['"?]/);
    }
    expect(reportQuery('revenue').parameters).toEqual(['app_id', 'app_id', 'first_day', 'time_zone', 'first_day', 'last_day']);
    expect(reportParameterValues(reportQuery('attribution'), { appId: 'a', firstDay: '2026-01-01', lastDay: '2026-01-31' })).toEqual([
      'a',
      '2026-01-01',
      'UTC',
      '2026-01-01',
      '2026-01-31',
    ]);
    expect(
      reportParameterValues(reportQuery('events'), { appId: 'a', timeZone: 'Asia/Tokyo', firstDay: '2026-01-01', lastDay: '2026-01-31' }),
    ).toEqual(['a', '2026-01-01', 'Asia/Tokyo', '2026-01-01', '2026-01-31']);
  });

  it("return the interface's columns in its order", async () => {
    const folder = exportFolder();
    const tables = await DuckDbTables.load(folder.dir);
    try {
      for (const report of REPORT_NAMES) {
        const query = reportQuery(report);
        const result = await tables.report(
          query,
          reportParameterValues(query, { appId: APP, firstDay: '2026-01-01', lastDay: '2026-12-31' }),
        );
        expect(result.columns).toEqual(REPORT_COLUMNS[report].map((c) => c.name));
        expect(result.rows).toEqual([]);
      }
    } finally {
      tables.close();
      folder.remove();
    }
  });

  it('are the stack’s four named queries, each describing its parameters in order', () => {
    const named = athenaNamedQueries();
    expect(named.map((q) => q.name)).toEqual(['report-attribution', 'report-revenue', 'report-cohorts', 'report-events']);
    for (const query of named) {
      expect(query.sql).toBe(reportQuery(query.name.replace('report-', '') as ReportName).sql);
      expect(query.description).toMatch(/Parameters, in order: the app's id/);
      expect(query.description.length).toBeLessThanOrEqual(1024);
    }
  });

  it('refuse a window as the Reporting API does', () => {
    expect(() => reportScope(APP, { since_ms: 'yesterday' }, START_MS)).toThrow('invalid_since_until');
    expect(() => reportScope(APP, { since_ms: '0', until_ms: String(366 * DAY_MS) }, START_MS)).toThrow('window_too_large');
    expect(reportScope(APP, {}, START_MS)).toEqual({
      appId: APP,
      timeZone: 'UTC',
      firstDay: dayOf(START_MS - 30 * DAY_MS),
      lastDay: dayOf(START_MS - 1),
    });
    // The Tokyo day 2026-03-02 starts at 2026-03-01T15:00Z.
    expect(
      reportScope(
        APP,
        { since_ms: String(Date.parse('2026-03-01T15:00:00Z')), until_ms: String(Date.parse('2026-03-02T15:00:00Z')) },
        START_MS,
        'Asia/Tokyo',
      ),
    ).toEqual({
      appId: APP,
      timeZone: 'Asia/Tokyo',
      firstDay: '2026-03-02',
      lastDay: '2026-03-02',
    });
  });

  it('quote a literal for Athena', () => {
    expect(sqlLiteral("it's")).toBe("'it''s'");
  });
});
