import {
  COHORT_AD_REVENUE_DAYS,
  COHORT_REFUND_DAYS,
  COHORT_REVENUE_DAYS,
  type DimensionValues,
  NONE,
  PERF_FAMILIES,
  type PerfCounter,
} from '../analytics/performance';
import { type AttributionDecision, type InstallFacts, ORGANIC } from '../attribution/decision';
import type { FirstLaunchRecord, KnownFirstLaunch } from '../attribution/first-launch';
import type { AuditLine } from '../audit/types';
import { DAY_MS, localDayOf, UTC } from '../common/days';
import { isPlainObject } from '../common/json';
import { pool } from '../common/pool';
import { AD_REVENUE_EVENT, INSTALL_EVENT, REFUND_EVENT } from '../ingest/event-validation';
import { PULLED_IMPRESSION_ID } from '../ingest/max-pull';
import type { Platform } from '../links/platform';
import type { PostbackIntent } from '../partner-postbacks/trigger';
import { CONSENT_SK, type ConsentRecord, latestConsent } from '../privacy/consent';
import { type ProbabilisticBasis, probabilisticAllowed } from '../privacy/probabilistic-basis';
import {
  IMPRESSION_MEMBERS,
  REFUND_MEMBERS,
  type StreamAttribution,
  type StreamInstall,
  type StreamLine,
  streamAttribution,
  streamConsent,
} from '../raw-data/stream-objects';
import {
  afterInstall,
  appDevice,
  claimSeqOf,
  type DeviceItem,
  type EventClaim,
  type FirstInstallMark,
  type HeldEvent,
  type InstallHead,
  type InstallStore,
  installPk,
  type MemberRef,
  type ObjectClaims,
  ownerOf,
  SK,
} from './install-state';
import {
  creditedOpen,
  DEEP_LINK_OPEN_EVENT,
  type OpenedBy,
  type OpenRef,
  openedBy,
  openRef,
  type ReengagementLink,
  reengagementWindowMs,
  reengages,
} from './reengagement';
import { isPurchase, moneyOf, type RefundFacts, refundCounted, refundFactsOf } from './refunds';
import { dimensionValue, RowDeltas, toMicros } from './rows';

/**
 * What one audit object adds to the report rows. Every contribution is first claimed in the
 * install's partition (install-state.ts), so the deltas returned are exactly what this object
 * owns: the same object processed again returns the same deltas, a duplicate of its events
 * elsewhere returns none for them.
 */

/** An accepted line of an audit object, as the aggregator reads it (and, for refunds, what refunds.ts needs of it). */
export interface AcceptedEvent extends RefundFacts {
  readonly index: number;
  readonly eventId: string;
  readonly name: string;
  readonly installUuid: string;
  /** Corrected time (docs/ingestion.md): all bucketing uses it. */
  readonly tsMs: number;
  /** The app's local day of tsMs (docs/analytics.md, "Time zones"). */
  readonly day: string;
  readonly revenueMicros: number;
  readonly platform?: Platform;
  readonly deviceHash?: string;
  readonly clientIp: string;
  /** The request's viewer country (the audit line's `country`): an install's country when no click matched. */
  readonly country?: string;
  readonly skewMs: number;
  readonly attribution?: InstallFacts['attribution'];
  /** Apple's answer to an install's AdServices token, joined from the answers object (docs/ios.md, section 4). */
  readonly adservices?: InstallFacts['adservices'];
  /** A deep_link_open's link and click, as its properties name them (reengagement.ts); absent on other events. */
  readonly opened?: OpenedBy;
  /** What the event stream carries of it besides (functions/domain/raw-data/stream-objects.ts); absent on a held event applied later. */
  readonly raw?: {
    readonly receivedMs: number;
    readonly revenueUsd: number | null;
    readonly properties: Record<string, unknown> | null;
    /** The event_id as sent, where eventId is an impression's claim id (impressionClaimId). */
    readonly eventId?: string;
    /** An ad_revenue event's impression as sent (docs/raw-data.md). */
    readonly adRevenue?: Record<string, unknown>;
    /** A refund event's refund as sent (docs/raw-data.md). */
    readonly refund?: Record<string, unknown>;
  };
}

/**
 * The id an accepted event is claimed under in its install's claim log: its event_id, but an
 * ad_revenue event's impression_id behind `ad#` (docs/ingestion.md, "Ad revenue"), so that the log
 * that counts each event id once counts each impression of the install once, whatever event ids,
 * batches or routes carried it. `#` is no event-id character: the two kinds never meet.
 */
export const impressionClaimId = (impressionId: string): string => `ad#${impressionId}`;

/** The named members of an object as sent, those absent left out: what the stream keeps of an impression or a refund. */
const membersOf = (value: Record<string, unknown>, names: readonly string[]): Record<string, unknown> =>
  Object.fromEntries(names.filter((name) => value[name] !== undefined).map((name) => [name, value[name]]));

function claimIdOf(eventName: string, eventId: string, adRevenue: unknown): string {
  if (eventName !== AD_REVENUE_EVENT || !isPlainObject(adRevenue) || typeof adRevenue.impression_id !== 'string') return eventId;
  return impressionClaimId(adRevenue.impression_id);
}

/** An audit object the aggregator cannot read as documented: it will never succeed. */
export class UnreadableAuditError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableAuditError';
  }
}

export const RETENTION_DAYS = [1, 7, 30] as const;

