// The SKAN page and the server keys' names and last use, in Chromium against a simulated app
// (test/support/console-browser.ts; the simulator sends the app SKAdNetwork and AdAttributionKit
// postbacks signed with the local test keys): the page's sums by partner and postback window and
// its totals equal the test's own sums of the Reporting API's SKAN rows for the same window; the
// chart has a value for every day; the schema editor is on the page; a failed read leaves no
// number behind. On Settings a key made with a name shows it, and its last use once a request to
// the Reporting API has used it.

import { count, usd } from '../../../console/ui/format';
import { localDayOf, localDayStartMs, nextDay } from '../../../functions/domain/common/days';
import { type MarketerConsole, PHONE, shiftDay } from '../../support/console-browser';
import { fresh } from './fresh';

/** Its tests, on the console every page's suite shares (console-pages.test.ts). */
export function skanPage(shared: () => MarketerConsole): void {
  describe('console-pages/skan.ts', () => {
    type Row = Record<string, unknown>;

    let m: MarketerConsole;
    let zone: string;
    let since: string;
    let until: string;

    const addDays = shiftDay;

    beforeAll(async () => {
      m = shared();
      await fresh(m);
      zone = m.app.time_zone;
      // A postback's day is the day it is received: the simulated ones arrived today.
      until = localDayOf(Date.now(), zone);
      since = addDays(until, -6);
    }, 300_000);

    const COUNTS = ['postbacks', 'installs', 'redownloads', 'with_fine_value', 'with_coarse_value', 'without_value'] as const;

    /** Every SKAN row of the window, page after page, straight from GET /api/v1/reports/skan. */
    async function apiRows(): Promise<Row[]> {
      const window = { since_ms: localDayStartMs(since, zone), until_ms: localDayStartMs(nextDay(until), zone) };
      const rows: Row[] = [];
      for (let offset = 0; ; offset += 1000) {
        const page = await m.api('skan', { ...window, limit: 1000, offset });
        rows.push(...page);
        if (page.length < 1000) return rows;
      }
    }

    /** The rows as the page should show them: per partner and window, then the totals, each cell formatted. */
    function expectedCells(rows: Row[]): string[][] {
      const groups = new Map<string, Row[]>();
      for (const row of rows) {
        const key = `${row.partner}\u0000${row.postback_sequence_index}`;
        groups.set(key, [...(groups.get(key) ?? []), row]);
      }
      const cellsOf = (partner: string, window: string, members: Row[]) => [
        partner,
        window,
        ...COUNTS.map((name) => count(members.reduce((sum, r) => sum + Number(r[name]), 0))),
        usd(members.reduce((sum, r) => sum + Math.round(Number(r.estimated_revenue_usd) * 100), 0) / 100),
      ];
      const keys = [...groups.keys()].sort((a, b) => {
        const [pa = '', wa = ''] = a.split('\u0000');
        const [pb = '', wb = ''] = b.split('\u0000');
        return pa < pb ? -1 : pa > pb ? 1 : Number(wa) - Number(wb);
      });
      const spans = ['0–2 days', '3–7 days', '8–35 days'];
      return [
        ...keys.map((key) => {
          const [partner = '', window = ''] = key.split('\u0000');
          return cellsOf(partner, `${window} (${spans[Number(window)]})`, groups.get(key) ?? []);
        }),
        cellsOf('Total', 'all', rows),
      ];
    }

    async function tableCells(selector: string): Promise<string[][]> {
      return m.page.$$eval(`${selector} tbody tr`, (trs) =>
        trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => (td.textContent ?? '').trim())),
      );
    }

    /** Opens the page on the test's window and waits for its sums (or says what it shows instead). */
    async function openSkan(): Promise<void> {
      await m.page.goto(m.url('skan', { period: 'custom', since, until }));
      await m.page.locator('main h1').waitFor();
      const settled = m.page.locator(
        '[data-testid="skan-summary"] table, [data-testid="skan-report"] [role="alert"], [data-testid="skan-report"] .empty',
      );
      await settled
        .first()
        .waitFor({ timeout: 30_000 })
        .catch(() => undefined);
      if (!(await m.page.locator('[data-testid="skan-summary"] table').count()))
        throw new Error(`the SKAN page shows no sums: ${await m.page.locator('main').innerText()}`);
    }

    describe('the SKAN page', () => {
      it("sums the SKAN report by partner and postback window, with totals, as the test sums the API's rows", async () => {
        expect(m.app.skan.sent).toBeGreaterThan(0);
        const rows = await apiRows();
        expect(rows.length).toBeGreaterThan(0);
        // More than one partner and window, so the grouping is tested, not just the totals.
        expect(new Set(rows.map((r) => r.partner)).size).toBeGreaterThan(1);
        expect(new Set(rows.map((r) => r.postback_sequence_index)).size).toBeGreaterThan(1);

        await openSkan();
        expect(await tableCells('[data-testid="skan-summary"]')).toEqual(expectedCells(rows));
        // The simulator's forged postbacks are under no partner: only in the app's invalid total.
        expect(await m.page.getByTestId('skan-invalid').innerText()).toMatch(
          /^Postbacks whose signature failed in this period: [1-9][\d,]* \(counted under no partner\)\.$/,
        );

        // Postbacks per day by partner: a value on every day of the period, the chart's summary naming each partner's total.
        const perDay = await tableCells('[data-testid="skan-per-day"]');
        expect(perDay.map((cells) => cells[0])).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => addDays(since, i)));
        const partners = [...new Set(rows.map((r) => String(r.partner)))].sort();
        const label = await m.page.getByTestId('chart-skan').getAttribute('aria-label');
        for (const partner of partners) {
          const sent = rows.filter((r) => r.partner === partner).reduce((sum, r) => sum + Number(r.postbacks), 0);
          expect(label).toContain(`${partner} ${count(sent)}`);
        }
        const todays = perDay.at(-1) ?? [];
        expect(todays.slice(1)).toEqual(
          partners.map((p) => count(rows.filter((r) => r.partner === p && r.day === until).reduce((s, r) => s + Number(r.postbacks), 0))),
        );

        // The schema editor lives here now, showing the simulator's latest version.
        const latest = Math.max(...m.app.skan.schema_versions);
        await m.page.getByTestId('skan-schema-current').getByText(`Version ${latest}, set`).waitFor();
        await m.page.getByLabel('Schema JSON').waitFor();
        await m.shoot('skan');

        await m.page.setViewportSize(PHONE);
        await openSkan();
        expect(await m.page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
        await m.page.setViewportSize({ width: 1440, height: 900 });
        expect(m.consoleErrors).toEqual([]);
      }, 120_000);

      it('clears the numbers and says why when the read fails', async () => {
        await openSkan();
        const restore = await m.failReportReads('window_too_large');
        try {
          await m.page.goto(m.url('skan', { period: 'last30' }));
          const alert = m.page.locator('[data-testid="skan-report"] [role="alert"]');
          await alert.waitFor();
          expect(await alert.textContent()).not.toMatch(/window_too_large/);
          expect(await m.page.locator('[data-testid="skan-report"] table').count()).toBe(0);
          expect(await m.page.getByTestId('chart-skan').count()).toBe(0);
          // The editor does not depend on the report.
          await m.page.getByLabel('Schema JSON').waitFor();
        } finally {
          await restore();
        }
        // The browser logs the 400 this test made up; nothing else.
        expect(m.consoleErrors.filter((e) => !e.includes('status of 400 (Bad Request)'))).toEqual([]);
        m.consoleErrors.splice(0);
      }, 60_000);
    });

    describe('server keys on Settings', () => {
      it('shows a new key with its name, never used, then its last use once it has read a report', async () => {
        await m.open('settings');
        await m.page.getByRole('link', { name: 'SKAN page' }).waitFor();
        expect(await m.page.getByLabel('Schema JSON').count()).toBe(0);

        await m.page.getByLabel('Key name (optional)').fill('BI export');
        await m.page.getByRole('button', { name: 'New Key' }).click();
        const serverKey = await m.page.getByTestId('new-server-key').inputValue({ timeout: 10_000 });
        const row = m.page.getByRole('row').filter({ hasText: 'BI export' });
        await row.waitFor();
        expect(await row.getByRole('cell').allTextContents()).toEqual(expect.arrayContaining(['BI export', 'read', 'never', 'active']));
        // Keys made without a name (the simulator's) read as unnamed.
        await m.page.getByRole('cell', { name: 'unnamed' }).first().waitFor();

        const beforeMs = Date.now();
        const response = await fetch(`${m.simulation.base_url}/api/v1/reports/attribution?limit=1`, {
          headers: { authorization: `Bearer ${serverKey}` },
        });
        expect(response.status).toBe(200);
        // The last use is written in the background: it shows within moments.
        let lastUsed = 'never';
        for (let attempt = 0; attempt < 20 && lastUsed === 'never'; attempt += 1) {
          await m.page.reload();
          await row.waitFor();
          const cells = await row.getByRole('cell').allTextContents();
          lastUsed = cells[4] ?? '';
          if (lastUsed === 'never') await new Promise((resolve) => setTimeout(resolve, 500));
        }
        expect(lastUsed).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC$/);
        const usedMs = Date.parse(`${lastUsed.replace(' UTC', 'Z').replace(' ', 'T')}`);
        expect(usedMs).toBeGreaterThanOrEqual(Math.floor(beforeMs / 1000) * 1000);
        expect(usedMs).toBeLessThanOrEqual(Date.now());
        await m.shoot('settings-server-keys');
        expect(m.consoleErrors).toEqual([]);
      }, 60_000);
    });
  });
}
