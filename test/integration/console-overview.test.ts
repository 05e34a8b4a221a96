// The Overview page in Chromium against a simulated app (test/support/console-browser.ts): every
// figure, the chart's totals and the top tables equal what the test computes from the Reporting
// API's own rows for the same window and for the previous period; an immature figure is blank
// with the day it becomes final; a failed read clears the figures and says why.

import { BLANK, change, count, pct, usd } from '../../console/ui/format';
import { DAY_MS, localDayOf, localDayStartMs, nextDay } from '../../functions/domain/common/days';
import { type MarketerConsole, PHONE, shiftDay, startMarketerConsole } from '../support/console-browser';

type Row = Record<string, unknown>;

let m: MarketerConsole;
let zone: string;
let today: string;

beforeAll(async () => {
  m = await startMarketerConsole({ installs: 60 });
  zone = m.app.time_zone;
  today = localDayOf(Date.now(), zone);
}, 300_000);

afterAll(async () => {
  await m?.stop();
});

const addDays = shiftDay;
const dayCount = (since: string, until: string): number => Math.round((Date.parse(until) - Date.parse(since)) / DAY_MS) + 1;

/** The API's window for whole local days. */
const windowOf = (since: string, until: string) => ({
  since_ms: localDayStartMs(since, zone),
  until_ms: localDayStartMs(nextDay(until), zone),
});

/** Every row of a window, page after page. */
async function apiAll(report: string, since: string, until: string, query: Record<string, string> = {}): Promise<Row[]> {
  const rows: Row[] = [];
  for (let offset = 0; ; offset += 1000) {
    const page = await m.api(report, { ...windowOf(since, until), ...query, limit: 1000, offset });
    rows.push(...page);
    if (page.length < 1000) return rows;
  }
}

const n = (row: Row, column: string): number => Number(row[column] ?? 0);
const micros = (row: Row, column: string): number => Math.round(n(row, column) * 1e6);
const total = (rows: Row[], column: string): number => rows.reduce((sum, row) => sum + n(row, column), 0);
const totalUsd = (rows: Row[], column: string): number => rows.reduce((sum, row) => sum + micros(row, column), 0) / 1e6;

type Key = 'installs' | 'non_organic_share' | 'cost' | 'ecpi' | 'revenue' | 'arppu' | 'roas_d7' | 'retention_d1' | 'retention_d7';
const KEYS: Key[] = ['installs', 'non_organic_share', 'cost', 'ecpi', 'revenue', 'arppu', 'roas_d7', 'retention_d1', 'retention_d7'];

/** The figures of a window, from the performance report by partner and the revenue report, as docs/console-analytics.md defines them. */
async function figuresOf(since: string, until: string) {
  const perf = await apiAll('performance', since, until, { group_by: 'partner' });
  const revenueRows = await apiAll('revenue', since, until);
  const [installs, organic, cost] = [total(perf, 'installs'), total(perf, 'organic'), totalUsd(perf, 'cost_usd')];
  const d1Final = perf.every((row) => row.d1_mature === true);
  const d7Final = perf.every((row) => row.d7_mature === true);
  const payers = revenueRows.reduce(
    (sum, row) => sum + (n(row, 'arppu_usd') > 0 ? Math.round(n(row, 'revenue_usd') / n(row, 'arppu_usd')) : 0),
    0,
  );
  const paid = installs - organic;
  const values: Record<Key, number | undefined> = {
    installs,
    non_organic_share: installs ? 1 - organic / installs : undefined,
    cost,
    ecpi: paid ? cost / paid : undefined,
    revenue: totalUsd(perf, 'revenue_usd'),
    arppu: payers ? totalUsd(revenueRows, 'revenue_usd') / payers : undefined,
    roas_d7: d7Final && cost ? totalUsd(perf, 'cohort_revenue_d7_usd') / cost : undefined,
    retention_d1: d1Final && installs ? total(perf, 'retained_d1') / installs : undefined,
    retention_d7: d7Final && installs ? total(perf, 'retained_d7') / installs : undefined,
  };
  return { values, d1Final, d7Final };
}

const FORMAT: Record<Key, (value: number) => string> = {
  installs: count,
  non_organic_share: pct,
  cost: usd,
  ecpi: usd,
  revenue: usd,
  arppu: usd,
  roas_d7: pct,
  retention_d1: pct,
  retention_d7: pct,
};
const COHORT: Partial<Record<Key, 'd1' | 'd7'>> = { roas_d7: 'd7', retention_d1: 'd1', retention_d7: 'd7' };

/** The local day the report first flags a cohort ending on `until` final: its last day (today at the latest) ends, then 2 (d1) or 8 (d7) x 24 h. */
function finalDay(until: string, cohort: 'd1' | 'd7'): string {
  const last = until < today ? until : today;
  return localDayOf(localDayStartMs(nextDay(last), zone) + (cohort === 'd1' ? 2 : 8) * DAY_MS, zone);
}

