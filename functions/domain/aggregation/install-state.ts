import type { AttributionDecision, AttributionType } from '../attribution/decision';
import type { Platform } from '../links/platform';

/**
 * Everything the aggregator keeps about one install lives under one partition key,
 * `<app_id>#<install_uuid>`, so the privacy drain finds and deletes it with one query:
 *
 * | sk | item |
 * |---|---|
 * | `head` | the install's current attribution (the latest install event counted) |
 * | `first` | the install event that was the uuid's first (any other is a reinstall) |
 * | `device` | the device hash, for the by_device index (reinstall under another install_uuid) |
 * | `e#<event_id>` | the event's identity claim; for an install event also the attribution decision |
 * | `d#<yyyy-mm-dd>` | per day: `n:<event_name>` (counted in unique_installs), `p:<partner>` (a payer) |
 * | `r#<install event_id>` | retention of that install: `d1`, `d7`, `d30` |
 * | `a#<audit key>` | an audit object that holds lines of this install (the privacy drain's index) |
 *
 * Exactly once rests on claims: a conditional write that records its owner, the token of the
 * audit object whose processing made it. Whoever owns a claim counts what it stands for; a
 * redelivery of the same object finds its own claims and counts them again into the same
 * journal, a different object (a duplicate event sent again) finds somebody else's and counts
 * nothing. No transactions are needed (the local emulator has none).
 */

export const installPk = (appId: string, installUuid: string) => `${appId}#${installUuid}`;
export const SK = {
  head: 'head',
  first: 'first',
  device: 'device',
  event: (eventId: string) => `e#${eventId}`,
  eventPrefix: 'e#',
  day: (day: string) => `d#${day}`,
  retention: (memberId: string) => `r#${memberId}`,
  audit: (auditKey: string) => `a#${auditKey}`,
  auditPrefix: 'a#',
} as const;

/** An audit object holding lines of the install: the privacy drain deletes or rewrites it. */
export interface AuditReference {
  pk: string;
  sk: string;
  owner: string;
  audit_key: string;
}

/** The install (event) an event's revenue and retention are counted against. */
export interface MemberRef {
  /** event_id of the install event. */
  id: string;
  ts_ms: number;
  day: string;
  partner: string;
}

export interface InstallHead {
  pk: string;
  sk: 'head';
  app_id: string;
  install_uuid: string;
  member: string;
  owner: string;
  ts_ms: number;
  day: string;
  partner: string;
  attribution_type: AttributionType;
  platform: Platform;
}

export interface EventClaim {
  pk: string;
  sk: string;
  owner: string;
  event_name: string;
  ts_ms: number;
  day: string;
  revenue_micros: number;
  /** No install was known when the event was claimed: it waits for one (retention, revenue partner). */
  held: boolean;
  /** The install the event counts against, when one was known at claim time. */
  member?: MemberRef;
  /** Install events: the attribution decision and the member it replaced. */
  decision?: AttributionDecision;
  previous_member?: string | null;
  platform?: Platform;
  /** Held events: who applied it to the install that arrived, and to which. */
  applied?: { by: string; member: MemberRef };
}

/**
 * The uuid's first install: whoever claims it first names its install event, and that event is the
 * uuid's one install that is not a reinstall, in every order of deliveries, crashes and redeliveries.
 */
export interface FirstInstallMark {
  pk: string;
  sk: 'first';
  owner: string;
  /** event_id of the first install event: a redelivery of its object knows its own mark by it. */
  member: string;
}

export interface DeviceItem {
  pk: string;
  sk: 'device';
  owner: string;
  app_device: string;
}

export const appDevice = (appId: string, deviceHash: string) => `${appId}#${deviceHash}`;

/**
 * The installs table as the aggregator needs it. Every read is consistent: a claim decided on a
 * stale read would count twice.
 */
export interface InstallStore {
  get<T extends object>(pk: string, sk: string): Promise<T | undefined>;
  /** Every item of the partition whose sort key starts with the prefix. */
  query<T extends object>(pk: string, skPrefix: string): Promise<T[]>;
  /** Puts the item unless one with its key exists; returns the stored item either way. */
  claimItem<T extends { pk: string; sk: string }>(item: T): Promise<T>;
  /**
   * Sets each attribute that is not set yet (creating the item if needed) and returns the stored
   * value of every one of them: the caller's where it won, the earlier owner's where it lost.
   */
  claimAttributes(pk: string, sk: string, attributes: Readonly<Record<string, unknown>>): Promise<Record<string, unknown>>;
  /** Replaces the head if its member is still `expectedMember` (absent: no head yet). */
  replaceHead(head: InstallHead, expectedMember: string | undefined): Promise<boolean>;
}

/** Owner of a claimed attribute value: flags store the token itself, maps carry it in `by`. */
export function ownerOf(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof (value as { by?: unknown }).by === 'string') return (value as { by: string }).by;
  return undefined;
}
