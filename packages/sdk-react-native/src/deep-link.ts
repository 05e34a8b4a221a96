/** A deep link the app should open. */
export interface DeepLink {
  /** `deferred`: the first-launch answer named it (the app was installed from a link); `direct`: a link opened the installed app. */
  readonly source: 'deferred' | 'direct';
  /** The URL that opened the app (direct links only). */
  readonly url?: string;
  /** The deep link fields present: `value` and `sub1`..`sub10` (docs/deep-links.md). */
  readonly fields: Readonly<Record<string, string>>;
}

/** URLs longer than this are ignored: anything a user sends is bounded, and no link of the service is near it. */
export const MAX_LINK_URL_CHARS = 4_096;
const FIELDS = ['value', ...Array.from({ length: 10 }, (_, i) => `sub${i + 1}`)];

/**
 * The deep link fields a URL's query carries (`deep_link_value`, `deep_link_sub1`..`sub10`, the
 * names a click URL takes), each 1 to 100 characters as the service keeps them. No URL class:
 * React Native's is incomplete without a polyfill.
 */
export function deepLinkFieldsOf(url: string): Record<string, string> {
  const query = url.split('#')[0]?.split('?').slice(1).join('?') ?? '';
  const fields: Record<string, string> = {};
  for (const pair of query.split('&')) {
    const [name = '', raw = ''] = pair.split('=');
    const field = name.startsWith('deep_link_') ? name.slice('deep_link_'.length) : '';
    if (!FIELDS.includes(field) || field in fields) continue;
    const value = decoded(raw);
    if (value !== undefined && value.length > 0 && value.length <= 100) fields[field] = value;
  }
  return fields;
}

/** The first-launch answer's deep link without its null members. */
export function presentFields(deepLink: Readonly<Record<string, string | null>>): Record<string, string> {
  return Object.fromEntries(Object.entries(deepLink).filter((entry): entry is [string, string] => typeof entry[1] === 'string'));
}

function decoded(raw: string): string | undefined {
  try {
    return decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    return undefined;
  }
}

/** A value that changes, for React's useSyncExternalStore (hooks.ts) and the app's own listeners. */
export class Observed<T> {
  private value: T | undefined;
  private readonly listeners = new Set<(value: T) => void>();

  get = (): T | undefined => this.value;

  subscribe = (listener: (value: T) => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  set(value: T): void {
    this.value = value;
    for (const listener of [...this.listeners]) listener(value);
  }
}