/** Opens the overview afresh (not a hash change on the page before, whose figures could be read) and waits for its figures. */
async function openOverview(params: Record<string, string> = {}) {
  await m.page.goto('about:blank');
  await m.open('overview', params);
  await m.page.locator('[data-testid="figure-installs-value"]').waitFor();
}

/** What the page shows for each figure. */
async function shownFigures() {
  await m.page.locator('[data-testid="figure-installs-value"]').waitFor();
  const shown: Record<string, { value: string; change: string; note: string | null }> = {};
  for (const key of KEYS) {
    const card = m.page.getByTestId(`figure-${key}`);
    const note = card.getByTestId(`figure-${key}-note`);
    shown[key] = {
      value: (await card.getByTestId(`figure-${key}-value`).textContent()) ?? '',
      change: (await card.getByTestId(`figure-${key}-change`).textContent()) ?? '',
      note: (await note.count()) ? await note.textContent() : null,
    };
  }
  return shown;
}

/** Opens the overview for the days and checks every figure against the API's rows. */
async function checkFigures(params: Record<string, string>, since: string, until: string) {
  await openOverview(params);
  const length = dayCount(since, until);
  const now = await figuresOf(since, until);
  const before = await figuresOf(addDays(since, -length), addDays(since, -1));
  const shown = await shownFigures();
  for (const key of KEYS) {
    const value = now.values[key];
    const cohort = COHORT[key];
    const final = cohort === undefined || (cohort === 'd1' ? now.d1Final : now.d7Final);
    expect({ key, ...shown[key] }).toEqual({
      key,
      value: value === undefined ? BLANK : FORMAT[key](value),
      change: change(value, before.values[key]).text,
      note: final ? null : `not final until ${finalDay(until, cohort ?? 'd7')}`,
    });
  }
  expect(await m.page.getByTestId('overview-period').textContent()).toContain(since === until ? since : `${since} – ${until}`);
  return now;
}

