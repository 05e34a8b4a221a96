import { command } from '../api';
import { actionButton, actionForm, dateTime, field, formFlags, h, notice, replace, table } from '../dom';
import { type AppSummary, selection } from '../state';

interface Postback {
  app_id: string;
  partner: string;
  url: string;
  events: string[] | '*';
  event_window_days: number;
  method: string;
  send_fraud?: boolean;
  updated_ms: number;
}

interface Attempt {
  postback_id: string;
  partner: string;
  kind: 'install' | 'event';
  event_name?: string;
  attempt: number;
  at_ms: number;
  outcome: 'delivered' | 'retry' | 'failed' | 'refused' | 'dead' | 'withheld';
  response_code?: number;
  error?: string;
}

const OUTCOME_BADGE: Record<Attempt['outcome'], string> = {
  delivered: 'ok',
  retry: 'info',
  failed: 'warn',
  refused: 'warn',
  dead: 'warn',
  withheld: 'info',
};

/** `admin postback withheld`: postbacks withheld for consent over a period (docs/privacy.md, "Consent"). */
interface WithheldForConsent {
  since_ms: number;
  until_ms: number;
  withheld: number;
  partners: { partner: string; withheld: number; reasons: { reason: string; withheld: number }[] }[];
  postbacks: { at_ms: number; partner: string; kind: string; event_name: string; postback_id: string; reason: string }[];
  truncated: boolean;
}

/** The periods the view offers, in days (the delivery log keeps 30). */
const WITHHELD_PERIODS = ['1', '7', '30'];

