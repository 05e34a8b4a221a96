import { DEEP_LINK_FIELDS, type DeepLink, type DeepLinkField, deepLinkFlag } from '../../../functions/domain/links/deep-link';
import { command, tryFirstLaunch } from '../api';
import {
  actionButton,
  actionForm,
  type Child,
  code,
  confirmedButton,
  copyable,
  dateTime,
  field,
  formFlags,
  h,
  loadInto,
  notice,
  replace,
  table,
} from '../dom';
import { plainError } from '../errors';
import { BLANK, count, orBlank, pct } from '../format';
import { linkEdits } from '../link-edits';
import {
  conversionRate,
  copyPreset,
  duplicateWarning,
  findDuplicate,
  LINK_PRESETS,
  type LinkIdentity,
  type LinkPreset,
  type LinkStat,
  type ListedLink,
  PRESET_PARAMS,
  presetFor,
  presetTryFlags,
  statsByLink,
} from '../link-presets';
import { describePeriod } from '../period';
import { type AppSummary, selection } from '../state';

/** What `link list` prints per link. */
interface LinkRow extends ListedLink {
  url: string;
  campaign?: string;
  honeypot: boolean;
  disabled: boolean;
  countries_allow?: string[];
  countries_block?: string[];
  lookback_days: number;
  /** docs/deep-links.md: value and sub1..sub10, each absent unless set. */
  deep_link?: DeepLink;
  created_ms: number;
}

/** What `link try` prints. */
interface LinkTrial {
  link_id: string;
  url: string;
  clicks: { platform: string; status: number; location?: string; dropped?: string }[];
}

const SUBS = ['sub1', 'sub2', 'sub3', 'sub4', 'sub5'] as const;
/** The builder's input of each click parameter a preset fills. */
const PARAM_FLAG: Readonly<Record<(typeof PRESET_PARAMS)[number], string>> = {
  click_id: 'click-id',
  sub1: 'sub1',
  sub2: 'sub2',
  sub3: 'sub3',
  sub4: 'sub4',
  sub5: 'sub5',
};
/** The settings `link update` may change, as the edit form's flags. */
const EDITABLE = [
  'campaign',
  'ios-url',
  'android-url',
  'web-url',
  'countries-allow',
  'countries-block',
  'lookback-days',
  ...DEEP_LINK_FIELDS.map((field) => deepLinkFlag(field) as `deep-link-${DeepLinkField}`),
] as const;

/** The deep link fields of a form, in a group of their own; `values` fills them (the edit form). */
function deepLinkFields(values: Partial<Record<string, string>> = {}): HTMLElement {
  return h(
    'details',
    null,
    h('summary', null, 'Deep link (what the app opens once installed)'),
    h(
      'div',
      { class: 'fields' },
      DEEP_LINK_FIELDS.map((name) =>
        field({
          flag: deepLinkFlag(name),
          // "sub 1", not "sub1": the click parameters' fields above are labelled sub1..sub5.
          label: name === 'value' ? 'Deep link value' : `Deep link ${name.replace('sub', 'sub ')}`,
          value: values[name] ?? '',
          ...(name === 'value' ? { hint: 'Up to 100 characters; a click URL may override each with its deep_link_* parameter.' } : {}),
        }),
      ),
    ),
  );
}

/**
 * Tracking links (docs/console-analytics.md, "Tracking links"): the builder with network presets
 * and a duplicate check (link create, then link try for the URL and test clicks), and the links
 * with their clicks, installs and conversion rate over the header's period (link stats), a
 * partner-ready URL to copy, an inline edit (link update) and disable / enable.
 */
