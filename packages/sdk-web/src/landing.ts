/**
 * Web-to-app: a tracking link sends a desktop or a browser without a store destination to the
 * app's web URL with `click_id` and `link_id` in the query (docs/tracking-links.md); a page may
 * carry deep link fields there too (`deep_link_value`, `deep_link_sub1`..`deep_link_sub10`, the
 * names a click URL takes). The SDK reads them once, at the first start that finds them.
 */
export interface Landing {
  readonly clickId?: string;
  readonly linkId?: string;
  readonly deepLink?: Record<string, string>;
}

const ID = /^[A-Za-z0-9._:-]{1,128}$/;
const DEEP_LINK_FIELDS = ['value', ...Array.from({ length: 10 }, (_, i) => `sub${i + 1}`)];

export function landingOf(url: string): Landing | undefined {
  let query: URLSearchParams;
  try {
    query = new URL(url).searchParams;
  } catch {
    return undefined;
  }
  const id = (name: string) => {
    const value = query.get(name);
    return value !== null && ID.test(value) ? value : undefined;
  };
  const deepLink = Object.fromEntries(
    DEEP_LINK_FIELDS.flatMap((field) => {
      const value = query.get(`deep_link_${field}`);
      return value !== null && value.length > 0 && value.length <= 100 ? [[field, value]] : [];
    }),
  );
  const landing: Landing = {
    ...(id('click_id') && { clickId: id('click_id') }),
    ...(id('link_id') && { linkId: id('link_id') }),
    ...(Object.keys(deepLink).length > 0 && { deepLink }),
  };
  return Object.keys(landing).length > 0 ? landing : undefined;
}
