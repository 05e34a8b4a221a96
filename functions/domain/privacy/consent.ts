import { TCString } from '@iabtechlabtcf/core';
import { isPlainObject } from '../common/json';

/**
 * A user's consent as the app reports it on an event (`consent`, docs/privacy.md, "Consent"), the
 * install's latest kept per install, and what it allows: a partner postback is made only when the
 * latest consent known when it is made allows sharing with that partner, and carries Google's DMA
 * values where the partner's template asks for them.
 */
export interface Consent {
  /** Whether the GDPR (or the UK's, or Switzerland's) applies to this user: Google's `eea`. */
  readonly gdpr_applies?: boolean;
  /** The IAB TCF v2 consent string from the app's CMP (IABTCF_TCString). */
  readonly tcf_string?: string;
  /** Google's Consent Mode v2 signals. */
  readonly ad_user_data?: boolean;
  readonly ad_personalization?: boolean;
  /** Sharing with ad partners where the TCF does not apply. */
  readonly third_party_sharing?: boolean;
  /** Measurement itself. */
  readonly measurement?: boolean;
}

/** The install's latest consent, and the event that said it (latest by corrected time, then event id). */
export interface ConsentRecord extends Consent {
  readonly ts_ms: number;
  readonly event_id: string;
}

/** The sort key of an install's latest consent, in its partition of the installs table (erased with it by the privacy drain). */
export const CONSENT_SK = 'consent';

export const MAX_TCF_STRING_CHARS = 4096;
const CONSENT_FLAGS = ['gdpr_applies', 'ad_user_data', 'ad_personalization', 'third_party_sharing', 'measurement'] as const;
type ConsentFlag = (typeof CONSENT_FLAGS)[number];
const CONSENT_MEMBERS: ReadonlySet<string> = new Set<string>([...CONSENT_FLAGS, 'tcf_string']);
/** A TC string's segments: base64url, joined by dots. */
export const TCF_STRING_PATTERN = /^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/;

/**
 * The member of `consent` at fault ('consent' itself when it is no object or has a member not
 * listed), or undefined when it is well formed. The TC string's syntax is checked here; what it
 * says is read when a postback is made (an unreadable one shares nothing under the GDPR).
 */
export function consentFault(value: unknown): string | undefined {
  if (!isPlainObject(value)) return 'consent';
  for (const key in value) {
    if (!CONSENT_MEMBERS.has(key)) return 'consent';
    const member = value[key];
    if (member === null || member === undefined) continue;
    if (key === 'tcf_string') {
      if (typeof member !== 'string' || member.length > MAX_TCF_STRING_CHARS || !TCF_STRING_PATTERN.test(member))
        return 'consent.tcf_string';
    } else if (typeof member !== 'boolean') return `consent.${key}`;
  }
  return undefined;
}

/** A well-formed `consent` as kept: its members that are set, nothing else. */
export function consentOf(value: unknown): Consent | undefined {
  if (consentFault(value) !== undefined) return undefined;
  const given = value as Record<string, unknown>;
  const kept: Record<string, boolean | string> = {};
  for (const flag of CONSENT_FLAGS) if (typeof given[flag] === 'boolean') kept[flag] = given[flag] as boolean;
  if (typeof given.tcf_string === 'string') kept.tcf_string = given.tcf_string;
  return kept as Consent;
}

/** Whether `a` is later than `b`: by corrected time, then by event id, so every reader agrees. */
export const isLater = (a: Pick<ConsentRecord, 'ts_ms' | 'event_id'>, b: Pick<ConsentRecord, 'ts_ms' | 'event_id'>): boolean =>
  a.ts_ms > b.ts_ms || (a.ts_ms === b.ts_ms && a.event_id > b.event_id);

/** The latest of the records given (isLater); undefined when none is. */
export function latestConsent(...records: readonly (ConsentRecord | undefined)[]): ConsentRecord | undefined {
  let latest: ConsentRecord | undefined;
  for (const record of records) if (record && (!latest || isLater(record, latest))) latest = record;
  return latest;
}

/** What a TC string says, as far as sharing with one vendor goes. */
export interface TcfSignals {
  readonly vendorConsents: ReadonlySet<number>;
  readonly vendorLegitimateInterests: ReadonlySet<number>;
  readonly purposeConsents: ReadonlySet<number>;
  readonly purposeLegitimateInterests: ReadonlySet<number>;
}

