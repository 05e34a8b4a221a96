import { command } from '../api';
import { actionButton, code, copyable, dateTime, h, notice, replace, table } from '../dom';
import { type AppSummary, selection } from '../state';
import { hrefFor } from '../view';
import { costUploadSection } from './cost-upload';

interface ServerKeyRow {
  key_id: string;
  /** null on keys made without a name (and before names). */
  name: string | null;
  created_ms: number;
  revoked: boolean;
  scopes: string[];
  /** Its last accepted request, to the hour; null when never used. */
  last_used_ms: number | null;
}

/** `server-key create --name`'s bounds (functions/commands/tenant-commands.ts). */
const NAME_MAX = 100;

/** Settings, Server Keys (the interface's "Settings, Server Keys, New Key"): create, list, revoke. */
export async function settingsPage(root: HTMLElement): Promise<void> {
  const app = selection.app;
  if (!app) return replace(root, h('h1', { tabindex: -1 }, 'Settings'), notice('info', 'Select an app first (Companies and apps).'));
  // The inner functions are hoisted, so they do not see the guard above: they use this one.
  const selected: AppSummary = app;

  const created = h('div', { 'aria-live': 'polite' });
  const list = h('div');
  const nameInput = h('input', {
    id: 'server-key-name',
    name: 'name',
    maxlength: NAME_MAX,
    placeholder: 'BI export',
    'aria-describedby': 'server-key-name-help',
  }) as HTMLInputElement;
  replace(
    root,
    h('h1', { tabindex: -1 }, 'Settings'),
    h('h2', null, `Server Keys of ${app.name}`),
    h(
      'p',
      null,
      'A server key reads every report of this app through the Reporting API (Authorization: Bearer srv_…); a cost key uploads ad spend (POST /api/v1/cost) and reads nothing.',
    ),
    h(
      'div',
      { class: 'actions' },
      h('label', { for: 'server-key-name' }, 'Key name (optional)'),
      nameInput,
      h('small', { id: 'server-key-name-help' }, `What the key is for, up to ${NAME_MAX} characters.`),
      actionButton('New Key', () => createKey('read')),
      actionButton('New Cost Key', () => createKey('cost')),
    ),
    created,
    list,
    costUploadSection(app),
    h(
      'section',
      { 'aria-labelledby': 'skan-link-heading' },
      h('h2', { id: 'skan-link-heading' }, 'SKAN conversion values'),
      h(
        'p',
        null,
        'The conversion-value schema (',
        code('skan schema set'),
        ') is edited on the ',
        h('a', { href: hrefFor('skan') }, 'SKAN page'),
        ', beside the SKAN report it decodes.',
      ),
    ),
  );

  async function createKey(scope: 'read' | 'cost'): Promise<void> {
    const name = nameInput.value.trim();
    const { server_key } = await command<{ server_key: string }>('server-key create', {
      'app-key': selected.app_key,
      scope,
      name: name || undefined,
    });
    nameInput.value = '';
    replace(
      created,
      h(
        'div',
        { class: 'key-once', role: 'region', 'aria-label': 'New server key' },
        h(
          'p',
          { class: 'warning' },
          h('strong', null, 'Keep this key on the server side, never in browser or mobile client code.'),
          scope === 'read' ? ' It reads every event of this app.' : ' It uploads the ad spend of this app.',
        ),
        h('p', null, 'This is the only time it is shown: only its SHA-256 is stored. Copy it now.'),
        copyable('New server key', server_key, 'new-server-key'),
      ),
    );
    await refresh();
  }

  async function refresh(): Promise<void> {
    const { server_keys } = await command<{ server_keys: ServerKeyRow[] }>('server-key list', { 'app-key': selected.app_key });
    replace(
      list,
      table<ServerKeyRow>(
        'Server keys',
        [
          { label: 'Name', cell: (k) => k.name ?? h('span', { class: 'none' }, 'unnamed') },
          { label: 'Key id (SHA-256 of the key)', cell: (k) => h('code', { title: k.key_id }, `${k.key_id.slice(0, 16)}…`) },
          { label: 'Scopes', cell: (k) => k.scopes.join(', ') },
          { label: 'Created', cell: (k) => dateTime(k.created_ms) },
          { label: 'Last used', cell: (k) => (k.last_used_ms === null ? 'never' : dateTime(k.last_used_ms)) },
          {
            label: 'State',
            cell: (k) => (k.revoked ? h('span', { class: 'badge warn' }, 'revoked') : h('span', { class: 'badge ok' }, 'active')),
          },
          {
            label: 'Actions',
            cell: (k) =>
              k.revoked
                ? null
                : actionButton(
                    'Revoke',
                    async () => {
                      const named = k.name ? `"${k.name}" (${k.key_id.slice(0, 16)}…)` : `${k.key_id.slice(0, 16)}…`;
                      if (!window.confirm(`Revoke key ${named}? Requests with it are refused within 60 s.`)) return;
                      await command('server-key revoke', { 'key-id': k.key_id });
                      await refresh();
                    },
                    { class: 'danger', 'aria-label': `Revoke key ${k.key_id.slice(0, 16)}` },
                  ),
          },
        ],
        server_keys,
        'No server key yet.',
      ),
    );
  }
  await refresh();
}
