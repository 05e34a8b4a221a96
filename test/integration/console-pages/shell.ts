// The console's shell in Chromium against a simulated app (test/support/console-browser.ts): the
// view kept in the URL, the header's period presets against an independent oracle in the app's
// zone, a custom range, focus kept while arrowing through the header's selects, a refusal beside
// its field in plain words, Suspend asked first, the runtime-down banner and its recovery, and
// every page of the nav at 390 px (no wider than the screen) and at 1440 px (no console error).

import { runCommand } from '../../../admin/commands';
import { localTarget } from '../../../admin/target';
import { type ConsoleServer, startConsole, TOKEN_HEADER } from '../../../console/server';
import { PRESETS } from '../../../console/ui/period';
import { type Runtime, startRuntime } from '../../../local/runtime';
import { DESKTOP, type MarketerConsole, PHONE } from '../../support/console-browser';
import { fresh } from './fresh';

/** Its tests, on the console every page's suite shares (console-pages.test.ts). */
export function shellSuite(shared: () => MarketerConsole): void {
  describe('console-pages/shell.ts', () => {
    let m: MarketerConsole;
    let zone: string;
    let otherApp: string;
    let otherCompany: { company_key: string; name: string };

    const admin = async <T>(name: string, flags: Record<string, unknown>) => (await runCommand(name, flags, await localTarget())) as T;

    beforeAll(async () => {
      m = shared();
      await fresh(m);
      zone = m.app.time_zone;
      // A second app (another zone) and a second company, so the header's selects have somewhere to go.
      otherApp = (
        await admin<{ app_key: string }>('app create', {
          'company-key': m.simulation.company_key,
          name: 'Berlin App',
          'web-url': 'https://example.com/b',
          'time-zone': 'Europe/Berlin',
        })
      ).app_key;
      const company = await admin<{ company_key: string }>('company create', { name: 'Second Co' });
      otherCompany = { company_key: company.company_key, name: 'Second Co' };
      await admin('app create', { 'company-key': company.company_key, name: 'Second App', 'web-url': 'https://example.com/s' });
    }, 300_000);

    let restarted: Runtime | undefined;
    let second: ConsoleServer | undefined;
    afterAll(async () => {
      await second?.close();
      await restarted?.close();
    });

    // The oracle: the zone's calendar day read with Intl, and calendar arithmetic on UTC dates.
    const localDay = (ms: number, timeZone: string) =>
      new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(ms));
    const plus = (day: string, n: number) => {
      const date = new Date(`${day}T12:00:00Z`);
      date.setUTCDate(date.getUTCDate() + n);
      return date.toISOString().slice(0, 10);
    };
    function presetDays(preset: string, today: string): [string, string] {
      if (preset === 'yesterday') return [plus(today, -1), plus(today, -1)];
      if (preset === 'last7') return [plus(today, -7), plus(today, -1)];
      if (preset === 'last30') return [plus(today, -30), plus(today, -1)];
      if (preset === 'month_to_date') return [`${today.slice(0, 7)}-01`, today];
      let monday = today;
      while (new Date(`${monday}T12:00:00Z`).getUTCDay() !== 1) monday = plus(monday, -1);
      return [plus(monday, -7), plus(monday, -1)];
    }
    const described = ([since, until]: [string, string], timeZone: string) =>
      `${since === until ? since : `${since} – ${until}`} (${timeZone})`;

    const hashParams = () => new URLSearchParams(new URL(m.page.url()).hash.split('?')[1] ?? '');
    const focusedId = () => m.page.evaluate<string>('document.activeElement ? document.activeElement.id : ""');
    const periodText = () => m.page.getByTestId('period-text').innerText();

    /** The nav's routes, read from its links: pages others add are covered without a change here. */
    async function navRoutes(): Promise<string[]> {
      const hrefs = await m.page.locator('nav a').evaluateAll((links) => links.map((link) => link.getAttribute('href') ?? ''));
      return hrefs.map((href) => href.replace(/^#\/?/, '').split('?')[0] ?? '');
    }

    /** Waits until the page has no read in flight ("Loading…" gone). */
    async function settled(page = m.page): Promise<void> {
      await page.locator('main h1').waitFor();
      for (const started = Date.now(); Date.now() - started < 60_000; await page.waitForTimeout(100)) {
        if ((await page.locator('main [aria-busy="true"], main .loading').count()) === 0) return;
      }
      throw new Error(`${page.url()} is still loading after 60 s`);
    }

    describe('the console shell', () => {
      it('keeps company, app, period and grouping in the URL across a reload and a change of page', async () => {
        await m.open('overview', { period: 'last_week', group: 'campaign' });
        expect(await m.page.locator('#pick-period').inputValue()).toBe('last_week');
        expect(await m.page.locator('#pick-app').inputValue()).toBe(m.app.app_key);
        await m.page.reload();
        await m.page.locator('main h1').waitFor();
        expect(await m.page.locator('#pick-period').inputValue()).toBe('last_week');
        expect(await periodText()).toBe(described(presetDays('last_week', localDay(Date.now(), zone)), zone));

        await m.page.locator('nav a', { hasText: 'Tracking links' }).click();
        await m.page.waitForURL(/#\/links\?/);
        await m.page.locator('main h1').waitFor();
        const params = hashParams();
        expect(Object.fromEntries(['company', 'app', 'period', 'group'].map((name) => [name, params.get(name)]))).toEqual({
          company: m.simulation.company_key,
          app: m.app.app_key,
          period: 'last_week',
          group: 'campaign',
        });
        // A new page moves focus to its heading.
        await m.page.locator('main h1:focus').waitFor();
        // A link opened without company and app: the last chosen, written into the URL.
        await m.page.goto(`${m.server.url}#/reports?period=yesterday`);
        await m.page.locator('main h1').waitFor();
        await m.page.waitForURL(/app=/);
        expect(hashParams().get('app')).toBe(m.app.app_key);
        expect(hashParams().get('period')).toBe('yesterday');
      });

      it("shows each preset's days in the app's zone as the oracle computes them", async () => {
        expect(zone).toBe('America/New_York');
        await m.open('overview');
        for (const preset of PRESETS.filter((p) => p !== 'custom')) {
          await m.page.locator('#pick-period').selectOption(preset);
          await m.page.waitForURL(new RegExp(`period=${preset}`));
          // Read now, so a run across local midnight compares with the same day.
          const expected = described(presetDays(preset, localDay(Date.now(), zone)), zone);
          await m.page.getByTestId('period-text').getByText(expected, { exact: true }).waitFor();
        }
        // Another app's zone: the same preset, its own days.
        await m.open('overview', { app: otherApp, period: 'yesterday' });
        await m.page
          .getByTestId('period-text')
          .getByText(described(presetDays('yesterday', localDay(Date.now(), 'Europe/Berlin')), 'Europe/Berlin'))
          .waitFor();
      });

      it('applies a custom range of local days', async () => {
        await m.open('overview');
        await m.page.locator('#pick-period').selectOption('custom');
        await m.page.getByLabel('From (first day)').fill('2026-01-05');
        await m.page.getByLabel('To (last day, included)').fill('2026-01-18');
        await m.page.getByRole('button', { name: 'Apply' }).click();
        await m.page.waitForURL(/period=custom/);
        expect([hashParams().get('since'), hashParams().get('until')]).toEqual(['2026-01-05', '2026-01-18']);
        await m.page.getByTestId('period-text').getByText('2026-01-05 – 2026-01-18 (America/New_York)').waitFor();
        await m.page.reload();
        await m.page.locator('main h1').waitFor();
        expect(await m.page.locator('#pick-period').inputValue()).toBe('custom');
        expect(await m.page.locator('#pick-since').inputValue()).toBe('2026-01-05');
      });

      it('keeps focus in the company, app and period selects while arrowing through them', async () => {
        await m.open('overview', { period: 'last7' });
        await m.page.locator('#pick-period').focus();
        for (const [key, preset] of [
          ['ArrowDown', 'last30'],
          ['ArrowDown', 'last_week'],
          ['ArrowUp', 'last30'],
        ] as const) {
          await m.page.keyboard.press(key);
          await m.page.waitForURL(new RegExp(`period=${preset}`));
          await m.page.locator('main h1').waitFor();
          expect(await focusedId()).toBe('pick-period');
        }

        await m.page.locator('#pick-app').focus();
        const apps = await m.page.locator('#pick-app option').evaluateAll((options) => options.map((o) => o.getAttribute('value')));
        await m.page.keyboard.press(apps.indexOf(m.app.app_key) === 0 ? 'ArrowDown' : 'ArrowUp');
        await m.page.waitForURL(new RegExp(`app=${otherApp}`));
        await m.page.getByTestId('period-text').getByText('(Europe/Berlin)').waitFor();
        expect(await focusedId()).toBe('pick-app');

        await m.page.locator('#pick-company').focus();
        const companies = await m.page
          .locator('#pick-company option')
          .evaluateAll((options) => options.map((o) => o.getAttribute('value')));
        await m.page.keyboard.press(
          companies.indexOf(m.simulation.company_key) < companies.indexOf(otherCompany.company_key) ? 'ArrowDown' : 'ArrowUp',
        );
        await m.page.waitForURL(new RegExp(`company=${otherCompany.company_key}`));
        await m.page.locator('#pick-app option', { hasText: 'Second App' }).waitFor({ state: 'attached' });
        expect(await focusedId()).toBe('pick-company');
      });

      it('shows a refusal in plain words beside the field at fault', async () => {
        await m.open('links');
        const builder = m.page.getByTestId('link-builder');
        await builder.getByLabel('Partner').fill('meta');
        await builder.getByLabel('Campaign').fill('shell_refusal');
        const lookback = builder.getByLabel('Lookback days');
        await lookback.fill('99');
        await builder.getByRole('button', { name: 'Create link' }).click();
        const message = builder.locator('input[name="lookback-days"] + .field-error');
        await message.waitFor();
        expect(await message.innerText()).toBe('Lookback days must be at most 30');
        expect(await lookback.getAttribute('aria-invalid')).toBe('true');
        expect((await lookback.getAttribute('aria-describedby'))?.split(' ')).toContain(await message.getAttribute('id'));
        expect(await focusedId()).toBe(await lookback.getAttribute('id'));
        // The console server's answer: the CLI's message and the flag at fault.
        const answer = await fetch(`${m.server.url}api/command`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [TOKEN_HEADER]: m.server.token },
          body: JSON.stringify({ command: 'link create', flags: { 'app-key': m.app.app_key, partner: 'meta', 'lookback-days': '99' } }),
        });
        expect({ status: answer.status, body: await answer.json() }).toEqual({
          status: 400,
          body: { error: '--lookback-days must be at most 30', flag: 'lookback-days' },
        });
        // Fixed and sent again: the mark goes.
        await lookback.fill('7');
        await builder.getByRole('button', { name: 'Create link' }).click();
        await message.waitFor({ state: 'detached' });
        expect(await lookback.getAttribute('aria-invalid')).toBeNull();
      });

      it('asks before suspending a company, naming it and what suspending does', async () => {
        await m.open('companies');
        const suspend = m.page.getByRole('button', { name: `Suspend ${otherCompany.name}` }).first();
        await suspend.click();
        const dialog = m.page.getByRole('dialog', { name: `Suspend ${otherCompany.name}?` });
        await dialog.waitFor();
        expect(await dialog.innerText()).toContain('401 company_suspended');
        expect(await m.page.evaluate<string>('document.activeElement.textContent')).toBe('Cancel');
        await m.page.keyboard.press('Enter');
        await dialog.waitFor({ state: 'hidden' });
        const state = async () =>
          (await admin<{ companies: { company_key: string; suspended: boolean }[] }>('company list', {})).companies.find(
            (c) => c.company_key === otherCompany.company_key,
          )?.suspended;
        expect(await state()).toBe(false);

        await suspend.click();
        await dialog.getByRole('button', { name: `Suspend ${otherCompany.name}` }).click();
        await m.page.getByRole('button', { name: `Resume ${otherCompany.name}` }).waitFor();
        expect(await state()).toBe(true);
      });

      it('renders every page of the nav at 1440 px without a console error', async () => {
        await m.page.setViewportSize(DESKTOP);
        await m.open('overview');
        m.consoleErrors.length = 0;
        for (const route of await navRoutes()) {
          await m.open(route);
          await settled();
          // Each page's picture at 1440 px is its own test's (with its data shown); this one checks errors.
          expect({ route, errors: m.consoleErrors }).toEqual({ route, errors: [] });
        }
      });

      it('fits every page of the nav in 390 px', async () => {
        await m.page.setViewportSize(PHONE);
        await m.open('overview');
        for (const route of await navRoutes()) {
          await m.open(route);
          await settled();
          await m.shoot(`${route}-390`);
          const width = await m.page.evaluate<number>('document.documentElement.scrollWidth');
          expect({ route, width }).toEqual({ route, width: PHONE.width });
        }
        // Tables wider than the screen scroll inside their frame, which takes focus (keyboard scrolling).
        await m.open('companies');
        expect(await m.page.locator('.table-wrap').first().getAttribute('tabindex')).toBe('0');
        expect(await m.page.evaluate<string>('getComputedStyle(document.querySelector(".table-wrap")).overflowX')).toBe('auto');
        await m.page.setViewportSize(DESKTOP);
      });

      it('says the runtime is not running while it is stopped, and redraws the page when it is back', async () => {
        // A console that looks the runtime up at every request, as `npm run console` does.
        second = await startConsole({ target: localTarget, port: 0 });
        const page = await m.context.newPage();
        const view = `#/overview?${new URLSearchParams({ company: m.simulation.company_key, app: m.app.app_key, period: 'last7' })}`;
        await page.goto(`${second.url}${view}`);
        await page.locator('main h1').waitFor();
        const banner = page.getByTestId('banner');
        expect(await banner.isHidden()).toBe(true);

        await m.stack.close();
        await page.locator('#pick-period').selectOption('last30');
        await banner.waitFor();
        expect(await banner.innerText()).toBe('The runtime is not running: start it with npm start');
        const body = await page.locator('body').innerText();
        expect(body).not.toMatch(/ECONNREFUSED|fetch failed|HTTP 50/);
        expect(await page.locator('main .notice.error').first().innerText()).toBe('The runtime is not running: start it with npm start');

        restarted = await startRuntime({ dataDir: m.stack.dataDir, port: 0, seed: false, trustProxy: true, onError: () => undefined });
        await banner.waitFor({ state: 'hidden', timeout: 20_000 });
        await page.locator('main h1').waitFor();
        await settled(page);
        expect(await page.locator('main .notice.error').count()).toBe(0);

        // The console's own server gone: no socket error either, and what to do.
        await second.close();
        second = undefined;
        await page.locator('#pick-period').selectOption('yesterday');
        await banner.waitFor();
        expect(await banner.innerText()).toBe('The console server is not running: start it with npm run console, then reload this page');
        expect(await page.locator('body').innerText()).not.toMatch(/Failed to fetch|ECONNREFUSED/);
        await page.close();
      });
    });
  });
}
