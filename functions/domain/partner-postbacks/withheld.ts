import type { AttemptRecord } from './deliver';

/**
 * Postbacks withheld for the user's consent (docs/privacy.md, "Consent"; docs/postbacks.md,
 * "Withheld for consent"): read from the delivery log, where each one is a single attempt with
 * outcome `withheld` and the reason `consent: ...` (sharingVerdict's). A postback withheld for
 * fraud is not one of them. Counted per partner and reason over the period, and listed newest
 * first up to a limit, so the console can say which partners' users said no, and why.
 */

/** How sharingVerdict's reasons begin (test/unit/partner-postbacks/withheld.test.ts holds the two together). */
export const CONSENT_REASON_PREFIX = 'consent: ';
/** The longest period the log covers: attempts expire after LOG_DAYS (functions/adapters/postback-store.ts). */
export const MAX_WITHHELD_DAYS = 30;
export const DEFAULT_WITHHELD_DAYS = 7;
/** The most postbacks listed; the counts cover the whole period whatever the limit. */
export const MAX_WITHHELD_LISTED = 1000;
export const DEFAULT_WITHHELD_LISTED = 100;

export interface WithheldPostback {
  readonly at_ms: number;
  readonly partner: string;
  readonly kind: AttemptRecord['kind'];
  readonly event_name: string;
  readonly postback_id: string;
  readonly reason: string;
}

export interface WithheldByPartner {
  readonly partner: string;
  readonly withheld: number;
  /** Reasons and how many postbacks each withheld, most first (then by reason). */
  readonly reasons: readonly { readonly reason: string; readonly withheld: number }[];
}

export interface WithheldForConsent {
  readonly since_ms: number;
  readonly until_ms: number;
  readonly withheld: number;
  /** Partners with at least one, most first (then by name). */
  readonly partners: readonly WithheldByPartner[];
  /** The newest `limit` of them, newest first. */
  readonly postbacks: readonly WithheldPostback[];
  /** Whether more were withheld in the period than are listed. */
  readonly truncated: boolean;
}

/** Whether an attempt is a postback withheld for consent. */
export const isWithheldForConsent = (attempt: Pick<AttemptRecord, 'outcome' | 'error'>): boolean =>
  attempt.outcome === 'withheld' && typeof attempt.error === 'string' && attempt.error.startsWith(CONSENT_REASON_PREFIX);

/**
 * The summary of the attempts of [sinceMs, untilMs) (in any order; others are left out), for one
 * partner when one is named.
 */
export function withheldForConsent(
  attempts: Iterable<AttemptRecord>,
  period: { readonly sinceMs: number; readonly untilMs: number; readonly partner?: string; readonly limit: number },
): WithheldForConsent {
  const found: WithheldPostback[] = [];
  for (const attempt of attempts) {
    if (!isWithheldForConsent(attempt) || attempt.at_ms < period.sinceMs || attempt.at_ms >= period.untilMs) continue;
    if (period.partner !== undefined && attempt.partner !== period.partner) continue;
    found.push({
      at_ms: attempt.at_ms,
      partner: attempt.partner,
      kind: attempt.kind,
      event_name: attempt.event_name,
      postback_id: attempt.postback_id,
      reason: attempt.error ?? '',
    });
  }
  const counts = new Map<string, Map<string, number>>();
  for (const postback of found) {
    const reasons = counts.get(postback.partner) ?? new Map<string, number>();
    counts.set(postback.partner, reasons);
    reasons.set(postback.reason, (reasons.get(postback.reason) ?? 0) + 1);
  }
  const byCount =
    <T>(count: (item: T) => number, name: (item: T) => string) =>
    (a: T, b: T) =>
      count(b) - count(a) || (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0);
  const partners = [...counts].map(([partner, reasons]) => ({
    partner,
    withheld: [...reasons.values()].reduce((sum, n) => sum + n, 0),
    reasons: [...reasons]
      .map(([reason, withheld]) => ({ reason, withheld }))
      .sort(
        byCount(
          (r) => r.withheld,
          (r) => r.reason,
        ),
      ),
  }));
  partners.sort(
    byCount(
      (p) => p.withheld,
      (p) => p.partner,
    ),
  );
  found.sort((a, b) => b.at_ms - a.at_ms || (a.postback_id < b.postback_id ? -1 : a.postback_id > b.postback_id ? 1 : 0));
  return {
    since_ms: period.sinceMs,
    until_ms: period.untilMs,
    withheld: found.length,
    partners,
    postbacks: found.slice(0, period.limit),
    truncated: found.length > period.limit,
  };
}
