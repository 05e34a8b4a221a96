// The console's SKAN schema editor (on the SKAN page) in a real headless browser (as test/integration/console.test.ts
// drives the console) against the local runtime: an app without a schema, a refused paste naming
// the field at fault and storing nothing, a saved version shown as tables and served by the same
// store the SDK endpoint reads, and a file loaded into the editor as the next version.

import { type Browser, chromium, type Page } from 'playwright-core';
import { localTarget } from '../../admin/target';
import { type ConsoleServer, startConsole } from '../../console/server';
import { SkanSchemaStore } from '../../functions/adapters/skan-schema-store';
import { resourceName } from '../../functions/shared/config';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let stack: LocalStack;
let server: ConsoleServer;
let browser: Browser;
let page: Page;
let tenant: Tenant;

beforeAll(async () => {
  stack = await startLocalStack();
  tenant = await createTenant();
  server = await startConsole({ target: await localTarget(), port: 0 });
  browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--no-sandbox', '--disable-gpu', '--no-first-run'] });
  page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  page.on('pageerror', (error) => process.stderr.write(`console page error: ${error.message}\n`));
}, 60_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await stack?.stop();
});

describe("the console's SKAN schema editor", () => {
  it('refuses a schema naming the field, saves a valid one as a new version, shows it, and loads a file as the next', async () => {
    const store = new SkanSchemaStore(resourceName.table('tenants'));
    await page.goto(`${server.url}#/skan`);
    const current = page.getByTestId('skan-schema-current');
    await current.getByText('No schema yet').waitFor({ timeout: 20_000 });

    const editor = page.getByLabel('Schema JSON');
    await editor.fill(JSON.stringify({ fine: [{ value: 64, revenue_usd: [1, 2] }], coarse: [] }));
    await page.getByRole('button', { name: 'Save new version' }).click();
    await page.getByTestId('skan-schema-result').getByText('fine[0].value: must be a whole number from 0 to 63').waitFor();
    expect(await store.active(tenant.app.app_id)).toBeUndefined();

    // The editor starts from docs/ios.md's example when the app has none: saved as it is.
    await page.reload();
    await current.getByText('No schema yet').waitFor();
    await page.getByRole('button', { name: 'Save new version' }).click();
    await page.getByTestId('skan-schema-result').getByText('Version 1 of the schema stored and active for Test App.').waitFor();
    await current.getByText('Version 1, set').waitFor();
    await page.getByRole('region', { name: 'Fine values' }).getByRole('cell', { name: '$10.00 to $20.00' }).waitFor();
    await page.getByRole('region', { name: 'Lock rules' }).getByRole('cell', { name: 'purchase' }).waitFor();
    expect((await store.active(tenant.app.app_id))?.schema.fine).toEqual([{ value: 63, revenue_usd: [10, 20], events: ['purchase'] }]);

    const next = { fine: [{ value: 7, revenue_usd: [0.5, 1.5] }], coarse: [{ window: 2, value: 'low', revenue_usd: [0, 1] }] };
    await page
      .locator('#skan-schema-file')
      .setInputFiles({ name: 'schema.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(next)) });
    await page.waitForFunction(`document.getElementById('skan-schema-json').value.includes('"value":7')`);
    await page.getByRole('button', { name: 'Save new version' }).click();
    await current.getByText('Version 2, set').waitFor();
    await page.getByRole('region', { name: 'Coarse values' }).getByRole('cell', { name: 'low' }).waitFor();
    expect(await store.active(tenant.app.app_id)).toMatchObject({ version: 2, schema: { fine: [{ value: 7 }], lock: [] } });
    expect((await store.version(tenant.app.app_id, 1))?.schema.fine[0]?.value).toBe(63);
  }, 60_000);
});
