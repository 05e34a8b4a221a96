// The Cohorts page and the Reports page's charts in Chromium against a simulated app
// (test/support/console-browser.ts, an America/New_York app): the heat map's installs, rates and
// cohort revenue per day equal the performance report's rows grouped by day for the same window;
// its blank cells are exactly the report's immature ones (never a 0 % where the window has not
// elapsed); its weighted averages and week rows equal the test's own sums; and every chart of the
// Reports page has a point or bar for every day of the period.

import { BLANK, count } from '../../../console/ui/format';
import { maturityOf } from '../../../functions/domain/analytics/performance-report';
import { localDayOf, localDayStartMs, nextDay } from '../../../functions/domain/common/days';
import { DESKTOP, type MarketerConsole, PHONE, shiftDay } from '../../support/console-browser';
import { fresh } from './fresh';

/** Its tests, on the console every page's suite shares (console-pages.test.ts). */
export function cohortsPage(shared: () => MarketerConsole): void {
  describe('console-pages/cohorts.ts', () => {
    type Row = Record<string, unknown>;
    interface ShownCell {
      text: string;
      value: string | null;
      title: string | null;
      coloured: boolean;
    }
    /** The few DOM members the page's evaluate uses (the test project has no DOM types). */
    interface DomNode {
      getAttribute(name: string): string | null;
      querySelectorAll(selector: string): Iterable<DomNode>;
      querySelector(selector: string): DomNode | null;
      readonly textContent: string | null;
      readonly style: { readonly backgroundColor: string };
    }
    interface ShownRow {
      cohort: string;
      installs: string;
      cells: Record<string, ShownCell>;
    }

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
    const daysFrom = (since: string, until: string): string[] => {
      const days: string[] = [];
      for (let day = since; day <= until; day = nextDay(day)) days.push(day);
      return days;
    };
    const n = (row: Row | undefined, column: string): number => Number(row?.[column] ?? 0);
    const mondayOf = (day: string): string => addDays(day, -((new Date(`${day}T00:00:00Z`).getUTCDay() + 6) % 7));

    async function performanceByDay(since: string, until: string): Promise<Map<string, Row>> {
      const rows = await m.api('performance', {
        group_by: 'day',
        since_ms: localDayStartMs(since, zone),
        until_ms: localDayStartMs(nextDay(until), zone),
        limit: 1000,
      });
      return new Map(rows.map((row) => [String(row.day), row]));
    }

    /** The matrix as shown: each row's cohort, installs and cells (text, exact value, title, colour). */
    async function shownMatrix(): Promise<{ rows: ShownRow[]; average: ShownRow; revenue: string | null; grain: string | null }> {
      const matrix = m.page.getByTestId('cohort-matrix');
      await matrix.waitFor({ timeout: 30_000 });
      return matrix.evaluate((element) => {
        const table = element as unknown as DomNode;
        const read = (tr: DomNode) => {
          const cells: Record<string, { text: string; value: string | null; title: string | null; coloured: boolean }> = {};
          for (const td of tr.querySelectorAll('td[data-col]')) {
            cells[td.getAttribute('data-col') ?? ''] = {
              text: td.textContent ?? '',
              value: td.getAttribute('data-value'),
              title: td.getAttribute('title'),
              coloured: td.style.backgroundColor !== '',
            };
          }
          return { cohort: tr.getAttribute('data-cohort') ?? '', installs: cells.installs?.text ?? '', cells };
        };
        return {
          rows: [...table.querySelectorAll('tbody tr')].map(read),
          average: read(table.querySelector('tfoot tr') as DomNode),
          revenue: table.getAttribute('data-revenue'),
          grain: table.getAttribute('data-grain'),
        };
      });
    }

    const RETENTION = [
      ['d1', 'retained_d1', 'd1_mature'],
      ['d7', 'retained_d7', 'd7_mature'],
      ['d30', 'retained_d30', 'd30_mature'],
    ] as const;
    const REVENUE = [
      ['rev_d0', 'cohort_revenue_d0_usd', 'd0_mature'],
      ['rev_d7', 'cohort_revenue_d7_usd', 'd7_mature'],
      ['rev_d30', 'cohort_revenue_d30_usd', 'd30_mature'],
    ] as const;

    function expectBlankImmature(cell: ShownCell | undefined): void {
      expect(cell?.text).toBe(BLANK);
      expect(cell?.value).toBeNull();
      expect(cell?.title).toMatch(/^not final until \d{4}-\d{2}-\d{2}$/);
      expect(cell?.coloured).toBe(false);
    }

    describe('the Cohorts page', () => {
      it('shows the performance report’s cohorts per install day, blank exactly where the window has not elapsed, with weighted averages of the elapsed ones', async () => {
        const since = addDays(today, -35);
        const until = addDays(today, -1);
        const days = daysFrom(since, until);
        await m.open('cohorts', { period: 'custom', since, until });
        const shown = await shownMatrix();
        const api = await performanceByDay(since, until);
        expect(shown.grain).toBe('day');
        expect(shown.rows.map((row) => row.cohort)).toEqual(days);
        const hasCost = [...api.values()].some((row) => n(row, 'cost_usd') > 0);
        expect(hasCost).toBe(true); // the simulator uploads cost: revenue reads as ROAS
        expect(shown.revenue).toBe('roas');

        let blankD7 = 0;
        for (const row of shown.rows) {
          const report = api.get(row.cohort);
          const installs = n(report, 'installs');
          expect(Number(row.installs.replace(/,/g, ''))).toBe(installs);
          for (const [key, counter, flag] of [...RETENTION, ...REVENUE]) {
            const cell = row.cells[key];
            // A day the report has no row for had no installs and no cost: its flags are the rule's, its figures blank.
            if (report && report[flag] !== true) {
              expectBlankImmature(cell);
              if (key === 'd7') blankD7 += 1;
              continue;
            }
            const whole = key.startsWith('rev') ? n(report, 'cost_usd') : installs;
            if (!report || whole === 0) {
              expect(cell?.text).toBe(BLANK);
              continue;
            }
            expect(Number(cell?.value)).toBeCloseTo(n(report, counter) / whole, 9);
            if (!key.startsWith('rev')) expect(Number(cell?.value)).toBeCloseTo(n(report, `${key}_rate`), 4);
            expect(cell?.text).toMatch(/^\d[\d,]*\.\d %$/);
            expect(cell?.coloured).toBe(true);
          }
        }
        // A period ending yesterday: D7 (and D30) cannot have elapsed for its last days, and say so.
        expect(blankD7).toBeGreaterThanOrEqual(7);
        const last = shown.rows[shown.rows.length - 1] as ShownRow;
        for (const key of ['d1', 'd7', 'd30', 'rev_d7', 'rev_d30']) expectBlankImmature(last.cells[key]);
        // No cell reads 0 % where the window has not elapsed.
        for (const row of shown.rows)
          for (const [key, , flag] of [...RETENTION, ...REVENUE])
            if (api.get(row.cohort)?.[flag] === false) expect(row.cells[key]?.text).not.toMatch(/^0\.0 %$/);

        // The weighted average: summed counters over summed installs (or cost) of the mature days only.
        const reports = [...api.values()];
        expect(Number(shown.average.installs.replace(/,/g, ''))).toBe(reports.reduce((s, r) => s + n(r, 'installs'), 0));
        for (const [key, counter, flag] of [...RETENTION, ...REVENUE]) {
          const mature = reports.filter((r) => r[flag] === true);
          const part = mature.reduce((s, r) => s + n(r, counter), 0);
          const whole = mature.reduce((s, r) => s + n(r, key.startsWith('rev') ? 'cost_usd' : 'installs'), 0);
          const cell = shown.average.cells[key];
          if (whole === 0) expect(cell?.value).toBeNull();
          else expect(Number(cell?.value)).toBeCloseTo(part / whole, 9);
        }
        await m.shoot('cohorts');
        expect(m.consoleErrors).toEqual([]);
      });

      it('sums Monday weeks, mature only when every day of the week is', async () => {
        const since = addDays(today, -35);
        const until = addDays(today, -1);
        const days = daysFrom(since, until);
        await m.open('cohorts', { period: 'custom', since, until });
        await m.page.getByTestId('cohort-matrix').waitFor({ timeout: 30_000 });
        await m.page.getByLabel('Rows', { exact: true }).selectOption('week');
        await m.page.locator('[data-testid="cohort-matrix"][data-grain="week"]').waitFor({ timeout: 30_000 });
        expect(m.page.url()).toContain('grain=week');
        const shown = await shownMatrix();
        const api = await performanceByDay(since, until);
        const weeks = [...new Set(days.map(mondayOf))];
        expect(shown.rows.map((row) => row.cohort)).toEqual(weeks);
        for (const row of shown.rows) {
          const inWeek = days.filter((day) => mondayOf(day) === row.cohort);
          const reports = inWeek.map((day) => api.get(day));
          const installs = reports.reduce((s, r) => s + n(r, 'installs'), 0);
          expect(Number(row.installs.replace(/,/g, ''))).toBe(installs);
          for (const [key, counter, flag] of RETENTION) {
            // A day without a row of the report (no installs, no cost) matures by the report's own rule.
            const mature = reports.every((r, i) => (r ? r[flag] === true : maturityOf(inWeek[i] as string, zone, Date.now())[flag]));
            const cell = row.cells[key];
            if (!mature) expectBlankImmature(cell);
            else if (installs > 0) expect(Number(cell?.value)).toBeCloseTo(reports.reduce((s, r) => s + n(r, counter), 0) / installs, 9);
          }
        }
      });
    });

    describe('the Cohorts page split by partner', () => {
      it('gives each partner its installs and weighted D1, D7, D30 over its elapsed cohorts, a trend line each, and cards at 390 px', async () => {
        const since = addDays(today, -35);
        const until = addDays(today, -1);
        await m.open('cohorts', { period: 'custom', since, until, split: 'partner' });
        const table = m.page.getByTestId('cohort-split-table');
        await table.waitFor({ timeout: 30_000 });
        const rows = await m.api('performance', {
          group_by: 'day,partner',
          since_ms: localDayStartMs(since, zone),
          until_ms: localDayStartMs(nextDay(until), zone),
          limit: 1000,
        });
        const partners = [...new Set(rows.map((row) => String(row.partner)))];
        expect(partners.length).toBeGreaterThan(1);
        expect(
          (
            await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => (tr as unknown as DomNode).getAttribute('data-value')))
          ).sort(),
        ).toEqual([...partners].sort());
        for (const partner of partners) {
          const its = rows.filter((row) => row.partner === partner);
          const installs = its.reduce((s, r) => s + n(r, 'installs'), 0);
          expect(await table.locator(`tr[data-value="${partner}"] td[data-col="installs"]`).textContent()).toBe(count(installs));
          for (const [key, counter, flag] of RETENTION) {
            const mature = its.filter((r) => r[flag] === true);
            const whole = mature.reduce((s, r) => s + n(r, 'installs'), 0);
            const value = await table.locator(`tr[data-value="${partner}"] td[data-col="${key}"]`).getAttribute('data-value');
            if (whole === 0) expect(value).toBeNull();
            else expect(Number(value)).toBeCloseTo(mature.reduce((s, r) => s + n(r, counter), 0) / whole, 9);
          }
        }
        const chart = m.page.getByTestId('cohort-trend-chart');
        await m.page.locator('[data-testid="cohort-trend-chart"][aria-label]').waitFor();
        expect(await chart.getAttribute('aria-label')).toMatch(/^D1 retention by install day and partner/);
        await m.page.setViewportSize(PHONE);
        try {
          await m.page.reload();
          await m.page.getByTestId('cohort-matrix').waitFor({ timeout: 30_000 });
          expect(Number(await m.page.evaluate('document.documentElement.scrollWidth'))).toBeLessThanOrEqual(PHONE.width);
          const d1 = await m.page.locator('[data-testid=cohort-matrix] tfoot td[data-col="d1"]').boundingBox();
          expect(d1 && d1.x >= 0 && d1.x + d1.width <= PHONE.width).toBe(true);
          await m.shoot('cohorts-390');
        } finally {
          await m.page.setViewportSize(DESKTOP);
        }
        expect(m.consoleErrors).toEqual([]);
      });
    });

    describe('the Reports page', () => {
      it('draws a point or bar for every day of the period', async () => {
        const since = addDays(today, -20);
        const until = addDays(today, -1);
        await m.open('reports', { period: 'custom', since, until });
        for (const chart of ['attribution', 'cohorts', 'revenue', 'events']) {
          const canvas = m.page.locator(`[data-testid="chart-${chart}"][data-points]`);
          await canvas.waitFor({ timeout: 30_000 });
          expect(await canvas.getAttribute('data-points')).toBe('20');
          expect(await m.page.getByTestId(`chart-numbers-${chart}`).locator('tbody tr').count()).toBe(20);
        }
        // ARPPU has its own chart, by partner.
        await m.page.locator('[data-testid="chart-arppu"][aria-label]').waitFor();
        expect(await m.page.getByTestId('chart-arppu').getAttribute('aria-label')).toMatch(/^ARPPU \(revenue per paying user\) by partner/);
        // The retention chart's numbers: each day's installs beside its rates, immature ones blank.
        const cohorts = await m.api('cohorts', {
          since_ms: localDayStartMs(since, zone),
          until_ms: localDayStartMs(nextDay(until), zone),
          limit: 1000,
        });
        const lastRow = await m.page.getByTestId('chart-numbers-cohorts').locator('tbody tr').last().locator('td').allTextContents();
        const yesterday = cohorts.find((row) => row.day === until);
        expect(lastRow.slice(0, 2)).toEqual([until, String(n(yesterday, 'installs'))]);
        expect(lastRow.slice(2)).toEqual([BLANK, BLANK, BLANK]);
        await m.shoot('reports');
        expect(m.consoleErrors).toEqual([]);
      });
    });
  });
}
