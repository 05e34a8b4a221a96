import { type AttributionDecision, ORGANIC } from '../attribution/decision';
import { DAY_MS } from '../common/days';
import { sha256Hex } from '../common/hashing';
import type { Platform } from '../links/platform';
import { type ConsentRecord, dmaValues, type SharingVerdict, sharingVerdict } from '../privacy/consent';
import { installKey } from '../privacy/privacy';
import { type PostbackConfig, wantsEvent } from './config';
import { type MacroValues, renderTemplate } from './template';

/**
 * Which postbacks an audit object's decisions send (docs/postbacks.md). The aggregator collects
 * an intent wherever it counts something exactly once (an install it attributed, an event it
 * applied to its install), so an intent exists once per decision; redelivery of the same object
 * finds the same claims and gives the same intents, with the same postback ids.
 */

export type PostbackIntent =
  | {
      readonly kind: 'install';
      readonly installUuid: string;
      /** event_id of the install event. */
      readonly eventId: string;
      readonly tsMs: number;
      readonly platform: Platform;
      readonly decision: AttributionDecision;
    }
  | {
      readonly kind: 'event';
      readonly installUuid: string;
      readonly eventId: string;
      readonly name: string;
      readonly tsMs: number;
      readonly revenueMicros: number;
      /** The install the event counts against: its install event's id, time and partner. */
      readonly member: { readonly id: string; readonly ts_ms: number; readonly partner: string };
    }
  | {
      /** A re-engagement counted (docs/deep-links.md, "Re-engagement"): the postback goes to the link's partner. */
      readonly kind: 'reengagement';
      readonly installUuid: string;
      /** event_id of the deep_link_open. */
      readonly eventId: string;
      readonly tsMs: number;
      readonly link: { readonly linkId: string; readonly partner: string; readonly campaign: string; readonly clickId: string | null };
      readonly member: { readonly id: string; readonly ts_ms: number; readonly partner: string };
    };

/** The install an event belongs to, as its install event's claim recorded it. */
export interface InstallOfEvent {
  readonly decision: AttributionDecision;
  readonly platform?: Platform;
}

export type PostbackState = 'new' | 'queued' | 'delivered' | 'failed' | 'refused' | 'dead' | 'withheld';

/** One postback to one partner: made once, then delivered from the postback queue. */
export interface PostbackRecord {
  readonly app_id: string;
  readonly postback_id: string;
  /**
   * installKey of the install (`<app_id>#<install_hash>`): the postbacks table's by_install index,
   * by which the privacy drain finds the install's postbacks and their attempts. Absent on records
   * made before the index existed.
   */
  readonly app_install?: string;
  readonly partner: string;
  readonly kind: PostbackIntent['kind'];
  readonly event_name: string;
  /** The template rendered with this postback's values. */
  readonly url: string;
  readonly method: 'GET' | 'POST';
  /** POST only: the macro values as a JSON object. */
  readonly body?: string;
  readonly created_ms: number;
  state: PostbackState;
  /**
   * Attempts made so far (the sender's): a message for an attempt already made is a copy and sends
   * nothing (docs/postbacks.md, "Delivery"). Absent until the first attempt.
   */
  readonly attempts?: number;
  /** Why a postback was withheld rather than queued. */
  readonly withheld_reason?: string;
}

/** The queue message: the record holds everything else. */
export interface PostbackMessage {
  readonly version: 1;
  readonly app_id: string;
  readonly postback_id: string;
  /** The attempt this message is for; absent (the aggregator's message) is the first. */
  readonly attempt?: number;
  /** A retry's time, epoch ms: received earlier, the message is sent on again to wait (at most 15 minutes a hop). */
  readonly not_before_ms?: number;
}

export const INSTALL_EVENT_NAME = 'install';
/** The event name a re-engagement's postback goes by (`admin postback set --events reengagement`). */
export const REENGAGEMENT_EVENT_NAME = 'reengagement';

/** The partner a postback of the intent goes to: the install's, or the re-engaging link's. */
const partnerOf = (intent: PostbackIntent): string =>
  intent.kind === 'install' ? intent.decision.partner : intent.kind === 'reengagement' ? intent.link.partner : intent.member.partner;

/** The event name a configuration's `events` selects the intent by. */
const nameOf = (intent: PostbackIntent): string =>
  intent.kind === 'install' ? INSTALL_EVENT_NAME : intent.kind === 'reengagement' ? REENGAGEMENT_EVENT_NAME : intent.name;

/** Stable per decision: the same install or event of the same install always gets the same id. */
export const postbackIdOf = (appId: string, installUuid: string, eventId: string, partner: string): string =>
  sha256Hex(`postback:${appId}:${installUuid}:${eventId}:${partner}`).slice(0, 32);

export interface TriggerPorts {
  /** The app's configurations, one per partner. */
  configs(appId: string): Promise<readonly PostbackConfig[]>;
  /** The decision of the install an event counts against (the claim of its install event). */
  installOf(appId: string, installUuid: string, memberId: string): Promise<InstallOfEvent | undefined>;
  /** The latest consent of each install that has one (docs/privacy.md, "Consent"), read in one go; absent: nothing is known of any. */
  consentsOf?(appId: string, installUuids: readonly string[]): Promise<ReadonlyMap<string, ConsentRecord>>;
}

