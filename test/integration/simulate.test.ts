// The traffic simulator end to end: a local stack that takes client addresses from
// X-Forwarded-For (TRUST_PROXY=1), the simulator run in-process at a small scale with --check,
// no difference between the four reports and what it sent, and reports with something in them.
// Issue 22, item 4, on the same traffic (duplicates and retried batches, reinstalls, fraud,
// probabilistic matches, events before their install, retention on day 1, 7 and 30): exported
// (admin export run), the four report queries on DuckDB (admin sql --report) equal, row for row,
// to the Reporting API; SELECT count(*) FROM events equals the events the service accepted. One
// simulation for both keeps CI within its budget (CONTRIBUTING.md, "The CI budget").

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runAdmin } from '../../bin/admin';
import { REPORT_NAMES } from '../../functions/domain/reports/reports';
import { type AdServicesStub, startAdServicesStub } from '../../local/adservices-stub';
import { fetchReport, fetchReports, type ReportRow, type Reports } from '../../sim/check';
import { fetchPerformance, type PerfQuery } from '../../sim/performance';
import { type SimulationResult, simulate } from '../../sim/run';
import { fetchSkanReport } from '../../sim/skan';
import { failed, summaryJson, summaryText } from '../../sim/summary';
import { type LocalStack, startLocalStack } from '../support/local-stack';

let stack: LocalStack;
let adServices: AdServicesStub;
let result: SimulationResult;
const reports: Reports[] = [];
const performance = async (app: number, query: PerfQuery): Promise<ReportRow[]> => {
  const rows = await fetchPerformance(result.base_url, result.apps[app]?.server_key ?? '', result.window, query);
  if (!rows) throw new Error('the performance report answered 404');
  return rows;
};

beforeAll(async () => {
  // Apple's attribution API as npm start stands it in (local/adservices-stub.ts).
  adServices = await startAdServicesStub();
  stack = await startLocalStack({ trustProxy: true, internet: { ADSERVICES_API_URL: adServices.url } });
  // An operator's rates for today, as the README tour sets them before a newcomer runs the check:
  // the simulator keeps them, and expects its events of today converted at them.
  const dir = mkdtempSync(join(tmpdir(), 'sim-test-fx-'));
  writeFileSync(join(dir, 'rates.json'), JSON.stringify({ EUR: 1.08, JPY: 0.0066 }));
  await runAdmin(['fx', 'set', '--date', new Date().toISOString().slice(0, 10), '--file', join(dir, 'rates.json')]);
  rmSync(dir, { recursive: true });
  // A seed whose plan has SDKs that upload a session before their install (the simulator does it
  // for a few organic installs): events the service holds until the install, install_event_id null.
  result = await simulate({ seed: 'raw-sql-4', apps: 2, installs: 30, days: 45, check: true });
  for (const app of result.apps) reports.push(await fetchReports(result.base_url, app.server_key, result.window));
  // Every hour with data, the current one included; it waits for the event stream to be final up to now.
  for (const app of result.apps) await runAdmin(['export', 'run', '--app-key', app.app_key]);
  // Since the simulator sends ad revenue, a run beside another suite can pass 300 s on 2 cores.
}, 480_000);
afterAll(async () => {
  await stack?.stop();
  await adServices?.close();
});

const total = (rows: Reports[keyof Reports], column: string) => rows.reduce((n, row) => n + Number(row[column]), 0);

