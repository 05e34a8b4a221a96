// The traffic simulator end to end: a local stack that takes client addresses from
// X-Forwarded-For (TRUST_PROXY=1), the simulator run in-process at a small scale with --check,
// no difference between the four reports and what it sent, and reports with something in them.

import { fetchReports, type Reports } from '../../sim/check';
import { type SimulationResult, simulate } from '../../sim/run';
import { failed, summaryJson, summaryText } from '../../sim/summary';
import { type LocalStack, startLocalStack } from '../support/local-stack';

let stack: LocalStack;
let result: SimulationResult;
const reports: Reports[] = [];

beforeAll(async () => {
  stack = await startLocalStack({ trustProxy: true });
  result = await simulate({ seed: 'integration', apps: 2, installs: 30, days: 45, check: true });
  for (const app of result.apps) reports.push(await fetchReports(result.base_url, app.server_key, result.window));
}, 120_000);
afterAll(async () => {
  await stack?.stop();
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
    expect(text).toContain('Check: all four reports of every app match what was sent.');
    expect(JSON.parse(JSON.stringify(summaryJson(result)))).toMatchObject({ seed: 'integration', checked: true, differences: [] });
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
