import { SUB_PARAMS } from './click';

/**
 * The URL a partner is given for a tracking link: the one builder behind `admin link create`,
 * `link list` and `link try`, and so behind the console's link builder, which runs those commands.
 * See docs/tracking-links.md, "The URL given to a partner".
 */

/** The query parameters the redirect reads from a click (interface: click_id, sub1..sub5, mobile_only), in that order. */
export const CLICK_PARAMS = ['click_id', ...SUB_PARAMS, 'mobile_only'] as const;
export type ClickParam = (typeof CLICK_PARAMS)[number];
export type ClickParams = Readonly<Partial<Record<ClickParam, string>>>;

export function trackingLinkUrl(baseUrl: string, linkId: string): string {
  return `${baseUrl}/l/${linkId}`;
}

export function partnerUrl(baseUrl: string, linkId: string, params: ClickParams): string {
  const query = CLICK_PARAMS.flatMap((name) => {
    const value = params[name];
    return value === undefined ? [] : [`${name}=${encodeKeepingMacros(value)}`];
  }).join('&');
  return `${trackingLinkUrl(baseUrl, linkId)}${query ? `?${query}` : ''}`;
}

/**
 * A partner's macro: a name in single or double braces (`{click_id}`, `{gclid}`, Meta's
 * `{{ad.id}}`). The partner's ad server replaces it with its own value before the click, and it
 * can only do that if it finds the braces literally: `%7Bclick_id%7D` is not a macro to it. The
 * name is limited to characters a query value carries unencoded, so a macro left literal makes the
 * URL no less parseable, and braces around anything else (`{not a macro}`, JSON) are encoded.
 */
const MACRO = /\{\{[\w.-]+\}\}|\{[\w.-]+\}/g;

/**
 * Each value percent-encoded as a URI component except its macros. `%20` rather than the form
 * encoding's `+`: it means a space to every decoder, where `+` does only to form decoders.
 */
function encodeKeepingMacros(value: string): string {
  const text = wellFormed(value);
  let encoded = '';
  let from = 0;
  for (const macro of text.matchAll(MACRO)) {
    encoded += encodeURIComponent(text.slice(from, macro.index)) + macro[0];
    from = macro.index + macro[0].length;
  }
  return encoded + encodeURIComponent(text.slice(from));
}

/** encodeURIComponent throws on a lone surrogate; it becomes U+FFFD, as URLSearchParams would make it. */
function wellFormed(value: string): string {
  return value.replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
}
