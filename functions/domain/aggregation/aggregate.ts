import { randomBytes } from 'node:crypto';
import { installsOfLine } from '../audit/lines';
import type { AggregationMessage, AuditLine } from '../audit/types';
import { UTC } from '../common/days';
import { pool } from '../common/pool';
import { capMeteredKey } from '../ingest/cap';
import type { PostbackIntent } from '../partner-postbacks/trigger';
import { type ConsentRecord, latestConsents } from '../privacy/consent';
import type { ProbabilisticBasis } from '../privacy/probabilistic-basis';
import { keepIncluded, STREAM_OPEN_SLACK_MS, type StreamLine, type StreamObjects, streamKey } from '../raw-data/stream-objects';
import {
  type AcceptedEvent,
  acceptedEvents,
  type ContributionPorts,
  contributionsOf,
  streamOrder,
  UnreadableAuditError,
} from './contributions';
import { applyJournals, LanePicker, type LanePorts, replay, takeLane, type UsageCounter } from './lanes';
import {
  type AggregationLedger,
  type Journal,
  LANES,
  type LaneState,
  type ObjectMark,
  type Stamp,
  secondsUntilLeaseEnds,
  tokenOf,
  type Usage,
} from './lease';
import { auditKeyOf, PoisonMessageError, type PoisonReason, parseMessage } from './message';
import { type RowStore, rowKeyOf } from './rows';

/**
 * The aggregator's use case: a batch of deliveries from the aggregation queue (one message per
 * audit object, docs/ingestion.md; message.ts reads it) becomes increments of the report rows, each
 * accepted event counted exactly once whatever the queue does:
 *
 *   1. marks: an object whose ledger mark (lease.ts) names a finished apply is acknowledged; one in
 *      an apply a live invocation holds comes back when that lease ends; one in an apply a dead
 *      invocation left open has that apply replayed now;
 *   2. claims: the other objects' events are claimed in their installs' partitions, object after
 *      object, which gives what each adds to each row (its journal); a redelivery after a crash
 *      finds its claims as its own and computes the same journal;
 *   3. apply: the invocation takes a lane and reserves its next apply for the objects, writes each
 *      object's mark (lane, number, journal: the first mark written stands, so a concurrent
 *      delivery of the same object adds nothing), then the journals combined, one write per row
 *      stamped with the lane's number (refused where the row already holds it), then the day pages
 *      of the days written (day-pages.ts), and records the apply finished.
 *
 * A crash after any single write leaves either no mark (the claims are found again and give the
 * same journal) or marks of an open apply, replayed by the next holder of its lane or by a
 * redelivery, which the rows refuse where it landed. What a row keeps for this is one number per
 * lane, so no row grows with the batches behind it. Conditional single-item writes only: the local
 * DynamoDB emulator has no transactions, and none are needed.
 */

/**
 * What the aggregator reads of an app: probabilistic matching and its basis (absent:
 * legitimate_interest), whether its MAX pull is on (absent: off), the IANA time zone of its report
 * days (UTC when absent) and its re-engagement window.
 */
export interface AppSwitches {
  readonly probabilistic: boolean;
  readonly probabilistic_basis?: ProbabilisticBasis;
  readonly max_pull?: boolean;
  readonly time_zone?: string;
  readonly reengagement_window_days?: number;
}

export interface AggregationPorts extends ContributionPorts {
  readonly ledger: AggregationLedger;
  readonly rows: RowStore;
  /** The monthly counts of companies without a cap; absent in a rebuild. */
  readonly usage?: UsageCounter;
  /** The event stream's objects, one per apply and app (docs/raw-data.md); absent in a rebuild. */
  readonly stream?: StreamObjects;
  /** The audit object's lines; PoisonMessageError when it is missing or unreadable. */
  readAudit(message: AggregationMessage): Promise<readonly AuditLine[]>;
  /** The app's switches (AppSwitches). */
  app(appId: string): Promise<AppSwitches | undefined>;
  /**
   * Makes and queues the partner postbacks the object's decisions owe (functions/domain/partner-postbacks),
   * before its journal is saved: a crash in between gives the same intents again on redelivery,
   * and each postback is made once whatever the number of tries.
   */
  postbacks?(appId: string, intents: readonly PostbackIntent[]): Promise<void>;
  /**
   * Keeps each install's latest consent the object carries (docs/privacy.md, "Consent"), before its
   * postbacks are made so that they read it; latest wins, so a redelivery changes nothing.
   */
  consents?(appId: string, latest: ReadonlyMap<string, ConsentRecord>): Promise<void>;
}