/** The accepted lines' events, their days local to the app's zone (contributionsOf sets them again from its context's zone). */
export function acceptedEvents(lines: readonly AuditLine[], timeZone: string = UTC): AcceptedEvent[] {
  const events: AcceptedEvent[] = [];
  for (const line of lines) {
    if (!isPlainObject(line)) throw new UnreadableAuditError('an audit line is not an object');
    if (line.status !== 'accepted') continue;
    const event = line.event;
    if (!isPlainObject(event) || typeof line.install_uuid !== 'string' || typeof line.corrected_ts !== 'number') {
      throw new UnreadableAuditError(`accepted line ${line.index} lacks its event, install_uuid or corrected_ts`);
    }
    const { event_id, event_name, ts_ms, revenue_usd, platform, attribution, properties, ad_revenue } = event;
    if (typeof event_id !== 'string' || typeof event_name !== 'string' || typeof ts_ms !== 'number') {
      throw new UnreadableAuditError(`accepted line ${line.index} lacks event_id, event_name or ts_ms`);
    }
    const claimId = claimIdOf(event_name, event_id, ad_revenue);
    events.push({
      index: line.index,
      eventId: claimId,
      name: event_name,
      installUuid: line.install_uuid,
      tsMs: line.corrected_ts,
      day: localDayOf(line.corrected_ts, timeZone),
      revenueMicros: typeof revenue_usd === 'number' && revenue_usd > 0 ? toMicros(revenue_usd) : 0,
      platform: platform === 'ios' || platform === 'android' ? platform : undefined,
      deviceHash: line.device_hash,
      clientIp: line.client_ip,
      country: typeof line.country === 'string' && line.country.length > 0 ? line.country : undefined,
      skewMs: line.corrected_ts - ts_ms,
      attribution: isPlainObject(attribution) ? (attribution as InstallFacts['attribution']) : undefined,
      ...(line.adservices ? { adservices: line.adservices } : {}),
      ...(event_name === DEEP_LINK_OPEN_EVENT ? openedField(properties) : {}),
      ...refundFactsOf(event),
      raw: {
        receivedMs: line.received_ms,
        revenueUsd: typeof revenue_usd === 'number' ? revenue_usd : null,
        properties: isPlainObject(properties) ? (properties as Record<string, unknown>) : null,
        ...(claimId === event_id
          ? {}
          : { eventId: event_id, adRevenue: membersOf(ad_revenue as Record<string, unknown>, IMPRESSION_MEMBERS) }),
        ...(event_name === REFUND_EVENT && isPlainObject(event.refund) ? { refund: membersOf(event.refund, REFUND_MEMBERS) } : {}),
      },
    });
  }
  return events;
}

/** A deep_link_open to resolve: what it names, and which event it is (the rebuild reads what the live path resolved). */
export interface OpenToResolve {
  readonly appId: string;
  readonly installUuid: string;
  readonly eventId: string;
  readonly open: OpenedBy;
}

export interface ContributionPorts {
  readonly installs: InstallStore;
  /**
   * Attribution of an install event: decideAttribution on the live path, the recorded decision in a
   * rebuild. `known`: the install's first-launch record as the run's read of its partition found it
   * (absent: none then), so the live path need not read it again (installDecision).
   */
  decide(facts: InstallFacts, known?: KnownFirstLaunch): Promise<AttributionDecision>;
  /**
   * The link a deep_link_open counts for (reengagement.ts, resolveOpen), read once, when the
   * object's claim log item is written; absent: no open re-engages.
   */
  reengagementLink?(open: OpenToResolve): Promise<ReengagementLink | undefined>;
}

export interface AuditObjectContext {
  readonly appId: string;
  /** The app's company, from the queue message (ingestion knew it from the company key). */
  readonly companyId: string;
  readonly probabilistic: boolean;
  /** The app's basis of probabilistic matching (docs/privacy.md, "Probabilistic matching"); absent: legitimate_interest. */
  readonly probabilisticBasis?: ProbabilisticBasis;
  /**
   * The app's MAX pull is on: the pull is the source of truth for `applovin_max` impressions, and
   * those the app sends itself are superseded (docs/ad-revenue.md, "Source of truth").
   */
  readonly maxPull?: boolean;
  /** The app's IANA time zone (docs/analytics.md): report days are its local days. UTC when absent. */
  readonly timeZone?: string;
  /** The app's re-engagement window in days (`admin app update --reengagement-window-days`; 0: off); the default when absent. */
  readonly reengagementWindowDays?: number;
  /** Owner token of the audit object: every claim made for it carries this. */
  readonly token: string;
  readonly auditKey: string;
  /** Every install the object has lines of, rejected ones included: each is told the object holds its data. */
  readonly installUuids?: readonly string[];
  readonly events: readonly AcceptedEvent[];
  /**
   * Collects what partner postbacks may be owed: an install this object attributed, an event it
   * applied to its install. Left out by the rebuild, which never sends postbacks.
   */
  readonly postbacks?: PostbackIntent[];
  /**
   * Collects the event stream's lines (functions/domain/raw-data/stream-objects.ts): one per event
   * the object counts, with the attribution of the install it counts against, in no set order
   * (installs run side by side; streamOrder sorts them). Left out by the rebuild.
   */
  readonly stream?: StreamLine[];
  /**
   * The latest consent each install's lines in the object carry (latestConsents): a stream line
   * shows it or the stored one, the later, and an event after one withdrawing measurement is withheld.
   */
  readonly consents?: ReadonlyMap<string, ConsentRecord>;
}

/** Stream lines in the order of their events in the audit object. */
export const streamOrder = (lines: readonly (StreamLine & { readonly index?: number })[]): StreamLine[] =>
  [...lines]
    .sort((a, b) => (a.index ?? 0) - (b.index ?? 0))
    .map(({ o, event, install }) => (install ? { o, event, install } : { o, event }));

/** Installs of one object are independent of each other and run side by side, this many at once. */
const INSTALL_CONCURRENCY = 8;

export async function contributionsOf(ports: ContributionPorts, context: AuditObjectContext): Promise<RowDeltas> {
  const deltas = new RowDeltas();
  const byInstall = new Map<string, AcceptedEvent[]>();
  // Each event's day is already the app's local day: acceptedEvents read it in the context's zone.
  for (const event of context.events) {
    const list = byInstall.get(event.installUuid) ?? [];
    list.push(event);
    byInstall.set(event.installUuid, list);
  }
  // Installs with rejected lines only are counted nowhere, but their lines are theirs to delete.
  for (const installUuid of context.installUuids ?? []) if (!byInstall.has(installUuid)) byInstall.set(installUuid, []);
  const run = (installUuid: string, events: readonly AcceptedEvent[]) => new InstallRun(ports, context, installUuid, deltas).run(events);
  // Installs that name a device look for each other (a reinstall under another uuid), so they go
  // one after the other in the object's order; every other install runs side by side.
  const firstDeviceInstall = (events: readonly AcceptedEvent[]) =>
    events.find((e) => e.name === INSTALL_EVENT && e.deviceHash !== undefined)?.index ?? -1;
  const withDevice = [...byInstall]
    .filter(([, events]) => firstDeviceInstall(events) >= 0)
    .sort(([, a], [, b]) => firstDeviceInstall(a) - firstDeviceInstall(b));
  const rest = [...byInstall].filter(([, events]) => firstDeviceInstall(events) < 0);
  const deviceChain = async () => {
    for (const [installUuid, events] of withDevice) await run(installUuid, events);
  };
  // After a failure no new install starts, and the failure is thrown once the running ones have
  // settled: nothing of a failed delivery still writes when its lease is given back.
  const tasks = [
    deviceChain,
    ...rest.map(
      ([installUuid, events]) =>
        () =>
          run(installUuid, events),
    ),
  ];
  await pool(tasks, INSTALL_CONCURRENCY, (task) => task());
  // Each day whose perf rows the object adds to is stamped once: the page compactor rebuilds it.
  const perfDays = new Set([...deltas].filter((row) => row.family === PERF_FAMILIES.perf).map((row) => row.day));
  for (const day of perfDays) deltas.add({ family: PERF_FAMILIES.perfStamp, day, group: [] }, { v: 1 });
  return deltas;
}

