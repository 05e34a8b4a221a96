import { type AttributionDecision, type InstallFacts, ORGANIC } from '../attribution/decision';
import type { AuditLine } from '../audit/types';
import { DAY_MS, dayOf } from '../common/days';
import { isPlainObject } from '../common/json';
import { pool } from '../common/pool';
import { INSTALL_EVENT } from '../ingest/event-validation';
import type { Platform } from '../links/platform';
import type { PostbackIntent } from '../partner-postbacks/trigger';
import {
  type AuditReference,
  appDevice,
  type DeviceItem,
  type EventClaim,
  type FirstInstallMark,
  type InstallHead,
  type InstallStore,
  installPk,
  type MemberRef,
  ownerOf,
  SK,
} from './install-state';
import { RowDeltas, toMicros } from './rows';

/**
 * What one audit object adds to the report rows. Every contribution is first claimed in the
 * install's partition (install-state.ts), so the deltas returned are exactly what this object
 * owns: the same object processed again returns the same deltas, a duplicate of its events
 * elsewhere returns none for them.
 */

/** An accepted line of an audit object, as the aggregator reads it. */
export interface AcceptedEvent {
  readonly index: number;
  readonly eventId: string;
  readonly name: string;
  readonly installUuid: string;
  /** Corrected time (docs/ingestion.md): all bucketing uses it. */
  readonly tsMs: number;
  readonly day: string;
  readonly revenueMicros: number;
  readonly platform?: Platform;
  readonly deviceHash?: string;
  readonly clientIp: string;
  readonly skewMs: number;
  readonly attribution?: InstallFacts['attribution'];
}

/** An audit object the aggregator cannot read as documented: it will never succeed. */
export class UnreadableAuditError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UnreadableAuditError';
  }
}

export const RETENTION_DAYS = [1, 7, 30] as const;

export function acceptedEvents(lines: readonly AuditLine[]): AcceptedEvent[] {
  const events: AcceptedEvent[] = [];
  for (const line of lines) {
    if (!isPlainObject(line)) throw new UnreadableAuditError('an audit line is not an object');
    if (line.status !== 'accepted') continue;
    const event = line.event;
    if (!isPlainObject(event) || typeof line.install_uuid !== 'string' || typeof line.corrected_ts !== 'number') {
      throw new UnreadableAuditError(`accepted line ${line.index} lacks its event, install_uuid or corrected_ts`);
    }
    const { event_id, event_name, ts_ms, revenue_usd, platform, attribution } = event;
    if (typeof event_id !== 'string' || typeof event_name !== 'string' || typeof ts_ms !== 'number') {
      throw new UnreadableAuditError(`accepted line ${line.index} lacks event_id, event_name or ts_ms`);
    }
    events.push({
      index: line.index,
      eventId: event_id,
      name: event_name,
      installUuid: line.install_uuid,
      tsMs: line.corrected_ts,
      day: dayOf(line.corrected_ts),
      revenueMicros: typeof revenue_usd === 'number' && revenue_usd > 0 ? toMicros(revenue_usd) : 0,
      platform: platform === 'ios' || platform === 'android' ? platform : undefined,
      deviceHash: line.device_hash,
      clientIp: line.client_ip,
      skewMs: line.corrected_ts - ts_ms,
      attribution: isPlainObject(attribution) ? (attribution as InstallFacts['attribution']) : undefined,
    });
  }
  return events;
}

export interface ContributionPorts {
  readonly installs: InstallStore;
  /** Attribution of an install event: decideAttribution on the live path, the recorded decision in a rebuild. */
  decide(facts: InstallFacts): Promise<AttributionDecision>;
}

export interface AuditObjectContext {
  readonly appId: string;
  /** The app's company, from the queue message (ingestion knew it from the company key). */
  readonly companyId: string;
  readonly probabilistic: boolean;
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
}

/** Installs of one object are independent of each other and run side by side, this many at once. */
const INSTALL_CONCURRENCY = 8;

export async function contributionsOf(ports: ContributionPorts, context: AuditObjectContext): Promise<RowDeltas> {
  const deltas = new RowDeltas();
  const byInstall = new Map<string, AcceptedEvent[]>();
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
  return deltas;
}

/** One install's events of one audit object, in the object's order. */
class InstallRun {
  private readonly pk: string;
  private head: InstallHead | undefined;
  /** d#<day> attributes to claim: n:<event_name> and p:<partner>. */
  private readonly dayFlags = new Map<string, Set<string>>();
  /** r#<member> attributes to claim, with the member's install day. */
  private readonly retentionFlags = new Map<string, { day: string; flags: Set<string> }>();
  /** A held event can be met twice in one run (its own claim, then the install's release): it applies once. */
  private readonly applied = new Set<string>();

