import { APPLE_KEYS } from '../../../functions/domain/skan/postback-keys';
import type { SkanApp } from '../../../functions/domain/skan/postback-match';
import { judgePostback } from '../../../functions/domain/skan/postback-record';
import type { SkanSchema } from '../../../functions/domain/skan/schema';
import {
  countPostback,
  type DaySummary,
  decodeSummary,
  encodeSummary,
  type InvalidTotal,
  type SkanItem,
  type SkanReportRows,
  skanRows,
  summaryOf,
} from '../../../functions/domain/skan/skan-report';
import { changed, SKADNETWORK_EXAMPLES } from './postbacks';

const [FINE, COARSE] = SKADNETWORK_EXAMPLES.map((e) => e.postback);
const APP: SkanApp = { app_id: 'app1', time_zone: 'America/Los_Angeles' };
const SCHEMA = { fine: [{ value: 63, revenue_usd: [0.001, 0.002] }], coarse: [] } as unknown as SkanSchema;
// 2025-03-10 04:00 UTC is still the 9th in Los Angeles.
const AT = Date.parse('2025-03-10T04:00:00Z');

function item(id: string, over: Partial<SkanItem> = {}): SkanItem {
  return {
    transaction_id: id,
    day: '2025-03-09',
    kind: 'skadnetwork',
    ad_network_id: 'com.example',
    partner: 'com.example',
    source_identifier: '1',
    postback_sequence_index: 0,
    fidelity_type: 1,
    conversion_type: 'download',
    value: 'fine',
    estimate_micros: 1_500,
    received_ms: AT,
    ...over,
  };
}

function memoryRows(days: Record<string, DaySummary>, items: Record<string, SkanItem[]>, invalid: Record<string, InvalidTotal> = {}) {
  const saved: [string, number, string][] = [];
  const reads: string[] = [];
  const rows: SkanReportRows = {
    summaries: async () => ({
      days: new Map(Object.entries(days)),
      invalid: new Map(Object.entries(invalid)),
    }),
    items: async (_app, day) => {
      reads.push(day);
      return items[day] ?? [];
    },
    saveSummary: async (_app, day, written, encoded) => {
      saved.push([day, written, encoded]);
    },
  };
  return { rows, saved, reads };
}

describe('counting a postback', () => {
  it("writes the item on the app's local day of the instant given, with the schema version's estimate, then bumps written", async () => {
    const calls: string[] = [];
    const items: SkanItem[] = [];
    const outcome = await countPostback(
      {
        apps: async () => APP,
        schemas: { active: async () => ({ version: 4, schema: SCHEMA, updated_ms: 0 }) },
        report: {
          putItem: async (_app, written) => {
            calls.push('put');
            items.push(written);
          },
          addWritten: async (_app, day) => void calls.push(`written ${day}`),
          addInvalid: async () => void calls.push('invalid'),
        },
      },
      judgePostback(FINE, APPLE_KEYS, AT + 86_400_000)!,
      AT,
    );
    expect(outcome).toEqual({ kind: 'counted', appId: 'app1', day: '2025-03-09' });
    expect(calls).toEqual(['put', 'written 2025-03-09']);
    expect(items[0]).toMatchObject({ day: '2025-03-09', value: 'fine', fine: 63, estimate_micros: 1_500, schema_version: 4 });
  });

  it("adds a tampered postback to its app's invalid total of the day only, expiring with its record: no row, no partner", async () => {
    const calls: string[] = [];
    const outcome = await countPostback(
      {
        apps: async () => APP,
        schemas: { active: async () => undefined },
        report: {
          putItem: async () => void calls.push('put'),
          addWritten: async () => void calls.push('written'),
          addInvalid: async (_app, day, expiresAt) => void calls.push(`invalid ${day} ${expiresAt}`),
        },
      },
      judgePostback(changed(COARSE, { 'did-win': false }), APPLE_KEYS, AT)!,
      AT,
    );
    expect(outcome.kind).toBe('invalid');
    expect(calls).toEqual([`invalid 2025-03-09 ${Math.floor(AT / 1000) + 30 * 86_400}`]);
  });
});

describe('reading the report', () => {
  it('uses a built summary as it is, and rebuilds a stale one from its items, writing it back at the written it read', async () => {
    const built = summaryOf([item('a'), item('b', { source_identifier: '2', value: 'none', estimate_micros: 0 })]);
    const { rows, saved, reads } = memoryRows(
      {
        '2025-03-08': { written: 2, built: 2, rows: encodeSummary(built) },
        '2025-03-09': { written: 5, built: 3, rows: encodeSummary(new Map()) },
      },
      { '2025-03-09': [item('c', { day: '2025-03-09', partner: 'meta', conversion_type: 'redownload', value: 'coarse' })] },
      {
        '2025-03-09': { postbacks: 4, expiresAt: Math.floor(AT / 1000) + 30 * 86_400 },
        // Its records are gone (TTL deletes late, and never locally): its count is too.
        '2025-03-08': { postbacks: 7, expiresAt: Math.floor(AT / 1000) },
        // Outside the window.
        '2025-04-01': { postbacks: 9, expiresAt: Math.floor(AT / 1000) + 30 * 86_400 },
      },
    );
    const { rows: report, invalidPostbacks } = await skanRows(rows, 'app1', { firstDay: '2025-03-01', lastDay: '2025-03-31' }, AT);
    expect(invalidPostbacks).toBe(4);
    expect(reads).toEqual(['2025-03-09']);
    expect(saved.map(([day, written, encoded]) => [day, written, [...decodeSummary(encoded).values()].map((s) => s.postbacks)])).toEqual([
      ['2025-03-09', 5, [1]],
    ]);
    expect(
      report.map((row) => [row.day, row.partner, row.source_identifier, row.postbacks, row.installs, row.redownloads, row.invalid]),
    ).toEqual([
      ['2025-03-08', 'com.example', '1', 1, 1, 0, undefined],
      ['2025-03-08', 'com.example', '2', 1, 1, 0, undefined],
      ['2025-03-09', 'meta', '1', 1, 0, 1, undefined],
    ]);
    // 1,500 micro-dollars is 0.0015: rounded to cents, 0.
    expect(report[0]?.estimated_revenue_usd).toBe(0);
  });

  it('rounds the sum of the estimates to cents, not each estimate', async () => {
    // Two estimates of 0.4 cents: each rounds to 0, their sum (0.8 cents) to 1 cent.
    const { rows } = memoryRows(
      { '2025-03-09': { written: 2 } },
      { '2025-03-09': [item('a', { estimate_micros: 4_000 }), item('b', { estimate_micros: 4_000 })] },
    );
    const [row] = (await skanRows(rows, 'app1', { firstDay: '2025-03-09', lastDay: '2025-03-09' }, AT)).rows;
    expect(row?.estimated_revenue_usd).toBe(0.01);
  });
});
