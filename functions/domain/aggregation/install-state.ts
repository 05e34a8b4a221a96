import type { DimensionValues } from '../analytics/performance';
import type { AttributionDecision, AttributionType } from '../attribution/decision';
import type { Platform } from '../links/platform';
import type { OpenRef } from './reengagement';

/**
 * Everything the aggregator keeps about one install lives under one partition key,
 * `<app_id>#<install_uuid>`, so the privacy drain finds and deletes it with one query:
 *
 * | sk | item |
 * |---|---|
 * | `head` | the install's current attribution (the latest install event counted) |
 * | `first` | the install event that was the uuid's first (any other is a reinstall) |
 * | `device` | the device hash, for the by_device index (reinstall under another install_uuid) |
 * | `c#<seq>` | the claim log: one item per audit object holding lines of the install, with the event ids it took (ObjectClaims) |
 * | `e#<event_id>` | an install event's attribution decision (before the log, every event had one: legacy) |
 * | `d#<yyyy-mm-dd>` | per day: `n:<event_name>` (counted in unique_installs), `p:<partner>` (a payer), `g:<link_id>` (a re-engagement) |
 * | `r#<install event_id>` | retention of that install: `d1`, `d7`, `d30` |
 * | `a#<audit key>` | legacy: an audit object that holds lines of this install, from before the log |
 * | `first_launch` | the first answer of POST /sdk/v1/attribution, or the decision of an install counted first (functions/domain/attribution/first-launch.ts); the first install reads it as evidence |
 *
 * Exactly once rests on claims: a conditional write that records its owner, the token of the
 * audit object whose processing made it. Whoever owns a claim counts what it stands for; a
 * redelivery of the same object finds its own claims and counts them again into the same
 * journal, a different object (a duplicate event sent again) finds somebody else's and counts
 * nothing. No transactions are needed (the local emulator has none).
 *
 * Event identities are claimed a whole object at a time, by appending to the claim log: the object
 * reads the log, takes the ids no earlier item (nor a legacy `e#` item) holds, and puts its item at
 * the next sequence number unless it exists; refused, another object took that number, and it
 * reads again. Each item is decided knowing every item before it, so no id is taken twice.
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
  /** Zero-padded, so that the log sorts by sequence number. */
  claims: (seq: number) => `c#${String(seq).padStart(8, '0')}`,
  claimsPrefix: 'c#',
  firstLaunch: 'first_launch',
} as const;

/** The sequence number of a claim log item's sort key. */
export const claimSeqOf = (sk: string): number => Number(sk.slice(SK.claimsPrefix.length));

/**
 * A held event as its log item keeps it, compactly: all that applying it to the install later
 * needs. Held events are the first ids of their item (those before any install event), so the
 * i-th is `ids[i]`.
 */
export type HeldEvent = [name: string, tsMs: number, revenueMicros: number];

/** A purchase of a log item: its claim id, its revenue, and the store transaction id it carried (null: none). */
export type PaidPurchase = [eventId: string, revenueMicros: number, transactionId: string | null];
/** A refund of a log item: its claim id, the purchase it names (`e:<event_id>` or `t:<transaction_id>`), the dollars asked back. */
export type RefundClaim = [eventId: string, purchase: string, micros: number];

/**
 * One audit object's claims in one install (`c#<seq>`): written once, by a conditional put, and
 * reused as it is by every redelivery of the object, so a recomputation gives the same deltas. It
 * is also the privacy drain's index of the objects holding the install's lines (an object with
 * only rejected lines of the install has one, with no ids).
 */
export interface ObjectClaims {
  pk: string;
  sk: string;
  owner: string;
  audit_key: string;
  /**
   * The event ids this object counts, in its order: each the first of its id in the log and in the
   * object. Absent only from a stub: an `applied`, `released`, `released_upto` or `after:` claim that landed on an item the
   * privacy drain had just deleted (it holds no ids).
   */
  ids?: string[];
  /** Those of the ids that are install events (each also has its decision in `e#<event_id>`). */
  installs?: string[];
  /**
   * Those of the ids the object takes and counts nowhere: events after the install's consent said
   * `measurement: false` (withheldByConsent). Decided when the item is written and read from it on
   * a redelivery, so every delivery of the object withholds the same events.
   */
  withheld?: string[];
  /**
   * Those of the ids that are `applovin_max` impressions the app sent itself while its MAX pull
   * was on (docs/ad-revenue.md, "Source of truth"): counted as events, with no dollars, and in no
   * ad revenue, retention or postback, the pulled rows counting them. Decided when the item is
   * written, as `withheld` is, so every delivery of the object decides the same whatever the
   * setting says by then.
   */
  superseded?: string[];
  /** The install the object's events before its first install event count against, as read when the item was written; null: held. */
  head: MemberRef | null;
  /** Held events (no install was known), for the install that applies them. */
  held?: HeldEvent[];
  /**
   * The object's deep_link_open events that name a link of the app, resolved when the item was
   * written (reengagement.ts): the re-engagements, and what later revenue is credited to.
   */
  opens?: OpenRef[];
  /** The object's purchases (events with revenue, neither ad revenue nor refunds): what a later refund may take back. */
  paid?: PaidPurchase[];
  /** The object's refund events, each with the purchase it names and the dollars it asks back (docs/analytics.md, "Refunds"). */
  refunds?: RefundClaim[];
  /**
   * Who applies the held events, and to which install: first wins. Every delivery of the object
   * claims it, naming the uuid's first install, or none (`member: null`) when that install was not
   * there yet: then the first install takes them (`released`). Either way each delivery of the
   * object decides the same, whatever another delivery of it found (issue 35).
   */
  applied?: { by: string; member: MemberRef | null };
  /** After `applied` named none: the first install that applies the held events, first wins. */
  released?: { by: string; member: MemberRef };
  /**
   * On the item of the object with the uuid's first install: the highest log number its release
   * of held events read, first wins. The items up to it are that install's to release, so every
   * delivery of the object releases the same ones; a later item was written once the install was
   * decided, and its own object finds the install and applies its held events itself.
   */
  released_upto?: number;
  /**
   * `after:<install event id>`: the install the object's events after that install event count
   * against (the head as that install left it, a newer install perhaps), first wins.
   */
  [after: `after:${string}`]: MemberRef | undefined;
}

export const afterInstall = (installEventId: string) => `after:${installEventId}` as const;

/** Legacy (before the claim log): an audit object holding lines of the install, for the privacy drain. */
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
  /**
   * The install's dimensions (docs/analytics.md, "Dimensions of an install"), so that later events
   * count under the same ones: on the head and every reference written from it (a log item's
   * `head`, `after:`, `applied`). Not on the install's own `e#` item, whose decision and audit line
   * give them, except the uuid's first install's: a held event's object applies itself to it.
   * Absent from a reference written before them: contributions.ts counts such an install as
   * [partner, (none), (none), its platform].
   */
  dims?: DimensionValues;
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
  /** The install's dimensions (MemberRef.dims); absent from a head written before them. */
  dims?: DimensionValues;
}

/** An install event's claim and decision; non-install events have one only in partitions written before the claim log. */
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
  /** Every item of the partition whose sort key starts with the prefix (and, given `after`, sorts above it). */
  query<T extends object>(pk: string, skPrefix: string, after?: string): Promise<T[]>;
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