  constructor(
    private readonly ports: ContributionPorts,
    private readonly context: AuditObjectContext,
    private readonly installUuid: string,
    private readonly deltas: RowDeltas,
  ) {
    this.pk = installPk(context.appId, installUuid);
  }

  async run(events: readonly AcceptedEvent[]): Promise<void> {
    // Which objects hold this install's lines, kept with it, so that a deletion finds them all
    // (a duplicate sent again lands in another object, and that one holds its lines too).
    const { auditKey, token } = this.context;
    await this.ports.installs.claimItem<AuditReference>({ pk: this.pk, sk: SK.audit(auditKey), owner: token, audit_key: auditKey });
    if (events.length === 0) return;
    this.head = await this.ports.installs.get<InstallHead>(this.pk, SK.head);
    let pending: AcceptedEvent[] = [];
    for (const event of events) {
      if (event.name !== INSTALL_EVENT) {
        pending.push(event);
        continue;
      }
      await this.events(pending);
      pending = [];
      await this.install(event);
    }
    await this.events(pending);
    await this.settleFlags();
  }

  /** Events between two install events: their claims go out together. */
  private async events(events: readonly AcceptedEvent[]): Promise<void> {
    if (events.length === 0) return;
    const member = this.head && memberOf(this.head);
    const claims = await Promise.all(events.map(async (event) => [event, await this.claim(event, { held: !member, member })] as const));
    const waiting: [AcceptedEvent, EventClaim][] = [];
    for (const [event, claim] of claims) {
      if (claim.owner !== this.context.token) continue;
      this.count(event);
      if (!claim.held) this.applyTo(event, claim.member as MemberRef);
      else if (claim.applied) {
        if (claim.applied.by === this.context.token) this.applyTo(event, claim.applied.member);
      } else waiting.push([event, claim]);
    }
    if (waiting.length === 0) return;
    // An install of this uuid may have been counted since the head was read; if it was, it may or
    // may not have seen these claims, so whoever claims `applied` first applies them.
    const head = await this.ports.installs.get<InstallHead>(this.pk, SK.head);
    if (!head) return;
    await Promise.all(waiting.map(([event]) => this.applyHeld(event, memberOf(head))));
  }