/**
 * Writes of one object's log item lost to concurrent objects before the delivery gives up (and is
 * retried). Each loss means another object appended, so the log as a whole always progresses; after
 * a few in a row the writer waits a random moment, so two busy writers of one install do not keep
 * meeting on the same number.
 */
const MAX_LOG_ATTEMPTS = 200;

/** One install's events of one audit object, in the object's order. */
class InstallRun {
  private readonly pk: string;
  private head: InstallHead | undefined;
  /** The d# and r# items as the run read them: only flags no object had then are claimed (one another object has costs no write). */
  private readonly flagItems = new Map<string, Record<string, unknown>>();
  /** d#<day> attributes to claim: n:<event_name> and p:<partner>. */
  private readonly dayFlags = new Map<string, Set<string>>();
  /** r#<member> attributes to claim, with the member's install day and dimensions. */
  private readonly retentionFlags = new Map<string, { day: string; dims: DimensionValues; flags: Set<string> }>();
  /** A held event can be met twice in one run (its own item, then the install's release): it applies once. */
  private readonly applied = new Set<string>();
  /** Decisions of installs the stream's lines name, by install event id (read once per run). */
  private readonly decisions = new Map<string, Promise<AttributionDecision | undefined>>();
  /** Dimensions of installs referenced without them (references written before dims), by install event id (read once per run). */
  private readonly olderDims = new Map<string, Promise<DimensionValues>>();
  /** The resolved opens of the log items read, by item number: items never change them once written. */
  private readonly opens = new Map<number, readonly OpenRef[]>();
  /** Links of this object's deep_link_opens, resolved once per run (a lost log write writes them again). */
  private readonly links = new Map<string, Promise<ReengagementLink | undefined>>();
  /** The log items read that hold purchases or refunds, by item number: items never change them once written. */
  private readonly moneyItems = new Map<number, ObjectClaims>();
  /** g:<link_id> flags to claim, by `<day>\u0000<link_id>`: the re-engagement's dims and postback. */
  private readonly reengagements = new Map<string, { dims: DimensionValues; open: OpenRef; member: MemberRef }>();
  /** The install's consent as its partition held it when the run read it (docs/privacy.md, "Consent"). */
  private storedConsent: ConsentRecord | undefined;
  /** The install's first-launch record as its partition held it when the run read it. */
  private storedFirstLaunch: FirstLaunchRecord | undefined;

  constructor(
    private readonly ports: ContributionPorts,
    private readonly context: AuditObjectContext,
    private readonly installUuid: string,
    private readonly deltas: RowDeltas,
  ) {
    this.pk = installPk(context.appId, installUuid);
  }

  private get timeZone(): string {
    return this.context.timeZone ?? UTC;
  }

  async run(events: readonly AcceptedEvent[]): Promise<void> {
    // Installs with rejected lines only still get an item: the privacy drain finds the object by it.
    if (events.length === 0) {
      await this.logItem(events, [], await this.ports.installs.query<ObjectClaims>(this.pk, SK.claimsPrefix));
      return;
    }
    // One read of the partition: the head, the log, the flags, and legacy e# claims.
    const items = await this.ports.installs.query<Record<string, unknown>>(this.pk, '');
    const log: ObjectClaims[] = [];
    const legacy: EventClaim[] = [];
    for (const item of items) {
      const sk = String(item.sk);
      if (sk === SK.head) this.head = item as unknown as InstallHead;
      else if (sk.startsWith(SK.claimsPrefix)) log.push(item as unknown as ObjectClaims);
      else if (sk.startsWith(SK.eventPrefix)) legacy.push(item as unknown as EventClaim);
      else if (sk.startsWith(SK.day('')) || sk.startsWith(SK.retention(''))) this.flagItems.set(sk, item);
      else if (sk === CONSENT_SK) this.storedConsent = item as unknown as ConsentRecord;
      else if (sk === SK.firstLaunch) {
        const { pk: _pk, sk: _sk, ...record } = item;
        this.storedFirstLaunch = record as unknown as FirstLaunchRecord;
      }
    }
    const own = await this.logItem(events, legacy, log);
    await this.ownHeld(own);

    const taken = new Set(own.ids ?? []);
    const withheld = new Set(own.withheld ?? []);
    const superseded = new Set(own.superseded ?? []);
    let member = own.head ?? undefined;
    /** The install event whose following events have no recorded install yet. */
    let after: string | undefined;
    for (const event of events) {
      if (!taken.delete(event.eventId) || withheld.has(event.eventId)) continue;
      if (event.name === INSTALL_EVENT) {
        await this.install(event, own);
        after = event.eventId;
        continue;
      }
      if (after !== undefined) {
        member = await this.afterInstall(own, after);
        after = undefined;
      }
      if (superseded.has(event.eventId)) {
        // Received and streamed as sent, counted as an event with no dollars: the pulled row counts it.
        this.count({ ...event, revenueMicros: 0 });
        await this.streamLine(event, member && (await this.attributionOf(member)));
        continue;
      }
      this.count(event);
      // Without an install the event is one of the item's held events (ownHeld applies those).
      if (member) await this.applyTo(event, member, claimSeqOf(own.sk));
      await this.streamLine(event, member && (await this.attributionOf(member)));
    }
    await this.settleFlags();
  }