export interface Delivery {
  readonly id: string;
  readonly body: string;
}

export type DeliveryOutcome =
  | {
      readonly id: string;
      readonly kind: 'counted';
      readonly auditKey: string;
      readonly events: number;
      readonly rows: number;
      /** Installs the object added, by attribution type (the dashboard's "attribution by type"). */
      readonly installs: Readonly<Record<string, number>>;
    }
  | { readonly id: string; readonly kind: 'already_counted'; readonly auditKey: string }
  /** The object is in an apply another invocation holds: this delivery comes back once that lease has run out. */
  | { readonly id: string; readonly kind: 'busy'; readonly auditKey: string; readonly retryInSeconds: number }
  | { readonly id: string; readonly kind: 'poison'; readonly reason: PoisonReason; readonly auditKey?: string; readonly error: Error }
  | { readonly id: string; readonly kind: 'failed'; readonly step: string; readonly auditKey: string; readonly error: Error };

/** Outcomes that leave the message on the queue to come back. */
export const isRetried = (outcome: DeliveryOutcome): boolean =>
  outcome.kind === 'busy' || outcome.kind === 'poison' || outcome.kind === 'failed';

export interface AggregateOptions {
  readonly nowMs: () => number;
  /** Longer than the function's timeout, so a lane's lease outlives the invocation that took it. */
  readonly leaseMs: number;
  /** The lanes this execution environment tries (lanes.ts); a fresh picker starts at lane 0. */
  readonly lanes?: LanePicker;
  /** This invocation, as the lanes it takes name it; random unless given. */
  readonly holder?: string;
}

/** How long a delivery stays away when every lane it tried was taken: a moment. */
const NO_LANE_RETRY_SECONDS = 2;

interface Parsed {
  readonly id: string;
  readonly token: string;
  readonly message: AggregationMessage;
}

interface Taken extends Parsed {
  readonly journal: Journal;
  readonly events: number;
  /** The object's events for its company's monthly count, when ingestion left them to the aggregator. */
  readonly usage?: Usage;
  /** The object's lines of the event stream, in its order (when the stream is written). */
  readonly stream: readonly StreamLine[];
}

export async function aggregateDeliveries(
  ports: AggregationPorts,
  deliveries: readonly Delivery[],
  options: AggregateOptions,
): Promise<DeliveryOutcome[]> {
  const outcomes = new Map<string, DeliveryOutcome>();
  const holder = options.holder ?? randomBytes(8).toString('hex');
  const lanes = options.lanes ?? new LanePicker();
  // The same object announced twice in one batch (a client retry) is processed once, and the
  // twin shares its outcome.
  const firstOf = new Map<string, string>();
  const twins = new Map<string, string>();
  const distinct = deliveries.filter((delivery) => {
    const key = auditKeyOf(delivery.body);
    if (key === undefined) return true;
    const first = firstOf.get(key);
    if (first === undefined) firstOf.set(key, delivery.id);
    else twins.set(delivery.id, first);
    return first === undefined;
  });
  const parsed: Parsed[] = [];
  for (const { id, body } of distinct) {
    try {
      const message = parseMessage(body);
      parsed.push({ id, token: tokenOf(message.audit_key), message });
    } catch (error) {
      const poison = error as PoisonMessageError;
      outcomes.set(id, { id, kind: 'poison', reason: poison.reason, error: poison });
    }
  }

  // Step 1: objects already in an apply are counted, or being counted, or left by a dead invocation.
  const fresh = await alreadyApplied(ports, parsed, outcomes, { ...options, holder });
  // Step 2: the audit objects read together, then the claims, each object after the earlier
  // objects of the batch that share an install or a device with it, so two objects of one install
  // in one batch are counted as sent; objects of other installs side by side.
  const opened = await Promise.all(fresh.map((object) => open(ports, object)));
  const journals = await inBatchOrder(opened, (result) => ('kind' in result ? Promise.resolve(result) : journal(ports, result)));
  const taken: Taken[] = [];
  for (const next of journals) {
    if ('kind' in next) outcomes.set(next.id, next);
    else taken.push(next);
  }
  // Step 3: the objects that add something, included in one apply on a lane, and their rows.
  await apply(ports, taken, outcomes, { ...options, holder, lanes });

  for (const [id, first] of twins) {
    const outcome = outcomes.get(first) as DeliveryOutcome;
    outcomes.set(id, outcome.kind === 'counted' ? { id, kind: 'already_counted', auditKey: outcome.auditKey } : { ...outcome, id });
  }
  return deliveries.map((delivery) => outcomes.get(delivery.id) as DeliveryOutcome);
}