  private async install(event: AcceptedEvent): Promise<void> {
    const { token, appId, companyId, probabilistic } = this.context;
    const previous = this.head;
    // The `first` mark alone decides which install of the uuid is not a reinstall, never the head:
    // an object that died after claiming the mark finds on redelivery the head of another batch's
    // install counted meanwhile, and must still count its own as the first. A head is written only
    // after the mark is claimed, so with a head the mark is read, not claimed (no write).
    const first = previous
      ? await this.ports.installs.get<FirstInstallMark>(this.pk, SK.first)
      : await this.ports.installs.claimItem<FirstInstallMark>({ pk: this.pk, sk: SK.first, owner: token, member: event.eventId });
    const decision = await this.ports.decide({
      appId,
      companyId,
      probabilistic,
      installUuid: this.installUuid,
      eventId: event.eventId,
      tsMs: event.tsMs,
      skewMs: event.skewMs,
      platform: event.platform ?? 'android',
      clientIp: event.clientIp,
      deviceHash: event.deviceHash,
      attribution: event.attribution,
      seenInstallUuid: first?.member !== event.eventId,
    });
    const member: MemberRef = { id: event.eventId, ts_ms: event.tsMs, day: event.day, partner: decision.partner };
    const claim = await this.claim(event, {
      held: false,
      member,
      decision,
      previous_member: previous?.member ?? null,
      platform: event.platform,
    });
    if (claim.owner !== token) return;
    // A redelivery decided this before: the stored decision stands, whatever the clicks say now.
    const stored = claim.decision ?? decision;
    const own = claim.member ?? member;
    this.count(event);
    this.applyTo(event, own);
    this.context.postbacks?.push({
      kind: 'install',
      installUuid: this.installUuid,
      eventId: event.eventId,
      tsMs: own.ts_ms,
      platform: claim.platform ?? event.platform ?? 'android',
      decision: stored,
    });

    if (claim.previous_member === null && event.deviceHash) {
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
    if (claim.previous_member === null) await this.releaseHeld(own);
  }

  /**
   * The head names the install counted last. Only when two install events of the uuid race does
   * the later one by time win, so that the head never goes back to an older install.
   */
  private async moveHead(head: InstallHead, expected: string | undefined): Promise<void> {
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

  /** The first install of a uuid takes the events that arrived before it. */
  private async releaseHeld(member: MemberRef): Promise<void> {
    const claims = await this.ports.installs.query<EventClaim>(this.pk, SK.eventPrefix);
    const held = claims.filter((claim) => claim.held && claim.event_name !== INSTALL_EVENT);
    await Promise.all(held.map((claim) => this.applyHeld(fromClaim(claim), member, claim)));
  }

  private async applyHeld(event: AcceptedEvent, member: MemberRef, known?: EventClaim): Promise<void> {
    const { token } = this.context;
    let applied = known?.applied;
    if (!applied) {
      const stored = await this.ports.installs.claimAttributes(this.pk, SK.event(event.eventId), { applied: { by: token, member } });
      applied = stored.applied as EventClaim['applied'];
    }
    if (applied && ownerOf(applied) === token) this.applyTo(event, applied.member);
  }

  private claim(event: AcceptedEvent, fields: Partial<EventClaim>): Promise<EventClaim> {
    return this.ports.installs.claimItem<EventClaim>({
      pk: this.pk,
      sk: SK.event(event.eventId),
      owner: this.context.token,
      event_name: event.name,
      ts_ms: event.tsMs,
      day: event.day,
      revenue_micros: event.revenueMicros,
      held: false,
      ...fields,
    });
  }

  /** The events report counts every accepted event at once, install or not. */
  private count(event: AcceptedEvent): void {
    this.deltas.add({ family: 'events', day: event.day, group: [event.name] }, { events: 1, revenue_micros: event.revenueMicros });
    this.flag(this.dayFlags, event.day, `n:${event.name}`);
  }

  /** Revenue by the install's partner, and retention of that install. */
  private applyTo(event: AcceptedEvent, member: MemberRef): void {
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
    if (event.revenueMicros > 0) {
      this.deltas.add(
        { family: 'revenue', day: event.day, group: [member.partner] },
        { purchases: 1, revenue_micros: event.revenueMicros },
      );
      this.flag(this.dayFlags, event.day, `p:${member.partner}`);
    }
    const offset = event.tsMs - member.ts_ms;
    for (const n of RETENTION_DAYS) {
      if (offset >= n * DAY_MS && offset < (n + 1) * DAY_MS) {
        const entry = this.retentionFlags.get(member.id) ?? { day: member.day, flags: new Set<string>() };
        entry.flags.add(`d${n}`);
        this.retentionFlags.set(member.id, entry);
      }
    }
  }

  private flag(map: Map<string, Set<string>>, key: string, attribute: string): void {
    const set = map.get(key) ?? new Set<string>();
    set.add(attribute);
    map.set(key, set);
  }

  /** One claim write per day and per retained install: each attribute won is one more distinct install. */
  private async settleFlags(): Promise<void> {
    const claims: Promise<void>[] = [];
    for (const [day, flags] of this.dayFlags) {
      claims.push(
        this.claimFlags(SK.day(day), flags).then((won) => {
          for (const flag of won) {
            const value = flag.slice(2);
            if (flag.startsWith('n:')) this.deltas.add({ family: 'events', day, group: [value] }, { unique_installs: 1 });
            else this.deltas.add({ family: 'revenue', day, group: [value] }, { payers: 1 });
          }
        }),
      );
    }
    for (const [memberId, { day, flags }] of this.retentionFlags) {
      claims.push(
        this.claimFlags(SK.retention(memberId), flags).then((won) => {
          for (const flag of won) this.deltas.add({ family: 'cohorts', day, group: [] }, { [flag]: 1 });
        }),
      );
    }
    await Promise.all(claims);
  }

  private async claimFlags(sk: string, flags: Set<string>): Promise<string[]> {
    const { token } = this.context;
    const stored = await this.ports.installs.claimAttributes(this.pk, sk, Object.fromEntries([...flags].map((flag) => [flag, token])));
    return [...flags].filter((flag) => ownerOf(stored[flag]) === token);
  }
}

function memberOf(head: InstallHead): MemberRef {
  return { id: head.member, ts_ms: head.ts_ms, day: head.day, partner: head.partner };
}

/** A held event as its claim remembers it: all that applying it later needs. */
function fromClaim(claim: EventClaim): AcceptedEvent {
  const eventId = claim.sk.slice(SK.eventPrefix.length);
  return {
    index: -1,
    eventId,
    name: claim.event_name,
    installUuid: '',
    tsMs: claim.ts_ms,
    day: claim.day,
    revenueMicros: claim.revenue_micros,
    clientIp: '',
    skewMs: 0,
  };
}
