import { isPlainObject } from '../common/json';

/**
 * Apple Ads through AdServices tokens (docs/ios.md, section 4): what Apple answered for each token
 * of an audit object, stored once beside it (`<audit key>.adservices.json`) by adservices-enrich
 * and read by the aggregator. The object keeps the outcome and Apple's ids, never the token.
 */

/** The partner an install is attributed to when Apple claims it. */
export const APPLE_ADS_PARTNER = 'apple_search_ads';

/**
 * attributed: 200 with `attribution: true`; not_attributed: 200 with `attribution: false`;
 * bad_token: 400, not retried; unavailable: 404 or 5xx or no answer after every retry, or a 200
 * that does not read as Apple documents it.
 */
export type AdServicesOutcome = 'attributed' | 'not_attributed' | 'bad_token' | 'unavailable';
export const ADSERVICES_OUTCOMES: readonly AdServicesOutcome[] = ['attributed', 'not_attributed', 'bad_token', 'unavailable'];

/** Apple's claim of an install, as the install record keeps it (`admin install show`). */
export interface AppleAdsClick {
  readonly campaign_id: number;
  readonly ad_group_id: number;
  readonly keyword_id?: number;
  readonly ad_id?: number;
  readonly org_id: number;
  readonly country_or_region: string;
  /** Apple's clickDate, epoch ms (Apple gives it to the minute). */
  readonly click_ms: number;
}

/** What the aggregator knows of one install line's token. */
export interface AdServicesAnswer {
  readonly outcome: AdServicesOutcome;
  /** With `attributed` only. */
  readonly apple_ads?: AppleAdsClick;
}

/** The answers object: one answer per accepted install line that carried a token, by the line's index. */
export interface AdServicesAnswers {
  readonly version: 1;
  readonly answers: readonly (AdServicesAnswer & { readonly index: number })[];
}

export const answersKey = (auditKey: string): string => `${auditKey}.adservices.json`;

/** Apple's 200 body (https://developer.apple.com/documentation/adservices/aaattribution/attributiontoken()) read as an answer. */
export function answerOf(body: unknown): AdServicesAnswer {
  if (!isPlainObject(body) || typeof body.attribution !== 'boolean') return { outcome: 'unavailable' };
  if (!body.attribution) return { outcome: 'not_attributed' };
  const { orgId, campaignId, adGroupId, keywordId, adId, countryOrRegion, clickDate } = body;
  const clickMs = typeof clickDate === 'string' ? Date.parse(clickDate) : Number.NaN;
  if (!isId(campaignId) || !isId(adGroupId) || !isId(orgId) || !Number.isFinite(clickMs)) return { outcome: 'unavailable' };
  return {
    outcome: 'attributed',
    apple_ads: {
      campaign_id: campaignId,
      ad_group_id: adGroupId,
      ...(isId(keywordId) ? { keyword_id: keywordId } : {}),
      ...(isId(adId) ? { ad_id: adId } : {}),
      org_id: orgId,
      country_or_region: typeof countryOrRegion === 'string' ? countryOrRegion : '',
      click_ms: clickMs,
    },
  };
}

const isId = (value: unknown): value is number => Number.isSafeInteger(value) && (value as number) >= 0;

/** The stored object read back; anything else is not an answers object (thrown: the delivery is retried, then dead-lettered). */
export function parseAnswers(text: string): AdServicesAnswers {
  const parsed: unknown = JSON.parse(text);
  if (!isPlainObject(parsed) || parsed.version !== 1 || !Array.isArray(parsed.answers)) {
    throw new Error('not an AdServices answers object');
  }
  for (const answer of parsed.answers) {
    if (
      !isPlainObject(answer) ||
      !Number.isSafeInteger(answer.index) ||
      !ADSERVICES_OUTCOMES.includes(answer.outcome as AdServicesOutcome)
    ) {
      throw new Error('an answer without its index or outcome');
    }
  }
  return parsed as unknown as AdServicesAnswers;
}

/**
 * The answers without those of these lines (the privacy drain's, docs/privacy.md). A line keeps
 * its index when the drain rewrites its audit object without other lines, so the answers left
 * keep theirs and still join to their own lines.
 */
export function answersWithout(answers: AdServicesAnswers, indexes: ReadonlySet<number>): AdServicesAnswers {
  return { version: 1, answers: answers.answers.filter((answer) => !indexes.has(answer.index)) };
}

/** The answers by line index, for the aggregator's join. */
export function answersByIndex(answers: AdServicesAnswers | undefined): Map<number, AdServicesAnswer> {
  const byIndex = new Map<number, AdServicesAnswer>();
  for (const { index, ...answer } of answers?.answers ?? []) byIndex.set(index, answer);
  return byIndex;
}
