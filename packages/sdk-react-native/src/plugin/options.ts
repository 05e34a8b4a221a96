/** The Expo config plugin's options (app.json: `["@attribution/sdk-react-native", { ... }]`). */
export interface AttributionPluginOptions {
  /** The link domains whose links open the app (Universal Links, App Links): `go.example.com`. */
  readonly linkDomains: readonly string[];
  /** Path prefixes of the links that open the app on Android. Default `['/l/']`, the tracking links' paths. */
  readonly linkPaths?: readonly string[];
  /** Where Apple sends the developer's copy of SKAdNetwork and AdAttributionKit postbacks: the API or link domain. */
  readonly reportEndpointDomain: string;
}

export interface CheckedOptions {
  readonly linkDomains: readonly string[];
  readonly linkPaths: readonly string[];
  readonly reportEndpoint: string;
}

const PLUGIN = '@attribution/sdk-react-native';
/** Bounds on what app.json may list: far more than an app has, few enough to keep the manifest small. */
const MAX_DOMAINS = 20;
const MAX_PATHS = 20;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
/** A path prefix as Android's `android:pathPrefix` takes it literally: no wildcards, query or fragment. */
const PATH = /^\/[A-Za-z0-9._~\-/]{0,199}$/;

/** A DNS hostname of at least two labels, lower-cased: no scheme, port, path or wildcard. */
export function isHostname(value: unknown): value is string {
  if (typeof value !== 'string' || value.length > 253) return false;
  const labels = value.toLowerCase().split('.');
  return labels.length >= 2 && labels.every((label) => LABEL.test(label)) && !/^[0-9]+$/.test(labels.at(-1) ?? '');
}

/** The options checked, or an Error naming the option at fault and what it takes. */
export function checkedOptions(options: unknown): CheckedOptions {
  const fail = (message: string): never => {
    throw new Error(`${PLUGIN} config plugin: ${message}`);
  };
  if (typeof options !== 'object' || options === null) {
    return fail('options are required: { linkDomains: ["go.example.com"], reportEndpointDomain: "api.example.com" }');
  }
  const { linkDomains, linkPaths, reportEndpointDomain } = options as Record<string, unknown>;
  if (!Array.isArray(linkDomains) || linkDomains.length === 0 || linkDomains.length > MAX_DOMAINS) {
    fail(`linkDomains must be a list of 1 to ${MAX_DOMAINS} hostnames, e.g. ["go.example.com"]`);
  }
  (linkDomains as unknown[]).forEach((domain, i) => {
    if (!isHostname(domain))
      fail(`linkDomains[${i}] ${JSON.stringify(domain)} is not a hostname (e.g. go.example.com: no https://, port or path)`);
  });
  const paths = linkPaths === undefined ? ['/l/'] : linkPaths;
  if (!Array.isArray(paths) || paths.length === 0 || paths.length > MAX_PATHS)
    fail(`linkPaths must be a list of 1 to ${MAX_PATHS} path prefixes, e.g. ["/l/"]`);
  (paths as unknown[]).forEach((path, i) => {
    if (typeof path !== 'string' || !PATH.test(path)) {
      fail(`linkPaths[${i}] ${JSON.stringify(path)} is not a path prefix (starts with /, letters, digits and . _ ~ - / only)`);
    }
  });
  if (!isHostname(reportEndpointDomain)) {
    fail(
      `reportEndpointDomain ${JSON.stringify(reportEndpointDomain)} is not a hostname (e.g. api.example.com: no https://, port or path)`,
    );
  }
  return {
    linkDomains: unique((linkDomains as string[]).map((domain) => domain.toLowerCase())),
    linkPaths: unique(paths as string[]),
    reportEndpoint: `https://${(reportEndpointDomain as string).toLowerCase()}`,
  };
}

const unique = (values: readonly string[]) => [...new Set(values)];
