// The Overview page in Chromium against a simulated app (test/support/console-browser.ts): every
// figure, the chart's totals and the top tables equal what the test computes from the Reporting
// API's own rows for the same window and for the previous period; an immature figure is blank
// over the latest final days, named, when none of its period's days is (issue 42: the three
// morning figures are filled for every preset); a failed read clears the figures and says why.

import { BLANK, change, count, pct, usd } from '../../../console/ui/format';
import { DAY_MS, localDayOf, localDayStartMs, nextDay } from '../../../functions/domain/common/days';
import { type MarketerConsole, PHONE, shiftDay } from '../../support/console-browser';
import { fresh } from './fresh';

/** Its tests, on the console every page's suite shares (console-pages.test.ts). */
export function overviewPage(shared: () => MarketerConsole): void {
  describe('console-pages/overview.ts', () => {
    type Row = Record<string, unknown>;

    let m: MarketerConsole;
    let zone: string;
    let today: string;

    beforeAll(async () => {
      m = shared();
      await fresh(m);
      zone = m.app.time_zone;
      today = localDayOf(Date.now(), zone);
    }, 300_000);

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

    type Key =
      | 'installs'
      | 'non_organic_share'
      | 'cost'
      | 'ecpi'
      | 'revenue'
      | 'ad_revenue'
      | 'arppu'
      | 'roas_d7'
      | 'total_roas_d7'
      | 'roas_d7_blended'
      | 'retention_d1'
      | 'retention_d7';
    const KEYS: Key[] = [
      'installs',
      'non_organic_share',
      'cost',
      'ecpi',
      'revenue',
      'ad_revenue',
      'arppu',
      'roas_d7',
      'total_roas_d7',
      'roas_d7_blended',
      'retention_d1',
      'retention_d7',
    ];
    const COHORT: Partial<Record<Key, 'd1' | 'd7'>> = {
      roas_d7: 'd7',
      total_roas_d7: 'd7',
      roas_d7_blended: 'd7',
      retention_d1: 'd1',
      retention_d7: 'd7',
    };

    /** The local day the report first flags a cohort of install day `day` final: the day ends, then 2 (d1) or 8 (d7) x 24 h. */
    const dayFinalOn = (day: string, cohort: 'd1' | 'd7') =>
      localDayOf(localDayStartMs(nextDay(day), zone) + (cohort === 'd1' ? 2 : 8) * DAY_MS, zone);

    /** The latest days whose cohort is final today: as many as the period's (a week at least), ending on the latest final day. */
    function latestFinal(cohort: 'd1' | 'd7', length: number): { since: string; until: string } {
      let last = today;
      while (dayFinalOn(last, cohort) > today) last = addDays(last, -1);
      return { since: addDays(last, -(Math.max(length, 7) - 1)), until: last };
    }

    /** The cohort figures from the report by day and partner, over the rows the report flags final (paid ROAS without organic). */
    function cohortValues(byDay: Row[]): Partial<Record<Key, number | undefined>> {
      const finalRows = (cohort: 'd1' | 'd7') => byDay.filter((row) => row[`${cohort}_mature`] === true);
      const ratio = (rows: Row[], over: number, under: number) => (rows.length > 0 && under ? over / under : undefined);
      const d1 = finalRows('d1');
      const d7 = finalRows('d7');
      const paidD7 = d7.filter((row) => row.partner !== 'organic');
      const paidCost = totalUsd(paidD7, 'cost_usd');
      return {
        roas_d7: ratio(d7, totalUsd(paidD7, 'cohort_revenue_d7_usd'), paidCost),
        total_roas_d7: ratio(d7, totalUsd(paidD7, 'cohort_revenue_d7_usd') + totalUsd(paidD7, 'cohort_ad_revenue_d7_usd'), paidCost),
        roas_d7_blended: ratio(d7, totalUsd(d7, 'cohort_revenue_d7_usd'), totalUsd(d7, 'cost_usd')),
        retention_d1: ratio(d1, total(d1, 'retained_d1'), total(d1, 'installs')),
        retention_d7: ratio(d7, total(d7, 'retained_d7'), total(d7, 'installs')),
      };
    }

    /**
     * The figures of a window as docs/console-analytics.md defines them: the totals from the
     * performance report by partner and the revenue report; the cohort figures from the report by day
     * and partner, over the rows whose cohort the report flags final, with the note saying over how
     * many of the window's days so far. A cohort figure of which no day so far is final stands on the
     * latest final days (named in its note) and compares with the days just before them (`against`).
     */
    async function figuresOf(since: string, until: string) {
      const perf = await apiAll('performance', since, until, { group_by: 'partner' });
      const byDay = await apiAll('performance', since, until, { group_by: 'day,partner' });
      const revenueRows = await apiAll('revenue', since, until);
      const [installs, organic, cost] = [total(perf, 'installs'), total(perf, 'organic'), totalUsd(perf, 'cost_usd')];
      const payers = revenueRows.reduce(
        (sum, row) => sum + (n(row, 'arppu_usd') > 0 ? Math.round(n(row, 'revenue_usd') / n(row, 'arppu_usd')) : 0),
        0,
      );
      const paid = installs - organic;
      const values = {
        installs,
        non_organic_share: installs ? 1 - organic / installs : undefined,
        cost,
        ecpi: paid ? cost / paid : undefined,
        revenue: totalUsd(perf, 'revenue_usd'),
        ad_revenue: totalUsd(perf, 'ad_revenue_usd'),
        arppu: payers ? totalUsd(revenueRows, 'revenue_usd') / payers : undefined,
        ...cohortValues(byDay),
      } as Record<Key, number | undefined>;
      const elapsed: string[] = [];
      for (let day = since; day <= until && day <= today; day = nextDay(day)) elapsed.push(day);
      const against: Partial<Record<Key, number | undefined>> = {};
      const notes = {} as Record<Key, string | null>;
      for (const key of KEYS) {
        const cohort = COHORT[key];
        notes[key] = null;
        if (!cohort) continue;
        const final = elapsed.filter((day) => dayFinalOn(day, cohort) <= today).length;
        if (final > 0) {
          notes[key] = final < elapsed.length ? `${final} of ${elapsed.length} days final` : null;
          continue;
        }
        const latest = latestFinal(cohort, dayCount(since, until));
        const length = dayCount(latest.since, latest.until);
        values[key] = cohortValues(await apiAll('performance', latest.since, latest.until, { group_by: 'day,partner' }))[key];
        against[key] = cohortValues(
          await apiAll('performance', addDays(latest.since, -length), addDays(latest.since, -1), { group_by: 'day,partner' }),
        )[key];
        notes[key] = `over ${latest.since} – ${latest.until}, the latest final days`;
      }
      return { values, notes, against, d7FinalDays: elapsed.filter((day) => dayFinalOn(day, 'd7') <= today).length, days: elapsed.length };
    }

    const FORMAT: Record<Key, (value: number) => string> = {
      installs: count,
      non_organic_share: pct,
      cost: usd,
      ecpi: usd,
      revenue: usd,
      ad_revenue: usd,
      arppu: usd,
      roas_d7: pct,
      total_roas_d7: pct,
      roas_d7_blended: pct,
      retention_d1: pct,
      retention_d7: pct,
    };

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
        expect({ key, ...shown[key] }).toEqual({
          key,
          value: value === undefined ? BLANK : FORMAT[key](value),
          change: change(value, key in now.against ? now.against[key] : before.values[key]).text,
          note: now.notes[key],
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
        // The window reaches today, so it is final only in part; its first days are final, and the
        // morning's figures (ROAS D7, D1 and D7 retention) show their value over those days.
        expect(now.d7FinalDays).toBeGreaterThan(0);
        expect(now.d7FinalDays).toBeLessThan(now.days);
        const shown = await shownFigures();
        for (const key of ['roas_d7', 'retention_d1', 'retention_d7'] as const) expect(shown[key]?.value).not.toBe(BLANK);
        await m.shoot('overview');
      }, 120_000);

      it('shows every figure of a period whose cohorts are final, with the change against the days before', async () => {
        const [since, until] = [addDays(today, -24), addDays(today, -10)];
        const now = await checkFigures({ period: 'custom', since, until }, since, until);
        expect(now.d7FinalDays).toBe(now.days);
        expect(now.values.installs).toBeGreaterThan(0);
        for (const key of KEYS) if (key !== 'roas_d7' || now.values.cost) expect((await shownFigures())[key]?.value).not.toBe(BLANK);
      }, 120_000);

      it('shows D7 over the final days of the last 30 days (ending yesterday), saying how many', async () => {
        const now = await checkFigures({ period: 'last30' }, addDays(today, -30), addDays(today, -1));
        // The 8 latest days are not final yet: D7 over the 22 before them.
        expect([now.d7FinalDays, now.days]).toEqual([22, 30]);
        const d7 = (await shownFigures()).retention_d7;
        expect(d7?.value).not.toBe(BLANK);
        expect(d7?.note).toBe('22 of 30 days final');
      }, 120_000);

      it('fills ROAS D7, D1 and D7 retention for every preset, over the latest final days where none of the period’s is, named', async () => {
        const monday = addDays(today, -((new Date(`${today}T00:00:00Z`).getUTCDay() + 6) % 7));
        const presets: [string, string, string][] = [
          ['yesterday', addDays(today, -1), addDays(today, -1)],
          ['last7', addDays(today, -7), addDays(today, -1)],
          ['last30', addDays(today, -30), addDays(today, -1)],
          ['last_week', addDays(monday, -7), addDays(monday, -1)],
          ['month_to_date', `${today.slice(0, 8)}01`, today],
        ];
        for (const [period, since, until] of presets) {
          await checkFigures({ period }, since, until);
          const shown = await shownFigures();
          for (const key of ['roas_d7', 'retention_d1', 'retention_d7'] as const)
            expect({ period, key, value: shown[key]?.value }).not.toEqual({ period, key, value: BLANK });
          // The last 7 days ending yesterday: no day of them has D7 final, so D7 stands on the latest 7 final days.
          if (period === 'last7')
            expect(shown.retention_d7?.note).toBe(`over ${addDays(today, -15)} – ${addDays(today, -9)}, the latest final days`);
        }
      }, 300_000);

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

      it('links to the latest week whose D7 is final, by partner and by campaign and country, each readable, and to a partner-ready link', async () => {
        await openOverview();
        const query = async (testId: string) => {
          const href = (await m.page.getByTestId(testId).getAttribute('href')) ?? '';
          return { href, route: href.split('?')[0], params: Object.fromEntries(new URLSearchParams(href.split('?')[1])) };
        };
        // The oracle's week: the latest Monday to Sunday whose Sunday's D7 the report flags final.
        let monday = addDays(today, -((new Date(`${today}T00:00:00Z`).getUTCDay() + 6) % 7));
        while (dayFinalOn(addDays(monday, 6), 'd7') > today) monday = addDays(monday, -7);
        const week = { period: 'custom', since: monday, until: addDays(monday, 6), app: m.app.app_key };
        const cohorts = await query('next-d7-retention');
        expect(cohorts).toMatchObject({ route: '#/cohorts', params: { ...week, split: 'partner' } });
        expect(await m.page.getByTestId('next-d7-retention').textContent()).toContain(`week of ${monday} (the latest with D7 final)`);
        const breakdown = await query('next-campaign-country');
        expect(breakdown).toMatchObject({ route: '#/breakdown', params: { ...week, group: 'campaign,country', sort: 'roas_d7:desc' } });
        expect(await query('next-links')).toMatchObject({ route: '#/links', params: { app: m.app.app_key } });

        // Readable: every D7 cell of that week's cohorts is final, and the breakdown's totals have ROAS D7.
        await m.page.getByTestId('next-d7-retention').click();
        await m.page.getByTestId('cohort-matrix').waitFor({ timeout: 30_000 });
        const d7 = m.page.locator('[data-testid=cohort-matrix] tbody td[data-col="d7"]');
        expect(await d7.count()).toBe(7);
        expect(await m.page.locator('[data-testid=cohort-matrix] tbody td.immature[data-col="d7"]').count()).toBe(0);
        expect(await m.page.locator('[data-testid=cohort-split-table] tbody tr').count()).toBeGreaterThan(0);
        await m.page.goto(`${m.server.url}${breakdown.href}`);
        await m.page.locator('[data-testid=breakdown-totals]').waitFor({ timeout: 30_000 });
        const cost = totalUsd(await apiAll('performance', week.since, week.until, { group_by: 'campaign,country' }), 'cost_usd');
        const roas = await m.page.locator('[data-testid=breakdown-totals] td[data-column="roas_d7"]').textContent();
        if (cost > 0) expect(roas).not.toBe(BLANK);
        await m.page.goto(m.url('overview'));
        await m.page.getByTestId('next-links').click();
        await m.page.locator('main h1', { hasText: 'Tracking links' }).waitFor();
      }, 120_000);

      it('fits a 390 px screen and logs no console error', async () => {
        await m.page.setViewportSize(PHONE);
        await openOverview({ period: 'last7' });
        expect(await m.page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
        // The morning's figures are on the screen, filled, without scrolling sideways.
        for (const key of ['roas_d7', 'retention_d1', 'retention_d7'] as const) {
          const value = m.page.getByTestId(`figure-${key}-value`);
          const box = await value.boundingBox();
          expect(box && box.x >= 0 && box.x + box.width <= PHONE.width).toBe(true);
          expect(await value.textContent()).not.toBe(BLANK);
        }
        await m.shoot('overview-390');
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
  });
}