/**
 * Step 1. An object whose mark names an apply that has finished is acknowledged; one whose apply
 * is still open on a live invocation's lane comes back when that lease ends; one whose apply a dead
 * invocation left open has that apply replayed here, all its objects with it. Returns the objects
 * no apply holds yet (a legacy mark left running with a journal is finished the legacy way here).
 */
async function alreadyApplied(
  ports: AggregationPorts,
  objects: readonly Parsed[],
  outcomes: Map<string, DeliveryOutcome>,
  options: AggregateOptions & { readonly holder: string },
): Promise<Parsed[]> {
  if (objects.length === 0) return [];
  const nowMs = options.nowMs();
  const fail = (object: Parsed, step: string, error: unknown) =>
    outcomes.set(object.id, { id: object.id, kind: 'failed', step, auditKey: object.message.audit_key, error: error as Error });
  let marks: Map<string, ObjectMark>;
  try {
    marks = await ports.ledger.marks(objects.map((object) => object.token));
  } catch (error) {
    for (const object of objects) fail(object, 'ledger', error);
    return [];
  }
  const fresh: Parsed[] = [];
  const byLane = new Map<number, { object: Parsed; seq: number; journal: Journal }[]>();
  for (const object of objects) {
    const { id } = object;
    const auditKey = object.message.audit_key;
    const mark = marks.get(object.token);
    if (mark === undefined || mark.kind === 'void') fresh.push(object);
    else if (mark.kind === 'included')
      byLane.set(mark.stamp.lane, [...(byLane.get(mark.stamp.lane) ?? []), { object, seq: mark.stamp.seq, journal: mark.journal }]);
    else if (mark.done) outcomes.set(id, { id, kind: 'already_counted', auditKey });
    else if (mark.leaseUntilMs >= nowMs)
      outcomes.set(id, { id, kind: 'busy', auditKey, retryInSeconds: secondsUntilLeaseEnds(mark.leaseUntilMs, nowMs) });
    else if (mark.journal) await finishLegacy(ports, object, mark.journal, outcomes, nowMs);
    else fresh.push(object);
  }
  if (byLane.size === 0) return fresh;
  let states: Map<number, LaneState>;
  try {
    states = await ports.ledger.lanes([...byLane.keys()]);
  } catch (error) {
    for (const members of byLane.values()) for (const { object } of members) fail(object, 'ledger', error);
    return fresh;
  }
  for (const [lane, members] of byLane) {
    const state = states.get(lane);
    const open = members.filter(({ seq }) => state === undefined || seq > state.applied);
    for (const { object } of members.filter((member) => !open.includes(member)))
      outcomes.set(object.id, { id: object.id, kind: 'already_counted', auditKey: object.message.audit_key });
    if (open.length === 0) continue;
    const settled = await settleLane(ports, lane, options);
    for (const { object, journal } of open) {
      const { id } = object;
      const auditKey = object.message.audit_key;
      // This delivery finished counting the object: its rows were written by the replay.
      if (settled === true) outcomes.set(id, counted(object, journal, object.message.accepted));
      else if (settled instanceof Error) fail(object, 'replay', settled);
      else outcomes.set(id, { id, kind: 'busy', auditKey, retryInSeconds: secondsUntilLeaseEnds(settled.leaseUntilMs, nowMs) });
    }
  }
  return fresh;
}

/** What one pass over the lanes did: the lanes it settled, and those it could not, with the error. */
export interface LaneSweep {
  readonly settled: readonly number[];
  readonly failed: readonly { readonly lane: number; readonly error: Error }[];
}

