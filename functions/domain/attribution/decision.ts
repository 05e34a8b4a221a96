import { type AdServicesAnswer, type AdServicesOutcome, APPLE_ADS_PARTNER, type AppleAdsClick } from '../adservices/answers';
import { DAY_MS } from '../common/days';
import type { ClickRecord } from '../links/click';
import type { Platform } from '../links/platform';

/**
 * Attribution (docs/aggregation.md#attribution), run once per install event. Last click wins:
 *   1. deterministic: the click named by attribution.click_id or by the click_id parameter of the
 *      Play install referrer, a click of this app made within the link's lookback before the install;
 *   2. probabilistic, only for apps that switched it on: the latest click from the same address and
 *      platform in the 24 hours before the install;
 *   Apple Ads (docs/ios.md, section 4): Apple's answer to the install's AdServices token, when it
 *      claims the install, is a deterministic click at its clickDate; it competes with a matched
 *      tracking-link click by click time (the later wins; a tie goes to the tracking link) and
 *      always beats a probabilistic match, which is only looked for when neither is there;
 *   3. otherwise organic.
 * The decision keeps why, so `admin install show` can explain it, and the rebuild replays it
 * instead of asking click records that have expired since.
 */

export type AttributionType = 'deterministic' | 'probabilistic' | 'organic';
export type AttributionRule =
  | 'click_id'
  | 'referrer_click_id'
  | 'adservices_token'
  | 'same_ip_platform_24h'
  | 'first_launch_answer'
  | 'no_match';
export type FraudReason = 'ctit_under_10s' | 'click_injection' | 'honeypot_ip';
/** Why a click named by the install was not taken. */
export type RefusedClick = 'unknown_or_expired' | 'other_app' | 'after_install' | 'outside_lookback';

export const ORGANIC = 'organic';
export const PROBABILISTIC_WINDOW_MS = 24 * 60 * 60 * 1000;
export const MIN_CTIT_SECONDS = 10;
const DEFAULT_LOOKBACK_DAYS = 7;

/** The matched click's pass-through fields, as its record keeps them. */
type ClickFields = Partial<
  Pick<ClickRecord, 'click_id' | 'link_id' | 'campaign' | 'ext_click_id' | 'sub1' | 'sub2' | 'sub3' | 'sub4' | 'sub5' | 'country'>
>;

export interface AttributionDecision extends ClickFields {
  partner: string;
  attribution_type: AttributionType;
  rule: AttributionRule;
  reinstall: boolean;
  reinstall_reason?: 'same_install_uuid' | 'device_seen_under_other_install';
  click_ms?: number;
  /** The window the click had to fall in: [from_ms, install time]. */
  window?: { from_ms: number; to_ms: number; lookback_days?: number };
  ctit_seconds?: number;
  fraud_reasons: FraudReason[];
  /** A click the install named but that could not be taken, and why. */
  refused_click?: { click_id: string; reason: RefusedClick };
  /** What Apple answered to the install's AdServices token, when it carried one. */
  adservices?: AdServicesOutcome;
  /** Apple's claim when it made one (`adservices: attributed`), taken or beaten by a later tracking-link click. */
  apple_ads?: AppleAdsClick;
  /** The first-launch answer the install got before it was counted, and what the decision made of it. */
  first_launch?: FirstLaunchUse;
}

/**
 * The first-launch answer as evidence (docs/deep-links.md, "The answer and the reports"): what the
 * app was told at its first launch, before the aggregator counted the install.
 */
export interface FirstLaunchEvidence {
  readonly answeredMs: number;
  readonly status: 'found' | 'not_found';
  /** The click the answer named (null for a found answer without one, as Apple Ads' claim). */
  readonly clickId: string | null;
  readonly match: 'deterministic' | 'probabilistic' | null;
  readonly clickMs: number | null;
}