  /**
   * Whether the user had withdrawn measurement before this event (docs/privacy.md, "Consent"): the
   * latest consent stamped before it, of the one the partition held when the run read it and the
   * latest the object's own lines carry, says `measurement: false`. Such an event is treated as a
   * forget-me treats what follows it: counted in no figure, streamed nowhere, owed no postback.
   * Install events are never withheld: later events of the uuid count against them. Asked only
   * when the object's claim item is written, which records the answer (`withheld`).
   */
  private withheldByConsent(event: AcceptedEvent): boolean {
    const before = [this.storedConsent, this.context.consents?.get(this.installUuid)].filter(
      (record): record is ConsentRecord => record !== undefined && record.ts_ms <= event.tsMs,
    );
    return latestConsent(...before)?.measurement === false;
  }

  /**
   * Whether the event is an `applovin_max` impression the app sent itself (SDK or server to
   * server) while the app's MAX pull is on: the pull is the source of truth for those, so counting
   * it too would count the impression twice (docs/ad-revenue.md, "Source of truth"). A pulled row
   * is known by its impression id. Asked only when the object's claim item is written, which
   * records the answer (`superseded`).
   */
  private supersededByPull(event: AcceptedEvent): boolean {
    const impression = event.raw?.adRevenue;
    return (
      this.context.maxPull === true &&
      event.name === AD_REVENUE_EVENT &&
      impression?.source === 'applovin_max' &&
      !(typeof impression.impression_id === 'string' && PULLED_IMPRESSION_ID.test(impression.impression_id))
    );
  }

  /** The event's line in the stream, when the stream is collected. */
  private async streamLine(
    event: AcceptedEvent,
    attribution: StreamAttribution | null | undefined,
    install?: StreamInstall,
  ): Promise<void> {
    const { stream, token } = this.context;
    if (!stream || !event.raw) return;
    const line: StreamLine & { index: number } = {
      index: event.index,
      o: token,
      event: {
        event_id: event.raw.eventId ?? event.eventId,
        event_name: event.name,
        install_uuid: this.installUuid,
        ts_ms: event.tsMs - event.skewMs,
        corrected_ts: event.tsMs,
        received_ms: event.raw.receivedMs,
        revenue_usd: event.raw.revenueUsd,
        platform: event.platform ?? null,
        properties: event.raw.properties,
        // The matched click's country, else the viewer country of the request that carried the
        // event (docs/raw-data.md; issue 35), as the performance report counts an organic install.
        country:
          (install?.decision ?? (attribution ? await this.decisionOf(attribution.install_event_id) : undefined))?.country ??
          event.country ??
          null,
        attribution: attribution ?? null,
        ...(event.raw.adRevenue ? { ad_revenue: event.raw.adRevenue } : {}),
        ...(event.raw.refund ? { refund: event.raw.refund } : {}),
        ...(event.transactionId === undefined ? {} : { transaction_id: event.transactionId }),
        consent: streamConsent(latestConsent(this.storedConsent, this.context.consents?.get(this.installUuid))),
      },
      ...(install ? { install } : {}),
    };
    stream.push(line);
  }

  /** The stream's attribution of an install of this uuid: its decision, as its e# claim records it. */
  private async attributionOf(member: MemberRef): Promise<StreamAttribution | undefined> {
    if (!this.context.stream) return undefined;
    const decision = await this.decisionOf(member.id);
    // Every counted install has its decision on its e# claim; a partition the privacy drain
    // emptied meanwhile has not, and the member's partner is all that is known.
    const known: AttributionDecision = decision ?? {
      partner: member.partner,
      attribution_type: member.partner === ORGANIC ? 'organic' : 'deterministic',
      rule: 'no_match',
      reinstall: false,
      fraud_reasons: [],
    };
    return streamAttribution(known, member.ts_ms, member.id);
  }

  private decisionOf(installEventId: string): Promise<AttributionDecision | undefined> {
    let decision = this.decisions.get(installEventId);
    if (!decision) {
      decision = this.ports.installs.get<EventClaim>(this.pk, SK.event(installEventId)).then((claim) => claim?.decision ?? undefined);
      this.decisions.set(installEventId, decision);
    }
    return decision;
  }

