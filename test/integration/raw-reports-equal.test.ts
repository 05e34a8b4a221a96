// Issue 22, item 4: the simulator's traffic (duplicates and retried batches, reinstalls, fraud,
// probabilistic matches, events before their install, retention on day 1, 7 and 30) sent to the
// local stack, exported (admin export run), and the four report queries on DuckDB (admin sql
// --report) equal, row for row, to the Reporting API; SELECT count(*) FROM events equals the
// events the service accepted.

import { runAdmin } from '../../bin/admin';
import { REPORT_NAMES } from '../../functions/domain/reports/reports';
import { type AdServicesStub, startAdServicesStub } from '../../local/adservices-stub';
import { fetchReport } from '../../sim/check';
import { type SimulationResult, simulate } from '../../sim/run';
import { type LocalStack, startLocalStack } from '../support/local-stack';

let stack: LocalStack;
let adServices: AdServicesStub;
let result: SimulationResult;

beforeAll(async () => {
  // Apple's attribution API as npm start stands it in: the simulator's Apple Ads installs need it.
  adServices = await startAdServicesStub();
  stack = await startLocalStack({ trustProxy: true, internet: { ADSERVICES_API_URL: adServices.url } });
  // A seed whose plan has SDKs that upload a session before their install (the simulator does it
  // for a few organic installs): events the service holds until the install, install_event_id null.
  result = await simulate({ seed: 'raw-sql-4', apps: 2, installs: 30, days: 45, check: true });
  // Every hour with data, the current one included; it waits for the event stream to be final up to now.
  for (const app of result.apps) await runAdmin(['export', 'run', '--app-key', app.app_key]);
  // About 170 s alone on a quiet 2-core machine since the simulator sends ad revenue; twice that beside another suite.
}, 480_000);
afterAll(async () => {
  await stack?.stop();
  await adServices?.close();
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
