// The marketer console's pages in Chromium on one simulated app (test/support/console-browser.ts),
// shared by the suites of test/integration/console-pages/: SKAN and server keys, Breakdown,
// Tracking links, then the shell, whose last test stops the runtime and starts it again. One
// simulation instead of one per page keeps CI within its budget (CONTRIBUTING.md, "The CI budget").
// Each suite starts on the desktop viewport with no console error logged (console-pages/fresh.ts).

import { type MarketerConsole, startMarketerConsole } from '../support/console-browser';
import { breakdownPage } from './console-pages/breakdown';
import { linksPage } from './console-pages/links';
import { shellSuite } from './console-pages/shell';
import { skanPage } from './console-pages/skan';

let m: MarketerConsole;
beforeAll(async () => {
  // The redirect caches a link for 30 s; off, so a disable or enable is seen by the next click.
  process.env.LINK_CACHE_TTL_MS = '0';
  m = await startMarketerConsole();
}, 300_000);
afterAll(async () => {
  await m?.stop();
});

jest.setTimeout(120_000);

const shared = () => m;
skanPage(shared);
breakdownPage(shared);
linksPage(shared);
// Last: it stops the runtime and starts it again.
shellSuite(shared);