  /**
   * This object's item in the install's claim log: found on a redelivery and reused as it is, or
   * appended. The ids taken are those no earlier item and no legacy e# claim of another object
   * holds, first occurrences only; the put is conditional on the sequence number being free, and
   * a refused one means another object appended first: the log is read again and the ids taken anew.
   */
  private async logItem(
    events: readonly AcceptedEvent[],
    legacy: readonly EventClaim[],
    read: readonly ObjectClaims[],
  ): Promise<ObjectClaims> {
    const { token, auditKey } = this.context;
    let log = read;
    for (let attempt = 0; attempt < MAX_LOG_ATTEMPTS; attempt++) {
      this.noteOpens(log);
      const own = log.find((item) => item.owner === token);
      if (own) return own;
      const claimed = new Set(legacy.filter((claim) => claim.owner !== token).map((claim) => claim.sk.slice(SK.eventPrefix.length)));
      for (const item of log) for (const id of item.ids ?? []) claimed.add(id);
      const ids: string[] = [];
      const taken: AcceptedEvent[] = [];
      const installs: string[] = [];
      const withheld: string[] = [];
      const superseded: string[] = [];
      const waiting: HeldEvent[] = [];
      for (const event of events) {
        if (claimed.has(event.eventId)) continue;
        claimed.add(event.eventId);
        ids.push(event.eventId);
        taken.push(event);
        if (event.name === INSTALL_EVENT) installs.push(event.eventId);
        else if (this.withheldByConsent(event)) withheld.push(event.eventId);
        // Never held either: nothing of it is applied to an install.
        else if (this.supersededByPull(event)) superseded.push(event.eventId);
        else if (installs.length === 0 && !this.head) waiting.push([event.name, event.tsMs, event.revenueMicros]);
      }
      const seq = log.reduce((max, item) => Math.max(max, claimSeqOf(item.sk)), 0) + 1;
      const opens = await this.resolveOpens(events.filter((event) => ids.includes(event.eventId) && !withheld.includes(event.eventId)));
      const item: ObjectClaims = {
        pk: this.pk,
        sk: SK.claims(seq),
        owner: token,
        audit_key: auditKey,
        ids,
        head: this.head ? memberOf(this.head) : null,
        ...(installs.length > 0 ? { installs } : {}),
        ...(withheld.length > 0 ? { withheld } : {}),
        ...(superseded.length > 0 ? { superseded } : {}),
        ...(waiting.length > 0 ? { held: waiting } : {}),
        ...(opens.length > 0 ? { opens } : {}),
        ...moneyOf(taken),
      };
      const stored = await this.ports.installs.claimItem(item);
      if (stored.owner === token) {
        this.noteOpens([stored]);
        return stored;
      }
      // Another object took the number: only the items from it on are new (the log only grows).
      const newer = await this.ports.installs.query<ObjectClaims>(this.pk, SK.claimsPrefix, SK.claims(seq - 1));
      log = [...log.filter((known) => claimSeqOf(known.sk) < seq), ...newer];
      if (attempt >= 3) await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * Math.min(attempt, 10)));
    }
    throw new Error(`the claim log of ${this.pk} kept growing under ${MAX_LOG_ATTEMPTS} attempts`);
  }

  /**
   * The object's held events, which only the uuid's first install (the one its `first` mark names)
   * applies (issue 35, item 2): never the head, which can be a reinstall counted while the first
   * install's delivery was slow or dead. That install may have been counted since the item was
   * written; if it was, it may or may not have seen this item, so whoever claims `applied` first
   * applies them, to the same install. If its decision is not claimed yet, it has not queried the
   * partition either (it claims its e# item, then queries): it will find this item and apply them.
   * The object claims `applied` in both cases, naming none in the second: two deliveries of it at
   * once may find the install one there and the other not, and only one of their journals stands,
   * so what they apply must not depend on what each found. For the same reason the object never
   * claims `released` after an `applied` naming none: that is the first install's to claim, and a
   * delivery that found the install after its twin claimed `applied` would otherwise take the
   * events into a journal that may not stand.
   */
  private async ownHeld(own: ObjectClaims): Promise<void> {
    if (!own.held?.length) return;
    const first = own.applied ? null : await this.firstInstall();
    await this.applyHeld(own, first ?? null, 'own');
  }

  /**
   * The uuid's first install as held events count against it, once its decision is claimed; else
   * undefined. A partition from before the `first` mark has only its head to go by.
   */
  private async firstInstall(): Promise<MemberRef | undefined> {
    const mark = await this.ports.installs.get<FirstInstallMark>(this.pk, SK.first);
    if (!mark) {
      const head = await this.ports.installs.get<InstallHead>(this.pk, SK.head);
      return head ? memberOf(head) : undefined;
    }
    const claim = await this.ports.installs.get<EventClaim>(this.pk, SK.event(mark.member));
    if (!claim?.member) return undefined;
    if (claim.member.dims) return claim.member;
    // A first install decided before its e# item carried dims: the batch's country is not on it.
    const { decision } = claim;
    return {
      ...claim.member,
      dims: [
        dimensionValue(decision?.partner ?? claim.member.partner),
        dimensionValue(decision?.campaign),
        dimensionValue(decision?.country),
        dimensionValue(claim.platform),
      ],
    };
  }

  /**
   * The install the object's events after an install event count against: the head as that
   * install left it (a newer install may have kept it), recorded first-wins on the item so that a
   * redelivery, which may find the head moved on, counts them against the same one.
   */
  private async afterInstall(own: ObjectClaims, installEventId: string): Promise<MemberRef | undefined> {
    const name = afterInstall(installEventId);
    const recorded = own[name];
    if (recorded) return recorded;
    if (!this.head) return undefined;
    const stored = await this.ports.installs.claimAttributes(this.pk, own.sk, { [name]: memberOf(this.head) });
    return stored[name] as MemberRef;
  }

  private async install(event: AcceptedEvent, ownItem: ObjectClaims): Promise<void> {
    const { token, appId, companyId, probabilistic, probabilisticBasis } = this.context;
    const previous = this.head;
    // The `first` mark alone decides which install of the uuid is not a reinstall, never the head:
    // an object that died after claiming the mark finds on redelivery the head of another batch's
    // install counted meanwhile, and must still count its own as the first. A head is written only
    // after the mark is claimed, so with a head the mark is read, not claimed (no write).
    const first = previous
      ? await this.ports.installs.get<FirstInstallMark>(this.pk, SK.first)
      : await this.ports.installs.claimItem<FirstInstallMark>({ pk: this.pk, sk: SK.first, owner: token, member: event.eventId });
    const decision = await this.ports.decide(
      {
        appId,
        companyId,
        // Under the `consent` basis, as the install's latest consent known now allows (the one its
        // stream line shows); the decision is recorded on the e# claim, first wins, so a redelivery
        // or a rebuild keeps it whatever consent arrives later (docs/privacy.md, "Probabilistic matching").
        probabilistic: probabilisticAllowed(
          { probabilistic, ...(probabilisticBasis === undefined ? {} : { probabilistic_basis: probabilisticBasis }) },
          latestConsent(this.storedConsent, this.context.consents?.get(this.installUuid)),
        ),
        installUuid: this.installUuid,
        eventId: event.eventId,
        tsMs: event.tsMs,
        skewMs: event.skewMs,
        platform: event.platform ?? 'android',
        clientIp: event.clientIp,
        deviceHash: event.deviceHash,
        attribution: event.attribution,
        adservices: event.adservices,
        seenInstallUuid: first?.member !== event.eventId,
      },
      { firstLaunch: this.storedFirstLaunch },
    );
    // Only the install the mark names is the first: it alone applies the held events and is
    // streamed as the first, whatever the head says (issue 35, item 2).
    const isFirst = first?.member === event.eventId;
    // The e# item's member carries no dims: they follow from its decision and this very line, so
    // they need no bytes there (an item a little over 1 KB costs a second write unit). The first
    // install's does: a held event's own object, counted later, applies itself to that install
    // (ownHeld) and has no other way to its dims.
    const member: MemberRef = {
      id: event.eventId,
      ts_ms: event.tsMs,
      day: event.day,
      partner: decision.partner,
      ...(isFirst ? { dims: dimsOf(decision, event) } : {}),
    };
    // The log made the event this object's; its e# item records the decision, first wins, for a
    // redelivery, admin install show, the rebuild and the partner postbacks.
    const claim = await this.ports.installs.claimItem<EventClaim>({
      pk: this.pk,
      sk: SK.event(event.eventId),
      owner: token,
      event_name: event.name,
      ts_ms: event.tsMs,
      day: event.day,
      revenue_micros: event.revenueMicros,
      held: false,
      member,
      decision,
      previous_member: previous?.member ?? null,
      platform: event.platform,
    });
    if (claim.owner !== token) return;
    // A redelivery decided this before: the stored decision stands, whatever the clicks say now.
    const stored = claim.decision ?? decision;
    const dims = dimsOf(stored, event);
    const own: MemberRef = { ...(claim.member ?? member), dims };
    this.count(event);
    await this.applyTo(event, own, claimSeqOf(ownItem.sk));
    this.decisions.set(own.id, Promise.resolve(stored));
    await this.streamLine(event, this.context.stream ? streamAttribution(stored, own.ts_ms, own.id) : undefined, {
      first: isFirst,
      previous_install_event_id: claim.previous_member ?? null,
      decision: stored,
    });
    this.context.postbacks?.push({
      kind: 'install',
      installUuid: this.installUuid,
      eventId: event.eventId,
      tsMs: own.ts_ms,
      platform: claim.platform ?? event.platform ?? 'android',
      decision: stored,
    });

    if (isFirst && event.deviceHash) {
      await this.ports.installs.claimItem<DeviceItem>({
        pk: this.pk,
        sk: SK.device,
        owner: token,
        app_device: appDevice(appId, event.deviceHash),
      });
    }
    await this.moveHead(
      {
        pk: this.pk,
        sk: SK.head,
        app_id: appId,
        install_uuid: this.installUuid,
        member: own.id,
        owner: token,
        ts_ms: own.ts_ms,
        day: own.day,
        partner: stored.partner,
        attribution_type: stored.attribution_type,
        platform: claim.platform ?? event.platform ?? 'android',
        dims,
      },
      claim.previous_member ?? undefined,
    );

    this.deltas.add(
      { family: 'attribution', day: own.day, group: [stored.partner, stored.attribution_type] },
      {
        installs: 1,
        organic: stored.attribution_type === 'organic' ? 1 : 0,
        reinstalls: stored.reinstall ? 1 : 0,
        fraud_flagged: stored.fraud_reasons.length > 0 ? 1 : 0,
      },
    );
    this.deltas.add({ family: 'cohorts', day: own.day, group: [] }, { installs: 1 });
    this.perf(own.day, dims, {
      installs: 1,
      organic: stored.attribution_type === 'organic' ? 1 : 0,
      reinstalls: stored.reinstall ? 1 : 0,
      fraud_flagged: stored.fraud_reasons.length > 0 ? 1 : 0,
    });
    // The link whose click won, for `admin link stats`: counted as perf counts `installs` (every
    // install event, reinstalls and fraud-flagged ones included), on the same journal.
    if (stored.attribution_type !== 'organic' && stored.link_id) {
      this.deltas.add({ family: 'link', day: own.day, group: [dimensionValue(stored.link_id)] }, { installs: 1 });
    }
    if (isFirst) await this.releaseHeld(ownItem, own);
  }

  /**
   * The head names the current install: the latest in time of those counted (issue 35), so an
   * older install counted late (a late batch, an offline SDK) never becomes current, and events
   * after it count against the newer one. A tie in time goes to the one counted last.
   */
  private async moveHead(head: InstallHead, expected: string | undefined): Promise<void> {
    if (this.head && this.head.member !== head.member && this.head.ts_ms > head.ts_ms) return;
    let expectedMember = expected;
    for (let attempt = 0; attempt < 5; attempt++) {
      if (await this.ports.installs.replaceHead(head, expectedMember)) break;
      const current = await this.ports.installs.get<InstallHead>(this.pk, SK.head);
      if (current?.member === head.member || (current && current.ts_ms > head.ts_ms)) {
        this.head = current;
        return;
      }
      expectedMember = current?.member;
    }
    this.head = head;
  }

  /**
   * The first install of a uuid takes the events that arrived before it: the held events of every
   * log item up to the number the object's own item pins, and legacy held e# claims. The pin
   * (`released_upto`, first wins) makes every delivery of the object release the same items,
   * although a later one may read more of the log: an item after it was written once this
   * install's decision was claimed, so its own object finds the install and applies its held
   * events itself (ownHeld).
   */
  private async releaseHeld(ownItem: ObjectClaims, member: MemberRef): Promise<void> {
    let items = await this.ports.installs.query<Record<string, unknown>>(this.pk, '');
    const read = Math.max(
      0,
      ...items
        .map((item) => String(item.sk))
        .filter((sk) => sk.startsWith(SK.claimsPrefix))
        .map(claimSeqOf),
    );
    const pinned =
      ownItem.released_upto === undefined
        ? await this.ports.installs.claimAttributes(this.pk, ownItem.sk, { released_upto: read })
        : ownItem;
    const upto = Number(pinned.released_upto);
    // Another delivery of this object read further and pinned that: read as far.
    if (upto > read) items = await this.ports.installs.query<Record<string, unknown>>(this.pk, '');
    this.noteOpens(items.filter((item) => String(item.sk).startsWith(SK.claimsPrefix)) as unknown as ObjectClaims[]);
    await Promise.all(
      items.map((item) => {
        const sk = String(item.sk);
        if (sk.startsWith(SK.claimsPrefix)) {
          const claims = item as unknown as ObjectClaims;
          return claims.held?.length && claimSeqOf(sk) <= upto ? this.applyHeld(claims, member) : undefined;
        }
        const legacy = item as unknown as EventClaim;
        return sk.startsWith(SK.eventPrefix) && legacy.held && legacy.event_name !== INSTALL_EVENT
          ? this.applyLegacyHeld(legacy, member)
          : undefined;
      }),
    );
  }

  /**
   * A log item's held events apply to one install, by whoever claims `applied` on the item first,
   * or after one naming none, by the first install's object (`by: 'install'`) claiming `released`.
   */
  private async applyHeld(item: ObjectClaims, member: MemberRef | null, by: 'own' | 'install' = 'install'): Promise<void> {
    const won = await this.claimApplied(item.sk, item, member, by === 'install');
    if (!won) return;
    for (const [i, [name, tsMs, revenueMicros]] of (item.held ?? []).entries()) {
      const eventId = item.ids?.[i];
      if (eventId !== undefined) await this.applyTo(heldEvent(eventId, name, tsMs, revenueMicros, this.timeZone), won, claimSeqOf(item.sk));
    }
  }

  /** A held event of a partition written before the claim log: its own e# claim carries `applied`. */
  private async applyLegacyHeld(claim: EventClaim, member: MemberRef): Promise<void> {
    const won = await this.claimApplied(claim.sk, claim, member, true);
    if (!won) return;
    const eventId = claim.sk.slice(SK.eventPrefix.length);
    // Before the claim log: no item number, and no open known (there were none then).
    await this.applyTo(heldEvent(eventId, claim.event_name, claim.ts_ms, claim.revenue_micros, this.timeZone), won, 0);
  }

  /**
   * `applied` on an item, first wins (unless already read): the install its held events count
   * against when this object won it, else nothing (another object applies them). An `applied`
   * that names no install (the held events' own object found none) leaves them to the first
   * install, which claims `released` (first wins, for its concurrent deliveries).
   */
  private async claimApplied(
    sk: string,
    known: Pick<ObjectClaims, 'applied' | 'released'>,
    member: MemberRef | null,
    mayRelease: boolean,
  ): Promise<MemberRef | undefined> {
    const { token } = this.context;
    const applied = known.applied ?? (await this.claim(sk, 'applied', { by: token, member }));
    if (applied?.member) return ownerOf(applied) === token ? applied.member : undefined;
    if (!member || !mayRelease) return undefined;
    const released = known.released ?? (await this.claim(sk, 'released', { by: token, member }));
    return released && ownerOf(released) === token ? released.member : undefined;
  }

  /** One attribute of an item, first wins: the value that stands. */
  private async claim<K extends 'applied' | 'released'>(
    sk: string,
    name: K,
    value: NonNullable<ObjectClaims[K]>,
  ): Promise<ObjectClaims[K]> {
    const stored = await this.ports.installs.claimAttributes(this.pk, sk, { [name]: value });
    return stored[name] as ObjectClaims[K];
  }

  /** The events report counts every accepted event at once, install or not. */
  private count(event: AcceptedEvent): void {
    this.deltas.add({ family: 'events', day: event.day, group: [event.name] }, { events: 1, revenue_micros: event.revenueMicros });
    this.flag(this.dayFlags, event.day, `n:${event.name}`);
  }

  /**
   * Revenue by the install's partner and dimensions (on the event's day, and as cohort revenue on
   * the install's day), and retention of that install; a deep_link_open's re-engagement, and
   * revenue by the install's most recent attribution (reengagement.ts). `seq`: the number of the
   * log item holding the event, so that only the opens of that item and of earlier ones count,
   * the same on every delivery whatever later objects wrote since.
   */
  private async applyTo(event: AcceptedEvent, member: MemberRef, seq: number): Promise<void> {
    if (this.applied.has(event.eventId)) return;
    this.applied.add(event.eventId);
    if (event.name !== INSTALL_EVENT && member.partner !== ORGANIC) {
      this.context.postbacks?.push({
        kind: 'event',
        installUuid: this.installUuid,
        eventId: event.eventId,
        name: event.name,
        tsMs: event.tsMs,
        revenueMicros: event.revenueMicros,
        member: { id: member.id, ts_ms: member.ts_ms, partner: member.partner },
      });
    }
    // Ad revenue is no purchase: the interface's revenue report stays purchases and subscriptions,
    // and does not net refunds either (docs/reports.md).
    const ad = event.name === AD_REVENUE_EVENT;
    const refund = event.name === REFUND_EVENT;
    if (isPurchase(event)) {
      this.deltas.add(
        { family: 'revenue', day: event.day, group: [member.partner] },
        { purchases: 1, revenue_micros: event.revenueMicros },
      );
      this.flag(this.dayFlags, event.day, `p:${member.partner}`);
    }
    const offset = event.tsMs - member.ts_ms;
    // A refund (often sent server to server) is no sign that the user came back.
    const retained = refund ? [] : RETENTION_DAYS.filter((n) => offset >= n * DAY_MS && offset < (n + 1) * DAY_MS);
    const open = event.name === DEEP_LINK_OPEN_EVENT ? this.openOf(event.eventId, seq) : undefined;
    const reengaged = open !== undefined && reengages(open, member.ts_ms);
    // A refund counts what its purchase has left, as the log up to its item says (refunds.ts).
    const micros = refund ? refundCounted(this.moneyItems.values(), event.eventId, seq) : event.revenueMicros;
    if (micros <= 0 && retained.length === 0 && !reengaged) return;
    const dims = await this.dimsOf(member);
    if (reengaged) {
      this.reengagements.set(`${event.day}\u0000${open[2]}`, { dims: reengagementDims(open, dims), open, member });
      this.flag(this.dayFlags, event.day, `g:${open[2]}`);
    }
    if (micros > 0) {
      if (ad) this.perf(event.day, dims, { ad_revenue_micros: micros });
      else {
        this.perf(event.day, dims, refund ? { refunds: 1, refund_micros: micros } : { revenue_micros: micros });
        // Revenue by most recent attribution: purchases only, as revenue_micros, and their refunds (docs/reports.md).
        const credited = creditedOpen(
          this.opensUpTo(seq),
          member.ts_ms,
          event.tsMs,
          reengagementWindowMs(this.context.reengagementWindowDays),
        );
        this.perf(
          event.day,
          credited ? reengagementDims(credited, dims) : dims,
          refund ? { recent_refund_micros: micros } : { recent_revenue_micros: micros },
        );
      }
      // Within N x 24 h of the install; an event before the install (held, or its clock) is within.
      const cohort: Partial<Record<PerfCounter, number>> = {};
      const windows = ad ? COHORT_AD_REVENUE_DAYS : refund ? COHORT_REFUND_DAYS : COHORT_REVENUE_DAYS;
      for (const [counter, days] of Object.entries(windows) as [PerfCounter, number][]) {
        if (offset < days * DAY_MS) cohort[counter] = micros;
      }
      this.perf(member.day, dims, cohort);
    }
    for (const n of retained) {
      const entry = this.retentionFlags.get(member.id) ?? { day: member.day, dims, flags: new Set<string>() };
      entry.flags.add(`d${n}`);
      this.retentionFlags.set(member.id, entry);
    }
  }

  /** A contribution to the install's perf row and, the same, to its partner's (docs/analytics.md, "Rows"). */
  private perf(day: string, dims: DimensionValues, counters: Partial<Record<PerfCounter, number>>): void {
    this.deltas.add({ family: PERF_FAMILIES.perf, day, group: dims }, counters);
    this.deltas.add({ family: PERF_FAMILIES.perfPartner, day, group: [dims[0]] }, counters);
  }

  /**
   * The install's dimensions, as its reference carries them; a reference written before them
   * counts as [partner, (none), (none), the install's platform] (its install event's claim keeps
   * the platform, and never changes, so every delivery reads the same).
   */
  private dimsOf(member: MemberRef): Promise<DimensionValues> {
    if (member.dims) return Promise.resolve(member.dims);
    let dims = this.olderDims.get(member.id);
    if (!dims) {
      dims = this.ports.installs
        .get<EventClaim>(this.pk, SK.event(member.id))
        .then((claim): DimensionValues => [dimensionValue(member.partner), NONE, NONE, dimensionValue(claim?.platform)]);
      this.olderDims.set(member.id, dims);
    }
    return dims;
  }

  private flag(map: Map<string, Set<string>>, key: string, attribute: string): void {
    const set = map.get(key) ?? new Set<string>();
    set.add(attribute);
    map.set(key, set);
  }

  /**
   * The object's own item's opens, and those of the items read: every item before its own is among
   * them. The items with purchases or refunds are kept whole, for what each refund counts (refunds.ts).
   */
  private noteOpens(items: readonly ObjectClaims[]): void {
    for (const item of items) {
      if (item.opens?.length) this.opens.set(claimSeqOf(item.sk), item.opens);
      if (item.paid?.length || item.refunds?.length) this.moneyItems.set(claimSeqOf(item.sk), item);
    }
  }

  /** The opens of the log items up to number `seq`. */
  private *opensUpTo(seq: number): Iterable<OpenRef> {
    for (const [at, opens] of this.opens) if (at <= seq) yield* opens;
  }

  /** A deep_link_open's resolved link, as the log item numbered `seq` holds it. */
  private openOf(eventId: string, seq: number): OpenRef | undefined {
    return this.opens.get(seq)?.find(([id]) => id === eventId);
  }

  /** The links of the object's deep_link_opens among `events`, as its log item keeps them. */
  private async resolveOpens(events: readonly AcceptedEvent[]): Promise<OpenRef[]> {
    const { reengagementLink } = this.ports;
    if (!reengagementLink) return [];
    const opens: OpenRef[] = [];
    for (const event of events) {
      if (!event.opened) continue;
      let link = this.links.get(event.eventId);
      if (!link) {
        link = reengagementLink({ appId: this.context.appId, installUuid: this.installUuid, eventId: event.eventId, open: event.opened });
        this.links.set(event.eventId, link);
      }
      const found = await link;
      if (found) opens.push(openRef(event.eventId, event.tsMs, found));
    }
    return opens;
  }

  /** A g:<link_id> flag won: one re-engagement of the install with that link on that day, and its postback. */
  private reengaged(day: string, linkId: string): void {
    const entry = this.reengagements.get(`${day}\u0000${linkId}`);
    if (!entry) return;
    const { dims, open, member } = entry;
    this.perf(day, dims, { reengagements: 1 });
    this.deltas.add({ family: 'link', day, group: [dimensionValue(linkId)] }, { reengagements: 1 });
    this.context.postbacks?.push({
      kind: 'reengagement',
      installUuid: this.installUuid,
      eventId: open[0],
      tsMs: open[1],
      link: { linkId, partner: open[3], campaign: open[4], clickId: open[5] },
      member: { id: member.id, ts_ms: member.ts_ms, partner: member.partner },
    });
  }

  /** At most one claim write per day and per retained install: each attribute won is one more distinct install. */
  private async settleFlags(): Promise<void> {
    const claims: Promise<void>[] = [];
    for (const [day, flags] of this.dayFlags) {
      claims.push(
        this.claimFlags(SK.day(day), flags).then((won) => {
          for (const flag of won) {
            const value = flag.slice(2);
            if (flag.startsWith('n:')) this.deltas.add({ family: 'events', day, group: [value] }, { unique_installs: 1 });
            else if (flag.startsWith('g:')) this.reengaged(day, value);
            else this.deltas.add({ family: 'revenue', day, group: [value] }, { payers: 1 });
          }
        }),
      );
    }
    for (const [memberId, { day, dims, flags }] of this.retentionFlags) {
      claims.push(
        this.claimFlags(SK.retention(memberId), flags).then((won) => {
          for (const flag of won) {
            this.deltas.add({ family: 'cohorts', day, group: [] }, { [flag]: 1 });
            this.perf(day, dims, { [`retained_${flag}`]: 1 });
          }
        }),
      );
    }
    await Promise.all(claims);
  }

  /**
   * The flags this object owns: those it held when the run read the item (a redelivery), and
   * those nobody held then that it now claims. A flag another object held is simply not won, with
   * no write; a refused write happens only when another object claims the same flag meanwhile.
   */
  private async claimFlags(sk: string, flags: Set<string>): Promise<string[]> {
    const { token } = this.context;
    const read = this.flagItems.get(sk) ?? {};
    const free = [...flags].filter((flag) => !(flag in read));
    const stored =
      free.length > 0
        ? { ...read, ...(await this.ports.installs.claimAttributes(this.pk, sk, Object.fromEntries(free.map((flag) => [flag, token])))) }
        : read;
    return [...flags].filter((flag) => ownerOf(stored[flag]) === token);
  }
}

