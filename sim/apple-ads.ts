import type { ExpectedAttribution } from './expectations';
import type { Random } from './random';
import type { PersonPlan } from './traffic';

/**
 * Apple Ads installs (docs/ios.md section 4): iOS installs that carry an AdServices token, which
 * the service exchanges with Apple's attribution API. Locally that API is local/adservices-stub.ts,
 * which answers a token by what it says (its header has the convention: `stub-true-<campaign>-
 * <clickMs>`, `stub-false`, `stub-400`, `stub-404x<n>-<token>`). The plan picks which installs
 * carry which answer; the decision is the simulator's own, by the contract: a claim is a click of
 * `apple_search_ads` at Apple's click date, and the last click wins against a tracking-link click.
 */

export type AppleAdsAnswer =
  /** 200 `attribution: true` for a campaign, Apple's click `beforeInstallMs` before the install; after `notReady` 404s. */
  | { outcome: 'attributed'; campaignId: number; beforeInstallMs: number; notReady: number; against?: never }
  /** A click-id install whose Apple Ads click came `against` its tracking-link click: before it (the link wins) or after it (Apple wins). */
  | { outcome: 'attributed'; campaignId: number; against: 'earlier' | 'later'; notReady: 0; beforeInstallMs?: never }
  | { outcome: 'not_attributed' }
  | { outcome: 'bad_token' };

export const APPLE_ADS_PARTNER = 'apple_search_ads';
/**
 * Apple Ads spend per claimed install, as its campaign report would total it (Apple bills per tap):
 * its installs are the only paid ones that can be back-dated (a claim carries Apple's own click
 * date), so with their cost the past days hold paid installs, spend and ROAS, not only organic.
 */
export const APPLE_ADS_CPI_USD = 1.35;
/**
 * Apple's countryOrRegion of the claim, which the install takes as its country as it would a
 * tracking click's viewer country: the stub answers every claim with `US`.
 */
export const STUB_COUNTRY = 'US';

/** Apple Ads campaign ids are numbers; the stub derives ad group, keyword and ad ids from them. */
const CAMPAIGNS = [542370539, 617283945, 730012468];

/** The outcomes of organic iOS installs' tokens, in turn: every one present from five tokens on. */
const ORGANIC_TURNS = ['attributed', 'not_attributed', 'not_ready', 'bad_token', 'attributed'] as const;

/**
 * Which installs carry a token, by `install_uuid|event_id`: about a third of the organic iOS
 * installs (first installs of people who install once), and two click-id installs whose Apple
 * click competes with their tracking-link click.
 */
export function planAppleAds(random: Random, people: readonly PersonPlan[]): Map<string, AppleAdsAnswer> {
  const plan = new Map<string, AppleAdsAnswer>();
  const single = (kind: string) =>
    people.filter((p) => p.platform === 'ios' && p.installs.length === 1 && p.installs[0]?.kind === kind).map((p) => p.installs[0]);
  const campaign = () => random.pick(CAMPAIGNS);
  // A third of them, at least five (every outcome) when there are five; people come in random order.
  const organic = single('organic');
  const chosen = organic.slice(0, Math.max(Math.min(ORGANIC_TURNS.length, organic.length), Math.round(organic.length * 0.35)));
  for (const [turn, install] of chosen.entries()) {
    if (install === undefined) continue;
    const kind = ORGANIC_TURNS[turn % ORGANIC_TURNS.length] ?? 'attributed';
    const key = `${install.install_uuid}|${install.event_id}`;
    const beforeInstallMs = random.int(1, 72) * 3_600_000 + random.int(0, 59) * 60_000;
    if (kind === 'attributed' || kind === 'not_ready')
      plan.set(key, { outcome: 'attributed', campaignId: campaign(), beforeInstallMs, notReady: kind === 'not_ready' ? 2 : 0 });
    else plan.set(key, { outcome: kind });
  }
  for (const [i, install] of single('click_id').slice(0, 2).entries())
    if (install)
      plan.set(`${install.install_uuid}|${install.event_id}`, {
        outcome: 'attributed',
        campaignId: campaign(),
        against: i === 0 ? 'earlier' : 'later',
        notReady: 0,
      });
  return plan;
}

/** The tracking-link click an install named, as the simulator saw it: the server stamped it between sent and answered. */
export interface NamedClick {
  sentMs: number;
  answeredMs: number;
}

/** Apple's click time for a claim: before the install, and against a tracking click before or after it. */
export function appleClickMs(answer: Extract<AppleAdsAnswer, { outcome: 'attributed' }>, installMs: number, click?: NamedClick): number {
  if (answer.against === undefined) return installMs - answer.beforeInstallMs;
  if (answer.against === 'earlier' || click === undefined) return (click?.sentMs ?? installMs) - 2 * 86_400_000;
  // After the tracking click was answered (so surely after the server stamped it), 20 s or more
  // before the install; when the install came too soon for that, a minute before the click.
  const later = click.answeredMs + 1_000;
  return later <= installMs - 20_000 ? later : click.sentMs - 60_000;
}

/** The token the app sends, in the stub's convention. */
export function tokenOf(answer: AppleAdsAnswer, installMs: number, click?: NamedClick): string {
  switch (answer.outcome) {
    case 'not_attributed':
      return 'stub-false';
    case 'bad_token':
      return 'stub-400';
    case 'attributed': {
      const claim = `stub-true-${answer.campaignId}-${appleClickMs(answer, installMs, click)}`;
      return answer.notReady > 0 ? `stub-404x${answer.notReady}-${claim}` : claim;
    }
  }
}

/**
 * The install's attribution once Apple answered: a claim is a deterministic click of
 * apple_search_ads at Apple's click date, with its campaign id as the campaign; it wins when
 * there is no other click or when it is the later one (docs/ios.md section 4). An address the
 * honeypot blocked still flags the install. Anything but a claim leaves the decision as it was.
 */
export function withAppleAds(
  decision: ExpectedAttribution,
  answer: AppleAdsAnswer,
  installMs: number,
  click?: NamedClick,
): ExpectedAttribution {
  if (answer.outcome !== 'attributed') return decision;
  const clickMs = appleClickMs(answer, installMs, click);
  const trackingWins = decision.type !== 'organic' && click !== undefined && click.sentMs > clickMs;
  if (trackingWins || clickMs > installMs) return decision;
  const reasons = decision.reasons.filter((r) => r === 'honeypot_ip');
  return {
    partner: APPLE_ADS_PARTNER,
    type: 'deterministic',
    fraud: reasons.length > 0,
    reasons,
    campaign: String(answer.campaignId),
    clickCountry: STUB_COUNTRY,
  };
}