/** The postbacks the intents send, configuration by configuration; empty when none is configured. */
export async function postbacksOf(
  ports: TriggerPorts,
  appId: string,
  intents: readonly PostbackIntent[],
  nowMs: number,
): Promise<PostbackRecord[]> {
  const attributed = intents.filter((intent) =>
    intent.kind === 'install' ? intent.decision.attribution_type !== 'organic' : partnerOf(intent) !== ORGANIC,
  );
  if (attributed.length === 0) return [];
  const configs = new Map((await ports.configs(appId)).map((config) => [config.partner, config]));
  const owed: { intent: PostbackIntent; config: PostbackConfig; install: InstallOfEvent }[] = [];
  for (const intent of attributed) {
    const config = configs.get(partnerOf(intent));
    if (!config || !wantsEvent(config, nameOf(intent))) continue;
    let install: InstallOfEvent;
    if (intent.kind === 'install') install = { decision: intent.decision, platform: intent.platform };
    else if (intent.kind === 'reengagement') {
      // Any install may be re-engaged, organic or another partner's, however long after it.
      const found = await ports.installOf(appId, intent.installUuid, intent.member.id);
      if (!found) continue;
      install = found;
    } else {
      if (intent.tsMs - intent.member.ts_ms > config.event_window_days * DAY_MS) continue;
      const found = await ports.installOf(appId, intent.installUuid, intent.member.id);
      // The install's claim is written before any event is applied to it; none means nothing to say.
      if (!found || found.decision.attribution_type === 'organic') continue;
      install = found;
    }
    owed.push({ intent, config, install });
  }
  if (owed.length === 0) return [];
  // The latest consent known when the postbacks are made: every install's in one read for the call.
  const consents = ports.consentsOf
    ? await ports.consentsOf(appId, [...new Set(owed.map(({ intent }) => intent.installUuid))])
    : new Map<string, ConsentRecord>();
  return owed.map(({ intent, config, install }) => recordOf(appId, config, intent, install, consents.get(intent.installUuid), nowMs));
}

function recordOf(
  appId: string,
  config: PostbackConfig,
  intent: PostbackIntent,
  install: InstallOfEvent,
  consent: ConsentRecord | undefined,
  nowMs: number,
): PostbackRecord {
  const { decision } = install;
  const postbackId = postbackIdOf(appId, intent.installUuid, intent.eventId, config.partner);
  const installTime = intent.kind === 'install' ? intent.tsMs : intent.member.ts_ms;
  // A re-engagement names its own link and campaign; the install's click and subs are another engagement's.
  const engagement =
    intent.kind === 'reengagement'
      ? { link_id: intent.link.linkId, campaign: intent.link.campaign || undefined }
      : {
          click_id: decision.ext_click_id,
          link_id: decision.link_id,
          campaign: decision.campaign,
          sub1: decision.sub1,
          sub2: decision.sub2,
          sub3: decision.sub3,
          sub4: decision.sub4,
          sub5: decision.sub5,
        };
  const values: MacroValues = {
    ...engagement,
    event_name: nameOf(intent),
    revenue_usd: intent.kind === 'event' ? usd(intent.revenueMicros) : 0,
    install_time: installTime,
    event_time: intent.tsMs,
    platform: install.platform,
    country: decision.country,
    attribution_type: decision.attribution_type,
    ctit_seconds: decision.ctit_seconds,
    is_reinstall: decision.reinstall,
    fraud_reasons: decision.fraud_reasons.join(','),
    postback_id: postbackId,
    ...dmaValues(consent),
  };
  const withheld = withheldReason(intent, decision, config, sharingVerdict(consent, config.tcf_vendor_id));
  return {
    app_id: appId,
    postback_id: postbackId,
    app_install: installKey(appId, intent.installUuid),
    partner: config.partner,
    kind: intent.kind,
    event_name: String(values.event_name),
    url: renderTemplate(config.url, values),
    method: config.method,
    body:
      config.method === 'POST' ? JSON.stringify(Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined))) : undefined,
    created_ms: nowMs,
    state: withheld ? 'withheld' : 'new',
    withheld_reason: withheld,
  };
}

/** Why the postback is withheld (fraud first, then consent), or undefined when it is sent. */
function withheldReason(
  intent: PostbackIntent,
  decision: AttributionDecision,
  config: PostbackConfig,
  sharing: SharingVerdict,
): string | undefined {
  // The install's fraud flags say nothing of a later open by a link.
  const fraud = intent.kind !== 'reengagement' && decision.fraud_reasons.length > 0 && !config.send_fraud;
  if (fraud) return `fraud: ${decision.fraud_reasons.join(',')}`;
  return sharing.share ? undefined : sharing.reason;
}

/** Micro-dollars as USD with up to 6 decimals and no trailing zeros ("4.99", "0.000001"). */
export function usd(micros: number): string {
  const whole = Math.trunc(micros / 1e6);
  const fraction = String(Math.abs(micros % 1e6))
    .padStart(6, '0')
    .replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : String(whole);
}
