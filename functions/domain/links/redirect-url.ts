import type { Platform } from './platform';

/**
 * Where a visitor is sent. Destinations come only from the link's configuration (the app's
 * destinations are copied onto the link when it is created), never from the request, so no query
 * parameter or path trick can choose the host: the request contributes nothing but the click id
 * the server made.
 */
export interface Destinations {
  ios_url?: string;
  android_url?: string;
  web_url?: string;
}

export type DestinationField = keyof Destinations;

/**
 * Each platform's own destination first, then the web URL (which works everywhere), then the
 * other store (its page still renders in a browser). A visitor is never left without a redirect
 * while the link has any destination at all.
 */
const PREFERENCE: Record<Platform, readonly DestinationField[]> = {
  ios: ['ios_url', 'web_url', 'android_url'],
  android: ['android_url', 'web_url', 'ios_url'],
  desktop: ['web_url', 'ios_url', 'android_url'],
};

export interface Destination {
  readonly field: DestinationField;
  readonly url: URL;
}

export function destinationFor(destinations: Destinations, platform: Platform): Destination | undefined {
  for (const field of PREFERENCE[platform]) {
    const url = httpUrl(destinations[field]);
    if (url) return { field, url };
  }
  return undefined;
}

export function hasDestination(destinations: Destinations): boolean {
  return destinationFor(destinations, 'desktop') !== undefined;
}

/** Only absolute http(s) URLs are destinations; anything else in the configuration is ignored. */
function httpUrl(value: string | undefined): URL | undefined {
  if (!value) return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url : undefined;
  } catch {
    return undefined;
  }
}

export interface Attribution {
  readonly click_id: string;
  readonly link_id: string;
  readonly partner: string;
  readonly campaign?: string;
}

/**
 * The Location of the 302. Without attribution (a dropped click) it is the destination as
 * configured. The Play Store URL (android_url) carries it in `referrer`, which Google Play hands
 * to the app through the Install Referrer API: the URL-encoded
 * `click_id=<id>&link_id=<id>&utm_source=<partner>[&utm_campaign=<campaign>]`. Every other
 * destination gets click_id and link_id as query parameters. Existing query parameters are kept
 * byte for byte; ones with the same names as ours are replaced, so a stale value in the
 * configuration cannot shadow the click.
 */
export function redirectLocation(destination: Destination, attribution?: Attribution): string {
  const url = new URL(destination.url.href);
  if (!attribution) return url.href;
  const ids: [string, string][] = [
    ['click_id', attribution.click_id],
    ['link_id', attribution.link_id],
  ];
  if (destination.field !== 'android_url') return withParams(url, ids);
  const referrer = formEncode([
    ...ids,
    ['utm_source', attribution.partner],
    ...(attribution.campaign ? ([['utm_campaign', attribution.campaign]] as [string, string][]) : []),
  ]);
  return withParams(url, [['referrer', referrer]]);
}

function withParams(url: URL, params: [string, string][]): string {
  const names = new Set(params.map(([name]) => name));
  const kept = url.search
    .slice(1)
    .split('&')
    .filter((pair) => pair !== '' && !names.has(paramName(pair)));
  url.search = [...kept, formEncode(params)].join('&');
  return url.href;
}

function formEncode(params: [string, string][]): string {
  return params.map(([name, value]) => `${encodeURIComponent(name)}=${encodeURIComponent(value)}`).join('&');
}

function paramName(pair: string): string {
  const [name = ''] = pair.split('=');
  const raw = name.replace(/\+/g, ' ');
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}
