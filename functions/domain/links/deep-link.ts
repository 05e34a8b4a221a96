/**
 * Deep link data (docs/deep-links.md): what an app opens once it is installed from a click, as a
 * link carries it (`admin link create|update --deep-link-value V --deep-link-sub1..10`) and as a
 * click stores it. The value and the ten subs are opaque text for the app; the service stores and
 * returns them as JSON strings and never renders them into a page or a script.
 */

export const DEEP_LINK_SUBS = ['sub1', 'sub2', 'sub3', 'sub4', 'sub5', 'sub6', 'sub7', 'sub8', 'sub9', 'sub10'] as const;
export const DEEP_LINK_FIELDS = ['value', ...DEEP_LINK_SUBS] as const;
export type DeepLinkField = (typeof DEEP_LINK_FIELDS)[number];

/** The link's and the click's `deep_link`: absent fields are absent, never empty strings. */
export type DeepLink = Partial<Record<DeepLinkField, string>>;

/** The longest value of any field, in UTF-16 units: the admin refuses longer, a click ignores longer. */
export const DEEP_LINK_MAX = 100;

/** The click URL's query parameter that overrides a field: `deep_link_value`, `deep_link_sub1`..`deep_link_sub10`. */
export const deepLinkParam = (field: DeepLinkField): string => `deep_link_${field}`;

/** The admin flag that sets a field: `--deep-link-value`, `--deep-link-sub1`..`--deep-link-sub10`. */
export const deepLinkFlag = (field: DeepLinkField): string => `deep-link-${field}`;

// Control characters (C0, DEL, C1) and the line and paragraph separators: no app screen name holds
// one, and a value that reaches a log line or a JSON-in-HTML embedding somewhere downstream should
// not carry them.
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/;

/** Whether a field's value may be stored: 1 to DEEP_LINK_MAX characters, no control characters. */
export function isDeepLinkText(value: string): boolean {
  return value.length > 0 && value.length <= DEEP_LINK_MAX && !UNSAFE.test(value);
}

/**
 * The click's deep link: the link's, each field replaced by the click URL's parameter of that
 * field when the parameter is a storable value. A parameter that is not (empty, longer than
 * DEEP_LINK_MAX, or with a control character) is ignored, whole: the link's own value stands.
 * A cut value would open the wrong screen, and refusing the click would lose the visitor; the
 * redirect never depends on it. Undefined when no field has a value.
 */
export function resolveClickDeepLink(
  linkDeepLink: DeepLink | undefined,
  query: Readonly<Record<string, string | undefined>>,
): DeepLink | undefined {
  const resolved: DeepLink = {};
  for (const field of DEEP_LINK_FIELDS) {
    const sent = query[deepLinkParam(field)];
    const value = sent !== undefined && isDeepLinkText(sent) ? sent : linkDeepLink?.[field];
    if (value !== undefined) resolved[field] = value;
  }
  return Object.keys(resolved).length > 0 ? resolved : undefined;
}

/**
 * A link's deep link after `link update`: each field given replaced, each given null cleared,
 * the rest kept. Undefined when no field is left.
 */
export function changedDeepLink(
  before: DeepLink | undefined,
  changes: Partial<Record<DeepLinkField, string | null>>,
): DeepLink | undefined {
  const after: DeepLink = { ...before };
  for (const field of DEEP_LINK_FIELDS) {
    const change = changes[field];
    if (change === null) delete after[field];
    else if (change !== undefined) after[field] = change;
  }
  return Object.keys(after).length > 0 ? after : undefined;
}
