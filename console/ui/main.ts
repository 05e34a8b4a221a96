import './styles.css';
import { FIRST_DAY, LAST_DAY } from '../../functions/domain/common/days';
import { type ApiError, command, meta, onUnreachable } from './api';
import { flashArea, h, notice, replace } from './dom';
import { plainError } from './errors';
import { appLinksPage } from './pages/app-links';
import { breakdownPage } from './pages/breakdown';
import { cohortsPage } from './pages/cohorts';
import { companiesPage } from './pages/companies';
import { healthPage } from './pages/health';
import { installPage } from './pages/install';
import { linksPage } from './pages/links';
import { overviewPage } from './pages/overview';
import { postbacksPage } from './pages/postbacks';
import { rawDataPage } from './pages/raw-data';
import { reportsPage } from './pages/reports';
import { settingsPage } from './pages/settings';
import { skanPage } from './pages/skan';
import { describePeriod, PRESET_LABELS, PRESETS, type Preset } from './period';
import { signIn, signOut } from './sign-in';
import { selection } from './state';
import { currentRoute, hrefFor, setView } from './view';

/** The pages, by hash route: plain links, so the browser's history, Tab and Enter all work. */
interface Page {
  route: string;
  label: string;
  render: (root: HTMLElement) => Promise<void>;
}

/**
 * With sign-in, the pages beyond reading reports and links, by the command each needs
 * (functions/commands/command-roles.ts says who runs it). `sql` and `export run` are the operator
 * console's alone (admin/commands.ts): the console API serves neither, so Raw data is left out.
 * `health` it serves to operators, who see the Health page; every member sees its verdict
 * (`status`) in the header.
 */
const NEEDS: Readonly<Record<string, string>> = {
  settings: 'server-key list',
  'app-links': 'app update',
  postbacks: 'postback list',
  install: 'install show',
  'raw-data': 'sql',
  health: 'health',
};

/** In the nav's order; a page is one entry here (the `overview` one, when present, is the landing page). */
const PAGES: Page[] = [
  { route: 'overview', label: 'Overview', render: overviewPage },
  { route: 'breakdown', label: 'Breakdown', render: breakdownPage },
  { route: 'cohorts', label: 'Cohorts', render: cohortsPage },
  { route: 'skan', label: 'SKAN', render: skanPage },
  { route: 'companies', label: 'Companies and apps', render: companiesPage },
  { route: 'settings', label: 'Settings: Server Keys', render: settingsPage },
  { route: 'links', label: 'Tracking links', render: linksPage },
  { route: 'app-links', label: 'App links', render: appLinksPage },
  { route: 'postbacks', label: 'Postbacks', render: postbacksPage },
  { route: 'reports', label: 'Reports', render: reportsPage },
  { route: 'install', label: 'Install look-up', render: installPage },
  { route: 'raw-data', label: 'Raw data', render: rawDataPage },
  { route: 'health', label: 'Health', render: healthPage },
];

/** The page an empty or unknown route shows. */
const home = (): Page => PAGES.find((page) => page.route === 'overview') ?? (PAGES[0] as Page);

const root = consoleRoot();
const main = h('main', { id: 'main', tabindex: -1 });
const banner = h('div', { class: 'banner', role: 'alert', hidden: true, 'data-testid': 'banner' });
const brandTarget = h('span', { class: 'target' });
const memberArea = h('span', { class: 'member', 'data-testid': 'member' });
/** With sign-in, whether anything is broken (`status`), for every member, on every page. */
const serviceStatus = h('span', { class: 'service-status', 'data-testid': 'service-status', role: 'status' });
let rendering = 0;
let shownRoute: string | undefined;

const currentPage = (): Page => PAGES.find((page) => page.route === currentRoute()) ?? home();

/*
 * The header is built once and then updated in place: a <select> being arrowed through keeps its
 * focus (and its open state) because it is never replaced.
 */