describe('npm run simulate -- --check', () => {
  it('finds no difference between the four reports and what it sent, and everything went as arranged', () => {
    expect(result.addressing).toBe('many');
    expect(result.problems).toEqual([]);
    expect(result.differences).toEqual([]);
    expect(failed(result)).toBe(false);
  });

  it("prints each app's keys, what it sent and what it did about back-dated installs", () => {
    const text = summaryText(result);
    for (const app of result.apps) expect(text).toContain(app.server_key);
    expect(text).toContain('every back-dated install');
    expect(text).toContain(
      'Check: all four reports of every app match what was sent, and so do 32 performance report queries and the SKAN report.',
    );
    expect(text).toContain('installs with an AdServices token');
    expect(text).toContain('days in America/New_York');
    expect(JSON.parse(JSON.stringify(summaryJson(result)))).toMatchObject({ seed: 'raw-sql-4', checked: true, differences: [] });
  });

  it('leaves reports with several partners, organic installs, reinstalls, fraud flags and revenue', () => {
    for (const report of reports) {
      const partners = new Set(report.attribution.filter((r) => r.attribution_type === 'deterministic').map((r) => r.partner));
      expect(partners.size).toBeGreaterThanOrEqual(3);
      expect(total(report.attribution, 'organic')).toBeGreaterThan(0);
      expect(total(report.attribution, 'reinstalls')).toBeGreaterThan(0);
      expect(total(report.attribution, 'fraud_flagged')).toBeGreaterThan(0);
      expect(total(report.revenue, 'revenue_usd')).toBeGreaterThan(0);
      expect(new Set(report.events.map((r) => r.event_name)).size).toBeGreaterThanOrEqual(5);
    }
    // The second app matches by address where the click id was lost.
    expect(reports[1].attribution.some((r) => r.attribution_type === 'probabilistic')).toBe(true);
  });

  it('leaves cohorts whose retention decays from D1 to D7 to D30', () => {
    const cohorts = reports.flatMap((r) => r.cohorts);
    const [d1, d7, d30] = ['d1', 'd7', 'd30'].map((column) => total(cohorts, column));
    expect(d1).toBeGreaterThan(d7);
    expect(d7).toBeGreaterThan(d30);
    expect(d30).toBeGreaterThan(0);
  });

  it('drops bots and data-centre clicks, and lets a click flood only up to the rate limit', () => {
    for (const app of result.apps) {
      expect(app.clicks.dropped.bot).toBeGreaterThan(0);
      expect(app.clicks.dropped.data_centre).toBeGreaterThan(0);
      expect(app.clicks.rate_limited).toBeGreaterThan(0);
      expect(app.events.retried_identical + app.events.retried_reencoded).toBeGreaterThan(0);
    }
  });
});

describe('npm run simulate -- --check: the performance report', () => {
  it('found every part of issue 23 in the service and compared eight queries per app, from the day rows and from the day pages', () => {
    expect(result.features).toEqual({
      time_zones: true,
      currencies: true,
      cost: true,
      performance: true,
      skan: true,
      apple_ads: true,
      ad_revenue_upload: true,
    });
    expect(result.apps.map((a) => a.time_zone)).toEqual(['America/New_York', 'UTC']);
    for (const app of result.apps) {
      expect(app.performance_checks).toHaveLength(16);
      expect(app.performance_checks).toContain('performance?group_by=platform&country=US');
      expect(app.performance_checks).toContain('performance?group_by=campaign,country (day pages)');
      // Purchases in euros and yen were taken and converted, and the one in an unknown currency refused.
      expect(app.events.in_other_currencies).toBeGreaterThan(0);
      expect(app.cost.rows).toBeGreaterThan(10);
      expect(app.cost.restated).toBeGreaterThan(0);
    }
  });

  it('holds several campaigns, countries and both platforms, with cost, eCPI varying by partner and ROAS', async () => {
    for (const [i] of result.apps.entries()) {
      const byCampaign = await performance(i, { groupBy: ['campaign', 'country'] });
      expect(
        new Set(byCampaign.filter((r) => Number(r.installs) > 0 && r.campaign !== '(none)').map((r) => r.campaign)).size,
      ).toBeGreaterThanOrEqual(4);
      expect(new Set(byCampaign.filter((r) => Number(r.installs) > 0).map((r) => r.country)).size).toBeGreaterThanOrEqual(3);
      const byPlatform = await performance(i, { groupBy: ['platform'] });
      expect(
        byPlatform
          .filter((r) => Number(r.installs) > 0)
          .map((r) => r.platform)
          .sort(),
      ).toEqual(['android', 'ios']);
      const byPartner = await performance(i, { groupBy: ['partner'] });
      const paid = byPartner.filter((r) => Number(r.installs) > Number(r.organic) && Number(r.cost_usd) > 0);
      expect(paid.length).toBeGreaterThanOrEqual(3);
      expect(new Set(paid.map((r) => r.ecpi_usd)).size).toBe(paid.length);
      const today = await performance(i, { groupBy: ['day', 'partner'] });
      expect(today.some((r) => Number(r.roas_d0) > 0)).toBe(true);
      // Cohorts of 45 days ago are final; today's are not.
      expect(today.some((r) => r.d30_mature === true && Number(r.installs) > 0)).toBe(true);
      const latest = today
        .map((r) => String(r.day))
        .sort()
        .at(-1);
      for (const row of today.filter((r) => r.day === latest)) expect(row.d0_mature).toBe(false);
    }
  });
});

