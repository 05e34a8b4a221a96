import { command } from '../api';
import { actionButton, actionForm, code, copyable, dateTime, field, formFlags, h, notice, replace, table } from '../dom';
import { type AppSummary, selection } from '../state';

interface LinkRow {
  link_id: string;
  url: string;
  partner: string;
  campaign?: string;
  honeypot: boolean;
  countries_allow?: string[];
  countries_block?: string[];
  lookback_days: number;
  ios_url?: string;
  android_url?: string;
  web_url?: string;
  created_ms: number;
}

/** What `link try` prints. */
interface LinkTrial {
  link_id: string;
  url: string;
  clicks: { platform: string; status: number; location?: string; dropped?: string }[];
}

const SUBS = ['sub1', 'sub2', 'sub3', 'sub4', 'sub5'] as const;

/** Tracking links: the builder (link create, then link try for its URL and test clicks) and the list. */
export async function linksPage(root: HTMLElement): Promise<void> {
  const app = selection.app;
  if (!app) return replace(root, h('h1', { tabindex: -1 }, 'Tracking links'), notice('info', 'Select an app first (Companies and apps).'));
  // The inner functions are hoisted, so they do not see the guard above: they use this one.
  const selected: AppSummary = app;

  const preview = h('section', { 'aria-labelledby': 'preview-h', class: 'preview', 'data-testid': 'link-preview' });
  const list = h('section', { 'aria-labelledby': 'links-h' });
  // The click's parameters: what the partner appends to the link, kept apart from the link's settings.
  const clickParams = h(
    'fieldset',
    null,
    h('legend', null, 'Click parameters (added to the URL you give the partner)'),
    h('div', { class: 'fields' }, [
      field({
        flag: 'click-id',
        label: 'click_id',
        placeholder: '{click_id}',
        hint: "The partner's macro for its own click id (kept as ext_click_id); macros stay literal in the URL for the partner to fill in.",
      }),
      ...SUBS.map((sub) => field({ flag: sub, label: sub })),
      field({ flag: 'mobile-only', label: 'mobile_only=1 (desktop visitors are dropped)', type: 'checkbox' }),
      field({
        flag: 'country',
        label: 'Test click from country',
        placeholder: 'US',
        hint: "Only for the test click below (the visitor's country, as CloudFront would tell it).",
      }),
    ]),
  );
  let current: string | undefined;

  const builder = actionForm({
    label: 'Link builder',
    testId: 'link-builder',
    submit: 'Create link',
    fields: [
      { flag: 'partner', label: 'Partner', required: true, placeholder: 'meta' },
      { flag: 'campaign', label: 'Campaign', placeholder: 'spring_sale' },
      {
        flag: 'countries-allow',
        label: 'Countries allowed',
        placeholder: 'US,CA',
        hint: 'Two-letter codes, comma separated; other countries are dropped.',
      },
      { flag: 'countries-block', label: 'Countries blocked', placeholder: 'XX' },
      { flag: 'lookback-days', label: 'Lookback days', type: 'number', hint: `1 to 30; the app's is ${app.lookback_days}.` },
      { flag: 'honeypot', label: 'Honeypot (a trap link never shown to people: whoever follows it is blocked)', type: 'checkbox' },
      h(
        'details',
        null,
        h('summary', null, "Destinations (default: the app's store URLs)"),
        h('div', { class: 'fields' }, [
          field({ flag: 'ios-url', label: 'App Store URL', type: 'url', placeholder: app.ios_url ?? '' }),
          field({ flag: 'android-url', label: 'Google Play URL', type: 'url', placeholder: app.android_url ?? '' }),
          field({ flag: 'web-url', label: 'Web URL', type: 'url', placeholder: app.web_url ?? '' }),
        ]),
      ),
      clickParams,
    ],
    run: async (flags) => {
      const linkFlags = Object.fromEntries(Object.entries(flags).filter(([flag]) => !isClickParam(flag)));
      const created = await command<{ link_id: string }>('link create', { ...linkFlags, 'app-key': app.app_key });
      current = created.link_id;
      await Promise.all([tryLink(), refreshList()]);
      return notice('success', `Created link ${created.link_id}.`);
    },
  });

  async function tryLink(): Promise<void> {
    if (!current) return;
    const flags = Object.fromEntries(Object.entries(formFlags(builder)).filter(([flag]) => isClickParam(flag)));
    const trial = await command<LinkTrial>('link try', { ...flags, 'link-id': current });
    replace(
      preview,
      h('h2', { id: 'preview-h' }, `Link ${trial.link_id}`),
      h('p', null, 'The URL to give the partner:'),
      copyable('Final tracking URL', trial.url, 'final-url'),
      h('h3', null, 'A test click from each platform'),
      h('p', { class: 'hint' }, "The redirect's own rules run on the stored link; the test click is not recorded, counted or blocked."),
      table(
        'Test clicks',
        [
          { label: 'Platform', cell: (c) => c.platform },
          { label: 'Answer', cell: (c) => String(c.status), numeric: true },
          {
            label: 'Redirect (Location)',
            cell: (c) =>
              c.location
                ? h('span', { class: 'mono small break' }, c.location)
                : c.status === 404
                  ? '404 (honeypot or no destination)'
                  : '',
          },
          { label: 'Dropped', cell: (c) => c.dropped ?? '' },
        ],
        trial.clicks,
      ),
      h('div', { class: 'actions' }, actionButton('Update test clicks', tryLink, { class: 'secondary' })),
    );
  }

  async function refreshList(): Promise<void> {
    const { links } = await command<{ links: LinkRow[] }>('link list', { 'app-key': selected.app_key });
    replace(
      list,
      h('h2', { id: 'links-h' }, `Links of ${selected.name}`),
      table<LinkRow>(
        'Tracking links',
        [
          { label: 'Link', cell: (l) => code(l.link_id) },
          { label: 'Partner', cell: (l) => l.partner },
          { label: 'Campaign', cell: (l) => l.campaign ?? '' },
          { label: 'Honeypot', cell: (l) => (l.honeypot ? h('span', { class: 'badge warn' }, 'honeypot') : 'no') },
          {
            label: 'Countries',
            cell: (l) =>
              [
                l.countries_allow ? `allow ${l.countries_allow.join(',')}` : '',
                l.countries_block ? ` block ${l.countries_block.join(',')}` : '',
              ].join(''),
          },
          { label: 'Lookback', cell: (l) => `${l.lookback_days} d`, numeric: true },
          { label: 'URL', cell: (l) => h('span', { class: 'mono small break' }, l.url) },
          { label: 'Created', cell: (l) => dateTime(l.created_ms) },
          {
            label: '',
            cell: (l) =>
              actionButton(
                'Try',
                async () => {
                  current = l.link_id;
                  await tryLink();
                  preview.scrollIntoView();
                  preview.querySelector('input')?.focus();
                },
                { class: 'secondary', 'aria-label': `Try link ${l.link_id}` },
              ),
          },
        ],
        links,
        'No link yet.',
      ),
    );
  }

  replace(
    root,
    h('h1', { tabindex: -1 }, 'Tracking links'),
    h('section', { 'aria-labelledby': 'builder-h' }, h('h2', { id: 'builder-h' }, `Link builder for ${app.name}`), builder),
    preview,
    list,
  );
  await refreshList();
}

function isClickParam(flag: string): boolean {
  return flag === 'click-id' || flag === 'mobile-only' || flag === 'country' || (SUBS as readonly string[]).includes(flag);
}
