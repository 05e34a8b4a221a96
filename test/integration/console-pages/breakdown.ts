// The Breakdown page in Chromium against a simulated New York app (test/support/console-browser.ts):
// its totals row equals totals this test computes from the Reporting API's rows for the same window
// (counters and micro-dollars summed, ratios from the sums, cohorts blank unless every row is
// mature), a header click sorts the rows as the API's rows sort, the CSV holds every row of a
// window read over several API pages, a failed read leaves its error where the table was, and the
// page fits a 390 px screen with every figure of a row on it (cards). The figures shown are the
// user's choice, remembered per user and app (the defaults first).

import { BLANK, count, pct, usd } from '../../../console/ui/format';
import { localDayOf, localDayStartMs, nextDay } from '../../../functions/domain/common/days';
import { DESKTOP, type MarketerConsole, PHONE } from '../../support/console-browser';
import { parseCsv } from '../../support/parse-csv';
import { fresh } from './fresh';

/** Its tests, on the console every page's suite shares (console-pages.test.ts). */
export function breakdownPage(shared: () => MarketerConsole): void {
  describe('console-pages/breakdown.ts', () => {
    type Row = Record<string, unknown>;

    let m: MarketerConsole;
    let since: string;
    let until: string;
    let window: { since_ms: number; until_ms: number };

    beforeAll(async () => {
      m = shared();
      await fresh(m);
      const zone = m.app.time_zone;
      // The whole simulated run, as whole local days of the app's zone.
      since = localDayOf(m.simulation.window.sinceMs, zone);
      until = localDayOf(m.simulation.window.untilMs - 1, zone);
      window = { since_ms: localDayStartMs(since, zone), until_ms: localDayStartMs(nextDay(until), zone) };
    }, 300_000);

    const PERIOD = () => ({ period: 'custom', since, until });

    /** Every row the Reporting API has for the window, a page of 1,000 at a time. */
    async function apiRows(query: Record<string, string>): Promise<Row[]> {
      const rows: Row[] = [];
      for (let offset = 0; ; offset += 1000) {
        const page = await m.api('performance', { ...window, ...query, limit: 1000, offset });
        rows.push(...page);
        if (page.length < 1000) return rows;
      }
    }

    /** The totals row as the page should show it, computed here from the API's rows. */
    function expectedTotals(rows: readonly Row[]): Record<string, string> {
      const sum = (key: string) => rows.reduce((s, row) => s + Number(row[key]), 0);
      // Dollars in whole micro-dollars (the API's 6 decimals), so no float drift in the sum.
      const micros = (key: string) => rows.reduce((s, row) => s + BigInt(Math.round(Number(row[key]) * 1e6)), 0n);
      const dollars = (key: string) => Number(micros(key)) / 1e6;
      const mature = (cohort: string) => rows.every((row) => row[`${cohort}_mature`] === true);
      const ratio = (n: number, d: number, format: (x: number) => string) => (d > 0 ? format(n / d) : BLANK);
      const cohort = (c: string, text: () => string) => (mature(c) ? text() : BLANK);
      const installs = sum('installs');
      const cost = dollars('cost_usd');
      return {
        clicks: count(sum('clicks')),
        impressions: count(sum('impressions')),
        installs: count(installs),
        organic: count(sum('organic')),
        reinstalls: count(sum('reinstalls')),
        fraud_flagged: count(sum('fraud_flagged')),
        cost_usd: usd(cost),
        ecpi_usd: ratio(cost, installs - sum('organic'), usd),
        revenue_usd: usd(dollars('revenue_usd')),
        ad_revenue_usd: usd(dollars('ad_revenue_usd')),
        total_revenue_usd: usd(Number(micros('revenue_usd') + micros('ad_revenue_usd')) / 1e6),
        cohort_ad_revenue_d7_usd: cohort('d7', () => usd(dollars('cohort_ad_revenue_d7_usd'))),
        total_roas_d7: cohort('d7', () =>
          ratio(Number(micros('cohort_revenue_d7_usd') + micros('cohort_ad_revenue_d7_usd')) / 1e6, cost, pct),
        ),
        total_roas_d30: cohort('d30', () =>
          ratio(Number(micros('cohort_revenue_d30_usd') + micros('cohort_ad_revenue_d30_usd')) / 1e6, cost, pct),
        ),
        cohort_revenue_d0_usd: cohort('d0', () => usd(dollars('cohort_revenue_d0_usd'))),
        cohort_revenue_d7_usd: cohort('d7', () => usd(dollars('cohort_revenue_d7_usd'))),
        cohort_revenue_d30_usd: cohort('d30', () => usd(dollars('cohort_revenue_d30_usd'))),
        roas_d0: cohort('d0', () => ratio(dollars('cohort_revenue_d0_usd'), cost, pct)),
        roas_d7: cohort('d7', () => ratio(dollars('cohort_revenue_d7_usd'), cost, pct)),
        roas_d30: cohort('d30', () => ratio(dollars('cohort_revenue_d30_usd'), cost, pct)),
        d1_rate: cohort('d1', () => ratio(sum('retained_d1'), installs, pct)),
        d7_rate: cohort('d7', () => ratio(sum('retained_d7'), installs, pct)),
        d30_rate: cohort('d30', () => ratio(sum('retained_d30'), installs, pct)),
      };
    }

    /** Opens the page afresh on a view and waits for its table or its error. */
    async function load(params: Record<string, string>): Promise<void> {
      await m.page.goto('about:blank');
      await m.open('breakdown', params);
      await m.page
        .locator('[data-testid=breakdown-totals], [data-testid=breakdown-data] .notice.error, [data-testid=breakdown-data] .empty')
        .first()
        .waitFor();
    }

    /** The figures a user sees before choosing others (breakdown-data.ts DEFAULT_METRICS, written out). */
    const DEFAULT_SHOWN = [
      'installs',
      'organic',
      'fraud_flagged',
      'cost_usd',
      'ecpi_usd',
      'revenue_usd',
      'ad_revenue_usd',
      'roas_d7',
      'total_roas_d7',
      'd1_rate',
      'd7_rate',
    ];
    const only = (totals: Record<string, string>, keys: readonly string[]) => Object.fromEntries(keys.map((key) => [key, totals[key]]));

    /** What the totals row shows, by column. */
    async function shownTotals(): Promise<Record<string, string>> {
      const cells = await m.page
        .locator('[data-testid=breakdown-totals] td[data-column]')
        .evaluateAll((tds) => tds.map((td) => [td.getAttribute('data-column') ?? '', td.textContent ?? ''] as const));
      // The group columns after the first are empty cells in the totals row.
      return Object.fromEntries(cells.filter(([column]) => !['day', 'partner', 'campaign', 'country', 'platform'].includes(column)));
    }

    const shownColumn = (key: string) =>
      m.page
        .locator(`[data-testid=breakdown-rows] [data-column="${key}"]`)
        .evaluateAll((cells) => cells.map((cell) => cell.textContent ?? ''));

    describe('the Breakdown page', () => {
      it.each([
        { group: 'partner', filters: {} },
        { group: 'campaign,country', filters: {} },
        { group: 'platform', filters: { partner: 'first' } },
      ])('shows the totals the Reporting API’s rows add up to, grouped by $group', async ({ group, filters }) => {
        const query: Record<string, string> = { group_by: group };
        if (filters.partner) {
          // A partner the window has: the first the API names, by installs.
          const partners = (await apiRows({ group_by: 'partner' })).sort((a, b) => Number(b.installs) - Number(a.installs));
          query.partner = String(partners[0]?.partner);
        }
        const rows = await apiRows(query);
        expect(rows.length).toBeGreaterThan(0);
        await load({ ...PERIOD(), group, ...(query.partner ? { partner: query.partner } : {}) });
        expect(await shownTotals()).toEqual(only(expectedTotals(rows), DEFAULT_SHOWN));
        expect(await m.page.locator('[data-testid=breakdown-totals] th').textContent()).toBe(`Total (${count(rows.length)} rows)`);
        expect(await m.page.getByTestId('breakdown-shown').textContent()).toBe(
          `${count(Math.min(50, rows.length))} of ${count(rows.length)} rows shown`,
        );
        // The chart is drawn, named by its summary.
        expect(await m.page.getByTestId('breakdown-chart').getAttribute('aria-label')).toMatch(/^Installs (per day|by)/);
        if (group === 'campaign,country') await m.shoot('breakdown');
      });

      it('sorts by a column when its header is clicked, and back the other way on a second click', async () => {
        await load({ ...PERIOD(), group: 'campaign,country' });
        const rows = await apiRows({ group_by: 'campaign,country' });
        const shown = Math.min(50, rows.length);
        const cost = m.page.locator('th button[data-column="cost_usd"]');
        await cost.click();
        await m.page.locator('th[aria-sort="descending"] button[data-column="cost_usd"]').waitFor();
        expect(m.page.url()).toContain('sort=cost_usd%3Adesc');
        const costs = rows.map((row) => Number(row.cost_usd));
        expect(await shownColumn('cost_usd')).toEqual(
          [...costs]
            .sort((a, b) => b - a)
            .slice(0, shown)
            .map(usd),
        );
        // The redrawn header's button has the focus again: Enter turns the order around.
        expect(await m.page.evaluate('document.activeElement.getAttribute("data-column")')).toBe('cost_usd');
        await m.page.keyboard.press('Enter');
        await m.page.locator('th[aria-sort="ascending"] button[data-column="cost_usd"]').waitFor();
        expect(await shownColumn('cost_usd')).toEqual(
          [...costs]
            .sort((a, b) => a - b)
            .slice(0, shown)
            .map(usd),
        );
        // A text column sorts A to Z first.
        await m.page.locator('th button[data-column="campaign"]').click();
        await m.page.locator('th[aria-sort="ascending"] button[data-column="campaign"]').waitFor();
        const campaigns = rows.map((row) => String(row.campaign)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        expect(await shownColumn('campaign')).toEqual(campaigns.slice(0, shown));
        // The totals do not move with the order.
        expect(await shownTotals()).toEqual(only(expectedTotals(rows), DEFAULT_SHOWN));
      });

      it('downloads every row of a window larger than the table shows, read over several API pages at click time', async () => {
        const group = 'day,partner,campaign,country,platform';
        const rows = await apiRows({ group_by: group });
        // The premise: more rows than the table's first 50 and than two 25-row API pages.
        expect(rows.length).toBeGreaterThan(50);
        await load({ ...PERIOD(), group, page_size: '25' });
        expect(await m.page.getByTestId('breakdown-shown').textContent()).toBe(`50 of ${count(rows.length)} rows shown`);
        await m.page.getByTestId('breakdown-more').click();
        expect(await m.page.getByTestId('breakdown-shown').textContent()).toBe(
          `${count(Math.min(100, rows.length))} of ${count(rows.length)} rows shown`,
        );

        const reads: string[] = [];
        m.page.on('request', (request) => {
          const body = request.postData() ?? '';
          if (request.url().endsWith('/api/command') && body.includes('"report show"')) reads.push(body);
        });
        const download = m.page.waitForEvent('download');
        await m.page.getByTestId('breakdown-csv').click();
        const file = await download;
        expect(file.suggestedFilename()).toMatch(
          new RegExp(`^breakdown_.+_${since}_${until}_by-day-partner-campaign-country-platform\\.csv$`),
        );
        // Read at click time, 25 rows a page until a short page: every page once.
        expect(reads).toHaveLength(Math.floor(rows.length / 25) + 1);
        expect(reads.map((body) => (JSON.parse(body) as { flags: { offset: string } }).flags.offset)).toEqual(
          reads.map((_, i) => String(i * 25)),
        );

        const text = Buffer.concat(await (await file.createReadStream()).toArray()).toString();
        const [header = [], ...lines] = parseCsv(text);
        const apiColumns = Object.keys(rows[0] ?? {});
        expect(header.slice(0, apiColumns.length)).toEqual(apiColumns);
        expect(header).toEqual(
          expect.arrayContaining(['cost_usd_display', 'ecpi_usd_display', 'revenue_usd_display', 'roas_d7_pct', 'd7_rate_pct']),
        );
        expect(lines).toHaveLength(rows.length);
        const at = (line: string[], name: string) => line[header.indexOf(name)] ?? '';
        for (const [i, row] of rows.entries()) {
          const line = lines[i] ?? [];
          // The API's columns as they are, row for row.
          expect(Object.fromEntries(apiColumns.map((name) => [name, at(line, name)]))).toEqual(
            Object.fromEntries(apiColumns.map((name) => [name, String(row[name])])),
          );
          // Dollars to the cent: within half a cent of the API's micro-dollars.
          const cents = Number(at(line, 'cost_usd_display').replace('.', ''));
          expect(at(line, 'cost_usd_display')).toMatch(/^\d+\.\d{2}$/);
          expect(Math.abs(cents * 10_000 - Math.round(Number(row.cost_usd) * 1e6))).toBeLessThanOrEqual(5000);
          // A rate as a percentage, blank while the cohort is not final or has no installs.
          const rate = at(line, 'd7_rate_pct');
          if (row.d7_mature !== true || Number(row.installs) === 0) expect(rate).toBe('');
          else expect(Math.abs(Number(rate.replace('%', '')) - Number(row.d7_rate) * 100)).toBeLessThan(0.0051);
        }
        expect(m.consoleErrors).toEqual([]);
      });

      it('shows the figures a user chooses, remembered for the app across a reload, and every total of them as the API’s', async () => {
        await load({ ...PERIOD(), group: 'partner' });
        const rows = await apiRows({ group_by: 'partner' });
        const chooser = m.page.getByTestId('breakdown-columns');
        await chooser.locator('summary').click();
        const chosen = [
          'cohort_revenue_d30_usd',
          'total_revenue_usd',
          'cohort_ad_revenue_d7_usd',
          'total_roas_d30',
          'clicks',
          'reinstalls',
        ];
        for (const key of chosen) await chooser.locator(`input[value="${key}"]`).check();
        await chooser.locator('input[value="ecpi_usd"]').uncheck();
        const shown = [...DEFAULT_SHOWN.filter((key) => key !== 'ecpi_usd'), ...chosen];
        await m.page.reload();
        await m.page.locator('[data-testid=breakdown-totals]').waitFor();
        const totals = await shownTotals();
        expect(Object.keys(totals).sort()).toEqual([...shown].sort());
        expect(totals).toEqual(only(expectedTotals(rows), shown));
        // The group column stays in view when the figures scroll sideways.
        expect(await m.page.evaluate<string>('getComputedStyle(document.querySelector("table.breakdown thead th.dim")).position')).toBe(
          'sticky',
        );
        await m.page.getByTestId('breakdown-columns').locator('summary').click();
        await m.page.getByTestId('breakdown-columns-default').click();
        expect(Object.keys(await shownTotals()).sort()).toEqual([...DEFAULT_SHOWN].sort());
      });

      it('fits a 390 px screen, each row a card with its figures on the screen', async () => {
        await m.page.setViewportSize(PHONE);
        try {
          await load({ ...PERIOD(), group: 'campaign,country' });
          const page = Number(await m.page.evaluate('document.documentElement.scrollWidth'));
          const region = await m.page.getByTestId('breakdown-table').evaluate((wrap) => {
            const box = wrap as unknown as { clientWidth: number; scrollWidth: number };
            return { shown: box.clientWidth, table: box.scrollWidth };
          });
          expect(page).toBeLessThanOrEqual(PHONE.width);
          expect(region.table).toBeLessThanOrEqual(region.shown);
          for (const key of ['installs', 'cost_usd', 'roas_d7', 'd1_rate']) {
            const box = await m.page.locator(`[data-testid=breakdown-rows] tr:first-child [data-column="${key}"]`).boundingBox();
            expect(box && box.x >= 0 && box.x + box.width <= PHONE.width).toBe(true);
          }
          await m.shoot('breakdown-390');
        } finally {
          await m.page.setViewportSize(DESKTOP);
        }
      });

      it('refuses a country that is not a two-letter code before reading, next to the field and where the table would be', async () => {
        await load({ ...PERIOD(), group: 'country', country: 'USA' });
        expect(await m.page.getByTestId('breakdown-data').textContent()).toMatch(/^Country must be two-letter codes/);
        expect(await m.page.getByRole('textbox', { name: 'Country' }).getAttribute('aria-invalid')).toBe('true');
        expect(await m.page.getByTestId('breakdown-table').count()).toBe(0);
      });

      it('clears the table when a read fails and says why in plain words', async () => {
        await load({ ...PERIOD(), group: 'partner' });
        await m.page.getByTestId('breakdown-table').waitFor();
        // The console opens no period over 365 days (a link naming one opens the default period,
        // console/ui/period.ts), so the API's refusal is stood in for the console server's answer.
        const restore = await m.failReportReads('window_too_large');
        try {
          // (A change of the hash alone: the same page redraws, as a changed view does.)
          await m.page.goto(m.url('breakdown', { ...PERIOD(), group: 'campaign' }));
          const error = m.page.locator('[data-testid=breakdown-error] .notice.error');
          await error.waitFor();
          expect(await error.textContent()).toMatch(/longer than 365 days/);
          expect(await m.page.getByTestId('breakdown-table').count()).toBe(0);
          expect(await m.page.locator('[data-testid=breakdown-totals]').count()).toBe(0);
        } finally {
          await restore();
        }
      }, 60_000);
    });
  });
}
