import type { OracleAttribution } from './oracle';

/**
 * How each install should be attributed, decided from what the simulator itself did: which clicks
 * it made and got a click id for, from which address and platform, when, and which addresses it
 * sent through the honeypot. docs/aggregation.md#attribution, written the plain way; nothing is read from the
 * service's tables.
 */

export const LOOKBACK_MS = 7 * 86_400_000;
export const PROBABILISTIC_WINDOW_MS = 86_400_000;
export const MIN_CTIT_MS = 10_000;

/** A click the service recorded (it answered with a click id), as the simulator saw it. */
export interface SentClick {
  clickId: string;
  partner: string;
  /** The link's campaign and the viewer country the click came from, when known. */
  campaign?: string;
  country?: string;
  ip: string;
  platform: 'ios' | 'android' | 'desktop';
  /** Our clock when the request went out and when the answer came back; the server's click time is in between. */
  sentMs: number;
  answeredMs: number;
}

export interface SentInstall {
  /** Corrected install time (server clock). */
  tsMs: number;
  platform: 'ios' | 'android';
  ip: string;
  /** The click id the install named, directly or in its Play referrer. */
  clickId?: string;
  /** install_begin_ms brought onto the server clock. */
  installBeginMs?: number;
}

export interface ExpectedAttribution extends OracleAttribution {
  reasons: string[];
  /** The decision depends on when within its request the server recorded a click (a click that took seconds to answer). */
  ambiguous?: boolean;
}

type Clicks = { probabilistic: boolean; clicks: ReadonlyMap<string, SentClick> };

/**
 * The decision, made twice: as if the server had recorded every click the moment the request went
 * out, and as if the moment the answer came back. The plan keeps clear of both (click-to-install
 * times of seconds, not milliseconds), so the two agree unless a click took seconds to answer.
 */
export function expectedAttribution(
  install: SentInstall,
  app: Clicks,
  honeypotBlockedAt: (ip: string) => number | undefined,
): ExpectedAttribution {
  const early = decide(install, app, honeypotBlockedAt, (c) => c.sentMs);
  const late = decide(install, app, honeypotBlockedAt, (c) => c.answeredMs);
  const same =
    early.partner === late.partner &&
    early.type === late.type &&
    early.campaign === late.campaign &&
    early.clickCountry === late.clickCountry &&
    early.reasons.join() === late.reasons.join();
  return same ? late : { ...late, ambiguous: true };
}

function decide(
  install: SentInstall,
  app: Clicks,
  honeypotBlockedAt: (ip: string) => number | undefined,
  clickTime: (click: SentClick) => number,
): ExpectedAttribution {
  let matched: { click: SentClick; type: 'deterministic' | 'probabilistic' } | undefined;
  const named = install.clickId ? app.clicks.get(install.clickId) : undefined;
  if (named && clickTime(named) <= install.tsMs && clickTime(named) >= install.tsMs - LOOKBACK_MS)
    matched = { click: named, type: 'deterministic' };
  if (!matched && app.probabilistic) {
    const candidates = [...app.clicks.values()].filter(
      (c) =>
        c.ip === install.ip &&
        c.platform === install.platform &&
        clickTime(c) <= install.tsMs &&
        clickTime(c) >= install.tsMs - PROBABILISTIC_WINDOW_MS,
    );
    const latest = candidates.sort((a, b) => clickTime(b) - clickTime(a))[0];
    if (latest) matched = { click: latest, type: 'probabilistic' };
  }
  const reasons: string[] = [];
  if (matched) {
    if (install.tsMs - clickTime(matched.click) < MIN_CTIT_MS) reasons.push('ctit_under_10s');
    if (install.installBeginMs !== undefined && clickTime(matched.click) > install.installBeginMs) reasons.push('click_injection');
  }
  const blockedAt = honeypotBlockedAt(install.ip);
  if (blockedAt !== undefined && blockedAt <= install.tsMs) reasons.push('honeypot_ip');
  return matched
    ? {
        partner: matched.click.partner,
        type: matched.type,
        fraud: reasons.length > 0,
        reasons,
        ...(matched.click.campaign !== undefined ? { campaign: matched.click.campaign } : {}),
        ...(matched.click.country !== undefined ? { clickCountry: matched.click.country } : {}),
      }
    : { partner: 'organic', type: 'organic', fraud: reasons.length > 0, reasons };
}
