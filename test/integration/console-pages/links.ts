// The Tracking links page in Chromium against the simulator's app (test/support/console-browser.ts):
// each link's clicks and installs equal `link stats` for the same window, a network preset fills
// the builder and its URL keeps the macros literal, a duplicate needs a second confirmation, and a
// link is edited, disabled (GET /l/<id> answers 404) and enabled again (302).

import { runAdmin } from '../../../bin/admin';
import { pct } from '../../../console/ui/format';
import { addDays } from '../../../console/ui/period';
import { localDayOf, localDayStartMs, nextDay } from '../../../functions/domain/common/days';
import { DESKTOP, type MarketerConsole, PHONE } from '../../support/console-browser';
import { fresh } from './fresh';

/** Its tests, on the console every page's suite shares (console-pages.test.ts). */
export function linksPage(shared: () => MarketerConsole): void {
  describe('console-pages/links.ts', () => {
    const IPHONE =
      'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';

    interface ListedLink {
      link_id: string;
      partner: string;
      campaign?: string;
      web_url?: string;
      deep_link?: Record<string, string>;
      disabled: boolean;
      honeypot: boolean;
    }

    let mc: MarketerConsole;
    beforeAll(async () => {
      // The redirect caches a link for 30 s: console-pages.test.ts starts the stack with it off, so a
      // disable or enable is seen by the next click.
      mc = shared();
      await fresh(mc);
      await mc.context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: mc.server.url });
    }, 300_000);

    const listLinks = async () => (await runAdmin(['link', 'list', '--app-key', mc.app.app_key])).links as ListedLink[];

    /** The simulated run's days up to today, in the app's zone: every click the simulator made is in it. */
    function runPeriod(): { since: string; until: string; sinceMs: number; untilMs: number } {
      const zone = mc.app.time_zone;
      const since = addDays(localDayOf(mc.simulation.window.sinceMs, zone), -1);
      const until = localDayOf(Date.now(), zone);
      return { since, until, sinceMs: localDayStartMs(since, zone), untilMs: localDayStartMs(nextDay(until), zone) };
    }

    async function rowOf(linkId: string) {
      const row = mc.page.getByTestId('links-table').locator('tbody tr', { has: mc.page.locator('code', { hasText: linkId }) });
      await row.waitFor();
      return row;
    }

    describe('the Tracking links page', () => {
      it("shows each link's clicks, installs and conversion rate as link stats counts them over the period", async () => {
        const { page } = mc;
        const period = runPeriod();
        await mc.open('links', { period: 'custom', since: period.since, until: period.until });
        const stats = (
          await runAdmin([
            'link',
            'stats',
            '--app-key',
            mc.app.app_key,
            '--since-ms',
            String(period.sinceMs),
            '--until-ms',
            String(period.untilMs),
          ])
        ).links as { link_id: string; clicks: number; installs: number }[];
        const links = await listLinks();
        // The simulator clicked its partners' links and people installed from them: there is something to compare.
        expect(stats.some((s) => s.clicks > 0)).toBe(true);
        expect(stats.some((s) => s.installs > 0)).toBe(true);

        const table = page.getByTestId('links-table');
        await table.locator('tbody tr').first().waitFor({ timeout: 20_000 });
        expect(await table.locator('tbody tr').count()).toBe(links.length);
        for (const link of links) {
          const cells = (await rowOf(link.link_id)).locator('td');
          const stat = stats.find((s) => s.link_id === link.link_id) ?? { clicks: 0, installs: 0 };
          expect(await cells.nth(1).innerText()).toBe(link.partner);
          expect(await cells.nth(3).innerText()).toContain(link.disabled ? 'disabled' : 'active');
          expect(Number((await cells.nth(4).innerText()).replace(/,/g, ''))).toBe(stat.clicks);
          expect(Number((await cells.nth(5).innerText()).replace(/,/g, ''))).toBe(stat.installs);
          expect(await cells.nth(6).innerText()).toBe(stat.clicks > 0 ? pct(stat.installs / stat.clicks) : '–');
        }
        await mc.shoot('links');
      });

      it("copies a listed link with its network's macros literal", async () => {
        const { page } = mc;
        const meta = (await listLinks()).find((l) => l.partner === 'meta');
        if (!meta) throw new Error('the simulator made no meta link');
        const row = await rowOf(meta.link_id);
        await row.getByRole('button', { name: `Copy the URL of link ${meta.link_id}` }).click();
        await row.getByText("Copied, with Meta (Facebook, Instagram)'s macros").waitFor();
        const copied = await page.evaluate('navigator.clipboard.readText()');
        expect(copied).toBe(
          `${mc.simulation.base_url}/l/${meta.link_id}?sub1={{campaign.id}}&sub2={{adset.id}}&sub3={{ad.id}}&sub4={{site_source_name}}&sub5={{placement}}`,
        );
      });

      let tiktokLink = '';
      it('fills the builder from a network preset, and the URL to give keeps its macros literal', async () => {
        const { page } = mc;
        const builder = page.getByTestId('link-builder');
        await builder.getByLabel('Network preset').selectOption({ label: 'TikTok' });
        expect(await builder.getByLabel('Partner').inputValue()).toBe('tiktok');
        expect(await builder.getByLabel('click_id').inputValue()).toBe('__CALLBACK_PARAM__');
        expect(await builder.getByLabel('sub1').inputValue()).toBe('__CAMPAIGN_ID__');
        await page
          .getByTestId('preset-info')
          .getByText(/click_id = callback \(click\) id/)
          .waitFor();
        // Apple Ads has no click URL: said, and nothing is filled.
        await builder.getByLabel('Network preset').selectOption({ label: 'Apple Ads (Search Ads)' });
        await page
          .getByTestId('preset-info')
          .getByText(/measured through the AdServices token/)
          .waitFor();
        expect(await builder.getByLabel('Partner').inputValue()).toBe('tiktok');
        await builder.getByLabel('Network preset').selectOption({ label: 'TikTok' });

        await builder.getByLabel('Campaign').fill('preset_check');
        await builder.getByRole('button', { name: 'Create link' }).click();
        const url = await page.getByTestId('link-preview').getByTestId('final-url').inputValue({ timeout: 15_000 });
        tiktokLink = /\/l\/([^?]+)/.exec(url)?.[1] ?? '';
        expect(url).toBe(
          `${mc.simulation.base_url}/l/${tiktokLink}?click_id=__CALLBACK_PARAM__&sub1=__CAMPAIGN_ID__&sub2=__AID__&sub3=__CID__&sub4=__PLACEMENT__&sub5=__CAMPAIGN_NAME__`,
        );
        expect((await listLinks()).find((l) => l.link_id === tiktokLink)).toMatchObject({ partner: 'tiktok', campaign: 'preset_check' });
      });

      it('warns before creating a duplicate, and creates it only on a second confirmation', async () => {
        const { page } = mc;
        const before = await listLinks();
        const existing = before.find((l) => l.partner === 'meta' && l.campaign && !l.honeypot);
        if (!existing?.campaign) throw new Error('the simulator made no meta link with a campaign');
        await mc.open('links');
        const builder = page.getByTestId('link-builder');
        await builder.getByLabel('Network preset').selectOption({ label: 'Meta (Facebook, Instagram)' });
        await builder.getByLabel('Campaign').fill(existing.campaign);
        await builder.getByRole('button', { name: 'Create link' }).click();
        const warning = builder.getByTestId('duplicate-warning');
        await warning
          .getByText(`A link for meta / ${existing.campaign} already exists (${existing.link_id}): create another anyway?`)
          .waitFor({ timeout: 15_000 });
        expect(await listLinks()).toHaveLength(before.length);
        // Create link again warns again: only the warning's own button goes on.
        await builder.getByRole('button', { name: 'Create link' }).click();
        await warning.waitFor();
        expect(await listLinks()).toHaveLength(before.length);
        await warning.getByRole('button', { name: 'Create another anyway' }).click();
        await builder.getByText(/^Created link /).waitFor({ timeout: 15_000 });
        const after = await listLinks();
        expect(after).toHaveLength(before.length + 1);
        expect(after.filter((l) => l.partner === 'meta' && l.campaign === existing.campaign)).toHaveLength(2);
      });

      it('edits a destination and the deep link inline, and link list shows them', async () => {
        const { page } = mc;
        await mc.open('links');
        const row = await rowOf(tiktokLink);
        await row.getByRole('button', { name: `Edit link ${tiktokLink}` }).click();
        const form = page.getByTestId('link-edit-form');
        // A refusal is said beside its field.
        await form.getByLabel('Lookback days').fill('45');
        await form.getByRole('button', { name: 'Save changes' }).click();
        await form.locator('.field-error, .notice.error').first().waitFor();
        await form.getByLabel('Lookback days').fill('7');
        await form.getByLabel('Web URL').fill('https://example.com/edited');
        await form.getByText('Deep link (what the app opens once installed)').click();
        await form.getByLabel('Deep link value').fill('summer_sale');
        await form.getByLabel('Deep link sub 2').fill('red');
        await form.getByRole('button', { name: 'Save changes' }).click();
        await page.getByTestId('link-edit').getByText(`Saved link ${tiktokLink}`).waitFor({ timeout: 15_000 });
        expect((await listLinks()).find((l) => l.link_id === tiktokLink)).toMatchObject({
          web_url: 'https://example.com/edited',
          lookback_days: 7,
          deep_link: { value: 'summer_sale', sub2: 'red' },
        });
      });

      it('clears a deep link field emptied in the edit form, and tries a click: Android at first launch gets the deep link', async () => {
        const { page } = mc;
        await mc.open('links');
        await (await rowOf(tiktokLink)).getByRole('button', { name: `Edit link ${tiktokLink}` }).click();
        const form = page.getByTestId('link-edit-form');
        await form.getByText('Deep link (what the app opens once installed)').click();
        await form.getByLabel('Deep link sub 2').fill('');
        await form.getByRole('button', { name: 'Save changes' }).click();
        await page.getByTestId('link-edit').getByText(`Saved link ${tiktokLink}`).waitFor({ timeout: 15_000 });
        expect((await listLinks()).find((l) => l.link_id === tiktokLink)?.deep_link).toEqual({ value: 'summer_sale' });

        await (await rowOf(tiktokLink)).getByRole('button', { name: `Try link ${tiktokLink}` }).click();
        // The preview of this link, not one an earlier step left open (its button would try that link).
        await page
          .getByTestId('link-preview')
          .getByRole('heading', { name: `Link ${tiktokLink}` })
          .waitFor({ timeout: 15_000 });
        await page.getByTestId('link-preview').getByRole('button', { name: 'First launch on Android' }).click();
        const answer = JSON.parse((await page.getByTestId('first-launch-answer').textContent({ timeout: 15_000 })) ?? '');
        expect(answer).toMatchObject({
          status: 'found',
          attribution: { link_id: tiktokLink, match: 'deterministic' },
          deep_link: { value: 'summer_sale' },
        });
      });

      it('disables a link after confirmation (its clicks get 404) and enables it again (302)', async () => {
        const { page } = mc;
        const click = () => fetch(`${mc.simulation.base_url}/l/${tiktokLink}`, { redirect: 'manual', headers: { 'user-agent': IPHONE } });
        expect((await click()).status).toBe(302);
        let row = await rowOf(tiktokLink);
        await row.getByRole('button', { name: `Disable link ${tiktokLink}` }).click();
        const dialog = page.getByRole('dialog', { name: `Disable link ${tiktokLink}?` });
        await dialog.getByText(/will get 404/).waitFor();
        await dialog.getByRole('button', { name: 'Disable link' }).click();
        row = await rowOf(tiktokLink);
        await row.getByText('disabled', { exact: true }).waitFor({ timeout: 15_000 });
        expect((await listLinks()).find((l) => l.link_id === tiktokLink)?.disabled).toBe(true);
        expect((await click()).status).toBe(404);

        await row.getByRole('button', { name: `Enable link ${tiktokLink}` }).click();
        row = await rowOf(tiktokLink);
        await row.getByText('active', { exact: true }).waitFor({ timeout: 15_000 });
        expect((await click()).status).toBe(302);
      });

      it('fits a 390 px screen: the table scrolls inside its frame', async () => {
        const { page } = mc;
        await page.setViewportSize(PHONE);
        await mc.open('links');
        await page.getByTestId('links-table').locator('tbody tr').first().waitFor({ timeout: 20_000 });
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(PHONE.width);
        await page.setViewportSize(DESKTOP);
      });

      it('renders without a console error (but the refusal the edit step asked for, which Chromium logs)', () => {
        expect(mc.consoleErrors).toEqual([expect.stringMatching(/^Failed to load resource: the server responded with a status of 400/)]);
      });
    });
  });
}