/**
 * What the decision did with the answer: `taken` (its click decided the install, or its not_found
 * kept the install organic), `same_click` (the install event named that click itself), or why it
 * was set aside: a stronger signal in the install event (`click_id`, `referrer_click_id`), Apple
 * Ads' claim (`adservices_token`), a click made after the install (`click_after_install`), a click
 * no longer kept (`click_gone`, after a privacy deletion), or a found answer without a click whose
 * Apple Ads claim the install event no longer carries (`no_click`).
 */
export type FirstLaunchUse = {
  answered_ms: number;
  status: 'found' | 'not_found';
  click_id: string | null;
  outcome:
    | 'taken'
    | 'same_click'
    | 'overridden_by_click_id'
    | 'overridden_by_referrer_click_id'
    | 'overridden_by_adservices_token'
    | 'click_after_install'
    | 'click_gone'
    | 'no_click';
};

/** What the aggregator knows of an install event, from its audit line. */
export interface InstallFacts {
  readonly appId: string;
  /** The app's company: only its own honeypots' blocks flag the install. */
  readonly companyId: string;
  readonly probabilistic: boolean;
  readonly installUuid: string;
  /** event_id of the install event. */
  readonly eventId: string;
  /** Corrected install time (first launch), epoch ms. */
  readonly tsMs: number;
  /** corrected_ts - ts_ms: brings other device-clock times (install_begin_ms) onto the server clock. */
  readonly skewMs: number;
  readonly platform: Platform;
  readonly clientIp: string;
  readonly deviceHash?: string;
  readonly attribution?: { readonly click_id?: string; readonly referrer?: string; readonly install_begin_ms?: number };
  /** Apple's answer to the install's AdServices token (joined from the answers object), when it carried one. */
  readonly adservices?: AdServicesAnswer;
  /** An earlier install event of the same install_uuid was counted. */
  readonly seenInstallUuid: boolean;
  /** The first-launch answer of the install_uuid, read for its first install only (install-decision.ts). */
  readonly firstLaunch?: FirstLaunchEvidence;
}

export interface AttributionLookups {
  /**
   * The app's click of this id, expired or not: attribution applies the lookback itself. A click of
   * another app is not found (its id names a key of its own app) or, recorded before click_log, is
   * returned and refused as `other_app`.
   */
  clickById(appId: string, clickId: string): Promise<ClickRecord | undefined>;
  /** The latest click of the app, address and platform made within [fromMs, toMs]. */
  latestClick(query: { appId: string; ip: string; platform: Platform; fromMs: number; toMs: number }): Promise<ClickRecord | undefined>;
  /** A block of the address by one of the company's honeypot links, in force at the given time. */
  honeypotBlocked(companyId: string, ip: string, atMs: number): Promise<boolean>;
  /** Whether the app has counted an install of this device under another install_uuid. */
  deviceSeenElsewhere(appId: string, deviceHash: string, installUuid: string): Promise<boolean>;
}

