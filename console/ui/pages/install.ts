import { command } from '../api';
import { consentLines, type ShownConsent } from '../consent-view';
import { actionForm, dateTime, h, notice, replace } from '../dom';
import { selection } from '../state';

interface ExplainedInstall {
  event_id: string;
  ts_ms: number;
  day: string;
  platform: string | null;
  partner: string;
  attribution_type: string;
  rule: string;
  explanation: string;
  fraud_reasons?: string[];
  reinstall?: boolean;
  [field: string]: unknown;
}

interface InstallReport {
  app_id: string;
  install_uuid: string;
  found: boolean;
  current: { partner: string; attribution_type: string; ts_ms: number; day: string; platform: string | null } | null;
  installs: ExplainedInstall[];
  events: { counted: number; waiting_for_install: number };
  retention: Record<string, string[]>;
  /** Absent from a service before consent (issue 40); null when the app sent none. */
  consent?: ShownConsent | null;
}

/** An install look-up: the attribution decision and why, as `admin install show` prints it. */
export async function installPage(root: HTMLElement): Promise<void> {
  const app = selection.app;
  if (!app) return replace(root, h('h1', { tabindex: -1 }, 'Install look-up'), notice('info', 'Select an app first (Companies and apps).'));
  replace(
    root,
    h('h1', { tabindex: -1 }, 'Install look-up'),
    h('p', null, `Why an install of ${app.name} went to the partner it went to (or to organic).`),
    actionForm({
      label: 'Install look-up',
      testId: 'install-lookup',
      submit: 'Look up',
      fields: [
        { flag: 'install-uuid', label: 'install_uuid', required: true, wide: true, placeholder: '3f0c6a3e-1d2b-4c5d-8e9f-0a1b2c3d4e5f' },
      ],
      run: async (flags) => render(await command<InstallReport>('install show', { ...flags, 'app-key': app.app_key })),
    }),
  );
}

function render(report: InstallReport): HTMLElement {
  if (!report.found) return notice('info', `No install or event of ${report.install_uuid} has been counted for this app.`);
  const current = report.current;
  return h(
    'div',
    { class: 'install-report', 'data-testid': 'install-report' },
    current
      ? h(
          'p',
          { class: 'verdict' },
          'Attributed to ',
          h('strong', null, current.partner),
          ` (${current.attribution_type}), installed ${dateTime(current.ts_ms)} on ${current.platform ?? 'an unknown platform'}.`,
        )
      : notice('info', 'Events arrived, but no install yet.'),
    h('p', null, `Other events: ${report.events.counted} counted, ${report.events.waiting_for_install} waiting for their install.`),
    report.consent === undefined ? null : consentSection(report.consent),
    h('h2', null, 'Install events and their decisions'),
    h(
      'ol',
      { class: 'decisions' },
      report.installs.map((install) =>
        h(
          'li',
          null,
          h('p', null, h('strong', null, install.explanation)),
          h(
            'p',
            { class: 'small' },
            `event ${install.event_id}, ${dateTime(install.ts_ms)}, rule ${install.rule}`,
            install.reinstall ? ', reinstall' : '',
            install.fraud_reasons?.length ? `, fraud: ${install.fraud_reasons.join(', ')}` : '',
          ),
          h('p', { class: 'small' }, `Retention counted: ${(report.retention[install.event_id] ?? []).join(', ') || 'none yet'}`),
        ),
      ),
    ),
    h('details', null, h('summary', null, 'The whole record (admin install show)'), h('pre', null, JSON.stringify(report, null, 2))),
  );
}

/** The install's latest consent: what partners may receive (docs/privacy.md, "Consent"). */
function consentSection(consent: ShownConsent | null): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': 'consent-h', 'data-testid': 'install-consent' },
    h('h2', { id: 'consent-h' }, 'Consent'),
    consent
      ? [
          h('p', { class: 'small' }, `Latest, set ${dateTime(consent.ts_ms)} by event ${consent.event_id}.`),
          h(
            'dl',
            { class: 'facts' },
            consentLines(consent).map(([label, value]) => [h('dt', null, label), h('dd', null, value)]),
          ),
        ]
      : h('p', null, 'The app sent no consent for this install: its postbacks go to partners as configured.'),
  );
}
