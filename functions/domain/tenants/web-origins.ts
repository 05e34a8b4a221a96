/**
 * The web origins an app lists (`admin app update --web-origin`), from which browsers may call the
 * SDK routes (POST /event, POST /privacy/delete, /sdk/v1/*) with CORS (docs/sdk.md, "CORS"). The
 * rules here are the whole policy: what an origin may look like, how many an app lists, and the
 * headers a preflight and an answer carry. No AWS import: the adapter and the HTTP edge apply them.
 */

/** At most 20 origins per app, each at most 255 characters (a DNS name's limit, with scheme and port). */
export const WEB_ORIGIN_LIMITS = { perApp: 20, length: 255 } as const;

/** Hosts that may be served over plain http: a developer's own machine, which no one else can be. */
const LOCAL_HOSTS = new Set(['localhost', '127.0.0.1', '[::1]']);
const DEFAULT_PORTS: Readonly<Record<string, string>> = { https: '443', http: '80' };

/** scheme://host[:port], an optional trailing slash and nothing else; the host a DNS name, an IPv4 address or [IPv6]. */
const ORIGIN =
  /^(https?):\/\/((?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)*[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?|\[[0-9a-f:.]+\])(?::(\d{1,5}))?\/?$/;

/**
 * An origin as browsers send it in the Origin header (lower case, no default port, no trailing
 * slash), or undefined when `text` is not one the service takes: https with a host and an
 * optional port, and http only for localhost, 127.0.0.1 and [::1]; no path, query, fragment or
 * credentials. The same function reads the operator's flag and the browser's header, so a listed
 * origin and the header that names it always compare equal.
 */
export function webOriginOf(text: string): string | undefined {
  if (text.length > WEB_ORIGIN_LIMITS.length) return undefined;
  const match = ORIGIN.exec(text.trim().toLowerCase());
  if (!match) return undefined;
  const [, scheme = '', host = '', port] = match;
  if (scheme === 'http' && !LOCAL_HOSTS.has(host)) return undefined;
  if (!isCanonicalHost(host)) return undefined;
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65_535)) return undefined;
  const keptPort = port === undefined || port === DEFAULT_PORTS[scheme] ? '' : `:${Number(port)}`;
  return `${scheme}://${host}${keptPort}`;
}

const OCTET = '(?:25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
const IPV4 = new RegExp(`^${OCTET}(?:\\.${OCTET}){3}$`);

/**
 * Whether browsers write the host as it is. A host whose last label is a number is an IPv4
 * address to the URL standard, serialized as a dotted quad (`https://0` is sent as
 * `https://0.0.0.0`), and an IPv6 address is compressed: only a canonical dotted quad and [::1]
 * are taken, so a listed origin always equals the header that names it.
 */
function isCanonicalHost(host: string): boolean {
  if (host.startsWith('[')) return host === '[::1]';
  const last = host.slice(host.lastIndexOf('.') + 1);
  return !/^(?:0x[0-9a-f]*|\d+)$/.test(last) || IPV4.test(host);
}

/** The request headers a browser may send on these routes: the three signing headers, the SDK's version, and the body's type and encoding. */
export const CORS_REQUEST_HEADERS = [
  'content-type',
  'content-encoding',
  'x-service-company-key',
  'x-service-app-key',
  'x-service-signature',
  'x-service-sdk',
] as const;

export const CORS_METHODS = ['GET', 'POST', 'OPTIONS'] as const;

/** How long a browser may keep a preflight's answer: two hours, Chromium's ceiling (Firefox keeps up to a day). */
export const CORS_MAX_AGE_SECONDS = 7_200;

/** Answer headers a script may read besides the safelisted ones: the SDK honours Retry-After, and revalidates the SKAN schema by ETag. */
const EXPOSED_HEADERS = ['retry-after', 'etag'];

/**
 * The headers of an allowed preflight. No Access-Control-Allow-Credentials: the SDK sends no
 * cookies, and without it a browser never attaches them, so a page cannot act with a user's session.
 */
export function preflightHeaders(origin: string): Record<string, string> {
  return {
    'access-control-allow-origin': origin,
    'access-control-allow-methods': CORS_METHODS.join(', '),
    'access-control-allow-headers': CORS_REQUEST_HEADERS.join(', '),
    'access-control-max-age': String(CORS_MAX_AGE_SECONDS),
    vary: 'Origin',
  };
}

/** The headers an answer to an allowed origin carries. */
export function answerHeaders(origin: string): Record<string, string> {
  return { 'access-control-allow-origin': origin, 'access-control-expose-headers': EXPOSED_HEADERS.join(', '), vary: 'Origin' };
}

/** The paths browsers may call with CORS; a preflight for any other path is refused. */
export function isCorsPath(path: string): boolean {
  return path === '/event' || path === '/privacy/delete' || /^\/sdk\/v1\/[a-z0-9-]+$/.test(path);
}

/** Whether an app lists the Origin a request names (the header read as the flag is: webOriginOf). */
export function listsOrigin(app: { readonly web_origins?: readonly string[] }, originHeader: string | undefined): string | undefined {
  const origin = originHeader === undefined ? undefined : webOriginOf(originHeader);
  return origin !== undefined && app.web_origins?.includes(origin) ? origin : undefined;
}
