/**
 * Universal Links and Android App Links on a link domain (docs/deep-links.md): the identities an app
 * names (`admin app update --ios-app-id --android-package --android-cert-sha256 --link-domain`), their
 * formats, and the two well-known files a link domain serves for the apps configured on it:
 * Apple's apple-app-site-association and Google's Digital Asset Links statement list.
 */

/** What an app names for its links to open it; every field optional. */
export interface AppLinkIdentity {
  /** `TEAMID.bundle.id`: Apple's Application Identifier Prefix (the team id) and the bundle id. */
  ios_app_id?: string;
  android_package?: string;
  /** SHA-256 fingerprints of the app's signing certificates: 32 uppercase hex byte pairs separated by colons. */
  android_cert_sha256?: string[];
}

/** AppLinkIdentity and the link domains it is served on, as the app record holds them. */
export interface AppLinkSettings extends AppLinkIdentity {
  link_domains?: string[];
}

/** An app on a link domain, as the domain's item keeps it (one read serves both files). */
export interface LinkDomainApp extends AppLinkIdentity {
  app_id: string;
}

/** A team id is 10 uppercase letters and digits; a bundle id letters, digits, hyphens and periods. */
export const IOS_APP_ID = /^[A-Z0-9]{10}\.[A-Za-z0-9-]+(\.[A-Za-z0-9-]+)*$/;
/** Android's package names: two or more segments, each a letter then letters, digits or underscores. */
export const ANDROID_PACKAGE = /^[A-Za-z][A-Za-z0-9_]*(\.[A-Za-z][A-Za-z0-9_]*)+$/;
/** `keytool -list -v`'s SHA256 line: 32 bytes as uppercase hex pairs joined by colons. */
export const CERT_SHA256 = /^[0-9A-F]{2}(:[0-9A-F]{2}){31}$/;
/** A DNS name the distribution can serve: lowercase labels, no wildcard, no trailing dot (lib/constructs/edge.ts checks linkDomain with it). */
export const LINK_DOMAIN = /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/;

/** Bounds on what one app names, so the domain's item and its files stay small. */
export const APP_LINK_LIMITS = { idLength: 155, packageLength: 255, certificates: 10, domains: 10, appsPerDomain: 50 } as const;

export const isIosAppId = (value: string): boolean => value.length <= APP_LINK_LIMITS.idLength && IOS_APP_ID.test(value);
export const isAndroidPackage = (value: string): boolean => value.length <= APP_LINK_LIMITS.packageLength && ANDROID_PACKAGE.test(value);
export const isCertSha256 = (value: string): boolean => CERT_SHA256.test(value);
export const isLinkDomain = (value: string): boolean => LINK_DOMAIN.test(value);

/**
 * The link domain a request names by its host (`go.example.com`, `GO.Example.com:443`,
 * `go.example.com.`): lower-cased, without port or trailing dot; undefined when that is not a
 * DNS name, so nothing else is looked up.
 */
export function linkDomainOfHost(host: string | undefined): string | undefined {
  if (host === undefined || host.length > 300) return undefined;
  const name = host
    .trim()
    .toLowerCase()
    .replace(/:\d{1,5}$/, '')
    .replace(/\.$/, '');
  return isLinkDomain(name) ? name : undefined;
}

/** The paths of the tracking links (`GET /l/{link_id}`): the only URLs of a link domain an app opens. */
export const LINK_PATHS = '/l/*';

/** How long Apple's CDN and Android's verifier may keep a file: an hour, so a change reaches new installs within it. */
export const WELL_KNOWN_CACHE_CONTROL = 'public, max-age=3600';

/**
 * apple-app-site-association in Apple's current format (iOS 13 and later): one `details` entry
 * whose `appIDs` are the domain's iOS apps, matching the tracking-link paths only. Undefined when
 * no app on the domain names an iOS app id.
 */
export function appleAppSiteAssociation(apps: readonly LinkDomainApp[]): string | undefined {
  const appIDs = unique(byAppId(apps).flatMap((app) => (app.ios_app_id ? [app.ios_app_id] : [])));
  if (appIDs.length === 0) return undefined;
  return JSON.stringify({ applinks: { details: [{ appIDs, components: [{ '/': LINK_PATHS }] }] } });
}

/**
 * assetlinks.json: one `handle_all_urls` statement per Android app on the domain that names its
 * package and at least one certificate fingerprint (Android verifies nothing without one).
 * Undefined when there is none.
 */
export function assetLinks(apps: readonly LinkDomainApp[]): string | undefined {
  const statements = byAppId(apps).flatMap((app) =>
    app.android_package && app.android_cert_sha256?.length
      ? [
          {
            relation: ['delegate_permission/common.handle_all_urls'],
            target: { namespace: 'android_app', package_name: app.android_package, sha256_cert_fingerprints: app.android_cert_sha256 },
          },
        ]
      : [],
  );
  return statements.length > 0 ? JSON.stringify(statements) : undefined;
}

/** The identity the domain's item keeps for an app: only the fields it names. */
export function linkIdentityOf(app: AppLinkIdentity): AppLinkIdentity {
  return {
    ...(app.ios_app_id ? { ios_app_id: app.ios_app_id } : {}),
    ...(app.android_package ? { android_package: app.android_package } : {}),
    ...(app.android_cert_sha256?.length ? { android_cert_sha256: app.android_cert_sha256 } : {}),
  };
}

/** The same apps always give the same bytes, whatever order the store returned them in. */
const byAppId = (apps: readonly LinkDomainApp[]) => [...apps].sort((a, b) => (a.app_id < b.app_id ? -1 : a.app_id > b.app_id ? 1 : 0));
const unique = (values: string[]) => [...new Set(values)];

/** The two files, by the path they are served on. */
export const WELL_KNOWN_FILES = {
  '/.well-known/apple-app-site-association': appleAppSiteAssociation,
  '/.well-known/assetlinks.json': assetLinks,
} as const satisfies Record<string, (apps: readonly LinkDomainApp[]) => string | undefined>;

export type WellKnownPath = keyof typeof WELL_KNOWN_FILES;

export const isWellKnownPath = (path: string): path is WellKnownPath => Object.hasOwn(WELL_KNOWN_FILES, path);

/** The apps of a link domain (functions/adapters/link-domain-store.ts, cached); undefined for a domain no app names. */
export interface LinkDomains {
  apps(domain: string): Promise<readonly LinkDomainApp[] | undefined>;
}

/**
 * The file a host serves at a path: its bytes, or undefined (a 404) for a host that is not a link
 * domain, a domain no app names, or a domain none of whose apps is on that file's platform.
 */
export async function wellKnownFile(domains: LinkDomains, host: string | undefined, path: string): Promise<string | undefined> {
  const domain = linkDomainOfHost(host);
  if (domain === undefined || !isWellKnownPath(path)) return undefined;
  const apps = await domains.apps(domain);
  return apps === undefined ? undefined : WELL_KNOWN_FILES[path](apps);
}
