import { isbot } from 'isbot';
import asnList from './data/blocked-asns.json';

/**
 * Why a click was not recorded. Every drop still gets its 302 (without a click id) and is
 * counted in the ClickDropped metric under this reason.
 */
export type DropReason =
  | 'empty_user_agent'
  | 'bot_user_agent'
  | 'blocked_asn'
  | 'country_not_allowed'
  | 'blocked_ip'
  | 'desktop_on_mobile_only'
  /** A HEAD request: link checkers and previews ask for the headers, no person taps a HEAD. */
  | 'head_request'
  /** A store the click path needs (IP blocks, rate windows, clicks) failed: the visitor still goes on. */
  | 'store_unavailable';

/** The default ASN block list: large hosting and cloud providers, kept as data (data/blocked-asns.json). */
export const DEFAULT_BLOCKED_ASNS: ReadonlySet<number> = new Set(asnList.blocked.map((entry) => entry.asn));

export interface Visitor {
  readonly userAgent: string;
  readonly country?: string;
  readonly asn?: number;
}

export interface CountryRules {
  /** ISO 3166-1 alpha-2; when non-empty, only these countries pass. */
  readonly countries_allow?: readonly string[];
  readonly countries_block?: readonly string[];
}

/**
 * The edge filter: user agent, then network, then country. A visitor whose country is unknown
 * fails an allow list (it cannot show it is allowed) and passes a block list.
 */
export function edgeFilter(visitor: Visitor, rules: CountryRules, blockedAsns = DEFAULT_BLOCKED_ASNS): DropReason | undefined {
  if (visitor.userAgent.trim() === '') return 'empty_user_agent';
  if (isbot(visitor.userAgent)) return 'bot_user_agent';
  if (visitor.asn !== undefined && blockedAsns.has(visitor.asn)) return 'blocked_asn';
  const country = visitor.country?.toUpperCase();
  const allow = rules.countries_allow ?? [];
  if (allow.length > 0 && (country === undefined || !allow.includes(country))) return 'country_not_allowed';
  if (country !== undefined && rules.countries_block?.includes(country)) return 'country_not_allowed';
  return undefined;
}
