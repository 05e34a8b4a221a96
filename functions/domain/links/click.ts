import { MAX_PAST_AGE_MS } from '../ingest/event-validation';
import { type DeepLink, resolveClickDeepLink } from './deep-link';
import type { ClientAddress } from './ip-block';
import type { Platform } from './platform';

/**
 * The click record (docs/tracking-links.md), stored in click_log under the key its id encodes
 * (click-log-key.ts). The aggregator finds a click by the app and click_id (deterministic
 * attribution) and the latest click of an (app, IP, platform) by app_ip_platform + ts_ms
 * (probabilistic attribution). An install may claim it until its claim deadline (`claimDeadline`:
 * its time plus the link's lookback), and it is kept well after that (`expires_at`), so that an
 * install made before the deadline and sent late still finds it.
 */
export interface ClickRecord {
  click_id: string;
  link_id: string;
  app_id: string;
  company_id: string;
  partner: string;
  campaign?: string;
  ext_click_id?: string;
  sub1?: string;
  sub2?: string;
  sub3?: string;
  sub4?: string;
  sub5?: string;
  ip: string;
  ip_block: string;
  user_agent: string;
  platform: Platform;
  country?: string;
  asn?: number;
  ts_ms: number;
  app_ip_platform: string;
  /** The link's attribution lookback: an install may claim the click this many days after it. */
  lookback_days?: number;
  /**
   * What the app opens once installed (docs/deep-links.md): the link's deep link, each field
   * overridden by the click URL's `deep_link_value` / `deep_link_sub1`..`deep_link_sub10`
   * (resolveClickDeepLink). Absent when there is none.
   */
  deep_link?: DeepLink;
  /**
   * The click's local day in its app's zone at the redirect: what the click-count lane counts it
   * by (docs/adr/0008-click-counts-from-the-click-log.md). Absent on a click recorded before the
   * lane (the redirect counted it itself) or whose zone look-up failed (not counted).
   */
  count_day?: string;
  /**
   * Epoch seconds, click_log's TTL attribute: DynamoDB deletes the click some time after it.
   * The claim deadline plus CLICK_KEPT_AFTER_CLAIM_S; on a click without lookback_days (recorded
   * before it was kept) the claim deadline itself. Attribution never reads it as the window.
   */
  expires_at: number;
}

/**
 * How long a click is kept after its claim deadline (issue 35, the click TTL rule): ingestion
 * accepts an event up to MAX_PAST_AGE_MS (90 days) old, so an install made at the deadline may be
 * counted that much later; a day more for the aggregation queue's retries and the hosts' clocks.
 * Without it, DynamoDB's TTL deleted the click at the deadline and a late install (an SDK offline
 * for a week, a retried batch) made inside the window was counted organic.
 */
export const CLICK_KEPT_AFTER_CLAIM_S = MAX_PAST_AGE_MS / 1000 + 86_400;

/**
 * Epoch seconds after which no install can claim the click: its time (whole seconds) plus the
 * link's lookback. A click recorded before lookback_days was kept has it as its expires_at.
 */
export function claimDeadline(click: Pick<ClickRecord, 'ts_ms' | 'lookback_days' | 'expires_at'>): number {
  return click.lookback_days === undefined ? click.expires_at : Math.floor(click.ts_ms / 1000) + click.lookback_days * 86_400;
}

/** Values from the request are stored, never refused: an over-long one is cut to these lengths. */
export const FIELD_CAPS = { ext_click_id: 256, sub: 256, user_agent: 1024 } as const;
export const SUB_PARAMS = ['sub1', 'sub2', 'sub3', 'sub4', 'sub5'] as const;

export const appIpPlatform = (appId: string, ip: string, platform: Platform) => `${appId}#${ip}#${platform}`;

export const CLICK_HOUR_SHARDS: readonly string[] = Array.from({ length: 16 }, (_, shard) => shard.toString(16));

/**
 * The partition of an app's hour (`YYYY-MM-DDTHH`, UTC) and shard (`0`-`f`): click_log's key
 * (click-log-key.ts) and the old clicks table's by_app_hour index's, read until that table is dropped.
 */
export const appHourKey = (appId: string, hour: string, shard: string): string => `${appId}#${hour}#${shard}`;

export interface ClickInput {
  readonly clickId: string;
  readonly link: {
    readonly link_id: string;
    readonly app_id: string;
    readonly company_id: string;
    readonly partner: string;
    readonly campaign?: string;
    readonly lookback_days: number;
    readonly deep_link?: DeepLink;
  };
  readonly address: ClientAddress;
  readonly userAgent: string;
  readonly platform: Platform;
  readonly country?: string;
  readonly asn?: number;
  readonly query: Readonly<Record<string, string | undefined>>;
  readonly nowMs: number;
  /** The click's local day, when it is to be counted. */
  readonly countDay?: string;
}

export function buildClick(input: ClickInput): ClickRecord {
  const { link, address, query } = input;
  const subs = Object.fromEntries(SUB_PARAMS.map((name) => [name, cap(query[name], FIELD_CAPS.sub)]));
  const deepLink = resolveClickDeepLink(link.deep_link, query);
  return {
    click_id: input.clickId,
    link_id: link.link_id,
    app_id: link.app_id,
    company_id: link.company_id,
    partner: link.partner,
    campaign: link.campaign,
    ext_click_id: cap(query.click_id, FIELD_CAPS.ext_click_id),
    ...subs,
    ip: address.ip,
    ip_block: address.block,
    user_agent: cap(input.userAgent, FIELD_CAPS.user_agent) ?? '',
    platform: input.platform,
    country: input.country,
    asn: input.asn,
    ts_ms: input.nowMs,
    app_ip_platform: appIpPlatform(link.app_id, address.ip, input.platform),
    lookback_days: link.lookback_days,
    ...(deepLink ? { deep_link: deepLink } : {}),
    ...(input.countDay === undefined ? {} : { count_day: input.countDay }),
    expires_at: Math.floor(input.nowMs / 1000) + link.lookback_days * 86_400 + CLICK_KEPT_AFTER_CLAIM_S,
  };
}

/** Cuts to at most `max` UTF-16 units without splitting a surrogate pair; empty becomes absent. */
export function cap(value: string | undefined, max: number): string | undefined {
  if (!value) return undefined;
  if (value.length <= max) return value;
  const cut = value.slice(0, max);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}
