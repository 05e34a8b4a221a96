import type { App } from '../tenants/tenant';
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
    created_ms: made.nowMs,
  };
  if (!link.honeypot && !hasDestination(link)) {
    throw new LinkConfigError('the link has no destination: give --ios-url, --android-url or --web-url, or set them on the app');
  }
  return link;
}