describe('npm run simulate -- --check: ad revenue', () => {
  const sum = (rows: ReportRow[], column: string) => rows.reduce((n, row) => n + Number(row[column]), 0);

  it('sent impressions by the SDK and by the server, some twice, and the reports count each once, equal to the oracle', async () => {
    const totals = { cohortD30: 0, aboveRoas: 0 };
    for (const [i, app] of result.apps.entries()) {
      expect(app.ad_revenue.impressions).toBeGreaterThan(50);
      expect(app.ad_revenue.by_server).toBeGreaterThan(0);
      expect(app.ad_revenue.duplicates).toBeGreaterThanOrEqual(2);
      expect(app.ad_revenue.usd).toBeGreaterThan(0);
      // The events report: each impression once, with its dollars; the revenue report: purchases alone.
      const adEvents = reports[i]?.events.filter((r) => r.event_name === 'ad_revenue') ?? [];
      expect(sum(adEvents, 'events')).toBe(app.ad_revenue.impressions);
      expect(sum(adEvents, 'revenue_usd')).toBeCloseTo(app.ad_revenue.usd, 5);
      expect(total(reports[i]?.revenue ?? [], 'revenue_usd')).toBeCloseTo(app.revenue_usd, 5);
      const byPartner = await performance(i, { groupBy: ['partner'] });
      expect(sum(byPartner, 'ad_revenue_usd')).toBeCloseTo(app.ad_revenue.usd, 5);
      expect(sum(byPartner, 'total_revenue_usd')).toBeCloseTo(app.ad_revenue.usd + app.revenue_usd, 5);
      const byDay = await performance(i, { groupBy: ['day', 'partner'] });
      totals.cohortD30 += sum(byDay, 'cohort_ad_revenue_d30_usd');
      totals.aboveRoas += byDay.filter((r) => Number(r.total_roas_d0) > Number(r.roas_d0)).length;
    }
    expect(totals.cohortD30).toBeGreaterThan(0);
    expect(totals.aboveRoas).toBeGreaterThan(0);
  });
});

describe('npm run simulate -- --check: iOS measurement', () => {
  const sum = (rows: ReportRow[], column: string) => rows.reduce((n, row) => n + Number(row[column]), 0);

  it('sent each app Apple-retried, tampered and unknown-app postbacks under two schema versions, and its SKAN report counts each once', async () => {
    for (const app of result.apps) {
      expect(app.skan).toMatchObject({ unknown_app: 2, schema_versions: [1, 2] });
      expect(app.skan.copies).toBeGreaterThan(0);
      expect(app.skan.tampered).toBeGreaterThanOrEqual(3);
      const rows = (await fetchSkanReport(result.base_url, app.server_key, result.window)) ?? [];
      // Every transaction of the app but the two forged ones and the two of the unknown app, once.
      expect(sum(rows, 'postbacks')).toBe(app.skan.transactions - 4);
      // The two forged ones make no row: they are the app's invalid_postbacks.
      const url = `${result.base_url}/api/v1/reports/skan?since_ms=${result.window.sinceMs}&until_ms=${result.window.untilMs}&limit=1`;
      const answer = await fetch(url, { headers: { authorization: `Bearer ${app.server_key}` } });
      expect(((await answer.json()) as { invalid_postbacks?: number }).invalid_postbacks).toBe(2);
      expect(rows.every((row) => !('invalid' in row))).toBe(true);
      expect(sum(rows, 'estimated_revenue_usd')).toBeGreaterThan(0);
      expect(new Set(rows.map((r) => Number(r.postback_sequence_index)))).toEqual(new Set([0, 1, 2]));
      expect(new Set(rows.map((r) => r.conversion_type))).toEqual(new Set(['download', 'redownload', 're-engagement']));
      const partners = new Set(rows.map((r) => String(r.partner)));
      expect(partners).toContain('meta');
      expect([...partners].some((p) => p.endsWith('.skadnetwork'))).toBe(true);
      for (const column of ['with_fine_value', 'with_coarse_value', 'without_value', 'installs', 'redownloads'])
        expect({ column, n: sum(rows, column) }).toEqual({ column, n: expect.any(Number) });
      expect(sum(rows, 'with_fine_value') * sum(rows, 'with_coarse_value') * sum(rows, 'without_value')).toBeGreaterThan(0);
    }
  });

  it('attributes the installs whose AdServices token the stub claims to apple_search_ads, under their campaign id', async () => {
    for (const [i, app] of result.apps.entries()) {
      expect(app.apple_ads.attributed).toBeGreaterThanOrEqual(2);
      expect(app.apple_ads.not_attributed).toBeGreaterThanOrEqual(1);
      expect(app.apple_ads.not_ready_first).toBeGreaterThanOrEqual(1);
      const apple = reports[i]?.attribution.filter((r) => r.partner === 'apple_search_ads') ?? [];
      expect(apple.map((r) => r.attribution_type)).toEqual(apple.map(() => 'deterministic'));
      expect(total(apple, 'installs')).toBeGreaterThanOrEqual(2);
      const campaigns = await performance(i, { groupBy: ['partner', 'campaign'], filters: { partner: ['apple_search_ads'] } });
      expect(campaigns.filter((r) => Number(r.installs) > 0).every((r) => /^\d+$/.test(String(r.campaign)))).toBe(true);
    }
  });
});