const companySelect = h('select', {
  id: 'pick-company',
  onchange: () => void selection.selectCompany(companySelect.value),
});
const appSelect = h('select', { id: 'pick-app', onchange: () => void selection.selectApp(appSelect.value) });
const companyNone = h('span', { class: 'none' }, 'none yet');
const appNone = h('span', { class: 'none' }, 'none yet');
const periodSelect = h(
  'select',
  { id: 'pick-period', onchange: () => choosePreset(periodSelect.value as Preset) },
  PRESETS.map((preset) => h('option', { value: preset }, PRESET_LABELS[preset])),
);
// The days a period may name (docs/reports.md, "Days"): the browser refuses others before Apply.
const dayRange = { min: FIRST_DAY, max: LAST_DAY };
const sinceInput = h('input', { type: 'date', id: 'pick-since', 'aria-label': 'From (first day)', ...dayRange });
const untilInput = h('input', { type: 'date', id: 'pick-until', 'aria-label': 'To (last day, included)', ...dayRange });
const customRange = h(
  'form',
  { class: 'custom-range', 'aria-label': 'Custom period', hidden: true },
  h('label', { for: 'pick-since' }, 'From'),
  sinceInput,
  h('label', { for: 'pick-until' }, 'To'),
  untilInput,
  h('button', { type: 'submit', class: 'secondary' }, 'Apply'),
);
const periodText = h('span', { class: 'period-text', 'data-testid': 'period-text', 'aria-live': 'polite' });
const navList = h('ul');
const navLinks = new Map<Page, HTMLAnchorElement>();

customRange.addEventListener('submit', (event) => {
  event.preventDefault();
  if (!sinceInput.value || !untilInput.value) return;
  customOpen = false;
  setView({ period: 'custom', since: sinceInput.value, until: untilInput.value });
});

/** Custom chosen but not applied yet: the range stays open through redraws. */
let customOpen = false;

function choosePreset(preset: Preset): void {
  customOpen = preset === 'custom';
  if (preset === 'custom') {
    // The range starts as the period shown, to be changed and applied.
    const period = selection.period();
    sinceInput.value = period.since;
    untilInput.value = period.until;
    customRange.hidden = false;
    return;
  }
  setView({ period: preset, since: null, until: null });
}

