import { DAY_MS } from '../common/days';

/**
 * Re-engagement (issue 37, item 6; docs/deep-links.md, "Re-engagement"): an installed app opened by
 * a link reports a `deep_link_open` event naming the link (`properties.link_id`) and, when the URL
 * carried one, its click (`properties.click_id`). The aggregator resolves the link once, when the
 * event's object writes its claim log item (the resolution is kept on the item, so every delivery
 * and every later object reads the same), then:
 *
 * - counts one re-engagement for the link's partner on the event's day, at most once per install,
 *   link and day (the `g:<link_id>` flag of the install's `d#<day>` item), when the open is later
 *   than the install it counts against;
 * - credits the install's revenue events in [open, open + window) to that re-engagement's partner
 *   and campaign in the performance report's `recent_revenue_usd`, the latest such open winning,
 *   and the install's own partner again after the window (or when no open is known).
 *
 * Nothing else moves: the four interface reports and every other performance figure stay with
 * the install's attribution.
 */

export const DEEP_LINK_OPEN_EVENT = 'deep_link_open';

/** The default re-engagement window, and the largest an app may set (`admin app update --reengagement-window-days`). */
export const DEFAULT_REENGAGEMENT_WINDOW_DAYS = 30;
export const MAX_REENGAGEMENT_WINDOW_DAYS = 90;

/** The app's window in ms: its own days (0 turns crediting off), else the default. */
export const reengagementWindowMs = (days: number | undefined): number => (days ?? DEFAULT_REENGAGEMENT_WINDOW_DAYS) * DAY_MS;

/** The link id and click id a deep_link_open names (the SDKs send them as properties: docs/sdk.md). */
export interface OpenedBy {
  readonly linkId?: string;
  readonly clickId?: string;
}

/** Longest values read: a link id is at most 64 characters (docs/tracking-links.md), a click id 256. */
const MAX_LINK_ID_CHARS = 64;
const MAX_CLICK_ID_CHARS = 256;

const text = (value: unknown, max: number): string | undefined =>
  typeof value === 'string' && value.length > 0 && value.length <= max ? value : undefined;

/** What a deep_link_open's properties name, or undefined when they name neither a link nor a click. */
export function openedBy(properties: Readonly<Record<string, unknown>> | null | undefined): OpenedBy | undefined {
  const linkId = text(properties?.link_id, MAX_LINK_ID_CHARS);
  const clickId = text(properties?.click_id, MAX_CLICK_ID_CHARS);
  if (linkId === undefined && clickId === undefined) return undefined;
  return { ...(linkId === undefined ? {} : { linkId }), ...(clickId === undefined ? {} : { clickId }) };
}

/** The link (and click) an open resolved to: what the claim log item keeps of it. */
export interface ReengagementLink {
  readonly linkId: string;
  readonly partner: string;
  readonly campaign?: string;
  /** The click, when the open named one of this link; else null (the link alone decides). */
  readonly clickId: string | null;
}

/** A link as resolving needs it, and a click as resolving needs it. */
export interface LinkFacts {
  readonly app_id: string;
  readonly partner: string;
  readonly campaign?: string;
}
export interface ClickFacts {
  readonly app_id: string;
  readonly link_id: string;
}

export interface ReengagementLookups {
  link(linkId: string): Promise<LinkFacts | undefined>;
  /** The app's click of this id (a click of another app may be found, and is dropped by resolveOpen). */
  click(appId: string, clickId: string): Promise<ClickFacts | undefined>;
}

/**
 * The link an open counts for, or undefined (no re-engagement; the event still counts as an event).
 * The link must be a link of the app: the one named, else the named click's. A click id is kept
 * only when it is a click of that link; one that is unknown (expired), of another link or of
 * another app is dropped and the link alone decides, as AppsFlyer and Adjust count a Universal
 * Link open by its link whether or not a click was recorded for it. Without a link id the click
 * must be a click of the app: it names the link.
 */
export async function resolveOpen(lookups: ReengagementLookups, appId: string, open: OpenedBy): Promise<ReengagementLink | undefined> {
  const click = open.clickId === undefined ? undefined : await lookups.click(appId, open.clickId);
  const clickOfApp = click?.app_id === appId ? click : undefined;
  const linkId = open.linkId ?? clickOfApp?.link_id;
  if (linkId === undefined) return undefined;
  const link = await lookups.link(linkId);
  if (link?.app_id !== appId) return undefined;
  return {
    linkId,
    partner: link.partner,
    ...(link.campaign ? { campaign: link.campaign } : {}),
    clickId: clickOfApp?.link_id === linkId && open.clickId !== undefined ? open.clickId : null,
  };
}

/**
 * A resolved open as the claim log item keeps it, compactly: the deep_link_open's event id, its
 * corrected time, the link, its partner and campaign ('' for none), the click or null.
 */
export type OpenRef = [eventId: string, tsMs: number, linkId: string, partner: string, campaign: string, clickId: string | null];

export const openRef = (eventId: string, tsMs: number, link: ReengagementLink): OpenRef => [
  eventId,
  tsMs,
  link.linkId,
  link.partner,
  link.campaign ?? '',
  link.clickId,
];

/** Whether an open re-engages the install it counts against: only an open later than that install. */
export const reengages = (open: OpenRef, installTsMs: number): boolean => open[1] > installTsMs;

/**
 * The open an install's revenue event at `eventTsMs` is credited to: of the opens known, those
 * later than the install and at most `eventTsMs`, with the event before their window ends; the
 * latest wins (a tie: the greater event id, so any order of the opens gives the same). None: the
 * install's own attribution.
 */
export function creditedOpen(opens: Iterable<OpenRef>, installTsMs: number, eventTsMs: number, windowMs: number): OpenRef | undefined {
  if (windowMs <= 0) return undefined;
  let best: OpenRef | undefined;
  for (const open of opens) {
    const [id, tsMs] = open;
    if (!reengages(open, installTsMs) || tsMs > eventTsMs || eventTsMs >= tsMs + windowMs) continue;
    if (!best || tsMs > best[1] || (tsMs === best[1] && id > best[0])) best = open;
  }
  return best;
}