export async function decideAttribution(facts: InstallFacts, lookups: AttributionLookups): Promise<AttributionDecision> {
  const [reinstall, honeypot] = await Promise.all([
    reinstallOf(facts, lookups),
    lookups.honeypotBlocked(facts.companyId, facts.clientIp, facts.tsMs),
  ]);
  const apple = facts.adservices?.outcome === 'attributed' ? facts.adservices.apple_ads : undefined;
  const evidence = usableEvidence(facts);
  // Apple's claim beats any probabilistic match, so none is looked for when there is one; nor when
  // the app was told at first launch: that answer was the probabilistic verdict.
  const named = await matchClick({ ...facts, probabilistic: facts.probabilistic && !apple && !evidence }, lookups);
  const { refused } = named;
  let matched = named.matched;
  let firstLaunch = firstLaunchUse(facts, matched, apple);
  if (!matched && !apple && evidence?.status === 'found') {
    matched = await answeredMatch(evidence, facts, lookups);
    // The click is gone (a privacy deletion): the answer cannot be replayed, and the install stays organic.
    if (!matched && firstLaunch) firstLaunch = { ...firstLaunch, outcome: 'click_gone' };
  }
  // Last click wins between the two deterministic claims; a tie stays with the tracking link.
  if (apple && (!matched || apple.click_ms > matched.click.ts_ms)) {
    return withEvidence(withAdServices(facts, appleAdsDecision(facts, apple, reinstall, honeypot), refused), firstLaunch);
  }

  const fraud: FraudReason[] = [];
  const decision: AttributionDecision = matched
    ? {
        partner: matched.click.partner,
        attribution_type: matched.type,
        rule: matched.rule,
        ...reinstall,
        ...clickFields(matched.click),
        window: matched.window,
        ctit_seconds: Math.max(0, Math.floor((facts.tsMs - matched.click.ts_ms) / 1000)),
        fraud_reasons: fraud,
      }
    : { partner: ORGANIC, attribution_type: 'organic', rule: 'no_match', ...reinstall, fraud_reasons: fraud };
  if (matched) {
    if (facts.tsMs - matched.click.ts_ms < MIN_CTIT_SECONDS * 1000) fraud.push('ctit_under_10s');
    const beginMs = facts.attribution?.install_begin_ms;
    if (beginMs !== undefined && matched.click.ts_ms > beginMs + facts.skewMs) fraud.push('click_injection');
  }
  if (honeypot) fraud.push('honeypot_ip');
  return withEvidence(withAdServices(facts, decision, refused), firstLaunch);
}

/**
 * How far after the install event's time the answered click may be: the two clocks differ (the
 * install time is the device's, corrected by the batch's sent_at_ms). Later than this, the click
 * cannot have brought the install, and the answer is set aside.
 */
export const FIRST_LAUNCH_CLOCK_SLACK_MS = 60_000;

const clickAfterInstall = (evidence: FirstLaunchEvidence, facts: InstallFacts) =>
  evidence.clickMs !== null && evidence.clickMs > facts.tsMs + FIRST_LAUNCH_CLOCK_SLACK_MS;

/**
 * The answer, when the decision may lean on it: a not_found, or a found naming a click made before
 * the install. A found answer without a click (Apple Ads' claim, kept from an earlier decision of
 * this install) adds nothing: the install event's own token decides it again.
 */
function usableEvidence(facts: InstallFacts): FirstLaunchEvidence | undefined {
  const evidence = facts.firstLaunch;
  if (!evidence || (evidence.status === 'found' && (evidence.clickId === null || clickAfterInstall(evidence, facts)))) return undefined;
  return evidence;
}

/** What becomes of the answer before its own click is looked at: set aside, confirmed, or (so far) taken. */
function firstLaunchUse(
  facts: InstallFacts,
  matched: ClickMatch | undefined,
  apple: AppleAdsClick | undefined,
): FirstLaunchUse | undefined {
  const evidence = facts.firstLaunch;
  if (!evidence) return undefined;
  const use = (outcome: FirstLaunchUse['outcome']): FirstLaunchUse => ({
    answered_ms: evidence.answeredMs,
    status: evidence.status,
    click_id: evidence.clickId,
    outcome,
  });
  const appleAnswer = evidence.status === 'found' && evidence.clickId === null;
  if (matched && matched.click.click_id === evidence.clickId) return use('same_click');
  if (matched && matched.type === 'deterministic') return use(`overridden_by_${matched.rule as 'click_id' | 'referrer_click_id'}`);
  if (apple) return use(appleAnswer ? 'same_click' : 'overridden_by_adservices_token');
  // A probabilistic match is looked for only when the answer could not be used.
  if (appleAnswer) return use('no_click');
  if (evidence.status === 'found' && clickAfterInstall(evidence, facts)) return use('click_after_install');
  return use('taken');
}

/**
 * The click the answer named, as the decision's match: the click record while it is kept, with the
 * answer's own match type and a window ending at the answer (when the app was told).
 */