function updateHeader(): void {
  const companies = selection.companies.map((c) => [c.company_key, c.suspended ? `${c.name} (suspended)` : c.name] as const);
  fillSelect(companySelect, companies, selection.companyKey);
  companySelect.hidden = companies.length === 0;
  companyNone.hidden = companies.length > 0;
  const apps = selection.apps.map((a) => [a.app_key, a.name] as const);
  fillSelect(appSelect, apps, selection.appKey);
  appSelect.hidden = apps.length === 0;
  appNone.hidden = apps.length > 0;

  const period = selection.period();
  const shown = customOpen ? 'custom' : period.preset;
  if (periodSelect.value !== shown) periodSelect.value = shown;
  customRange.hidden = shown !== 'custom';
  if (period.preset === 'custom' && !customOpen) {
    sinceInput.value = period.since;
    untilInput.value = period.until;
  }
  periodText.textContent = describePeriod(period);

  const page = currentPage();
  for (const [p, link] of navLinks) {
    link.href = hrefFor(p.route);
    if (p === page) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
}

/** Options replaced only when the list changed; the value set in place. */
function fillSelect(select: HTMLSelectElement, options: readonly (readonly [string, string])[], value: string | undefined): void {
  const same =
    select.options.length === options.length &&
    options.every(([key, label], i) => select.options[i]?.value === key && select.options[i]?.textContent === label);
  if (!same)
    replace(
      select,
      options.map(([key, label]) => h('option', { value: key }, label)),
    );
  if (value !== undefined && select.value !== value) select.value = value;
}

async function render(focus: boolean): Promise<void> {
  const page = currentPage();
  const run = ++rendering;
  shownRoute = currentRoute();
  updateHeader();
  document.title = `${page.label} · Attribution console`;
  const target = h('div', { 'data-page': page.route });
  if (focus) replace(flashArea);
  replace(main, flashArea, target);
  const rendered = page.render(target);
  // Pages draw their heading before their first read: it takes focus at once, not after the data.
  const heading = () => main.querySelector<HTMLElement>('h1');
  const early = focus ? heading() : null;
  early?.focus();
  try {
    await rendered;
  } catch (error) {
    if (run === rendering) target.append(notice('error', plainError(error)));
  }
  if (focus && !early && run === rendering) (heading() ?? main).focus();
}

/** A new route moves focus to its heading; the same route with other parameters redraws where focus is. */
async function onHashChange(): Promise<void> {
  const moved = currentRoute() !== shownRoute;
  // Another view (a link, Back, a preset chosen): an unapplied custom range closes.
  customOpen = false;
  if (selection.outOfDate) {
    try {
      await selection.refresh({}, true);
    } catch {
      // The page's own read says what is wrong (or the banner does).
    }
  } else selection.writeToUrl();
  await render(moved);
}

/*
 * While the runtime (or the console itself) does not answer: a banner at the top, /api/meta asked
 * every 3 s, and on the first answer the banner goes and the page is drawn again.
 */
const RETRY_MS = 3000;
let retrying: ReturnType<typeof setTimeout> | undefined;
let recovered: () => Promise<void> = () => redrawAll();

function showUnreachable(error: ApiError): void {
  banner.textContent = plainError(error);
  banner.hidden = false;
  if (retrying === undefined) retrying = setTimeout(retry, RETRY_MS);
}

async function retry(): Promise<void> {
  try {
    selection.meta = await meta();
  } catch {
    retrying = setTimeout(retry, RETRY_MS);
    return;
  }
  retrying = undefined;
  await recovered();
  // Gone once the page is drawn again (unless the redraw found it down again).
  if (retrying === undefined) {
    banner.hidden = true;
    banner.textContent = '';
  }
}

async function redrawAll(): Promise<void> {
  showTarget();
  await selection.refresh({}, true).catch(() => undefined);
  await render(false);
}

function showTarget(): void {
  const about = selection.meta;
  if (about) replace(brandTarget, about.target.stack ? `stack ${about.target.stack}` : 'local runtime', ' · ', about.target.base_url);
  const member = about?.member;
  if (!member) return;
  replace(
    memberArea,
    `${member.email} · ${member.role}`,
    h('button', { type: 'button', class: 'secondary', onclick: () => void signOut() }, 'Sign out'),
  );
  // The console API refuses the rest whatever the page shows; the nav leaves out what the role cannot open.
  for (const [page, link] of navLinks) {
    const needs = NEEDS[page.route];
    if (link.parentElement) link.parentElement.hidden = needs !== undefined && !about.commands.includes(needs);
  }
  if (about.commands.includes('status')) void showServiceStatus(about.commands.includes('health'));
}

/** The verdict of the health view, in a word, and its problems when there are any; operators get a link to the whole view. */
async function showServiceStatus(withView: boolean): Promise<void> {
  try {
    const { status, problems } = await command<{ status: 'ok' | 'broken'; problems: string[] }>('status');
    const more = withView ? h('a', { href: hrefFor('health') }, 'Health') : null;
    replace(
      serviceStatus,
      status === 'ok'
        ? h('span', { class: 'ok' }, 'Nothing is broken')
        : h('span', { class: 'broken', title: problems.join('\n') }, `Something is broken: ${problems.join('; ')}`),
      more ? ' · ' : '',
      more,
    );
  } catch (error) {
    replace(serviceStatus, h('span', { class: 'broken' }, `Service status could not be read: ${plainError(error)}`));
  }
}

async function start(): Promise<void> {
  if (!(await signIn(root))) return;
  for (const page of PAGES) navLinks.set(page, h('a', { href: hrefFor(page.route) }, page.label));
  replace(
    navList,
    PAGES.map((page) => h('li', null, navLinks.get(page))),
  );
  replace(
    root,
    h('a', { href: '#main', class: 'skip' }, 'Skip to the page'),
    banner,
    h(
      'header',
      null,
      h('div', { class: 'brand' }, h('strong', null, 'Attribution console'), brandTarget, memberArea, serviceStatus),
      h(
        'div',
        { class: 'picker' },
        h('span', { class: 'pick' }, h('label', { for: 'pick-company' }, 'Company'), companySelect, companyNone),
        h('span', { class: 'pick' }, h('label', { for: 'pick-app' }, 'App'), appSelect, appNone),
        h('span', { class: 'pick' }, h('label', { for: 'pick-period' }, 'Period'), periodSelect),
        customRange,
        periodText,
      ),
      h('nav', { 'aria-label': 'Pages' }, navList),
    ),
    main,
  );
  onUnreachable(showUnreachable);
  selection.onChange(() => void render(false));
  window.addEventListener('hashchange', () => void onHashChange());
  try {
    selection.meta = await meta();
  } catch (error) {
    // Not started yet: the banner (runtime down) retries and starts the console when it answers.
    if ((error as ApiError).unreachable) {
      recovered = async () => {
        recovered = () => redrawAll();
        await redrawAll();
      };
      return;
    }
    throw error;
  }
  showTarget();
  await selection.refresh({}, true);
  await render(false);
}

start().catch((error: unknown) => replace(main, notice('error', `The console could not start: ${plainError(error)}`)));

function consoleRoot(): HTMLElement {
  const element = document.getElementById('console');
  if (!element) throw new Error('the page has no #console element to render into');
  return element;
}
