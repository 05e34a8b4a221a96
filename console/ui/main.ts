import './styles.css';
import { meta } from './api';
import { flashArea, h, notice, replace } from './dom';
import { breakdownPage } from './pages/breakdown';
import { companiesPage } from './pages/companies';
import { installPage } from './pages/install';
import { linksPage } from './pages/links';
import { postbacksPage } from './pages/postbacks';
import { rawDataPage } from './pages/raw-data';
import { reportsPage } from './pages/reports';
import { settingsPage } from './pages/settings';
import { selection } from './state';

/** The pages, by hash route: plain links, so the browser's history, Tab and Enter all work. */
interface Page {
  route: string;
  label: string;
  render: (root: HTMLElement) => Promise<void>;
}

/** The page an unknown route shows. */
const HOME: Page = { route: 'companies', label: 'Companies and apps', render: companiesPage };
const PAGES: Page[] = [
  HOME,
  { route: 'breakdown', label: 'Breakdown', render: breakdownPage },
  { route: 'settings', label: 'Settings: Server Keys', render: settingsPage },
  { route: 'links', label: 'Tracking links', render: linksPage },
  { route: 'postbacks', label: 'Postbacks', render: postbacksPage },
  { route: 'reports', label: 'Reports', render: reportsPage },
  { route: 'install', label: 'Install look-up', render: installPage },
  { route: 'raw-data', label: 'Raw data', render: rawDataPage },
];

const root = consoleRoot();
const main = h('main', { id: 'main', tabindex: -1 });
const nav = h('nav', { 'aria-label': 'Pages' });
const picker = h('div', { class: 'picker' });
let rendering = 0;

function currentPage() {
  const route = location.hash.replace(/^#\/?/, '').split('/')[0];
  return PAGES.find((page) => page.route === route) ?? HOME;
}

async function render(focus: boolean): Promise<void> {
  const page = currentPage();
  const run = ++rendering;
  replace(
    nav,
    h(
      'ul',
      null,
      PAGES.map((p) => h('li', null, h('a', { href: `#/${p.route}`, 'aria-current': p === page ? 'page' : null }, p.label))),
    ),
  );
  document.title = `${page.label} · Attribution console`;
  const target = h('div', { 'data-page': page.route });
  if (focus) replace(flashArea);
  replace(main, flashArea, target);
  try {
    await page.render(target);
  } catch (error) {
    if (run === rendering) target.append(notice('error', (error as Error).message));
  }
  if (focus && run === rendering) (main.querySelector<HTMLElement>('h1') ?? main).focus();
}

function renderPicker(): void {
  const companySelect = h(
    'select',
    { id: 'pick-company', onchange: (event: Event) => void selection.selectCompany((event.target as HTMLSelectElement).value) },
    selection.companies.map((c) =>
      h(
        'option',
        { value: c.company_key, selected: c.company_key === selection.companyKey },
        c.suspended ? `${c.name} (suspended)` : c.name,
      ),
    ),
  );
  const appSelect = h(
    'select',
    { id: 'pick-app', onchange: (event: Event) => void selection.selectApp((event.target as HTMLSelectElement).value) },
    selection.apps.map((a) => h('option', { value: a.app_key, selected: a.app_key === selection.appKey }, a.name)),
  );
  replace(
    picker,
    h('label', { for: 'pick-company' }, 'Company'),
    selection.companies.length ? companySelect : h('span', { class: 'none' }, 'none yet'),
    h('label', { for: 'pick-app' }, 'App'),
    selection.apps.length ? appSelect : h('span', { class: 'none' }, 'none yet'),
  );
}

async function start(): Promise<void> {
  const about = await meta();
  selection.meta = about;
  replace(
    root,
    h('a', { href: '#main', class: 'skip' }, 'Skip to the page'),
    h(
      'header',
      null,
      h(
        'div',
        { class: 'brand' },
        h('strong', null, 'Attribution console'),
        h('span', { class: 'target' }, about.target.stack ? `stack ${about.target.stack}` : 'local runtime', ' · ', about.target.base_url),
      ),
      picker,
      nav,
    ),
    main,
  );
  selection.onChange(() => {
    renderPicker();
    void render(false);
  });
  window.addEventListener('hashchange', () => void render(true));
  await selection.refresh();
}

start().catch((error: Error) => replace(root, notice('error', `The console could not start: ${error.message}`)));

function consoleRoot(): HTMLElement {
  const element = document.getElementById('console');
  if (!element) throw new Error('the page has no #console element to render into');
  return element;
}