/** The TC string decoded by the IAB Tech Lab's own library; undefined when it cannot be read. */
export function decodeTcf(tcString: string): TcfSignals | undefined {
  try {
    const model = TCString.decode(tcString);
    const ids = (vector: { forEach(callback: (value: boolean, id: number) => void): void }) => {
      const set = new Set<number>();
      vector.forEach((value, id) => {
        if (value) set.add(id);
      });
      return set;
    };
    return {
      vendorConsents: ids(model.vendorConsents),
      vendorLegitimateInterests: ids(model.vendorLegitimateInterests),
      purposeConsents: ids(model.purposeConsents),
      purposeLegitimateInterests: ids(model.purposeLegitimateInterests),
    };
  } catch {
    return undefined;
  }
}

/** TCF purpose 1: store and/or access information on a device. */
export const PURPOSE_DEVICE_ACCESS = 1;
/** TCF purpose 7: measure advertising performance. */
export const PURPOSE_MEASURE_ADS = 7;

export type SharingVerdict = { readonly share: true } | { readonly share: false; readonly reason: string };
const SHARE: SharingVerdict = { share: true };
const withhold = (reason: string): SharingVerdict => ({ share: false, reason: `consent: ${reason}` });

/**
 * Whether the install's latest consent allows a postback to a partner (docs/privacy.md, "Consent"):
 * - nothing known: shared (the app has said nothing; an app under the GDPR sends consent with its install);
 * - measurement withdrawn: withheld;
 * - the GDPR applies with a TC string: the partner's TCF vendor id must have consent, purpose 1
 *   consent, and purpose 7 consent or (the vendor's and the purpose's) legitimate interest;
 * - the GDPR applies without a TC string: only with third_party_sharing granted;
 * - otherwise: shared unless third_party_sharing is refused.
 */
export function sharingVerdict(
  consent: Consent | undefined,
  vendorId: number | undefined,
  decode: (tcString: string) => TcfSignals | undefined = decodeTcf,
): SharingVerdict {
  if (!consent) return SHARE;
  if (consent.measurement === false) return withhold('measurement withdrawn');
  if (consent.gdpr_applies === true) {
    if (consent.tcf_string === undefined) {
      return consent.third_party_sharing === true ? SHARE : withhold('GDPR applies, no TC string and third_party_sharing not granted');
    }
    const tcf = decode(consent.tcf_string);
    if (!tcf) return withhold('unreadable TC string');
    if (vendorId === undefined) return withhold('GDPR applies and the partner has no TCF vendor id');
    if (!tcf.vendorConsents.has(vendorId)) return withhold(`no TCF consent for vendor ${vendorId}`);
    if (!tcf.purposeConsents.has(PURPOSE_DEVICE_ACCESS)) return withhold(`no TCF consent for purpose ${PURPOSE_DEVICE_ACCESS}`);
    const measures =
      tcf.purposeConsents.has(PURPOSE_MEASURE_ADS) ||
      (tcf.purposeLegitimateInterests.has(PURPOSE_MEASURE_ADS) && tcf.vendorLegitimateInterests.has(vendorId));
    return measures ? SHARE : withhold(`no TCF consent or legitimate interest for purpose ${PURPOSE_MEASURE_ADS}`);
  }
  return consent.third_party_sharing === false ? withhold('third_party_sharing refused') : SHARE;
}

/** Google's DMA parameters as postback macros: 1 or 0, absent when the app did not say. */
export function dmaValues(consent: Consent | undefined): { eea?: number; ad_personalization?: number; ad_user_data?: number } {
  const bit = (flag: ConsentFlag) => (consent?.[flag] === undefined ? undefined : consent[flag] ? 1 : 0);
  return { eea: bit('gdpr_applies'), ad_personalization: bit('ad_personalization'), ad_user_data: bit('ad_user_data') };
}

/** A line of an audit object as far as consent goes. */
export interface ConsentLine {
  readonly status: string;
  readonly install_uuid?: string;
  readonly corrected_ts?: number;
  readonly event: unknown;
}

/** The latest consent each install's accepted events in one object carry, by install_uuid. */
export function latestConsents(lines: readonly ConsentLine[]): Map<string, ConsentRecord> {
  const latest = new Map<string, ConsentRecord>();
  for (const line of lines) {
    if (line.status !== 'accepted' || !line.install_uuid || line.corrected_ts === undefined || !isPlainObject(line.event)) continue;
    const { consent, event_id } = line.event;
    if (consent === undefined || consent === null || typeof event_id !== 'string') continue;
    const kept = consentOf(consent);
    if (!kept) continue;
    const record: ConsentRecord = { ...kept, ts_ms: line.corrected_ts, event_id };
    const before = latest.get(line.install_uuid);
    if (!before || isLater(record, before)) latest.set(line.install_uuid, record);
  }
  return latest;
}