/** Partner postbacks: a URL template per partner (with the macros it may use) and the delivery log. */
export async function postbacksPage(root: HTMLElement): Promise<void> {
  const app = selection.app;
  if (!app) return replace(root, h('h1', { tabindex: -1 }, 'Postbacks'), notice('info', 'Select an app first (Companies and apps).'));
  // The inner functions are hoisted, so they do not see the guard above: they use this one.
  const selected: AppSummary = app;
  if (!selection.meta.commands.includes('postback list')) {
    return replace(
      root,
      h('h1', { tabindex: -1 }, 'Postbacks'),
      notice('info', 'This version of the service has no partner postbacks (the admin CLI has no postback commands).'),
    );
  }

  const templates = h('div');
  const log = h('div');
  const withheld = h('div', { 'data-testid': 'withheld-for-consent' });
  const withheldFilter = h(
    'form',
    { class: 'inline-form', 'aria-label': 'Withheld for consent filter' },
    field({ flag: 'days', label: 'Last days', type: 'select', options: WITHHELD_PERIODS, value: '7' }),
    field({ flag: 'partner', label: 'Partner', placeholder: 'all partners' }),
    h('button', { type: 'submit', class: 'secondary' }, 'Show withheld'),
  );
  withheldFilter.addEventListener('submit', (event) => {
    event.preventDefault();
    void refreshWithheld().catch((error: Error) => replace(withheld, notice('error', error.message)));
  });
  const hasWithheld = selection.meta.commands.includes('postback withheld');
  const logFilter = h(
    'form',
    { class: 'inline-form', 'aria-label': 'Delivery log filter' },
    field({ flag: 'partner', label: 'Partner', placeholder: 'all partners' }),
    h('button', { type: 'submit', class: 'secondary' }, 'Show log'),
  );
  logFilter.addEventListener('submit', (event) => {
    event.preventDefault();
    void refreshLog().catch((error: Error) => replace(log, notice('error', error.message)));
  });

  replace(
    root,
    h('h1', { tabindex: -1 }, 'Postbacks'),
    h(
      'p',
      null,
      `Postbacks tell a partner about the installs it brought to ${app.name} (never organic ones) and about chosen in-app events within a window.`,
    ),
    h('section', { 'aria-labelledby': 'templates-h' }, h('h2', { id: 'templates-h' }, 'Templates per partner'), templates),
    h(
      'section',
      { 'aria-labelledby': 'set-h' },
      h('h2', { id: 'set-h' }, "Set a partner's postback"),
      actionForm({
        label: 'Set postback',
        testId: 'set-postback',
        submit: 'Save postback',
        fields: [
          { flag: 'partner', label: 'Partner', required: true, placeholder: 'meta' },
          {
            flag: 'url',
            label: 'URL template',
            required: true,
            wide: true,
            placeholder: 'https://partner.example/pb?click={click_id}&ev={event_name}',
          },
          {
            flag: 'events',
            label: 'Events',
            placeholder: 'install,purchase or *',
            hint: 'Comma separated event names, or * for every event.',
          },
          { flag: 'event-window-days', label: 'Event window (days)', type: 'number' },
          { flag: 'method', label: 'Method', type: 'select', options: ['', 'GET', 'POST'] },
          { flag: 'send-fraud', label: 'Also for installs flagged as fraud', type: 'checkbox' },
        ],
        run: async (flags) => {
          const saved = await command<Postback>('postback set', { ...flags, 'app-key': app.app_key });
          await refreshTemplates();
          return notice('success', `Saved the postback of ${saved.partner}.`);
        },
      }),
      h('h3', null, 'Macros'),
      h(
        'dl',
        { class: 'macros' },
        selection.meta.postback_macros.map((macro) => [
          h('dt', null, h('code', null, `{${macro.name}}`)),
          h('dd', null, macro.description),
        ]),
      ),
    ),
    h('section', { 'aria-labelledby': 'log-h' }, h('h2', { id: 'log-h' }, 'Delivery log'), logFilter, log),
    hasWithheld
      ? h(
          'section',
          { 'aria-labelledby': 'withheld-h' },
          h('h2', { id: 'withheld-h' }, 'Withheld for consent'),
          h(
            'p',
            null,
            "Postbacks not sent because the install's latest consent did not allow sharing with the partner (docs/privacy.md, Consent). " +
              'Postbacks withheld for fraud are in the delivery log only.',
          ),
          withheldFilter,
          withheld,
        )
      : null,
  );

  async function refreshTemplates(): Promise<void> {
    const { postbacks } = await command<{ postbacks: Postback[] }>('postback list', { 'app-key': selected.app_key });
    replace(
      templates,
      table<Postback>(
        'Postback templates',
        [
          { label: 'Partner', cell: (p) => p.partner },
          { label: 'URL template', cell: (p) => h('span', { class: 'mono small break' }, p.url) },
          { label: 'Events', cell: (p) => (p.events === '*' ? 'every event' : p.events.join(', ')) },
          { label: 'Window', cell: (p) => `${p.event_window_days} d`, numeric: true },
          { label: 'Method', cell: (p) => p.method },
          { label: 'Fraud-flagged installs', cell: (p) => (p.send_fraud ? 'sent' : 'not sent') },
          { label: 'Updated', cell: (p) => dateTime(p.updated_ms) },
          {
            label: '',
            cell: (p) =>
              actionButton(
                'Delete',
                async () => {
                  if (!window.confirm(`Delete the postback of ${p.partner}?`)) return;
                  await command('postback delete', { 'app-key': selected.app_key, partner: p.partner });
                  await refreshTemplates();
                },
                { class: 'danger', 'aria-label': `Delete the postback of ${p.partner}` },
              ),
          },
        ],
        postbacks,
        'No postback yet: installs and events are not sent to any partner.',
      ),
    );
  }

  async function refreshLog(): Promise<void> {
    const { attempts } = await command<{ attempts: Attempt[] }>('postback log', {
      'app-key': selected.app_key,
      partner: formFlags(logFilter).partner as string | undefined,
    });
    replace(
      log,
      table<Attempt>(
        'Delivery log',
        [
          { label: 'When', cell: (a) => dateTime(a.at_ms) },
          { label: 'Partner', cell: (a) => a.partner },
          { label: 'For', cell: (a) => (a.kind === 'install' ? 'install' : `event ${a.event_name ?? ''}`) },
          { label: 'Attempt', cell: (a) => String(a.attempt), numeric: true },
          { label: 'Outcome', cell: (a) => h('span', { class: `badge ${OUTCOME_BADGE[a.outcome] ?? ''}` }, a.outcome) },
          { label: 'Response', cell: (a) => (a.response_code ? String(a.response_code) : ''), numeric: true },
          { label: 'Error', cell: (a) => a.error ?? '' },
          { label: 'Postback id', cell: (a) => h('code', { class: 'small' }, a.postback_id) },
        ],
        attempts,
        'No delivery yet.',
      ),
    );
  }

  async function refreshWithheld(): Promise<void> {
    const flags = formFlags(withheldFilter);
    const found = await command<WithheldForConsent>('postback withheld', {
      'app-key': selected.app_key,
      days: flags.days as string | undefined,
      partner: flags.partner as string | undefined,
    });
    type Postback = WithheldForConsent['postbacks'][number];
    replace(
      withheld,
      h(
        'p',
        { 'data-testid': 'withheld-total' },
        `${found.withheld} withheld for consent from ${dateTime(found.since_ms)} to ${dateTime(found.until_ms)}`,
        found.truncated ? ` (the newest ${found.postbacks.length} listed below).` : '.',
      ),
      table<WithheldForConsent['partners'][number]>(
        'Withheld for consent per partner',
        [
          { label: 'Partner', cell: (p) => p.partner },
          { label: 'Withheld', cell: (p) => String(p.withheld), numeric: true },
          { label: 'Reasons', cell: (p) => p.reasons.map((r) => `${r.reason.replace(/^consent: /, '')} (${r.withheld})`).join('; ') },
        ],
        found.partners,
        'No postback was withheld for consent in this period.',
      ),
      found.postbacks.length
        ? table<Postback>(
            'Postbacks withheld for consent',
            [
              { label: 'When', cell: (p) => dateTime(p.at_ms) },
              { label: 'Partner', cell: (p) => p.partner },
              { label: 'For', cell: (p) => (p.kind === 'install' ? 'install' : `event ${p.event_name}`) },
              { label: 'Reason', cell: (p) => p.reason },
              { label: 'Postback id', cell: (p) => h('code', { class: 'small' }, p.postback_id) },
            ],
            found.postbacks,
          )
        : null,
    );
  }

  await Promise.all([
    refreshTemplates().catch((error: Error) => replace(templates, notice('error', error.message))),
    refreshLog().catch((error: Error) => replace(log, notice('error', error.message))),
    hasWithheld ? refreshWithheld().catch((error: Error) => replace(withheld, notice('error', error.message))) : undefined,
  ]);
}