/**
 * Takes over every lane whose open apply no live invocation holds (its lease has run out, or its
 * holder gave it back) and replays it, as the lane's next holder would (issue 35, item 4). Without
 * it, an apply whose invocation died before its first mark stays open until some invocation
 * happens to take that lane (its objects come back and are counted on others), and holds the
 * stream of its apps at its opening time (functions/domain/raw-data/watermark.ts) as long. The
 * lane sweep (functions/lane-sweep.ts) runs it every minute, which bounds that to the lease plus a
 * minute. A lane a live invocation took meanwhile is left to it.
 */
export async function settleStaleLanes(
  ports: LanePorts,
  options: Pick<AggregateOptions, 'nowMs' | 'leaseMs' | 'holder'>,
): Promise<LaneSweep> {
  const holder = options.holder ?? randomBytes(8).toString('hex');
  const states = await ports.ledger.lanes(Array.from({ length: LANES }, (_, lane) => lane));
  const nowMs = options.nowMs();
  const stale = [...states.values()].filter((state) => state.seq > state.applied && state.leaseUntilMs < nowMs);
  const settled: number[] = [];
  const failed: { lane: number; error: Error }[] = [];
  for (const { lane } of stale) {
    const outcome = await settleLane(ports, lane, { ...options, holder });
    if (outcome === true) settled.push(lane);
    else if (outcome instanceof Error) failed.push({ lane, error: outcome });
  }
  return { settled, failed };
}

/** Takes another invocation's lane to finish what it left open: true when done, the lease that holds it otherwise. */
async function settleLane(
  ports: LanePorts,
  lane: number,
  options: Pick<AggregateOptions, 'nowMs' | 'leaseMs'> & { readonly holder: string },
): Promise<true | { leaseUntilMs: number } | Error> {
  const { holder } = options;
  const nowMs = options.nowMs();
  try {
    const taken = await ports.ledger.take(lane, holder, [], nowMs, options.leaseMs);
    if (taken.state === 'held') return { leaseUntilMs: taken.leaseUntilMs };
    // Reserved: nothing was open any more (another invocation finished it meanwhile); close the empty apply.
    const seq = taken.state === 'reserved' ? taken.seq : taken.lane.seq;
    if (taken.state === 'open') await replay(ports, taken.lane, nowMs);
    await ports.ledger.settle(lane, holder, seq);
    return true;
  } catch (error) {
    await ports.ledger.release(lane, holder).catch(() => undefined);
    return error as Error;
  }
}

/** A mark of the protocol before lanes, left running with a journal: its rows carry its token where they were added. */
async function finishLegacy(
  ports: AggregationPorts,
  object: Parsed,
  journal: Journal,
  outcomes: Map<string, DeliveryOutcome>,
  nowMs: number,
): Promise<void> {
  const { id, message } = object;
  const entry = { appId: message.app_id, journal };
  const [failure] = (await applyJournals(ports, [entry], { legacyToken: object.token })).values();
  try {
    if (failure) throw failure;
    await ports.ledger.finishLegacy(object.token, nowMs);
    outcomes.set(id, counted(object, journal, message.accepted));
  } catch (error) {
    outcomes.set(id, { id, kind: 'failed', step: 'rows', auditKey: message.audit_key, error: error as Error });
  }
}

/**
 * Step 3. The objects with something to add are listed on a lane's next apply, each gets its mark
 * (lane, number, journal: the first mark written stands), and the journals of those whose mark is
 * this apply's are written to the rows, combined. An apply that did not finish whole is left open
 * on the lane, for its objects' redeliveries or the lane's next holder to replay.
 */