describe('the overview', () => {
  it('shows the simulated window’s figures as the Reporting API counts them, against the previous period', async () => {
    const since = localDayOf(m.simulation.window.sinceMs, zone);
    const until = localDayOf(m.simulation.window.untilMs - 1, zone);
    const now = await checkFigures({ period: 'custom', since, until }, since, until);
    expect(now.values.installs).toBeGreaterThan(0);
    expect(now.values.cost).toBeGreaterThan(0);
    // The window reaches today: no cohort of it is final.
    expect(now.d7Final).toBe(false);
    await m.shoot('overview');
  }, 120_000);

  it('shows every figure of a period whose cohorts are final, with the change against the days before', async () => {
    const [since, until] = [addDays(today, -24), addDays(today, -10)];
    const now = await checkFigures({ period: 'custom', since, until }, since, until);
    expect(now.d7Final).toBe(true);
    expect(now.values.installs).toBeGreaterThan(0);
    for (const key of KEYS) if (key !== 'roas_d7' || now.values.cost) expect((await shownFigures())[key]?.value).not.toBe(BLANK);
  }, 120_000);

  it('leaves D7 blank with the day it becomes final for the last 30 days (ending yesterday)', async () => {
    const now = await checkFigures({ period: 'last30' }, addDays(today, -30), addDays(today, -1));
    expect(now.d7Final).toBe(false);
    const d7 = (await shownFigures()).retention_d7;
    expect(d7).toEqual({ value: BLANK, change: BLANK, note: `not final until ${finalDay(addDays(today, -1), 'd7')}` });
  }, 120_000);

  it('charts installs per day by partner on every day of the period, with the attribution report’s totals', async () => {
    const [since, until] = [addDays(today, -30), addDays(today, -1)];
    await openOverview({ period: 'last30' });
    const byPartner = new Map<string, number>();
    for (const row of await apiAll('attribution', since, until))
      byPartner.set(String(row.partner), (byPartner.get(String(row.partner)) ?? 0) + n(row, 'installs'));
    expect(byPartner.size).toBeGreaterThan(1);
    for (const [partner, installs] of byPartner) {
      expect(await m.page.getByTestId(`installs-total-${partner}`).textContent()).toBe(count(installs));
      expect(await m.page.getByTestId('overview-chart-summary').textContent()).toContain(`${partner} ${count(installs)}`);
    }
    const all = [...byPartner.values()].reduce((a, b) => a + b, 0);
    expect(await m.page.getByTestId('installs-total').textContent()).toBe(count(all));
    // A continuous axis: one table row per day of the period (missing days as 0) and the total row.
    const rows = m.page.locator('[data-testid="overview-data"] details tbody tr');
    expect(await rows.count()).toBe(dayCount(since, until) + 1);
    expect(await rows.first().locator('td').first().textContent()).toBe(since);
    const canvas = m.page.getByTestId('overview-chart');
    expect(await canvas.getAttribute('aria-label')).toContain(`all partners ${count(all)}`);
  }, 120_000);

  it('ranks the top partners and campaigns by installs and by ROAS D7, each linked to its breakdown', async () => {
    const [since, until] = [addDays(today, -39), addDays(today, -10)];
    await openOverview({ period: 'custom', since, until });
    // Ties by name: partner, then campaign.
    const rank = (rows: Row[], name: (row: Row) => string) => {
      const candidates = rows
        .filter((row) => row.partner !== 'organic')
        .map((row) => ({
          name: name(row),
          tie: `${row.partner}\u0000${row.campaign ?? ''}`,
          installs: n(row, 'installs'),
          roas: row.d7_mature === true && n(row, 'cost_usd') > 0 ? n(row, 'cohort_revenue_d7_usd') / n(row, 'cost_usd') : undefined,
        }));
      const byName = (a: { tie: string }, b: { tie: string }) => (a.tie < b.tie ? -1 : a.tie > b.tie ? 1 : 0);
      return {
        installs: [...candidates]
          .sort((a, b) => b.installs - a.installs || byName(a, b))
          .slice(0, 5)
          .map((c) => c.name),
        roas: candidates
          .filter((c) => c.roas !== undefined)
          .sort((a, b) => (b.roas ?? 0) - (a.roas ?? 0) || b.installs - a.installs || byName(a, b))
          .slice(0, 5)
          .map((c) => c.name),
      };
    };
    const partners = rank(await apiAll('performance', since, until, { group_by: 'partner' }), (row) => String(row.partner));
    const campaigns = rank(
      await apiAll('performance', since, until, { group_by: 'partner,campaign' }),
      (row) => `${row.campaign} (${row.partner})`,
    );
    const names = (testId: string) => m.page.locator(`[data-testid="${testId}"] tbody tr td:first-child`).allTextContents();
    expect(partners.installs.length).toBeGreaterThan(1);
    expect(partners.roas.length).toBeGreaterThan(0);
    expect(await names('top-partners-installs')).toEqual(partners.installs);
    expect(await names('top-partners-roas')).toEqual(partners.roas);
    expect(await names('top-campaigns-installs')).toEqual(campaigns.installs);
    expect(await names('top-campaigns-roas')).toEqual(campaigns.roas);
    const first = m.page.locator('[data-testid="top-partners-installs"] tbody tr a').first();
    const href = new URLSearchParams((await first.getAttribute('href'))?.split('?')[1]);
    expect({ group: href.get('group'), partner: href.get('partner'), since: href.get('since') }).toEqual({
      group: 'campaign',
      partner: partners.installs[0],
      since,
    });
  }, 120_000);

  it('links to last week’s D7 retention, installs and ROAS by campaign and country, and a partner-ready link', async () => {
    await openOverview();
    const query = async (testId: string) => {
      const href = (await m.page.getByTestId(testId).getAttribute('href')) ?? '';
      return { route: href.split('?')[0], params: Object.fromEntries(new URLSearchParams(href.split('?')[1])) };
    };
    expect(await query('next-d7-retention')).toMatchObject({ route: '#/cohorts', params: { period: 'last_week', app: m.app.app_key } });
    expect(await query('next-campaign-country')).toMatchObject({
      route: '#/breakdown',
      params: { period: 'last_week', group: 'campaign,country', app: m.app.app_key },
    });
    expect(await query('next-links')).toMatchObject({ route: '#/links', params: { app: m.app.app_key } });
    await m.page.getByTestId('next-links').click();
    await m.page.locator('main h1', { hasText: 'Tracking links' }).waitFor();
  }, 60_000);

  it('fits a 390 px screen and logs no console error', async () => {
    await m.page.setViewportSize(PHONE);
    await openOverview({ period: 'last30' });
    expect(await m.page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
    await m.page.setViewportSize({ width: 1440, height: 900 });
    expect(m.consoleErrors).toEqual([]);
  }, 60_000);

  it('clears the figures and says why when a read fails', async () => {
    await openOverview({ period: 'last7' });
    const restore = await m.failReportReads('window_too_large');
    try {
      await m.page.goto(m.url('overview', { period: 'last30' }));
      const alert = m.page.locator('[data-testid="overview-data"] [role="alert"]');
      await alert.waitFor();
      expect(await alert.textContent()).toMatch(/period/i);
      expect(await m.page.locator('[data-testid^="figure-"]').count()).toBe(0);
      expect(await m.page.locator('[data-testid="overview-chart"]').count()).toBe(0);
    } finally {
      await restore();
    }
  }, 60_000);
});
