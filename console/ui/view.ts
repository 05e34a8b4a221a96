/**
 * The view lives in the URL's hash, `#/<page>?app=K&period=last7&group=campaign,country`, so a
 * reload, a shared link, the browser's Back, and a change of page all keep it. The page is the
 * path; the parameters are the view. Navigation between pages carries the GLOBAL ones (company,
 * app, period, grouping, filters); a page's own (its sort order) stay with it.
 */

/** Parameters every page link carries on. */
export const GLOBAL_PARAMS = ['company', 'app', 'period', 'since', 'until', 'group', 'partner', 'campaign', 'country', 'platform'] as const;

export type ViewChanges = Readonly<Record<string, string | undefined | null>>;

function parse(hash: string): { route: string; params: URLSearchParams } {
  const text = hash.replace(/^#\/?/, '');
  const at = text.indexOf('?');
  const path = at < 0 ? text : text.slice(0, at);
  return { route: path.split('/')[0] ?? '', params: new URLSearchParams(at < 0 ? '' : text.slice(at + 1)) };
}

/** The page's route ('' on the landing page). */
export const currentRoute = (): string => parse(location.hash).route;

/** The view's parameters (a copy). */
export const viewParams = (): URLSearchParams => parse(location.hash).params;

/** One parameter, or undefined when absent or empty. */
export const param = (name: string): string | undefined => viewParams().get(name) || undefined;

/** A comma list parameter (`group=campaign,country`), empty when absent. */
export const listParam = (name: string): string[] =>
  (param(name) ?? '')
    .split(',')
    .map((value) => value.trim())
    .filter(Boolean);

function withChanges(params: URLSearchParams, changes: ViewChanges): URLSearchParams {
  const next = new URLSearchParams(params);
  for (const [name, value] of Object.entries(changes)) {
    if (value === undefined || value === null || value === '') next.delete(name);
    else next.set(name, value);
  }
  return next;
}

function hashOf(route: string, params: URLSearchParams): string {
  const query = params.toString();
  return `#/${route}${query ? `?${query}` : ''}`;
}

/** A link to a page that keeps the global parameters (and applies the changes). */
export function hrefFor(route: string, changes: ViewChanges = {}): string {
  const current = viewParams();
  const kept = new URLSearchParams();
  for (const name of GLOBAL_PARAMS) {
    const value = current.get(name);
    if (value) kept.set(name, value);
  }
  return hashOf(route, withChanges(kept, changes));
}

/**
 * Changes the current page's view: a new history entry (Back returns to the view before), or
 * with `replace` the same entry (a default being written into the URL). Pages redraw on the
 * `hashchange` that follows, so a page calls this and does nothing else. With `replace` and
 * `silent` no hashchange is sent.
 */
export function setView(changes: ViewChanges, options: { replace?: boolean; silent?: boolean } = {}): void {
  const { route, params } = parse(location.hash);
  const hash = hashOf(route, withChanges(params, changes));
  if (hash === location.hash) return;
  if (options.replace) {
    history.replaceState(null, '', hash);
    // `silent`: the caller redraws itself (the shell writing the chosen app back into the URL).
    if (!options.silent) window.dispatchEvent(new HashChangeEvent('hashchange'));
  } else location.hash = hash;
}