async function apply(
  ports: AggregationPorts,
  taken: readonly Taken[],
  outcomes: Map<string, DeliveryOutcome>,
  options: AggregateOptions & { readonly holder: string; readonly lanes: LanePicker },
): Promise<void> {
  const fail = (object: Taken, step: string, error: unknown) =>
    outcomes.set(object.id, { id: object.id, kind: 'failed', step, auditKey: object.message.audit_key, error: error as Error });
  const adding = taken.filter((object) => Object.keys(object.journal).length > 0 || object.usage !== undefined);
  // An object that adds nothing (every event a duplicate, or no accepted line, and nothing to
  // meter) needs no mark: a redelivery finds its claims owned as before and adds nothing again.
  for (const object of taken) if (!adding.includes(object)) outcomes.set(object.id, counted(object, object.journal, object.events));
  if (adding.length === 0) return;
  const { holder } = options;
  const nowMs = options.nowMs();
  // The apply's stream objects, one per app: written before any mark, so a replay finds them.
  const streams = new Map<string, StreamLine[]>();
  for (const object of adding) {
    if (object.stream.length === 0) continue;
    const lines = streams.get(object.message.app_id) ?? [];
    lines.push(...object.stream);
    streams.set(object.message.app_id, lines);
  }
  let stamp: Stamp | undefined;
  try {
    stamp = await takeLane(
      ports,
      options.lanes,
      holder,
      adding.map((object) => object.token),
      options.nowMs,
      options.leaseMs,
      [...streams.keys()],
    );
  } catch (error) {
    for (const object of adding) fail(object, 'lane', error);
    return;
  }
  // A lane taken too slowly for the stream's readers (their watermark may have passed the
  // apply's opening time before they could see it open): the apply is closed empty and its
  // objects come back in a moment for another.
  if (stamp && streams.size > 0 && options.nowMs() - (stamp.openedMs ?? 0) > STREAM_OPEN_SLACK_MS) {
    const slow = stamp;
    await ports.ledger.settle(slow.lane, holder, slow.seq).catch(() => ports.ledger.release(slow.lane, holder).catch(() => undefined));
    stamp = undefined;
  }
  if (!stamp) {
    for (const { id, message } of adding)
      outcomes.set(id, { id, kind: 'busy', auditKey: message.audit_key, retryInSeconds: NO_LANE_RETRY_SECONDS });
    return;
  }
  const lane = stamp;
  const streamOf = (appId: string) => streamKey(appId, { openedMs: lane.openedMs ?? nowMs, lane: lane.lane, seq: lane.seq });
  const { stream } = ports;
  if (stream && streams.size > 0) {
    try {
      await Promise.all([...streams].map(([appId, lines]) => stream.put(streamOf(appId), lines)));
    } catch (error) {
      // No mark written: the lane's next holder voids the objects and removes what was written.
      for (const object of adding) fail(object, 'stream', error);
      await ports.ledger.release(lane.lane, holder).catch(() => undefined);
      return;
    }
  }
  let whole = true;
  const included: Taken[] = [];
  const elsewhere: { object: Taken; mark: Extract<ObjectMark, { kind: 'included' }> }[] = [];
  await Promise.all(
    adding.map(async (object) => {
      try {
        const mark = await ports.ledger.include(
          object.token,
          { kind: 'included', stamp: lane, appId: object.message.app_id, journal: object.journal, usage: object.usage },
          nowMs,
        );
        if (mark.kind === 'included' && mark.stamp.lane === lane.lane && mark.stamp.seq === lane.seq) included.push(object);
        else if (mark.kind === 'included') elsewhere.push({ object, mark });
        else throw new Error(`the object's mark could not be written: ${mark.kind}`);
      } catch (error) {
        // Whether the mark was written is not known: the apply stays open, for a replay to decide.
        whole = false;
        fail(object, 'mark', error);
      }
    }),
  );
  // A mark whose answer was lost may have landed: then the apply includes an object this invocation
  // does not know of, and a replay writes the rows of every object marked with its stamp. Rows
  // written here under that stamp would refuse the replay's write, and the lost object's share of
  // them with it (issue 35, item 1). So no row is written: the apply is left open, the lane given
  // back, and the objects marked come back in a moment to replay it whole.
  if (!whole) {
    await ports.ledger.release(lane.lane, holder).catch(() => undefined);
    for (const { id, message } of included)
      outcomes.set(id, { id, kind: 'busy', auditKey: message.audit_key, retryInSeconds: NO_LANE_RETRY_SECONDS });
    if (elsewhere.length > 0) await concurrentOutcomes(ports, elsewhere, outcomes, nowMs);
    return;
  }
  // Objects another delivery included first are in that apply's stream objects, not in these.
  if (stream && elsewhere.some(({ object }) => object.stream.length > 0)) {
    const tokens = new Set(included.map((object) => object.token));
    const apps = new Set(elsewhere.map(({ object }) => object.message.app_id));
    try {
      await Promise.all([...apps].filter((appId) => streams.has(appId)).map((appId) => keepIncluded(stream, streamOf(appId), tokens)));
    } catch (error) {
      whole = false;
      for (const object of included) fail(object, 'stream', error);
    }
  }
  const failures = await applyJournals(
    ports,
    included.map((object) => ({ appId: object.message.app_id, journal: object.journal, usage: object.usage, object })),
    lane,
  );
  for (const object of included) {
    const failure = [...failures].find(([entry]) => (entry as { object?: Taken }).object === object)?.[1];
    if (failure) {
      whole = false;
      fail(object, 'rows', failure);
    } else if (!outcomes.has(object.id)) outcomes.set(object.id, counted(object, object.journal, object.events));
  }
  // Finished: the lane records it and is free. An apply not finished whole stays open for a replay
  // (the lane given back); so does one whose settle fails, and its objects come back to replay it,
  // which the rows refuse where it landed.
  if (whole) {
    try {
      await ports.ledger.settle(lane.lane, holder, lane.seq);
    } catch (error) {
      for (const object of included) fail(object, 'settle', error);
      await ports.ledger.release(lane.lane, holder).catch(() => undefined);
    }
  } else await ports.ledger.release(lane.lane, holder).catch(() => undefined);
  // Another delivery of the same object included it in its own apply (a concurrent delivery).
  if (elsewhere.length > 0) await concurrentOutcomes(ports, elsewhere, outcomes, nowMs);
}