export async function linksPage(root: HTMLElement): Promise<void> {
  const app = selection.app;
  if (!app) return replace(root, h('h1', { tabindex: -1 }, 'Tracking links'), notice('info', 'Select an app first (Companies and apps).'));
  // The inner functions are hoisted, so they do not see the guard above: they use this one.
  const selected: AppSummary = app;
  const period = selection.period();

  const preview = h('section', { 'aria-labelledby': 'preview-h', class: 'preview', 'data-testid': 'link-preview' });
  const listArea = h('div', { 'data-testid': 'links-table' });
  const editArea = h('div', { 'data-testid': 'link-edit' });
  const firstLaunchArea = h('div', { 'aria-live': 'polite', 'data-testid': 'first-launch' });
  const presetInfo = h('div', { class: 'preset-info', 'aria-live': 'polite', 'data-testid': 'preset-info' });
  /** The links last listed: the duplicate check reads them (and lists again before it creates). */
  let links: LinkRow[] = [];
  let current: string | undefined;
  /** The identity the marketer confirmed as wanted again, after the duplicate warning. */
  let confirmedDuplicate: string | undefined;

  const presetSelect = h(
    'select',
    { id: 'link-preset', 'aria-describedby': 'link-preset-hint' },
    h('option', { value: '' }, '(none: type the fields)'),
    LINK_PRESETS.map((preset) => h('option', { value: preset.partner }, preset.label)),
  );
  presetSelect.addEventListener('change', () => applyPreset(presetFor(presetSelect.value)));

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

  const builder = actionForm({
    label: 'Link builder',
    testId: 'link-builder',
    submit: 'Create link',
    fields: [
      h(
        'div',
        { class: 'field wide' },
        h('label', { for: 'link-preset' }, 'Network preset'),
        presetSelect,
        h(
          'small',
          { id: 'link-preset-hint' },
          "Fills the partner and the click parameters with the network's own macros; a starting point to check against the network's documentation.",
        ),
        presetInfo,
      ),
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
      deepLinkFields(),
      clickParams,
    ],
    run: async (flags) => {
      const identity: LinkIdentity = {
        partner: String(flags.partner ?? ''),
        campaign: flags.campaign as string | undefined,
        ios_url: flags['ios-url'] as string | undefined,
        android_url: flags['android-url'] as string | undefined,
        web_url: flags['web-url'] as string | undefined,
        honeypot: flags.honeypot === true,
      };
      // Listed again, so a link made elsewhere since the page was drawn counts too.
      links = await listLinks();
      const duplicate = findDuplicate(links, identity, selected);
      const key = JSON.stringify(identity);
      if (duplicate && confirmedDuplicate !== key) {
        return h(
          'div',
          { class: 'notice error', role: 'alert', 'data-testid': 'duplicate-warning' },
          h('p', null, duplicateWarning(duplicate)),
          h(
            'button',
            {
              type: 'button',
              class: 'secondary',
              onclick: () => {
                confirmedDuplicate = key;
                builder.requestSubmit();
              },
            },
            'Create another anyway',
          ),
        );
      }
      confirmedDuplicate = undefined;
      const linkFlags = Object.fromEntries(Object.entries(flags).filter(([flag]) => !isClickParam(flag)));
      const created = await command<{ link_id: string }>('link create', { ...linkFlags, 'app-key': selected.app_key });
      current = created.link_id;
      await Promise.all([tryLink(), refreshList()]);
      return notice('success', `Created link ${created.link_id}.`);
    },
  });

  function input(flag: string): HTMLInputElement | null {
    const element = builder.elements.namedItem(flag);
    return element instanceof HTMLInputElement ? element : null;
  }

  /** Fills the partner and the click parameters from a preset (clearing the ones it leaves empty). */
  function applyPreset(preset: LinkPreset | undefined): void {
    if (!preset) {
      replace(presetInfo);
      return;
    }
    if (!preset.clickUrl) {
      replace(presetInfo, notice('info', preset.note ?? `${preset.label} has no click URL.`));
      return;
    }
    const partner = input('partner');
    if (partner) partner.value = preset.partner;
    for (const param of PRESET_PARAMS) {
      const target = input(PARAM_FLAG[param]);
      if (target) target.value = preset.params[param] ?? '';
    }
    const filled = PRESET_PARAMS.filter((param) => preset.params[param] !== undefined);
    replace(
      presetInfo,
      h(
        'p',
        { class: 'hint' },
        filled.length ? `${preset.label}: ${filled.map((param) => `${param} = ${preset.meaning[param]}`).join('; ')}. ` : '',
        preset.note ? `${preset.note} ` : '',
        `Macros as documented in: ${preset.docs}.`,
      ),
    );
  }

  async function tryLink(): Promise<void> {
    if (!current) return;
    const flags = Object.fromEntries(Object.entries(formFlags(builder)).filter(([flag]) => isClickParam(flag)));
    const trial = await command<LinkTrial>('link try', { ...flags, 'link-id': current });
    replace(firstLaunchArea);
    replace(
      preview,
      h('h2', { id: 'preview-h' }, `Link ${trial.link_id}`),
      h('p', null, "The URL to give the partner (its macros stay as they are, for the partner's ad server to fill in):"),
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
                  ? '404 (honeypot, disabled or no destination)'
                  : '',
          },
          { label: 'Dropped', cell: (c) => c.dropped ?? '' },
        ],
        trial.clicks,
      ),
      h('div', { class: 'actions' }, actionButton('Update test clicks', tryLink, { class: 'secondary' })),
      h('h3', null, 'Try a click: what the app gets at first launch'),
      h(
        'p',
        { class: 'hint' },
        "A dry run: the click this link would record, then POST /sdk/v1/attribution's own rules on it (Android: the Play referrer the store URL carries; iOS: probabilistic matching, when the app has it on). Nothing is recorded.",
      ),
      h(
        'div',
        { class: 'actions' },
        (['android', 'ios'] as const).map((platform) =>
          actionButton(`First launch on ${platform === 'ios' ? 'iOS' : 'Android'}`, () => showFirstLaunch(trial.link_id, platform), {
            class: 'secondary',
          }),
        ),
      ),
      firstLaunchArea,
    );
  }

  /** The answer an app installed from a click on the link gets at first launch, and why when not_found. */
  async function showFirstLaunch(linkId: string, platform: 'ios' | 'android'): Promise<void> {
    const trial = await tryFirstLaunch<FirstLaunchTrial>(linkId, platform);
    const { answer } = trial;
    replace(
      firstLaunchArea,
      answer.status === 'found'
        ? notice('success', `Found (${answer.attribution?.match ?? ''}): the app opens ${answer.deep_link?.value ?? 'no deep link value'}.`)
        : notice('info', `not_found: ${notFoundReason(trial)}`),
      trial.install_referrer ? h('p', null, 'Install referrer: ', code(trial.install_referrer)) : null,
      h('pre', { class: 'break', 'data-testid': 'first-launch-answer' }, JSON.stringify(answer, null, 2)),
    );
  }

  async function listLinks(): Promise<LinkRow[]> {
    return (await command<{ links: LinkRow[] }>('link list', { 'app-key': selected.app_key })).links;
  }

  /**
   * The links and their figures over the period. A failed read clears what was there: the list's
   * failure takes the whole area; the figures' leaves the links (to copy, edit, disable) with blank
   * figures and the error in plain words above them.
   */
  async function refreshList(): Promise<void> {
    await loadInto(listArea, async () => {
      const listed = await listLinks();
      links = listed;
      try {
        const stats = await command<{ links: LinkStat[] }>('link stats', {
          'app-key': selected.app_key,
          'since-ms': String(period.sinceMs),
          'until-ms': String(period.untilMs),
        });
        return linksTable(listed, statsByLink(stats.links));
      } catch (error) {
        return [
          h(
            'p',
            { class: 'notice error', role: 'alert', 'data-testid': 'stats-error' },
            `Clicks and installs could not be read: ${plainError(error)}`,
          ),
          linksTable(listed, undefined),
        ];
      }
    });
  }

  function linksTable(rows: LinkRow[], figures: ReturnType<typeof statsByLink> | undefined): Child {
    return table<LinkRow>(
      'Tracking links',
      [
        { label: 'Link', cell: (l) => code(l.link_id) },
        { label: 'Partner', cell: (l) => l.partner },
        { label: 'Campaign', cell: (l) => l.campaign ?? '' },
        {
          label: 'Status',
          cell: (l) => [
            l.disabled ? h('span', { class: 'badge warn' }, 'disabled') : h('span', { class: 'badge ok' }, 'active'),
            l.honeypot ? [' ', h('span', { class: 'badge info' }, 'honeypot')] : null,
          ],
        },
        { label: 'Clicks', cell: (l) => (figures ? count(figures(l.link_id).clicks) : BLANK), numeric: true },
        { label: 'Installs', cell: (l) => (figures ? count(figures(l.link_id).installs) : BLANK), numeric: true },
        {
          label: 'Conversion',
          cell: (l) => {
            if (!figures) return BLANK;
            const { clicks, installs } = figures(l.link_id);
            return orBlank(conversionRate(clicks, installs), pct);
          },
          numeric: true,
        },
        {
          label: 'Countries',
          cell: (l) =>
            [
              l.countries_allow ? `allow ${l.countries_allow.join(',')}` : '',
              l.countries_block ? ` block ${l.countries_block.join(',')}` : '',
            ].join(''),
        },
        { label: 'Lookback', cell: (l) => `${l.lookback_days} d`, numeric: true },
        { label: 'Deep link', cell: (l) => deepLinkSummary(l) },
        { label: 'Created', cell: (l) => dateTime(l.created_ms) },
        { label: 'Actions', cell: (l) => h('div', { class: 'row-actions' }, rowActions(l)) },
      ],
      rows,
      'No link yet.',
    );
  }

  function rowActions(link: LinkRow): Child {
    return [
      copyButton(link),
      actionButton(
        'Try',
        async () => {
          current = link.link_id;
          await tryLink();
          preview.scrollIntoView();
          preview.querySelector('input')?.focus();
        },
        { class: 'secondary', 'aria-label': `Try link ${link.link_id}` },
      ),
      h('button', { type: 'button', class: 'secondary', 'aria-label': `Edit link ${link.link_id}`, onclick: () => showEdit(link) }, 'Edit'),
      link.disabled
        ? actionButton('Enable', () => setDisabled(link, false), { class: 'secondary', 'aria-label': `Enable link ${link.link_id}` })
        : confirmedButton(
            'Disable',
            {
              title: `Disable link ${link.link_id}?`,
              text: `Clicks on ${link.partner}${link.campaign ? ` / ${link.campaign}` : ''} will get 404 (as for an unknown link) and nothing is recorded, until you enable it again.`,
              action: 'Disable link',
            },
            () => setDisabled(link, true),
            { class: 'secondary', 'aria-label': `Disable link ${link.link_id}` },
          ),
    ];
  }

  /**
   * Copy: the partner-ready URL, built by `link try` with the preset's macros when the link's
   * partner has a preset (literal, as the network fills them in), else the plain URL.
   */
  function copyButton(link: LinkRow): Child {
    const preset = copyPreset(link.partner);
    const status = h('span', { class: 'copy-status', role: 'status' });
    const run = async () => {
      const url = preset ? (await command<LinkTrial>('link try', { ...presetTryFlags(preset), 'link-id': link.link_id })).url : link.url;
      try {
        await navigator.clipboard.writeText(url);
        replace(status, preset ? `Copied, with ${preset.label}'s macros` : 'Copied');
      } catch {
        // No clipboard (a refused permission): the URL, selected for Ctrl-C.
        const shown = h('input', { type: 'text', readonly: true, value: url, class: 'mono', 'aria-label': `URL of link ${link.link_id}` });
        replace(status, shown);
        shown.select();
      }
      status.dataset.url = url;
    };
    const button = h('button', { type: 'button', class: 'secondary', 'aria-label': `Copy the URL of link ${link.link_id}` }, 'Copy');
    button.addEventListener('click', () => {
      button.disabled = true;
      run()
        .catch((error: unknown) => replace(status, h('span', { role: 'alert' }, plainError(error))))
        .finally(() => (button.disabled = false));
    });
    return h('span', { class: 'action-button' }, button, status);
  }

  async function setDisabled(link: LinkRow, disabled: boolean): Promise<void> {
    await command(disabled ? 'link disable' : 'link enable', { 'link-id': link.link_id });
    await refreshList();
  }

  /** The inline edit of one link: its current settings, and only what changed goes to link update. */
  function showEdit(link: LinkRow): void {
    const now: Record<(typeof EDITABLE)[number], string> = {
      campaign: link.campaign ?? '',
      'ios-url': link.ios_url ?? '',
      'android-url': link.android_url ?? '',
      'web-url': link.web_url ?? '',
      'countries-allow': link.countries_allow?.join(',') ?? '',
      'countries-block': link.countries_block?.join(',') ?? '',
      'lookback-days': String(link.lookback_days),
      ...(Object.fromEntries(DEEP_LINK_FIELDS.map((name) => [deepLinkFlag(name), link.deep_link?.[name] ?? ''])) as Record<
        `deep-link-${(typeof DEEP_LINK_FIELDS)[number]}`,
        string
      >),
    };
    const form = actionForm({
      label: `Edit link ${link.link_id}`,
      testId: 'link-edit-form',
      submit: 'Save changes',
      fields: [
        { flag: 'campaign', label: 'Campaign', value: now.campaign },
        { flag: 'ios-url', label: 'App Store URL', type: 'url', value: now['ios-url'], placeholder: selected.ios_url ?? '' },
        { flag: 'android-url', label: 'Google Play URL', type: 'url', value: now['android-url'], placeholder: selected.android_url ?? '' },
        { flag: 'web-url', label: 'Web URL', type: 'url', value: now['web-url'], placeholder: selected.web_url ?? '' },
        { flag: 'countries-allow', label: 'Countries allowed', value: now['countries-allow'], placeholder: 'US,CA' },
        { flag: 'countries-block', label: 'Countries blocked', value: now['countries-block'], placeholder: 'XX' },
        { flag: 'lookback-days', label: 'Lookback days', type: 'number', value: now['lookback-days'], hint: '1 to 30.' },
        deepLinkFields(link.deep_link),
      ],
      run: async (flags) => {
        // A field emptied clears its setting (link update takes '' as "clear").
        const changed = linkEdits(now, flags);
        if (Object.keys(changed).length === 0) return notice('info', 'Nothing changed.');
        await command('link update', { ...changed, 'link-id': link.link_id }, { sendEmpty: true });
        await refreshList();
        replace(editArea, notice('success', `Saved link ${link.link_id}; the redirect follows within 30 seconds.`));
        return null;
      },
    });
    replace(
      editArea,
      h(
        'section',
        { 'aria-labelledby': 'edit-h' },
        h('h3', { id: 'edit-h' }, `Edit link ${link.link_id} (${link.partner}; partner and honeypot cannot change)`),
        form,
        h('div', { class: 'actions' }, h('button', { type: 'button', class: 'secondary', onclick: () => replace(editArea) }, 'Cancel')),
      ),
    );
    form.querySelector('input')?.focus();
  }

  replace(
    root,
    h('h1', { tabindex: -1 }, 'Tracking links'),
    h('section', { 'aria-labelledby': 'builder-h' }, h('h2', { id: 'builder-h' }, `Link builder for ${app.name}`), builder),
    preview,
    h(
      'section',
      { 'aria-labelledby': 'links-h' },
      h('h2', { id: 'links-h' }, `Links of ${app.name}`),
      h('p', { class: 'hint' }, `Clicks, installs and conversion rate (installs / clicks) over ${describePeriod(period)}.`),
      editArea,
      listArea,
    ),
  );
  await refreshList();
}

