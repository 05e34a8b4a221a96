import type { AttributionDecision, FirstLaunchUse, FraudReason } from './decision';
import { MIN_CTIT_SECONDS, PROBABILISTIC_WINDOW_MS } from './decision';

/**
 * An attribution decision said in one sentence a customer can read, as `admin install show`
 * (functions/domain/aggregation/install-report.ts) prints it beside the recorded decision.
 */

const RULE_SOURCE = { click_id: "the install's attribution.click_id", referrer_click_id: 'the Play install referrer' } as const;

const FRAUD_TEXT: Record<FraudReason, (decision: AttributionDecision) => string> = {
  ctit_under_10s: (d) => `ctit_under_10s (${d.ctit_seconds} s from click to install, under ${MIN_CTIT_SECONDS} s)`,
  click_injection: () => 'click_injection (the click came after the install had begun)',
  honeypot_ip: () => 'honeypot_ip (the install came from an address a honeypot link blocked)',
};

/** One line a customer can read: which rule gave the install to whom, and anything flagged on the way. */
export function explain(decision: AttributionDecision): string {
  const refused = decision.refused_click ? ` (click ${decision.refused_click.click_id} refused: ${decision.refused_click.reason})` : '';
  const parts = [`${matched(decision)}${refused}`];
  if (decision.first_launch) parts.push(firstLaunchSaid(decision.first_launch));
  if (decision.reinstall) {
    parts.push(
      decision.reinstall_reason === 'device_seen_under_other_install'
        ? 'a reinstall: the device was installed before under another install_uuid'
        : 'a reinstall: this install_uuid was installed before',
    );
  }
  if (decision.fraud_reasons.length > 0)
    parts.push(`flagged as fraud: ${decision.fraud_reasons.map((reason) => FRAUD_TEXT[reason](decision)).join(', ')}`);
  return parts.join('; ');
}

function matched(decision: AttributionDecision): string {
  if (decision.rule === 'adservices_token') {
    return `deterministic: Apple Ads claimed it through its AdServices token (partner ${decision.partner}, campaign ${decision.campaign}), clicked ${decision.ctit_seconds} s before the install`;
  }
  if (decision.attribution_type === 'organic') return `organic: no click matched${appleSaid(decision)}`;
  if (decision.rule === 'first_launch_answer') {
    return `${decision.attribution_type}: click ${decision.click_id} on link ${decision.link_id} (partner ${decision.partner}${decision.campaign ? `, campaign ${decision.campaign}` : ''}), the click the app was told of in its first-launch answer`;
  }
  const click = `click ${decision.click_id} on link ${decision.link_id} (partner ${decision.partner}${decision.campaign ? `, campaign ${decision.campaign}` : ''})`;
  const ctit = decision.ctit_seconds;
  if (decision.attribution_type === 'probabilistic') {
    const hours = decision.window
      ? Math.round((decision.window.to_ms - decision.window.from_ms) / 3_600_000)
      : PROBABILISTIC_WINDOW_MS / 3_600_000;
    return `probabilistic: latest ${click} from the same address and platform in the ${hours} h before the install${ctit === undefined ? '' : `, ${ctit} s before it`}`;
  }
  const lookback = decision.window?.lookback_days === undefined ? 'the lookback' : `the ${decision.window.lookback_days}-day lookback`;
  const source = decision.rule === 'click_id' || decision.rule === 'referrer_click_id' ? `, named by ${RULE_SOURCE[decision.rule]}` : '';
  return `deterministic: ${click}${ctit === undefined ? '' : ` ${ctit} s before the install`}, within ${lookback}${source}${appleSaid(decision)}`;
}

/** What Apple answered to a token that did not decide the install. */
function appleSaid(decision: AttributionDecision): string {
  switch (decision.adservices) {
    case undefined:
      return '';
    case 'attributed':
      return ' (a later click than the Apple Ads claim)';
    case 'not_attributed':
      return ' (Apple Ads: not attributed)';
    case 'bad_token':
      return ' (Apple Ads: the token was refused as bad)';
    case 'unavailable':
      return ' (Apple Ads: no answer after the retries)';
  }
}

const FIRST_LAUNCH_TEXT: Record<FirstLaunchUse['outcome'], string> = {
  taken: 'it decided the install',
  same_click: 'the install event named the same click',
  overridden_by_click_id: "set aside for the install event's attribution.click_id",
  overridden_by_referrer_click_id: "set aside for the install event's Play install referrer",
  overridden_by_adservices_token: "set aside for Apple Ads' claim",
  click_after_install: 'set aside: its click was made after the install',
  click_gone: 'set aside: its click is no longer kept',
  no_click: 'it named no click',
};

/** What the app was told at first launch, and what the decision made of it. */
function firstLaunchSaid(use: FirstLaunchUse): string {
  const told = use.status === 'not_found' ? 'no click' : use.click_id === null ? 'no tracking-link click' : `click ${use.click_id}`;
  return `first-launch answer at ${new Date(use.answered_ms).toISOString()}: ${told}; ${FIRST_LAUNCH_TEXT[use.outcome]}`;
}
