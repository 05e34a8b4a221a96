import { randomBytes } from 'node:crypto';
import type { ClientAddress } from './ip-block';
import type { Platform } from './platform';

/**
 * The click record (docs/tracking-links.md). The aggregator finds a click by click_id (deterministic
 * attribution) and the latest click of an (app, IP, platform) through app_ip_platform + ts_ms
 * (probabilistic attribution). It expires after the link's lookback window.
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
  /** The deep link the click carries (the link's, or the click's own parameters): absent when none. */
  deep_link?: DeepLinkData;
  /** Epoch seconds: ts + the lookback window. */
  expires_at: number;
}

/** A click's deep link data (docs/deep-links.md): the value an app routes on and ten free sub-values. */
export interface DeepLinkData {
  value?: string;
  sub1?: string;
  sub2?: string;
  sub3?: string;
  sub4?: string;
  sub5?: string;
  sub6?: string;
  sub7?: string;
  sub8?: string;
  sub9?: string;
  sub10?: string;
}

/** 128 random bits, URL-safe: unguessable, so a click id cannot be forged to steal an install. */
export const newClickId = () => randomBytes(16).toString('base64url');

/** Values from the request are stored, never refused: an over-long one is cut to these lengths. */
export const FIELD_CAPS = { ext_click_id: 256, sub: 256, user_agent: 1024 } as const;
export const SUB_PARAMS = ['sub1', 'sub2', 'sub3', 'sub4', 'sub5'] as const;

export const appIpPlatform = (appId: string, ip: string, platform: Platform) => `${appId}#${ip}#${platform}`;

/**
 * The by_app_hour index's partition key of a click (lib/manifest.ts): `<app_id>#<YYYY-MM-DDTHH>#<shard>`,
 * the UTC hour of ts_ms and one of 16 shards, the first hex digit of the id's bytes (random), so
 * a busy app's hour is spread over 16 partitions. The warehouse export reads an hour's 16 keys.
 */
export function clickAppHour(click: Pick<ClickRecord, 'app_id' | 'ts_ms' | 'click_id'>): string {
  const first = Buffer.from(click.click_id, 'base64url')[0] ?? 0;
  return appHourKey(click.app_id, new Date(click.ts_ms).toISOString().slice(0, 13), (first >> 4).toString(16));
}

export const CLICK_HOUR_SHARDS: readonly string[] = Array.from({ length: 16 }, (_, shard) => shard.toString(16));

/** The by_app_hour key of an app's hour (`YYYY-MM-DDTHH`, UTC) and shard (`0`-`f`). */
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
  };
  readonly address: ClientAddress;
  readonly userAgent: string;
  readonly platform: Platform;
  readonly country?: string;
  readonly asn?: number;
  readonly query: Readonly<Record<string, string | undefined>>;
  readonly nowMs: number;
}

export function buildClick(input: ClickInput): ClickRecord {
  const { link, address, query } = input;
  const subs = Object.fromEntries(SUB_PARAMS.map((name) => [name, cap(query[name], FIELD_CAPS.sub)]));
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
    expires_at: Math.floor(input.nowMs / 1000) + link.lookback_days * 86_400,
  };
}

/** Cuts to at most `max` UTF-16 units without splitting a surrogate pair; empty becomes absent. */
export function cap(value: string | undefined, max: number): string | undefined {
  if (!value) return undefined;
  if (value.length <= max) return value;
  const cut = value.slice(0, max);
  return /[\uD800-\uDBFF]$/.test(cut) ? cut.slice(0, -1) : cut;
}