/** An install's dimensions: its decision's, the batch's country when the click named none. */
function dimsOf(decision: AttributionDecision, event: AcceptedEvent): DimensionValues {
  return [
    dimensionValue(decision.partner),
    dimensionValue(decision.campaign),
    dimensionValue(decision.country ?? event.country),
    dimensionValue(event.platform),
  ];
}

/** A re-engagement's dimensions: the link's partner and campaign, the install's country and platform. */
const reengagementDims = (open: OpenRef, install: DimensionValues): DimensionValues => [
  dimensionValue(open[3]),
  dimensionValue(open[4]),
  install[2],
  install[3],
];

/** A deep_link_open's `opened`, when its properties name a link or a click. */
function openedField(properties: unknown): { opened?: OpenedBy } {
  const opened = openedBy(isPlainObject(properties) ? properties : undefined);
  return opened ? { opened } : {};
}

function memberOf(head: InstallHead): MemberRef {
  return { id: head.member, ts_ms: head.ts_ms, day: head.day, partner: head.partner, ...(head.dims ? { dims: head.dims } : {}) };
}

/** A held event as its claim remembers it: all that applying it later needs. */
function heldEvent(eventId: string, name: string, tsMs: number, revenueMicros: number, timeZone: string): AcceptedEvent {
  return {
    index: -1,
    eventId,
    name,
    installUuid: '',
    tsMs,
    day: localDayOf(tsMs, timeZone),
    revenueMicros,
    clientIp: '',
    skewMs: 0,
  };
}
