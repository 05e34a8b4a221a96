import fc from 'fast-check';
import { MemoryFxRates } from '../../../functions/adapters/memory/fx-rates';
import type { AuditLine } from '../../../functions/domain/audit/types';
import { takeImpressions } from '../../../functions/domain/ingest/ad-revenue-upload';
import {
  changedMaxPull,
  MAX_ANSWER_BYTES,
  MAX_REPORT_KEY_SECRET,
  MaxPullError,
  type MaxPullPorts,
  parseCsv,
  pullDay,
  reportCsvUrl,
  reportRequestUrl,
  reportRows,
} from '../../../functions/domain/ingest/max-pull';
import type { TakeBatchPorts } from '../../../functions/domain/ingest/take-batch';
import { MemoryCapStore } from '../../support/memory-cap-store';

const DAY = '2026-03-09';
const NOW = Date.UTC(2026, 2, 10, 10, 15);
const HEADER = [
  'Date',
  'Ad Unit ID',
  'Ad Unit Name',
  'Waterfall',
  'Ad Format',
  'Placement',
  'Country',
  'Device Type',
  'IDFA',
  'IDFV',
  'User ID',
  'Revenue',
  'Network',
];
const KNOWN = ['0b9f8c6a-1c2d-4e5f-8a9b-0c1d2e3f4a5b', '7d1e2f3a-4b5c-4d6e-8f70-8192a3b4c5d6', 'c0ffee00-1111-4222-8333-444455556666'];
const UNKNOWN = 'deadbeef-0000-4000-8000-000000000000';

/** An independent CSV writer: every field quoted, quotes doubled. */
const csvOf = (records: readonly (readonly string[])[]) =>
  `${records.map((record) => record.map((field) => `"${field.replaceAll('"', '""')}"`).join(',')).join('\r\n')}\r\n`;

interface Row {
  user: string;
  second: number;
  revenueMicros: number;
  format: string;
  placement: string;
}
const maxRow = (row: Row): string[] => [
  `${DAY} ${new Date(Date.UTC(2026, 2, 9) + row.second * 1000).toISOString().slice(11, 19)}.25`,
  'ad-unit-1',
  'Main, "rewarded"',
  'Default',
  row.format,
  row.placement,
  'us',
  'phone',
  '',
  '',
  row.user,
  String(row.revenueMicros / 1e6),
  'APPLOVIN_EXCHANGE',
];

/** takeImpressions over in-memory stores, as the function takes them; the audit lines it stored. */
function world(csv: string) {
  const lines: AuditLine[] = [];
  const batch: TakeBatchPorts = {
    caps: new MemoryCapStore(),
    audit: { putBatch: async (_key, _batch, record) => void lines.push(...record.lines()), bucket: 'audit' },
    aggregation: { send: async () => undefined },
    enrichment: { send: () => Promise.reject(new Error('never')) },
    rates: new MemoryFxRates({}),
    failed: () => undefined,
  };
  const urls: string[] = [];
  const ports: MaxPullPorts = {
    download: async (url, maxBytes) => {
      urls.push(url);
      return maxBytes === MAX_ANSWER_BYTES ? JSON.stringify({ status: 200, ad_revenue_report_url: 'https://csv.example/r.csv' }) : csv;
    },
    knownInstall: async (uuid) => KNOWN.includes(uuid),
    take: async (impressions) =>
      (
        await takeImpressions(batch, {
          appId: 'app_1',
          company: { company_id: 'com_1', monthly_cap: null, suspended: false },
          raw: Buffer.from(JSON.stringify(impressions)),
          body: { impressions },
          clientIp: '0.0.0.0',
          receivedMs: NOW,
        })
      ).results,
  };
  const pull = () =>
    pullDay(ports, {
      appId: 'app_1',
      apiKey: 'k&y',
      day: DAY,
      platform: 'ios',
      application: 'com.example.game',
      baseUrl: 'https://r.example/max/userAdRevenueReport',
    });
  return { lines, urls, pull };
}

/** What the aggregator counts: each accepted impression_id of an install once, in micro-dollars. */
function countedMicros(lines: readonly AuditLine[]): number {
  const seen = new Map<string, number>();
  for (const line of lines) {
    if (line.status !== 'accepted') continue;
    const event = line.event as { install_uuid: string; revenue_usd: number; ad_revenue: { impression_id: string } };
    seen.set(`${event.install_uuid}|${event.ad_revenue.impression_id}`, Math.round(event.revenue_usd * 1e6));
  }
  return [...seen.values()].reduce((sum, micros) => sum + micros, 0);
}

