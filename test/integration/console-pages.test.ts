// The marketer console's pages in Chromium on one simulated app (test/support/console-browser.ts),
// shared by the suites of test/integration/console-pages/: Overview, Cohorts and Reports, SKAN and
// server keys, Breakdown, Tracking links, then the shell, whose last test stops the runtime and
// starts it again. One simulation instead of one per page keeps CI within its budget
// (CONTRIBUTING.md, "The CI budget"). The Overview and Cohorts suites read only what the simulator
// made, so they run first, before the links suite clicks a link and the shell adds apps.
// Each suite starts on the desktop viewport with no console error logged (console-pages/fresh.ts).

import { type MarketerConsole, startMarketerConsole } from '../support/console-browser';
import { breakdownPage } from './console-pages/breakdown';
import { cohortsPage } from './console-pages/cohorts';
import { linksPage } from './console-pages/links';
import { overviewPage } from './console-pages/overview';
import { shellSuite } from './console-pages/shell';
import { skanPage } from './console-pages/skan';

let m: MarketerConsole;
beforeAll(async () => {
  // The redirect caches a link for 30 s; off, so a disable or enable is seen by the next click.
  process.env.LINK_CACHE_TTL_MS = '0';
  // 60 installs over 40 days: what the Overview needs (its presets, top partners and campaigns on
  // past days), and more than the other suites' 24 or 40; each computes its expectations from the
  // Reporting API's answers, so none depends on the count.
  m = await startMarketerConsole({ installs: 60 });
}, 300_000);
afterAll(async () => {
  await m?.stop();
});

jest.setTimeout(120_000);

const shared = () => m;
overviewPage(shared);
cohortsPage(shared);
skanPage(shared);
breakdownPage(shared);
linksPage(shared);
// Last: it stops the runtime and starts it again.
shellSuite(shared);
