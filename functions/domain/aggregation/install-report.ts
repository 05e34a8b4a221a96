import type { AttributionDecision } from '../attribution/decision';
import { explain } from '../attribution/explanation';
import type { FirstLaunchAnswer, FirstLaunchRecord } from '../attribution/first-launch';
import { INSTALL_EVENT } from '../ingest/event-validation';
import type { Platform } from '../links/platform';
import { CONSENT_SK, type ConsentRecord } from '../privacy/consent';
import { RETENTION_DAYS } from './contributions';
import { type EventClaim, type InstallHead, type ObjectClaims, SK } from './install-state';

/**
 * `admin install show`: one install's partition (install-state.ts) read back as the answer to a
 * customer's "why was this install given to partner X". Each install event keeps the decision
 * exactly as the aggregator recorded it, plus one sentence that says it in words
 * (functions/domain/attribution/explanation.ts).
 */

/** A type rather than an interface, so that it is a plain JSON object (Record<string, unknown>) to the admin CLI. */
export type InstallReport = {
  app_id: string;
  install_uuid: string;
  /** Whether the aggregator has counted anything of this install_uuid. */
  found: boolean;
  /** The install counted last: the one revenue and retention go to. */
  current: Pick<InstallHead, 'member' | 'partner' | 'attribution_type' | 'ts_ms' | 'day' | 'platform'> | null;
  /** Every install event, in time order, with its recorded decision. */
  installs: ExplainedInstall[];
  /** Events other than installs; waiting ones arrived before any install of the uuid was counted and wait for it. */
  events: { counted: number; waiting_for_install: number };
  /** Per install event_id, the retention days it has been counted for (d1, d7, d30). */
  retention: Record<string, string[]>;
  /**
   * The install's first-launch answer (POST /sdk/v1/attribution): what the app was told, and
   * whether a first launch asked it (`first_launch`) or the aggregator kept its decision because it
   * counted the install first (`install_event`). The first install's decision says what it made of it.
   */
  first_launch: {
    answered_ms: number;
    platform: 'ios' | 'android';
    kept_by: 'first_launch' | 'install_event';
    answer: FirstLaunchAnswer;
  } | null;
  /** The install's latest consent (docs/privacy.md, "Consent"), and the event that said it; null when none was sent. */
  consent: ConsentRecord | null;
};

export type ExplainedInstall = { event_id: string; ts_ms: number; day: string; platform: Platform | null } & AttributionDecision & {
    explanation: string;
  };

export function installReport(appId: string, installUuid: string, items: readonly Record<string, unknown>[]): InstallReport {
  const head = items.find((item) => item.sk === SK.head) as InstallHead | undefined;
  const claims = items.filter((item) => String(item.sk).startsWith(SK.eventPrefix)) as unknown as EventClaim[];
  const installs = claims
    .filter((claim) => claim.event_name === INSTALL_EVENT && claim.decision)
    .map((claim) => ({ claim, eventId: claim.sk.slice(SK.eventPrefix.length) }))
    .sort((a, b) => a.claim.ts_ms - b.claim.ts_ms || (a.eventId < b.eventId ? -1 : 1))
    .map(({ claim, eventId }): ExplainedInstall => {
      const decision = claim.decision as AttributionDecision;
      return {
        event_id: eventId,
        ts_ms: claim.ts_ms,
        day: claim.day,
        platform: claim.platform ?? null,
        ...decision,
        explanation: explain(decision),
      };
    });
  // Events are counted by the claim log's items (a whole object's ids each), and in partitions
  // written before the log also by e# claims of their own.
  const log = items.filter((item) => String(item.sk).startsWith(SK.claimsPrefix)) as unknown as ObjectClaims[];
  const legacy = claims.filter((claim) => claim.event_name !== INSTALL_EVENT);
  const counted = legacy.length + log.reduce((sum, item) => sum + (item.ids?.length ?? 0) - (item.installs?.length ?? 0), 0);
  const waiting =
    legacy.filter((claim) => claim.held && !claim.applied).length +
    log.reduce((sum, item) => sum + (item.applied?.member || item.released ? 0 : (item.held?.length ?? 0)), 0);
  const retention: Record<string, string[]> = {};
  const retentionPrefix = SK.retention('');
  for (const item of items) {
    const sk = String(item.sk);
    if (sk.startsWith(retentionPrefix))
      retention[sk.slice(retentionPrefix.length)] = RETENTION_DAYS.map((n) => `d${n}`).filter((flag) => flag in item);
  }
  const launch = items.find((item) => item.sk === SK.firstLaunch) as FirstLaunchRecord | undefined;
  return {
    app_id: appId,
    install_uuid: installUuid,
    found: items.length > 0,
    current: head
      ? {
          member: head.member,
          partner: head.partner,
          attribution_type: head.attribution_type,
          ts_ms: head.ts_ms,
          day: head.day,
          platform: head.platform,
        }
      : null,
    installs,
    events: { counted, waiting_for_install: waiting },
    retention,
    first_launch: launch
      ? { answered_ms: launch.answered_ms, platform: launch.platform, kept_by: launch.kept_by ?? 'first_launch', answer: launch.answer }
      : null,
    consent: consentIn(items),
  };
}

function consentIn(items: readonly Record<string, unknown>[]): ConsentRecord | null {
  const item = items.find((candidate) => candidate.sk === CONSENT_SK);
  if (!item) return null;
  const { pk: _pk, sk: _sk, ...record } = item;
  return record as unknown as ConsentRecord;
}
