// The console with sign-in in Chromium, as npm start serves it (local/console-site.ts): a viewer and
// an admin of one company, and the operator, each sign in through the stand-in of the user pool (code + PKCE by
// oidc-client-ts), see their name and role and the pages their role opens, and do what it
// allows: the admin makes a link, the deployment's operator reads the Health page, the viewer is refused the same form by the console API in plain
// words. Sign-out forgets the tokens; nothing of them is in localStorage.

import { type Browser, chromium, type Page } from 'playwright-core';
import { runAdmin } from '../../bin/admin';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let stack: LocalStack;
let browser: Browser;
let tenant: Tenant;
const passwords = new Map<string, string>();

beforeAll(async () => {
  stack = await startLocalStack({ consolePort: 0 });
  tenant = await createTenant();
  for (const role of ['viewer', 'admin', 'operator']) {
    // The deployment's operator belongs to no company.
    const company = role === 'operator' ? [] : ['--company-key', tenant.company.company_key];
    const invited = (await runAdmin(['user', 'invite', '--email', `${role}@studio.test`, '--role', role, ...company])) as {
      temporary_password: string;
    };
    passwords.set(role, invited.temporary_password);
  }
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu'] });
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** A fresh browser signed in as the role's user through the stand-in's form; its page errors collected. */
async function signedIn(role: string): Promise<{ page: Page; errors: string[] }> {
  const page = await (await browser.newContext()).newPage();
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(`${stack.console!.url}/#/links?company=${tenant.company.company_key}&app=${tenant.app.app_key}`);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('E-mail').fill(`${role}@studio.test`);
  await page.getByLabel('Password').fill(passwords.get(role) ?? '');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('member').getByText(`${role}@studio.test · ${role}`).waitFor();
  return { page, errors };
}

const navLabels = (page: Page) => page.locator('nav li:not([hidden]) a').allTextContents();

describe('the console with sign-in, in Chromium', () => {
  it('signs a viewer in, shows reports and links but no keys, postbacks or raw data, and refuses them a link', async () => {
    const { page, errors } = await signedIn('viewer');
    // Back on the view asked for before signing in.
    expect(new URL(page.url()).hash).toMatch(/^#\/links\?/);
    const nav = await navLabels(page);
    expect(nav).toEqual(expect.arrayContaining(['Overview', 'Reports', 'Tracking links']));
    for (const hidden of ['Settings: Server Keys', 'Postbacks', 'Raw data', 'Install look-up', 'App links', 'Health'])
      expect(nav).not.toContain(hidden);
    // Whether anything is broken, in the header of every page: the verdict, without the operators' view.
    await page
      .getByTestId('service-status')
      .getByText(/^(Nothing is broken|Something is broken: .+)$/)
      .waitFor();
    expect(await page.getByTestId('service-status').getByRole('link').count()).toBe(0);
    await page.getByTestId('link-builder').getByLabel('Partner').fill('meta');
    await page.getByRole('button', { name: 'Create link' }).click();
    await page.getByText('Your role does not allow this').first().waitFor();
    // The tokens live in this tab's sessionStorage and memory, never in localStorage.
    expect(await page.evaluate('JSON.stringify(localStorage)')).not.toMatch(/eyJ/);
    expect(await page.evaluate('JSON.stringify(sessionStorage)')).toMatch(/id_token/);
    expect(errors).toEqual([]);
  });

  it("signs an admin in, shows an admin's pages but not Raw data or Health, makes a link, and signs out", async () => {
    const { page, errors } = await signedIn('admin');
    const nav = await navLabels(page);
    expect(nav).toEqual(expect.arrayContaining(['Settings: Server Keys', 'Postbacks', 'Install look-up', 'Tracking links']));
    // Raw data (export run, sql) is the CLI's and the operator console's alone; Health sums every company's volumes.
    expect(nav).not.toContain('Raw data');
    expect(nav).not.toContain('Health');
    await page.getByTestId('link-builder').getByLabel('Partner').fill('meta');
    await page.getByRole('button', { name: 'Create link' }).click();
    await page.getByText(/Created link /).waitFor();
    const { changes } = (await runAdmin(['audit', 'log', '--company-key', tenant.company.company_key])) as {
      changes: { command: string; who: { email: string } }[];
    };
    expect(changes.map((change) => [change.command, change.who.email])).toEqual([['link create', 'admin@studio.test']]);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('button', { name: 'Sign in' }).waitFor();
    expect(await page.evaluate('JSON.stringify(sessionStorage)')).not.toMatch(/id_token/);
    expect(errors).toEqual([]);
  });

  it("signs the deployment's operator in and reads the Health page, every part of it", async () => {
    const { page, errors } = await signedIn('operator');
    expect(await navLabels(page)).toContain('Health');
    await page
      .getByTestId('service-status')
      .getByText(/^(Nothing is broken|Something is broken: .+)$/)
      .waitFor();
    // One click from the header's verdict. Health runs in the console API's function, with its environment and IAM policy: every part is read.
    await page.getByTestId('service-status').getByRole('link', { name: 'Health' }).click();
    await page.getByTestId('health-verdict').waitFor();
    await page.getByTestId('health-dead-letter-queues').getByRole('table').waitFor();
    expect(await page.getByTestId('health-view').textContent()).not.toMatch(/could not be read/i);
    expect(errors).toEqual([]);
  });
});
