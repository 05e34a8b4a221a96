import type { App } from '../tenants/tenant';
import { changedDeepLink, DEEP_LINK_FIELDS, type DeepLink, type DeepLinkField, deepLinkFlag, isDeepLinkText } from './deep-link';
import { type Destinations, hasDestination } from './redirect-url';
import type { LinkConfig } from './tracking-link';

/** What `admin link create` asks for; anything left out comes from the app. */
export interface NewLink extends Destinations {
  partner: string;
  campaign?: string;
  honeypot?: boolean;
  countries_allow?: string[];
  countries_block?: string[];
  lookback_days?: number;
  /** What the app opens once installed (docs/deep-links.md). */
  deep_link?: DeepLink;
}

/** A link that could not be made as asked (the admin CLI prints the message). */
export class LinkConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LinkConfigError';
  }
}

/** What a link takes from its app. */
export type LinkApp = Pick<App, 'app_id' | 'company_id' | 'ios_url' | 'android_url' | 'web_url' | 'lookback_days'>;

const countryCodes = (codes: string[] | undefined) => (codes?.length ? codes.map((c) => c.trim().toUpperCase()) : undefined);

/**
 * A new link. The app's destinations and lookback are copied onto it, so that a redirect is one
 * read of one item; a link keeps what it was made with if the app changes later. A link must
 * lead somewhere, except a honeypot, which only ever answers 404.
 */
export function newLinkConfig(app: LinkApp, input: NewLink, made: { linkId: string; nowMs: number }): LinkConfig {
  const link: LinkConfig = {
    link_id: made.linkId,
    app_id: app.app_id,
    company_id: app.company_id,
    partner: input.partner,
    campaign: input.campaign,
    honeypot: input.honeypot ?? false,
    ios_url: input.ios_url ?? app.ios_url,
    android_url: input.android_url ?? app.android_url,
    web_url: input.web_url ?? app.web_url,
    countries_allow: countryCodes(input.countries_allow),
    countries_block: countryCodes(input.countries_block),
    lookback_days: input.lookback_days ?? app.lookback_days,
    ...(input.deep_link && Object.keys(input.deep_link).length > 0 ? { deep_link: checkedDeepLink(input.deep_link) } : {}),
    created_ms: made.nowMs,
  };
  if (!link.honeypot && !hasDestination(link)) {
    throw new LinkConfigError('the link has no destination: give --ios-url, --android-url or --web-url, or set them on the app');
  }
  return link;
}

/**
 * What `admin link update` may change. Absent: unchanged; null: cleared (the link then has no
 * campaign, or no destination of its own for that platform, or no country list). Partner and
 * honeypot never change: the partner is on every click and install the link has made, and a trap
 * that became a link (or the reverse) would rewrite what its past hits meant.
 */
export interface LinkChanges {
  campaign?: string | null;
  ios_url?: string | null;
  android_url?: string | null;
  web_url?: string | null;
  countries_allow?: string[] | null;
  countries_block?: string[] | null;
  lookback_days?: number;
  /** Per field: a value replaces it, null clears it, absent keeps it. */
  deep_link?: Partial<Record<DeepLinkField, string | null>>;
}

/** The settings LinkChanges names, in the order `link update` lists them. */
export const CHANGEABLE = [
  'campaign',
  'ios_url',
  'android_url',
  'web_url',
  'countries_allow',
  'countries_block',
  'lookback_days',
  'deep_link',
] as const;

/**
 * The link with the changes made, by the rules a new link follows (a link must still lead
 * somewhere unless it is a honeypot). A cleared destination is not taken from the app again: the
 * redirect falls back as for any missing one (docs/tracking-links.md, "Destinations").
 */
export function updatedLinkConfig(link: LinkConfig, changes: LinkChanges, nowMs: number): LinkConfig {
  const updated: LinkConfig = { ...link, updated_ms: nowMs };
  for (const field of CHANGEABLE) {
    const value = changes[field];
    if (value === undefined) continue;
    if (field === 'deep_link') {
      const deepLink = changedDeepLink(link.deep_link, value as NonNullable<LinkChanges['deep_link']>);
      if (deepLink) updated.deep_link = checkedDeepLink(deepLink);
      else delete updated.deep_link;
    } else if (value === null) delete updated[field];
    else if (field === 'countries_allow' || field === 'countries_block') updated[field] = countryCodes(value as string[]);
    else (updated as unknown as Record<string, unknown>)[field] = value;
  }
  if (updated.countries_allow === undefined) delete updated.countries_allow;
  if (updated.countries_block === undefined) delete updated.countries_block;
  if (!updated.honeypot && !hasDestination(updated)) {
    throw new LinkConfigError('the link would have no destination: keep or give --ios-url, --android-url or --web-url');
  }
  return updated;
}

/**
 * The admin tools check each flag first; this holds the stored link to the same rule whatever
 * wrote the request (the console posts the same flags), naming the flag at fault.
 */
function checkedDeepLink(deepLink: DeepLink): DeepLink {
  for (const field of DEEP_LINK_FIELDS) {
    const value = deepLink[field];
    if (value !== undefined && !isDeepLinkText(value)) {
      throw new LinkConfigError(`--${deepLinkFlag(field)} must be 1 to 100 characters without control characters`);
    }
  }
  return deepLink;
}