describe('the daily MAX pull', () => {
  it('asks MAX for one app’s UTC day per impression, and reads the CSV address from its answer', () => {
    const url = new URL(
      reportRequestUrl('https://r.applovin.com/max/userAdRevenueReport', {
        apiKey: 'a b&c',
        day: DAY,
        platform: 'android',
        application: 'com.x',
      }),
    );
    expect(Object.fromEntries(url.searchParams)).toEqual({
      api_key: 'a b&c',
      date: DAY,
      platform: 'android',
      application: 'com.x',
      aggregated: 'false',
    });
    expect(reportCsvUrl('{"status":200,"ad_revenue_report_url":"https://a.example/x.csv"}')).toBe('https://a.example/x.csv');
    for (const answer of ['<html>', '{}', '{"ad_revenue_report_url":"file:///etc/passwd"}', 'null']) {
      expect(() => reportCsvUrl(answer)).toThrow(MaxPullError);
      expect(() => reportCsvUrl(answer)).toThrow(/^bad_report_answer/);
    }
  });

  it('parses any fields an RFC 4180 writer makes back to the same fields', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.string({ unit: 'binary' }), { minLength: 2, maxLength: 5 }), { maxLength: 20 }), (records) => {
        expect(parseCsv(csvOf(records), 1000)).toEqual(records);
      }),
      { numRuns: 50 },
    );
  });

  it('refuses a report without a needed column, with an unclosed quote, or with too many rows', () => {
    expect(() => reportRows(csvOf([HEADER.filter((h) => h !== 'User ID')]), 'app_1', DAY)).toThrow(/^missing_column: User ID/);
    expect(() => parseCsv('a,"b\n', 10)).toThrow(/^bad_csv/);
    expect(() => parseCsv('a\nb\nc\n', 2)).toThrow(/^too_many_rows/);
  });

  it('counts the revenue of the rows of known installs once, whatever the duplicates, and the same again on a re-pull', async () => {
    const row = fc.record({
      user: fc.constantFrom(...KNOWN, UNKNOWN, ''),
      second: fc.integer({ min: 0, max: 86_399 }),
      revenueMicros: fc.integer({ min: 0, max: 2_000_000 }),
      format: fc.constantFrom('BANNER', 'INTER', 'REWARD', 'MREC', 'APPOPEN', 'NATIVE', 'WHATEVER'),
      placement: fc.constantFrom('', 'level_end', 'shop, top'),
    });
    await fc.assert(
      fc.asyncProperty(fc.array(row, { maxLength: 60 }), fc.array(fc.nat(), { maxLength: 10 }), async (rows, repeats) => {
        // Some rows twice: twin impressions MAX reports alike.
        const all = [...rows, ...repeats.flatMap((i) => (rows.length ? [rows[i % rows.length] as Row] : []))];
        const { lines, pull } = world(csvOf([HEADER, ...all.map(maxRow)]));
        const oracle = all.filter((r) => KNOWN.includes(r.user)).reduce((sum, r) => sum + r.revenueMicros, 0);
        const first = await pull();
        expect(countedMicros(lines)).toBe(oracle);
        expect(first.rows).toBe(all.length);
        expect(first.accepted).toBe(all.filter((r) => KNOWN.includes(r.user)).length);
        expect(first.reasons).toEqual({
          ...(all.some((r) => r.user === '') ? { no_user_id: all.filter((r) => r.user === '').length } : {}),
          ...(all.some((r) => r.user === UNKNOWN) ? { unknown_install: all.filter((r) => r.user === UNKNOWN).length } : {}),
        });
        // The same day pulled again: the same impression ids, so nothing more is counted.
        await pull();
        expect(countedMicros(lines)).toBe(oracle);
      }),
      { numRuns: 40 },
    );
  });

  it('rejects a row of another day, with no date, or with a revenue that is not a number, each with its reason', async () => {
    const good: Row = { user: KNOWN[0] as string, second: 10, revenueMicros: 5000, format: 'INTER', placement: '' };
    const other = maxRow(good);
    other[0] = '2026-03-08 23:59:59';
    const noDate = maxRow(good);
    noDate[0] = 'yesterday';
    const badRevenue = maxRow(good);
    badRevenue[11] = '-1';
    const tooMuch = maxRow({ ...good, revenueMicros: 150_000_000 });
    const { pull, lines } = world(csvOf([HEADER, maxRow(good), other, noDate, badRevenue, tooMuch]));
    expect(await pull()).toEqual({
      app_id: 'app_1',
      day: DAY,
      rows: 5,
      accepted: 1,
      rejected: 4,
      reasons: { other_day: 1, bad_date: 1, bad_revenue: 1, bad_ad_revenue: 1 },
    });
    expect((lines.find((line) => line.status === 'accepted')?.event as { ad_revenue: unknown } | undefined)?.ad_revenue).toEqual({
      source: 'applovin_max',
      network: 'APPLOVIN_EXCHANGE',
      format: 'interstitial',
      ad_unit: 'ad-unit-1',
      revenue: 0.005,
      currency: 'USD',
      precision: 'estimated',
      impression_id: expect.stringMatching(/^max\.[0-9a-f]{40}\.1$/),
    });
  });

  it('turns the pull on only with a secret under the prefix, an application and a platform, kept across changes', () => {
    const settings = { on: true, report_key_secret: 'attribution/max-report-key/game', application: 'com.x', platform: 'ios' as const };
    expect(changedMaxPull(undefined, {})).toBeUndefined();
    expect(changedMaxPull(undefined, { on: true, application: 'com.x', platform: 'ios' })).toEqual({ missing: 'max-report-key-secret' });
    expect(changedMaxPull(undefined, { on: true, report_key_secret: settings.report_key_secret, platform: 'ios' })).toEqual({
      missing: 'max-application',
    });
    expect(changedMaxPull(undefined, { report_key_secret: settings.report_key_secret, application: 'com.x' })).toEqual({
      missing: 'max-platform',
    });
    expect(changedMaxPull(undefined, { ...settings })).toEqual(settings);
    expect(changedMaxPull(settings, { on: false })).toEqual({ ...settings, on: false });
    expect(changedMaxPull({ ...settings, on: false }, { application: 'com.y' })).toEqual({ ...settings, on: false, application: 'com.y' });
    expect(MAX_REPORT_KEY_SECRET.test('attribution/max-report-key/game-1')).toBe(true);
    for (const name of [
      'attribution/max-report-key/',
      'attribution/other/game',
      'prod/attribution/max-report-key/x',
      'attribution/max-report-key/a b',
    ]) {
      expect({ name, ok: MAX_REPORT_KEY_SECRET.test(name) }).toEqual({ name, ok: false });
    }
  });
});