/** The deep link fields a link carries, and its web fallback, in a line. */
function deepLinkSummary(link: LinkRow): string {
  const fields = DEEP_LINK_FIELDS.flatMap((field) => (link.deep_link?.[field] === undefined ? [] : [`${field}=${link.deep_link[field]}`]));
  return [...fields, ...(link.web_url ? [`web ${link.web_url}`] : [])].join('; ');
}

/** What POST /api/try-first-launch answers (tryFirstLaunch in console/deep-link-tools.ts). */
interface FirstLaunchTrial {
  platform: 'ios' | 'android';
  probabilistic: boolean;
  install_referrer: string | null;
  no_click: string | null;
  answer: {
    status: 'found' | 'not_found';
    reason?: string;
    attribution: { match: string } | null;
    deep_link: { value: string | null } | null;
  };
}

/** The not_found reason in words: the click the link would not make, iOS without probabilistic matching, or the refused click. */
function notFoundReason(trial: FirstLaunchTrial): string {
  if (trial.no_click) return `the link makes no click for this platform (${trial.no_click}).`;
  if (trial.answer.reason === 'no_click_named')
    return trial.platform === 'ios'
      ? 'no_click_named: iOS passes no referrer, and this app has probabilistic matching off.'
      : 'no_click_named: the Android destination carries no Play referrer naming the click.';
  return `${trial.answer.reason ?? 'unknown'}.`;
}

function isClickParam(flag: string): boolean {
  return flag === 'click-id' || flag === 'mobile-only' || flag === 'country' || (SUBS as readonly string[]).includes(flag);
}
