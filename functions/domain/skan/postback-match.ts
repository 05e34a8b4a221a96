import { cut } from './fields';
import type { PostbackRecord } from './postback-record';
import type { CoarseValue, PostbackWindow } from './schema';

/**
 * Which app and partner a postback is about, and the report row it falls in (docs/ios.md
 * sections 2 and 3). A postback names its app by App Store id (SKAdNetwork `app-id`,
 * AdAttributionKit `advertised-item-identifier`) and its network by ad network id, which each
 * app maps to a partner name (`admin skan network set`); an unmapped id reports as itself.
 */

/** An App Store id: the digits of `id1234567890` in the app's store URL. */
export const APP_STORE_ID = /^\d{1,20}$/;

/** An ad network id as Apple's are (`example123.skadnetwork`, `com.example`): a key of the app's mapping. */
export const AD_NETWORK_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$/;

/**
 * The App Store id of an app's iOS store URL (`https://apps.apple.com/us/app/name/id1234567890`,
 * or the older itunes.apple.com form), if it has one.
 */
export function appStoreIdOfUrl(url: string | undefined): string | undefined {
  if (url === undefined) return undefined;
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (!/^(apps|itunes)\.apple\.com$/i.test(parsed.hostname)) return undefined;
  return /\/id(\d{1,20})$/.exec(parsed.pathname.replace(/\/+$/, ''))?.[1];
}

export type ConversionType = 'download' | 'redownload' | 're-engagement';

/** What a report row is keyed by, but the day: the postback's partner, source, window, fidelity and conversion type. */
export interface SkanRowDims {
  readonly partner: string;
  readonly source_identifier: string;
  readonly postback_sequence_index: PostbackWindow;
  readonly fidelity_type: number;
  readonly conversion_type: ConversionType;
}

/** What a postback says for the report: the app and network it names, its row, and what crowd anonymity left of its value. */
export interface PostbackFacts {
  /** The App Store id it names, as digits; undefined when it names none the report could match. */
  readonly appStoreId?: string;
  readonly adNetworkId: string;
  readonly dims: Omit<SkanRowDims, 'partner'>;
  readonly fine?: number;
  readonly coarse?: CoarseValue;
}

/**
 * A dimension of an invalid postback is whatever its sender wrote (filed up to 256 characters):
 * kept to this in a report row, so what junk can make a row key weigh stays small.
 */
export const MAX_DIMENSION_CHARS = 64;

const WINDOWS: readonly PostbackWindow[] = [0, 1, 2];
const COARSE: readonly string[] = ['low', 'medium', 'high'];

/** A number or a string of digits as the digits; anything else undefined. */
function digitsOf(value: unknown): string | undefined {
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return String(value);
  if (typeof value === 'string' && /^\d+$/.test(value)) return value;
  return undefined;
}

function textOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** 0 to 63 as a number or digits; anything else is no fine value. */
function fineOf(value: unknown): number | undefined {
  const digits = digitsOf(value);
  const fine = digits === undefined ? undefined : Number(digits);
  return fine !== undefined && fine <= 63 ? fine : undefined;
}

/**
 * The facts of a filed postback. A verified one is read from its signed fields only (an unsigned
 * field beside them could say anything), its conversion values from the unsigned ones (Apple never
 * signs them). An invalid one has nothing trustworthy: its fields as sent, kept in its record and never a row's.
 * Before SKAdNetwork 4 a postback has no sequence index (window 0), and before 2.2 no fidelity
 * type: StoreKit-rendered ads (1), the only kind there was.
 */
export function postbackFactsOf(record: PostbackRecord): PostbackFacts {
  const fields = record.verified ? record.signed : { ...record.unverified, ...record.signed };
  const values = { ...record.unverified };
  const windowText = digitsOf(fields['postback-sequence-index']);
  const window = WINDOWS.find((w) => String(w) === windowText) ?? 0;
  const coarseText = values['coarse-conversion-value'];
  const coarse = typeof coarseText === 'string' && COARSE.includes(coarseText) ? (coarseText as CoarseValue) : undefined;
  const fine = fineOf(values['conversion-value']);
  const value = { ...(fine === undefined ? {} : { fine }), ...(coarse === undefined ? {} : { coarse }) };
  const dimension = (text: string | undefined) => cut(text ?? '', MAX_DIMENSION_CHARS);

  if (record.kind === 'adattributionkit') {
    const conversion = fields['conversion-type'];
    return {
      appStoreId: digitsOf(fields['advertised-item-identifier']),
      adNetworkId: dimension(textOf(fields['ad-network-identifier'])),
      dims: {
        source_identifier: dimension(textOf(fields['source-identifier'])),
        postback_sequence_index: window,
        fidelity_type: fields['impression-type'] === 'app-impression' ? 1 : 0,
        conversion_type: conversion === 'redownload' || conversion === 're-engagement' ? conversion : 'download',
      },
      ...value,
    };
  }
  const fidelity = digitsOf(fields['fidelity-type']);
  return {
    appStoreId: digitsOf(fields['app-id']),
    adNetworkId: dimension(textOf(fields['ad-network-id'])),
    dims: {
      source_identifier: dimension(textOf(fields['source-identifier']) ?? textOf(fields['campaign-id'])),
      postback_sequence_index: window,
      fidelity_type: fidelity === undefined ? 1 : Number(fidelity),
      conversion_type: fields.redownload === true || fields.redownload === 'true' ? 'redownload' : 'download',
    },
    ...value,
  };
}

/** The partner an app calls an ad network: its mapping, else the id itself. */
export function partnerOf(networks: Readonly<Record<string, string>> | undefined, adNetworkId: string): string {
  return (networks && Object.hasOwn(networks, adNetworkId) ? networks[adNetworkId] : undefined) ?? adNetworkId;
}

/** The app a postback is matched to: its id, report time zone and ad network mapping. */
export interface SkanApp {
  readonly app_id: string;
  readonly time_zone: string;
  readonly skan_networks?: Readonly<Record<string, string>>;
}

/** How the report takes a filed postback. */
export type PostbackMatch =
  /** Verified, production, of a known app: one report item. */
  | { readonly kind: 'count'; readonly app: SkanApp; readonly facts: PostbackFacts; readonly dims: SkanRowDims }
  /** Its signature failed: its app's invalid total only (what it names is the sender's word). */
  | { readonly kind: 'invalid'; readonly app: SkanApp; readonly facts: PostbackFacts; readonly dims: SkanRowDims }
  /** AdAttributionKit signed with a development key: anyone with a test device makes these. */
  | { readonly kind: 'development' }
  /** It names no app of this service (or no App Store id at all). */
  | { readonly kind: 'unknown_app' };

/** The app of an App Store id (the tenants table's `app_store#<id>` pointer). */
export type AppsByStoreId = (appStoreId: string) => Promise<SkanApp | undefined>;

/** Matches a filed postback to its app and partner, and says whether and how the report counts it. */
export async function matchPostback(record: PostbackRecord, appOf: AppsByStoreId): Promise<PostbackMatch> {
  if (record.verified && record.kind === 'adattributionkit' && record.key_environment !== 'production') return { kind: 'development' };
  const facts = postbackFactsOf(record);
  const app = facts.appStoreId === undefined ? undefined : await appOf(facts.appStoreId);
  if (!app) return { kind: 'unknown_app' };
  const dims = { partner: partnerOf(app.skan_networks, facts.adNetworkId), ...facts.dims };
  return { kind: record.verified ? 'count' : 'invalid', app, facts, dims };
}
