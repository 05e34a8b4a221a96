import { dimensionValue } from '../aggregation/rows';
import type { DimensionValues } from '../analytics/performance';
import { localDayOf } from '../common/days';
import { appIpPlatform, buildClick, type ClickRecord } from './click';
import type { DeepLink } from './deep-link';
import { clientAddress } from './ip-block';
import { type CountryRules, type DropReason, edgeFilter } from './link-filter';
import { platformOf } from './platform';
import { type Destination, type Destinations, destinationFor, redirectLocation } from './redirect-url';
import { admit, type SlidingWindow, type SlotCounter } from './sliding-window';

/** A tracking link: the app and partner a click belongs to, and where each platform goes. */
export interface LinkConfig extends Destinations, CountryRules {
  link_id: string;
  app_id: string;
  company_id: string;
  partner: string;
  campaign?: string;
  /** A trap link, never shown to people: whoever follows it is a bot, and its address is blocked on the company's links. */
  honeypot: boolean;
  countries_allow?: string[];
  countries_block?: string[];
  lookback_days: number;
  /** What the app opens once installed from this link (docs/deep-links.md); a click may override each field. */
  deep_link?: DeepLink;
  created_ms: number;
  /** Set by `admin link update` and `link disable|enable`. */
  updated_ms?: number;
  /**
   * `admin link disable`: the link answers exactly as an unknown one (404, no click, no honeypot
   * block) until `link enable`. Absent on links made before it: enabled.
   */
  disabled?: boolean;
}

/**
 * An address blocked by a honeypot link of one company: that company's links drop its clicks and
 * the aggregator flags that company's installs from it. No other tenant's: one tenant's honeypot,
 * embedded anywhere, must not cut every tenant off from an address thousands of phones may share
 * (carrier-grade NAT). There is no operator-wide block list (docs/tracking-links.md).
 */
export interface IpBlockEntry {
  ip: string;
  ip_block: string;
  link_id: string;
  app_id: string;
  company_id: string;
  /** The latest hit. */
  blocked_ms: number;
  /**
   * When the block now in force began: the first hit of a run of hits each made while the previous
   * one's block was in force (a renewal extends the block, it does not move its start). Absent on
   * entries written before issue 35: their block began at blocked_ms.
   */
  since_ms?: number;
  /** Epoch seconds. */
  expires_at: number;
}

export const HONEYPOT_BLOCK_DAYS = 7;

/**
 * Whether the block was in force at `atMs`: from its first hit until it expires. An install made
 * before the hit and counted after it (a late batch, an offline SDK) is not flagged
 * (docs/aggregation.md, fraud flags).
 */
export const blockInForce = (entry: IpBlockEntry, atMs: number): boolean =>
  (entry.since_ms ?? entry.blocked_ms) <= atMs && atMs < entry.expires_at * 1000;

/** The entry a new hit stores, given the one stored: a hit while a block is in force renews it. */
export const renewedBlock = (hit: IpBlockEntry, stored: IpBlockEntry | undefined): IpBlockEntry =>
  stored !== undefined && blockInForce(stored, hit.blocked_ms)
    ? { ...hit, since_ms: Math.min(stored.since_ms ?? stored.blocked_ms, hit.blocked_ms) }
    : { ...hit, since_ms: hit.blocked_ms };

/** The links by id (functions/adapters/link-store.ts, CachedLinks in front of LinkStore). */
export interface LinkSource {
  byId(linkId: string): Promise<LinkConfig | undefined>;
}

/** The addresses honeypots have blocked (functions/adapters/ip-block-store.ts). */
export interface IpBlocks {
  /** Whether a block of the address by a honeypot of this company was in force at atMs (blockInForce). */
  isBlocked(companyId: string, ip: string, atMs: number): Promise<boolean>;
  block(entry: IpBlockEntry): Promise<void>;
}