async function answeredMatch(
  evidence: FirstLaunchEvidence,
  facts: InstallFacts,
  lookups: AttributionLookups,
): Promise<ClickMatch | undefined> {
  if (evidence.clickId === null) return undefined;
  const click = await lookups.clickById(facts.appId, evidence.clickId);
  if (!click || click.app_id !== facts.appId) return undefined;
  const type = evidence.match ?? 'deterministic';
  const span = type === 'probabilistic' ? PROBABILISTIC_WINDOW_MS : (click.lookback_days ?? DEFAULT_LOOKBACK_DAYS) * DAY_MS;
  return { click, rule: 'first_launch_answer', type, window: { from_ms: evidence.answeredMs - span, to_ms: evidence.answeredMs } };
}

function withEvidence(decision: AttributionDecision, use: FirstLaunchUse | undefined): AttributionDecision {
  if (use) decision.first_launch = use;
  return decision;
}

/** What matching a tracking-link click needs of an install: the aggregator's install event, or a first launch. */
export type ClickQuery = Pick<InstallFacts, 'appId' | 'tsMs' | 'platform' | 'clientIp' | 'probabilistic' | 'attribution'>;

/** A tracking-link click taken for an install, by which rule, and the window it had to fall in. */
export interface ClickMatch {
  readonly click: ClickRecord;
  readonly rule: AttributionRule;
  readonly type: 'deterministic' | 'probabilistic';
  readonly window: NonNullable<AttributionDecision['window']>;
}

/**
 * Rules 1 and 2 of the decision: the click the install names (deterministic), else, when the app
 * switched it on, the latest click of the same address and platform in the 24 hours before it
 * (probabilistic). The one place these windows are applied: the aggregator's decision and the
 * first-launch answer (functions/domain/attribution/first-launch.ts) both call it, so an app is
 * told at first launch what the reports will count.
 */
export async function matchClick(
  query: ClickQuery,
  lookups: Pick<AttributionLookups, 'clickById' | 'latestClick'>,
): Promise<{ matched?: ClickMatch; refused?: AttributionDecision['refused_click'] }> {
  let refused: AttributionDecision['refused_click'];
  // The click_id first, then the Play referrer's: a valid referrer click beats an unknown or stale
  // click_id (issue 35; AppsFlyer and Adjust do the same). The first refusal is the one recorded.
  for (const named of namedClickIds(query.attribution)) {
    const click = await lookups.clickById(query.appId, named.clickId);
    const lookbackDays = click?.lookback_days ?? lookbackFromExpiry(click) ?? DEFAULT_LOOKBACK_DAYS;
    const fromMs = query.tsMs - lookbackDays * DAY_MS;
    const reason: RefusedClick | undefined = !click
      ? 'unknown_or_expired'
      : click.app_id !== query.appId
        ? 'other_app'
        : click.ts_ms > query.tsMs
          ? 'after_install'
          : click.ts_ms < fromMs
            ? 'outside_lookback'
            : undefined;
    if (click && !reason) {
      const window = { from_ms: fromMs, to_ms: query.tsMs, lookback_days: lookbackDays };
      return { matched: { click, rule: named.rule, type: 'deterministic', window }, refused };
    }
    refused ??= { click_id: named.clickId, reason: reason ?? 'unknown_or_expired' };
  }
  if (query.probabilistic) {
    const fromMs = query.tsMs - PROBABILISTIC_WINDOW_MS;
    const click = await lookups.latestClick({ appId: query.appId, ip: query.clientIp, platform: query.platform, fromMs, toMs: query.tsMs });
    const window = { from_ms: fromMs, to_ms: query.tsMs };
    if (click) return { matched: { click, rule: 'same_ip_platform_24h', type: 'probabilistic', window }, refused };
  }
  return { refused };
}

/**
 * Apple's claim taken: partner apple_search_ads, the campaign id as the install's campaign, the
 * country Apple served the ad in. No CTIT rule: Apple gives the click to the minute, and its
 * claim is Apple's own (not a click a fraudster can inject); an address a honeypot blocked still flags it.
 */