/**
 * Objects another delivery included first (the same message delivered twice at once): sent back
 * until that delivery's lane is free, then acknowledged as counted (or its apply replayed) by step 1.
 */
async function concurrentOutcomes(
  ports: AggregationPorts,
  elsewhere: readonly { object: Taken; mark: Extract<ObjectMark, { kind: 'included' }> }[],
  outcomes: Map<string, DeliveryOutcome>,
  nowMs: number,
): Promise<void> {
  const lanes = [...new Set(elsewhere.map(({ mark }) => mark.stamp.lane))];
  const states = await ports.ledger.lanes(lanes).catch(() => new Map<number, LaneState>());
  for (const { object, mark } of elsewhere) {
    const leaseUntilMs = states.get(mark.stamp.lane)?.leaseUntilMs ?? nowMs;
    outcomes.set(object.id, {
      id: object.id,
      kind: 'busy',
      auditKey: object.message.audit_key,
      retryInSeconds: secondsUntilLeaseEnds(leaseUntilMs, nowMs),
    });
  }
}

function counted(object: Parsed, journal: Journal, events: number): DeliveryOutcome {
  return {
    id: object.id,
    kind: 'counted',
    auditKey: object.message.audit_key,
    events,
    rows: Object.keys(journal).length,
    installs: installsByType(journal),
  };
}

function installsByType(journal: Journal): Record<string, number> {
  const installs: Record<string, number> = {};
  for (const [id, add] of Object.entries(journal)) {
    const row = rowKeyOf(id);
    const [, type] = row.group;
    if (row.family === 'attribution' && type !== undefined && add.installs) installs[type] = (installs[type] ?? 0) + add.installs;
  }
  return installs;
}

/** Objects claimed at once in an invocation, when their installs and devices differ. */
const OBJECT_CONCURRENCY = 8;

/**
 * Runs `work` on every object, at most OBJECT_CONCURRENCY at once, each only once the earlier
 * objects of the batch that have lines of one of its installs, or an install event of one of its
 * devices (a reinstall under another uuid is found by the device), are done. Results in order.
 */
async function inBatchOrder<R>(
  objects: readonly (Opened | DeliveryOutcome)[],
  work: (object: Opened | DeliveryOutcome) => Promise<R>,
): Promise<R[]> {
  const results: R[] = [];
  const last = new Map<string, Promise<unknown>>();
  const pending: { run: () => Promise<void>; resolve: () => void }[] = [];
  const started = objects.map((object, index) => {
    const keys = 'lines' in object ? orderKeys(object.lines) : [];
    const before = keys.flatMap((key) => last.get(key) ?? []);
    const done = new Promise<void>((resolve) => {
      const run = async () => {
        await Promise.all(before);
        results[index] = await work(object);
      };
      pending.push({ run, resolve });
    });
    for (const key of keys) last.set(key, done);
    return done;
  });
  // Taken in order by a few workers: an object waits only for earlier ones, which were taken before it.
  await pool(pending, OBJECT_CONCURRENCY, async ({ run, resolve }) => {
    try {
      await run();
    } finally {
      resolve();
    }
  });
  await Promise.all(started);
  return results;
}

