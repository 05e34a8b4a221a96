import { command } from '../api';
import { actionButton, actionForm, code, confirmedButton, copyable, dateTime, flash, h, notice, replace, table } from '../dom';
import { type AppSummary, type Company, selection } from '../state';
import { hrefFor } from '../view';

/** `app show`: the app with its signing secret. */
interface AppDetail extends AppSummary {
  company_id: string;
  signing_secret: string;
  /** The IANA zone whose days the reports count in. */
  time_zone: string;
}

/** Companies and apps: create, suspend, resume; the chosen app's keys and store URLs. */
export async function companiesPage(root: HTMLElement): Promise<void> {
  const companies = h('section', { 'aria-labelledby': 'companies-h' });
  const apps = h('section', { 'aria-labelledby': 'apps-h' });
  const detail = h('section', { 'aria-labelledby': 'app-h' });
  replace(root, h('h1', { tabindex: -1 }, 'Companies and apps'), companies, apps, detail);

  replace(
    companies,
    h('h2', { id: 'companies-h' }, 'Companies'),
    table<Company>(
      'Companies',
      [
        { label: 'Name', cell: (c) => (c.company_key === selection.companyKey ? h('strong', null, c.name, ' (selected)') : c.name) },
        { label: 'Company key', cell: (c) => code(c.company_key) },
        { label: 'Plan', cell: (c) => c.plan },
        { label: 'Monthly cap', cell: (c) => (c.monthly_cap === null ? 'none' : c.monthly_cap.toLocaleString('en-US')), numeric: true },
        {
          label: 'State',
          cell: (c) => (c.suspended ? h('span', { class: 'badge warn' }, 'suspended') : h('span', { class: 'badge ok' }, 'active')),
        },
        {
          label: 'Actions',
          cell: (c) => [
            c.company_key === selection.companyKey
              ? null
              : actionButton('Select', () => selection.selectCompany(c.company_key), {
                  class: 'secondary',
                  'aria-label': `Select ${c.name}`,
                }),
            c.suspended
              ? actionButton(
                  'Resume',
                  async () => {
                    await command('company resume', { 'company-key': c.company_key });
                    await selection.refresh();
                  },
                  { class: 'secondary', 'aria-label': `Resume ${c.name}` },
                )
              : confirmedButton(
                  'Suspend',
                  {
                    title: `Suspend ${c.name}?`,
                    text:
                      `Within a minute, the events of every app of ${c.name} are refused (401 company_suspended) and are ` +
                      'not counted. Its reports stay readable, and Resume accepts events again.',
                    action: `Suspend ${c.name}`,
                  },
                  async () => {
                    await command('company suspend', { 'company-key': c.company_key });
                    await selection.refresh();
                  },
                  { class: 'danger', 'aria-label': `Suspend ${c.name}` },
                ),
          ],
        },
      ],
      selection.companies,
      'No company yet: create one below.',
    ),
    h(
      'p',
      { class: 'hint' },
      "A suspended company's apps have their events refused (401 company_suspended) within a minute; its reports stay readable.",
    ),
    h('h3', null, 'New company'),
    actionForm({
      label: 'New company',
      testId: 'new-company',
      submit: 'Create company',
      fields: [
        { flag: 'name', label: 'Name', required: true },
        { flag: 'plan', label: 'Plan', type: 'select', options: ['free', 'paid'] },
        { flag: 'monthly-cap', label: 'Monthly cap (accepted events)', type: 'number', hint: 'Free plan default: 10,000; paid: none.' },
      ],
      run: async (flags) => {
        const created = await command<{ company_key: string }>('company create', flags);
        await selection.refresh({ companyKey: created.company_key, appKey: '' });
        flash('success', `Created company ${flags.name}: ${created.company_key}`);
        return null;
      },
    }),
  );

  const company = selection.company;
  replace(
    apps,
    h('h2', { id: 'apps-h' }, company ? `Apps of ${company.name}` : 'Apps'),
    company
      ? [
          table<AppSummary>(
            `Apps of ${company.name}`,
            [
              { label: 'Name', cell: (a) => (a.app_key === selection.appKey ? h('strong', null, a.name, ' (selected)') : a.name) },
              { label: 'App key', cell: (a) => code(a.app_key) },
              { label: 'Store URLs', cell: (a) => storeUrls(a) },
              { label: 'Probabilistic', cell: (a) => (a.probabilistic ? 'yes' : 'no') },
              { label: 'Created', cell: (a) => dateTime(a.created_ms) },
              {
                label: '',
                cell: (a) =>
                  a.app_key === selection.appKey
                    ? null
                    : actionButton('Select', () => selection.selectApp(a.app_key), {
                        class: 'secondary',
                        'aria-label': `Select app ${a.name}`,
                      }),
              },
            ],
            selection.apps,
            'No app yet: create one below.',
          ),
          h('h3', null, 'New app'),
          actionForm({
            label: 'New app',
            testId: 'new-app',
            submit: 'Create app',
            fields: [
              { flag: 'name', label: 'Name', required: true },
              { flag: 'ios-url', label: 'App Store URL', type: 'url', placeholder: 'https://apps.apple.com/app/id…' },
              {
                flag: 'android-url',
                label: 'Google Play URL',
                type: 'url',
                placeholder: 'https://play.google.com/store/apps/details?id=…',
              },
              { flag: 'web-url', label: 'Web URL', type: 'url', placeholder: 'https://…' },
              { flag: 'probabilistic', label: 'Probabilistic matching (same address and platform)', type: 'checkbox' },
              {
                flag: 'time-zone',
                label: 'Time zone',
                placeholder: 'UTC',
                hint: 'IANA name, e.g. Europe/Berlin: report days are its local days.',
              },
            ],
            run: async (flags) => {
              const created = await command<{ app_key: string }>('app create', { ...flags, 'company-key': company.company_key });
              await selection.refresh({ appKey: created.app_key });
              flash('success', `Created app ${flags.name}: ${created.app_key}`);
              return null;
            },
          }),
        ]
      : notice('info', 'Create or select a company first.'),
  );

  const app = selection.app;
  if (!app) return;
  const shown = await command<AppDetail>('app show', { 'app-key': app.app_key });
  const secret = h('span');
  secret.append(
    actionButton('Reveal signing secret', async () => replace(secret, copyable('Signing secret', shown.signing_secret, 'signing-secret')), {
      class: 'secondary',
    }),
  );
  replace(
    detail,
    h('h2', { id: 'app-h' }, `App: ${shown.name}`),
    h(
      'dl',
      { class: 'facts' },
      fact('App id', code(shown.app_id)),
      fact('App key', copyable('App key', shown.app_key, 'app-key')),
      fact('Company key', copyable('Company key', shown.company_key)),
      fact('Signing secret', secret),
      fact('App Store URL', shown.ios_url ?? 'not set'),
      fact('Google Play URL', shown.android_url ?? 'not set'),
      fact('Web URL', shown.web_url ?? 'not set'),
      fact('Attribution lookback', `${shown.lookback_days} days`),
      fact('Probabilistic matching', shown.probabilistic ? 'on' : 'off'),
      fact('Time zone', shown.time_zone),
      fact('Created', dateTime(shown.created_ms)),
    ),
    actionForm({
      label: 'Change time zone',
      testId: 'app-time-zone',
      submit: 'Change time zone',
      fields: [
        {
          flag: 'time-zone',
          label: 'Time zone',
          required: true,
          value: shown.time_zone,
          hint: 'Applies to data aggregated from now on; `admin rebuild --apply` restates the past.',
        },
      ],
      run: async (flags) => {
        const updated = await command<AppDetail>('app update', { ...flags, 'app-key': shown.app_key });
        flash('success', `The reports of ${updated.name} now count days in ${updated.time_zone}.`);
        await selection.refresh({ appKey: shown.app_key });
        return null;
      },
    }),
    h(
      'p',
      { class: 'hint' },
      'The app SDK sends X-Service-Company-Key, X-Service-App-Key and an HMAC-SHA256 signature made with the signing secret. Reports need a server key: ',
      h('a', { href: hrefFor('settings') }, 'Settings, Server Keys'),
      '.',
    ),
  );
}

function fact(term: string, value: Node | string): HTMLElement[] {
  return [h('dt', null, term), h('dd', null, value)];
}

function storeUrls(app: AppSummary): HTMLElement {
  const entries = [
    ['iOS', app.ios_url],
    ['Android', app.android_url],
    ['Web', app.web_url],
  ].filter((entry): entry is [string, string] => Boolean(entry[1]));
  return h(
    'ul',
    { class: 'plain' },
    entries.map(([label, url]) => h('li', null, `${label}: `, h('span', { class: 'mono small' }, url))),
  );
}