/** Where clicks are recorded for attribution (functions/adapters/click-store.ts). */
export interface ClickLog {
  record(click: ClickRecord): Promise<void>;
}

export interface TrackingLinkPorts {
  readonly links: LinkSource;
  readonly ipBlocks: IpBlocks;
  rateCounter: SlotCounter;
  rateWindow: SlidingWindow;
  readonly clicks: ClickLog;
  /**
   * True: each click is recorded with its local day (`count_day`), which is what the click-count
   * lane counts it by (docs/adr/0008-click-counts-from-the-click-log.md). Absent: clicks are
   * recorded for attribution only.
   */
  readonly countClicks?: boolean;
  /** The app's IANA time zone (cached), for the click's local day. */
  timeZoneOf?(appId: string): Promise<string>;
  /** A new click id for a click of this time and appIpPlatform (click-log-key.ts: the id encodes the click's key). */
  newClickId(click: { readonly tsMs: number; readonly appIpPlatform: string }): string;
}

export interface LinkRequest {
  readonly linkId: string;
  /** HEAD is answered as the GET would be, and never recorded (a link checker, a preview); GET when absent. */
  readonly method?: 'GET' | 'HEAD';
  readonly userAgent: string;
  readonly viewer: { readonly ip: string; readonly country?: string; readonly asn?: number };
  readonly query: Readonly<Record<string, string | undefined>>;
  readonly nowMs: number;
}

export type LinkOutcome =
  | { readonly kind: 'unknown_link'; readonly honeypotHit?: boolean; readonly failure?: unknown }
  | { readonly kind: 'rate_limited'; readonly retryAfterSeconds: number }
  /** The link look-up itself failed: there is nowhere to redirect to, so the visitor is asked to retry. */
  | { readonly kind: 'link_unavailable'; readonly failure: unknown }
  | {
      readonly kind: 'redirect';
      readonly location: string;
      readonly click?: ClickRecord;
      readonly dropped?: DropReason;
      /** Set with dropped 'store_unavailable': what failed, for the log. */
      readonly failure?: unknown;
      /** The click was recorded without its local day, so it is not counted (the zone look-up failed: logged and metered; the visitor is redirected all the same). */
      readonly countFailure?: unknown;
    };

/** Link ids the service makes are 12 base64url characters; anything far from that is not looked up. */
const LINK_ID = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * GET /l/{link_id} in the order of docs/tracking-links.md: link, edge filter, honeypot, rate limit,
 * mobile_only, click record, redirect.
 */
export async function followLink(ports: TrackingLinkPorts, request: LinkRequest): Promise<LinkOutcome> {
  let link: LinkConfig | undefined;
  try {
    link = LINK_ID.test(request.linkId) ? await ports.links.byId(request.linkId) : undefined;
  } catch (failure) {
    return { kind: 'link_unavailable', failure };
  }
  // A disabled link is, to a visitor, no link: nothing is recorded, counted or blocked.
  if (!link || link.disabled === true) return { kind: 'unknown_link' };

  const address = clientAddress(request.viewer.ip);
  const { country, asn } = request.viewer;
  const filtered = request.method === 'HEAD' ? 'head_request' : edgeFilter({ userAgent: request.userAgent, country, asn }, link);

  if (link.honeypot) {
    // Indistinguishable from a missing link whatever happens; only a visitor that looks like a
    // person (passed the edge filter) is blocked, so crawlers that follow every URL of a page
    // are not recorded as fraud.
    if (filtered) return { kind: 'unknown_link' };
    // A failed block write still answers 404: the trap must look the same whatever happens.
    const failure = await settle(
      ports.ipBlocks.block({
        ip: address.ip,
        ip_block: address.block,
        link_id: link.link_id,
        app_id: link.app_id,
        company_id: link.company_id,
        blocked_ms: request.nowMs,
        expires_at: Math.floor(request.nowMs / 1000) + HONEYPOT_BLOCK_DAYS * 86_400,
      }),
    );
    return failure === undefined ? { kind: 'unknown_link', honeypotHit: true } : { kind: 'unknown_link', honeypotHit: true, failure };
  }

  const platform = platformOf(request.userAgent);
  const destination = destinationFor(link, platform);
  // A link without any destination cannot be created; an item edited by hand to have none is a
  // link that leads nowhere, answered like a missing one rather than with a broken redirect.
  if (!destination) return { kind: 'unknown_link' };
  const drop = (reason: DropReason): LinkOutcome => ({ kind: 'redirect', location: redirectLocation(destination), dropped: reason });

  if (filtered) return drop(filtered);
  try {
    return await admitAndRecord(ports, request, link, destination, address, platform, drop);
  } catch (failure) {
    // The link is known, so a real visitor can still be sent on; losing one click beats
    // stranding a person on an error page because a store hiccuped. The handler logs it.
    return { kind: 'redirect', location: redirectLocation(destination), dropped: 'store_unavailable', failure };
  }
}