function appleAdsDecision(
  facts: InstallFacts,
  apple: AppleAdsClick,
  reinstall: Pick<AttributionDecision, 'reinstall' | 'reinstall_reason'>,
  honeypot: boolean,
): AttributionDecision {
  return {
    partner: APPLE_ADS_PARTNER,
    attribution_type: 'deterministic',
    rule: 'adservices_token',
    ...reinstall,
    campaign: String(apple.campaign_id),
    ...(apple.country_or_region ? { country: apple.country_or_region } : {}),
    click_ms: apple.click_ms,
    ctit_seconds: Math.max(0, Math.floor((facts.tsMs - apple.click_ms) / 1000)),
    fraud_reasons: honeypot ? ['honeypot_ip'] : [],
  };
}

/** The refused click and Apple's answer, kept on whichever decision was made. */
function withAdServices(
  facts: InstallFacts,
  decision: AttributionDecision,
  refused: AttributionDecision['refused_click'],
): AttributionDecision {
  if (refused) decision.refused_click = refused;
  if (facts.adservices) {
    decision.adservices = facts.adservices.outcome;
    if (facts.adservices.apple_ads) decision.apple_ads = facts.adservices.apple_ads;
  }
  return decision;
}

async function reinstallOf(
  facts: InstallFacts,
  lookups: AttributionLookups,
): Promise<Pick<AttributionDecision, 'reinstall' | 'reinstall_reason'>> {
  if (facts.seenInstallUuid) return { reinstall: true, reinstall_reason: 'same_install_uuid' };
  if (facts.deviceHash && (await lookups.deviceSeenElsewhere(facts.appId, facts.deviceHash, facts.installUuid))) {
    return { reinstall: true, reinstall_reason: 'device_seen_under_other_install' };
  }
  return { reinstall: false };
}

/** The clicks the install names, in the order they are tried: attribution.click_id, then the Play install referrer's click_id. */
export function namedClickIds(attribution: InstallFacts['attribution']): { clickId: string; rule: AttributionRule }[] {
  const named: { clickId: string; rule: AttributionRule }[] = [];
  if (attribution?.click_id) named.push({ clickId: attribution.click_id, rule: 'click_id' });
  const referred = referrerClickId(attribution?.referrer);
  if (referred !== undefined && referred !== attribution?.click_id) named.push({ clickId: referred, rule: 'referrer_click_id' });
  return named;
}

function referrerClickId(referrer: string | undefined): string | undefined {
  if (!referrer) return undefined;
  // The Install Referrer API hands back the decoded string; some SDKs pass it still URL-encoded.
  for (const candidate of [referrer, safeDecode(referrer)]) {
    const clickId = candidate ? new URLSearchParams(candidate.replace(/^\?/, '')).get('click_id') : null;
    if (clickId) return clickId;
  }
  return undefined;
}

function safeDecode(value: string): string | undefined {
  try {
    return decodeURIComponent(value);
  } catch {
    return undefined;
  }
}

/** Clicks recorded before lookback_days was kept on them: their expires_at is still their claim deadline, ts + lookback. */
function lookbackFromExpiry(click: ClickRecord | undefined): number | undefined {
  return click ? Math.round((click.expires_at * 1000 - click.ts_ms) / DAY_MS) : undefined;
}

function clickFields(click: ClickRecord): Partial<AttributionDecision> {
  const { click_id, link_id, campaign, ext_click_id, sub1, sub2, sub3, sub4, sub5, country, ts_ms } = click;
  const fields: Partial<AttributionDecision> = {
    click_id,
    link_id,
    campaign,
    ext_click_id,
    sub1,
    sub2,
    sub3,
    sub4,
    sub5,
    country,
    click_ms: ts_ms,
  };
  for (const key of Object.keys(fields) as (keyof AttributionDecision)[]) if (fields[key] === undefined) delete fields[key];
  return fields;
}
