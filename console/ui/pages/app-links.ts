import { appLinks, command } from '../api';
import { actionForm, code, h, notice, replace } from '../dom';
import { selection } from '../state';

/** What POST /api/app-links answers (appLinkView in console/deep-link-tools.ts). */
interface AppLinkView {
  settings: { ios_app_id?: string; android_package?: string; android_cert_sha256?: string[]; link_domains?: string[] };
  /** Each file's bytes as served, or null where the route answers 404. */
  domains: { domain: string; files: Record<string, string | null> }[];
}

/**
 * App links (docs/console.md, "Deep links"): the app's iOS app id, Android package, signing
 * certificate fingerprints and link domains, changed with `app update` (its validation, its
 * refusals beside the field), and for each link domain both well-known files as the route serves
 * them for that Host (or that it answers 404).
 */
export async function appLinksPage(root: HTMLElement): Promise<void> {
  const app = selection.app;
  if (!app) return replace(root, h('h1', { tabindex: -1 }, 'App links'), notice('info', 'Select an app first (Companies and apps).'));
  const appKey = app.app_key;
  const filesArea = h('div', { 'data-testid': 'well-known-files' });
  let view = await appLinks<AppLinkView>(appKey);
  const { settings } = view;
  const joined = (values: readonly string[] | undefined) => values?.join(',') ?? '';
  const form = actionForm({
    label: `Link settings of ${app.name}`,
    testId: 'app-links-form',
    submit: 'Save link settings',
    fields: [
      {
        flag: 'ios-app-id',
        label: 'iOS app ID',
        value: settings.ios_app_id ?? '',
        placeholder: 'TEAMID.com.example.app',
        hint: 'Team ID, a period, the bundle ID.',
      },
      { flag: 'android-package', label: 'Android package', value: settings.android_package ?? '', placeholder: 'com.example.app' },
      {
        flag: 'android-cert-sha256',
        label: 'Signing certificate SHA-256 fingerprints',
        value: joined(settings.android_cert_sha256),
        placeholder: 'AB:CD:…',
        hint: "As keytool prints them (32 uppercase hex pairs), comma separated; Play App Signing's too.",
        wide: true,
      },
      {
        flag: 'link-domain',
        label: 'Link domains',
        value: joined(settings.link_domains),
        placeholder: 'go.example.com',
        hint: 'Comma separated.',
        wide: true,
      },
    ],
    run: async (flags) => {
      const changed = Object.fromEntries(Object.entries(flags).filter(([, value]) => value !== undefined));
      if (Object.keys(changed).length === 0) return notice('info', 'Nothing to save.');
      await command('app update', { ...changed, 'app-key': appKey });
      view = await appLinks<AppLinkView>(appKey);
      drawFiles();
      return notice('success', 'Saved; the well-known files change within the route’s 30-second cache and Apple’s CDN hour.');
    },
  });

  function drawFiles(): void {
    replace(
      filesArea,
      view.domains.length === 0
        ? notice('info', 'No link domain yet: name one above.')
        : view.domains.map((domain) =>
            h(
              'section',
              { 'aria-label': `Well-known files of ${domain.domain}` },
              h('h3', null, domain.domain),
              Object.entries(domain.files).map(([path, body]) => [
                h('p', null, code(`https://${domain.domain}${path}`)),
                body === null
                  ? notice('info', 'Answers 404: no app on this domain names what this file lists.')
                  : h('pre', { class: 'break' }, JSON.stringify(JSON.parse(body), null, 2)),
              ]),
            ),
          ),
    );
  }
  drawFiles();
  replace(
    root,
    h('h1', { tabindex: -1 }, 'App links'),
    h(
      'p',
      null,
      `What ${app.name}'s Universal Links and App Links need (docs/deep-links.md). The files below are built by the well-known route's own function for each link domain; the route serves them minified, shown here indented.`,
    ),
    form,
    h('h2', null, 'Well-known files, per link domain'),
    filesArea,
  );
}