async function admitAndRecord(
  ports: TrackingLinkPorts,
  request: LinkRequest,
  link: LinkConfig,
  destination: Destination,
  address: ReturnType<typeof clientAddress>,
  platform: ReturnType<typeof platformOf>,
  drop: (reason: DropReason) => LinkOutcome,
): Promise<LinkOutcome> {
  const { country, asn } = request.viewer;
  if (await ports.ipBlocks.isBlocked(link.company_id, address.ip, request.nowMs)) return drop('blocked_ip');

  const admission = await admit(ports.rateCounter, `block#${address.block}`, request.nowMs, ports.rateWindow);
  if (!admission.admitted) return { kind: 'rate_limited', retryAfterSeconds: admission.retryAfterSeconds };

  if (request.query.mobile_only === '1' && platform === 'desktop') return drop('desktop_on_mobile_only');

  // The click's local day goes on its record: the click-count lane counts it from the log, and the
  // redirect writes no counter (ADR 0008). A failed zone look-up changes nothing for the visitor:
  // the click is recorded without it, for attribution, and not counted (as a failed count was).
  const [countDay, countFailure] = ports.countClicks ? await localDayOfClick(ports, link.app_id, request.nowMs) : [undefined, undefined];
  const click = buildClick({
    clickId: ports.newClickId({ tsMs: request.nowMs, appIpPlatform: appIpPlatform(link.app_id, address.ip, platform) }),
    link,
    address,
    userAgent: request.userAgent,
    platform,
    country,
    asn,
    query: request.query,
    nowMs: request.nowMs,
    countDay,
  });
  await ports.clicks.record(click);
  return {
    kind: 'redirect',
    location: redirectLocation(destination, {
      click_id: click.click_id,
      link_id: link.link_id,
      partner: link.partner,
      campaign: link.campaign,
    }),
    click,
    ...(countFailure === undefined ? {} : { countFailure }),
  };
}

/** The click's dimensions: the link's partner and campaign, the viewer's country, the user agent's platform. */
export const clickDimensions = (click: Pick<ClickRecord, 'partner' | 'campaign' | 'country' | 'platform'>): DimensionValues => [
  dimensionValue(click.partner),
  dimensionValue(click.campaign),
  dimensionValue(click.country),
  dimensionValue(click.platform),
];

async function localDayOfClick(ports: TrackingLinkPorts, appId: string, nowMs: number): Promise<[string | undefined, unknown]> {
  try {
    const zone = ports.timeZoneOf ? await ports.timeZoneOf(appId) : undefined;
    return [localDayOf(nowMs, zone), undefined];
  } catch (failure) {
    return [undefined, failure ?? new Error('time zone look-up failed')];
  }
}

/** Runs a write whose failure must not change the answer; returns the failure, if any. */
async function settle(write: Promise<void>): Promise<unknown> {
  try {
    await write;
    return undefined;
  } catch (failure) {
    return failure ?? new Error('write failed');
  }
}