/** What orders an object after another of the batch: its installs, and the devices its install events name. */
function orderKeys(lines: readonly AuditLine[]): string[] {
  const keys = new Set<string>();
  for (const line of lines) {
    for (const installUuid of installsOfLine(line)) keys.add(`i:${installUuid}`);
    if (line.device_hash !== undefined) keys.add(`d:${line.device_hash}`);
  }
  return [...keys];
}

interface Opened extends Parsed {
  readonly probabilistic: boolean;
  readonly probabilisticBasis?: ProbabilisticBasis;
  readonly maxPull?: boolean;
  readonly timeZone: string;
  readonly reengagementWindowDays?: number;
  readonly lines: readonly AuditLine[];
}

/** The app and the audit object of one delivery. */
async function open(ports: AggregationPorts, object: Parsed): Promise<Opened | DeliveryOutcome> {
  const { id, message } = object;
  try {
    const app = await ports.app(message.app_id);
    if (!app) throw new PoisonMessageError('unknown_app', `app ${message.app_id} does not exist`);
    return {
      ...object,
      probabilistic: app.probabilistic,
      ...(app.probabilistic_basis === undefined ? {} : { probabilisticBasis: app.probabilistic_basis }),
      ...(app.max_pull ? { maxPull: true } : {}),
      timeZone: app.time_zone ?? UTC,
      ...(app.reengagement_window_days === undefined ? {} : { reengagementWindowDays: app.reengagement_window_days }),
      lines: await ports.readAudit(message),
    };
  } catch (error) {
    return failure(id, 'read_audit', message.audit_key, error);
  }
}

/** Step 2: the claims, and the journal of what the object adds to each row. */
async function journal(ports: AggregationPorts, opened: Opened): Promise<Taken | DeliveryOutcome> {
  const { id, token, message } = opened;
  let step = 'read_audit';
  try {
    let events: AcceptedEvent[];
    try {
      events = acceptedEvents(opened.lines, opened.timeZone);
    } catch (error) {
      if (error instanceof UnreadableAuditError) throw new PoisonMessageError('unreadable_object', error.message);
      throw error;
    }
    step = 'claims';
    // A rejected line whose install_uuid is malformed but holds a UUID is that install's data too.
    const installUuids = [...new Set(opened.lines.flatMap(installsOfLine))];
    const intents: PostbackIntent[] = [];
    const stream: StreamLine[] | undefined = ports.stream ? [] : undefined;
    const consents = latestConsents(opened.lines);
    const deltas = await contributionsOf(ports, {
      appId: message.app_id,
      companyId: message.company_id,
      probabilistic: opened.probabilistic,
      ...(opened.probabilisticBasis === undefined ? {} : { probabilisticBasis: opened.probabilisticBasis }),
      ...(opened.maxPull ? { maxPull: true } : {}),
      timeZone: opened.timeZone,
      ...(opened.reengagementWindowDays === undefined ? {} : { reengagementWindowDays: opened.reengagementWindowDays }),
      token,
      auditKey: message.audit_key,
      installUuids,
      events,
      postbacks: intents,
      consents,
      ...(stream ? { stream } : {}),
    });
    if (ports.consents && consents.size > 0) {
      step = 'consents';
      await ports.consents(message.app_id, consents);
    }
    if (ports.postbacks && intents.length > 0) {
      step = 'postbacks';
      await ports.postbacks(message.app_id, intents);
    }
    const usage =
      message.meter && message.accepted > 0
        ? { key: capMeteredKey(message.company_id, message.received_ms), events: message.accepted }
        : undefined;
    return {
      id,
      token,
      message,
      journal: deltas.toJournal(),
      events: events.length,
      ...(usage ? { usage } : {}),
      stream: streamOrder(stream ?? []),
    };
  } catch (error) {
    return failure(id, step, message.audit_key, error);
  }
}

function failure(id: string, step: string, auditKey: string, error: unknown): DeliveryOutcome {
  if (error instanceof PoisonMessageError) return { id, kind: 'poison', reason: error.reason, auditKey, error };
  return { id, kind: 'failed', step, auditKey, error: error as Error };
}