const sql = async (args: string[]) => ((await runAdmin(['sql', ...args])) as { rows: Record<string, unknown>[] }).rows;

describe('the report queries on the export of simulated traffic', () => {
  it('run on traffic the Reporting API counted as sent, with every case the rules have', async () => {
    expect(result.problems).toEqual([]);
    expect(result.differences).toEqual([]);
    const cases = { held: 0, reinstalls: 0, fraud: 0, probabilistic: 0, d1: 0, d7: 0, d30: 0 };
    for (const app of result.apps) {
      const [row] = await sql([
        '--app-key',
        app.app_key,
        `SELECT (SELECT count(*) FROM events WHERE install_event_id IS NULL) AS held,
                count(CASE WHEN is_reinstall THEN 1 END) AS reinstalls,
                count(CASE WHEN fraud_reasons <> '[]' THEN 1 END) AS fraud,
                count(CASE WHEN attribution_type = 'probabilistic' THEN 1 END) AS probabilistic
         FROM installs`,
      ]);
      for (const name of ['held', 'reinstalls', 'fraud', 'probabilistic'] as const) cases[name] += Number(row?.[name]);
      for (const name of ['d1', 'd7', 'd30'] as const) cases[name] += app.retention[name];
    }
    for (const [name, count] of Object.entries(cases)) expect([name, count > 0]).toEqual([name, true]);
  });

  it.each(REPORT_NAMES)(
    '%s: equal to the Reporting API, row for row',
    async (report) => {
      for (const app of result.apps) {
        const api = await fetchReport(result.base_url, app.server_key, report, result.window);
        const rows = await sql([
          '--app-key',
          app.app_key,
          '--report',
          report,
          '--since-ms',
          String(result.window.sinceMs),
          '--until-ms',
          String(result.window.untilMs),
        ]);
        expect(api.length).toBeGreaterThan(0);
        expect(rows).toEqual(api);
      }
    },
    60_000,
  );

  it('count every accepted event once', async () => {
    for (const app of result.apps) {
      expect(await sql(['--app-key', app.app_key, 'SELECT count(*) AS events FROM events'])).toEqual([{ events: app.events.accepted }]);
      // One row per counted install, and one first install per install_uuid.
      const [installs] = await sql([
        '--app-key',
        app.app_key,
        'SELECT count(*) AS installs, count(DISTINCT install_uuid) AS uuids, count(CASE WHEN first_install THEN 1 END) AS firsts FROM installs',
      ]);
      const expected = app.installs.expected;
      expect(installs).toEqual({
        installs: expected.deterministic + expected.probabilistic + expected.organic,
        uuids: installs?.firsts,
        firsts: installs?.firsts,
      });
    }
  }, 60_000);
});
