import { installsOfLine } from '../audit/lines';
import type { AggregationMessage, AuditLine } from '../audit/types';
import { pool } from '../common/pool';
import type { PostbackIntent } from '../partner-postbacks/trigger';
import { type AcceptedEvent, acceptedEvents, type ContributionPorts, contributionsOf, UnreadableAuditError } from './contributions';
import { PAGED_FAMILIES } from './day-pages';
import { type AggregationLedger, type Journal, secondsUntilLeaseEnds, tokenOf } from './lease';
import { auditKeyOf, PoisonMessageError, type PoisonReason, parseMessage } from './message';
import { type Counters, type RowDelta, RowDeltas, type RowFamily, type RowStore, rowKeyOf } from './rows';
import { SWEEP_AT, sweep, sweepKey, type TokenSweeper } from './token-sweeper';

/**
 * The aggregator's use case: a batch of deliveries from the aggregation queue (one message per
 * audit object, docs/ingestion.md; message.ts reads it) becomes increments of the report rows, each accepted event
 * counted exactly once whatever the queue does. Per audit object:
 *
 *   1. lease: a ledger mark (lease.ts) that only one delivery at a time holds (a second, concurrent delivery
 *      of the same object is told to come back later; a finished object is acknowledged at once);
 *   2. claims and journal: the object's events are claimed in their installs' partitions and what
 *      it adds to each row is written to the lease mark before any row is touched, so a
 *      redelivery after a crash adds exactly the same amounts;
 *   3. rows: the journals of the whole batch are combined per row, one conditional write per row,
 *      which records the objects' tokens on the row and is refused if one is already there;
 *   4. pages: the day pages of the days written (day-pages.ts) are brought up to date with
 *      their rows, so no page is behind an object marked done;
 *   5. finish: the mark says done, and later writes sweep the tokens off the rows (token-sweeper.ts).
 *
 * A crash after any single write leaves either no journal (claims are found again, owned by this
 * object, and give the same journal) or a journal whose rows carry the token where they were
 * already added. Conditional single-item writes only: the local DynamoDB emulator has no
 * transactions, and none are needed.
 */

export interface AggregationPorts extends ContributionPorts {
  readonly ledger: AggregationLedger;
  readonly rows: RowStore;
  /** The audit object's lines; PoisonMessageError when it is missing or unreadable. */
  readAudit(message: AggregationMessage): Promise<readonly AuditLine[]>;
  app(appId: string): Promise<{ readonly probabilistic: boolean } | undefined>;
  /**
   * Makes and queues the partner postbacks the object's decisions owe (functions/domain/partner-postbacks),
   * before its journal is saved: a crash in between gives the same intents again on redelivery,
   * and each postback is made once whatever the number of tries.
   */
  postbacks?(appId: string, intents: readonly PostbackIntent[]): Promise<void>;
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
  /** Another delivery holds the object's lease: this one comes back once the lease has run out. */
  | { readonly id: string; readonly kind: 'busy'; readonly auditKey: string; readonly retryInSeconds: number }
  | { readonly id: string; readonly kind: 'poison'; readonly reason: PoisonReason; readonly auditKey?: string; readonly error: Error }
  | { readonly id: string; readonly kind: 'failed'; readonly step: string; readonly auditKey: string; readonly error: Error };

/** Outcomes that leave the message on the queue to come back. */
export const isRetried = (outcome: DeliveryOutcome): boolean =>
  outcome.kind === 'busy' || outcome.kind === 'poison' || outcome.kind === 'failed';

/** Rows written, and day pages refreshed, at the same time. */
const ROW_CONCURRENCY = 16;

export interface AggregateOptions {
  readonly nowMs: () => number;
  /** Longer than the function's timeout, so a lease outlives the delivery that took it. */
  readonly leaseMs: number;
  readonly sweeper: TokenSweeper;
}

interface Taken {
  readonly id: string;
  readonly token: string;
  readonly message: AggregationMessage;
  readonly journal: Journal;
  readonly events: number;
  failed?: { step: string; error: Error };
}

export async function aggregateDeliveries(
  ports: AggregationPorts,
  deliveries: readonly Delivery[],
  options: AggregateOptions,
): Promise<DeliveryOutcome[]> {
  const outcomes = new Map<string, DeliveryOutcome>();
  const taken: Taken[] = [];
  // The same object announced twice in one batch (a client retry) is processed once, and the
  // twin shares its outcome, rather than finding its own lease busy and waiting a visibility timeout.
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
  // Leases and audit reads go out together; the claims then run object after object, in the
  // batch's order, so two objects of one install in one batch are counted as sent.
  const leases = new Map<string, string>();
  const opened = await Promise.all(distinct.map((delivery) => open(ports, delivery, options, leases)));
  for (const result of opened) {
    const next = 'kind' in result ? result : await journal(ports, result);
    if ('kind' in next) outcomes.set(next.id, next);
    else taken.push(next);
  }

  await applyRows(ports, taken, options.sweeper);
  await refreshPages(ports, taken);

  await Promise.all(
    taken.map(async (object) => {
      if (!object.failed) {
        try {
          await ports.ledger.finish(object.token, options.nowMs());
          for (const id of Object.keys(object.journal)) options.sweeper.remember(sweepKey(object.message.app_id, id), [object.token]);
        } catch (error) {
          object.failed = { step: 'finish', error: error as Error };
        }
      }
      const { id, message, failed } = object;
      outcomes.set(
        id,
        failed
          ? { id, kind: 'failed', step: failed.step, auditKey: message.audit_key, error: failed.error }
          : {
              id,
              kind: 'counted',
              auditKey: message.audit_key,
              events: object.events,
              rows: Object.keys(object.journal).length,
              installs: installsByType(object.journal),
            },
      );
    }),
  );
  // A delivery that failed gives its lease back: its writes have all settled by now.
  await Promise.all(
    [...outcomes.values()]
      .filter((outcome) => outcome.kind === 'failed' || outcome.kind === 'poison')
      .flatMap((outcome) => leases.get(outcome.id) ?? [])
      .map((token) => ports.ledger.release(token).catch(() => undefined)),
  );
  for (const [id, first] of twins) {
    const outcome = outcomes.get(first) as DeliveryOutcome;
    outcomes.set(id, outcome.kind === 'counted' ? { id, kind: 'already_counted', auditKey: outcome.auditKey } : { ...outcome, id });
  }
  return deliveries.map((delivery) => outcomes.get(delivery.id) as DeliveryOutcome);
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

interface Opened {
  readonly id: string;
  readonly token: string;
  readonly message: AggregationMessage;
  readonly probabilistic: boolean;
  readonly lines: readonly AuditLine[];
}

/** Step 1 for one delivery: the lease, and the audit object unless a journal is already there. */
async function open(
  ports: AggregationPorts,
  delivery: Delivery,
  options: AggregateOptions,
  leases: Map<string, string>,
): Promise<Opened | Taken | DeliveryOutcome> {
  const { id } = delivery;
  let message: AggregationMessage;
  try {
    message = parseMessage(delivery.body);
  } catch (error) {
    const poison = error as PoisonMessageError;
    return { id, kind: 'poison', reason: poison.reason, error: poison };
  }
  const auditKey = message.audit_key;
  const token = tokenOf(auditKey);
  let step = 'lease';
  try {
    const lease = await ports.ledger.lease(token, options.nowMs(), options.leaseMs);
    if (lease.state === 'done') return { id, kind: 'already_counted', auditKey };
    if (lease.state === 'busy')
      return { id, kind: 'busy', auditKey, retryInSeconds: secondsUntilLeaseEnds(lease.leaseUntilMs, options.nowMs()) };
    leases.set(id, token);
    if (lease.journal) return { id, token, message, journal: lease.journal, events: message.accepted };
    step = 'read_audit';
    const app = await ports.app(message.app_id);
    if (!app) throw new PoisonMessageError('unknown_app', `app ${message.app_id} does not exist`);
    return { id, token, message, probabilistic: app.probabilistic, lines: await ports.readAudit(message) };
  } catch (error) {
    return failure(id, step, auditKey, error);
  }
}

/** Step 2: the claims, and the journal of what the object adds to each row. */
async function journal(ports: AggregationPorts, opened: Opened | Taken): Promise<Taken | DeliveryOutcome> {
  if ('journal' in opened) return opened;
  const { id, token, message } = opened;
  let step = 'read_audit';
  try {
    let events: AcceptedEvent[];
    try {
      events = acceptedEvents(opened.lines);
    } catch (error) {
      if (error instanceof UnreadableAuditError) throw new PoisonMessageError('unreadable_object', error.message);
      throw error;
    }
    step = 'claims';
    // A rejected line whose install_uuid is malformed but holds a UUID is that install's data too.
    const installUuids = [...new Set(opened.lines.flatMap(installsOfLine))];
    const intents: PostbackIntent[] = [];
    const deltas = await contributionsOf(ports, {
      appId: message.app_id,
      companyId: message.company_id,
      probabilistic: opened.probabilistic,
      token,
      auditKey: message.audit_key,
      installUuids,
      events,
      postbacks: intents,
    });
    if (ports.postbacks && intents.length > 0) {
      step = 'postbacks';
      await ports.postbacks(message.app_id, intents);
    }
    step = 'journal';
    const journal = await ports.ledger.saveJournal(token, deltas.toJournal());
    return { id, token, message, journal, events: events.length };
  } catch (error) {
    return failure(id, step, message.audit_key, error);
  }
}

function failure(id: string, step: string, auditKey: string, error: unknown): DeliveryOutcome {
  if (error instanceof PoisonMessageError) return { id, kind: 'poison', reason: error.reason, auditKey, error };
  return { id, kind: 'failed', step, auditKey, error: error as Error };
}

/** Step 3: the batch's journals combined, one write per row. */
async function applyRows(ports: AggregationPorts, taken: readonly Taken[], sweeper: TokenSweeper): Promise<void> {
  const rows = new Map<string, { appId: string; id: string; total: RowDeltas; parts: Map<Taken, Counters> }>();
  for (const object of taken) {
    for (const [id, add] of Object.entries(object.journal)) {
      const key = sweepKey(object.message.app_id, id);
      const row = rows.get(key) ?? { appId: object.message.app_id, id, total: new RowDeltas(), parts: new Map() };
      row.total.add(rowKeyOf(id), add);
      row.parts.set(object, add);
      rows.set(key, row);
    }
  }
  const writes = [...rows].map(([key, row]) => async () => {
    const parts = [...row.parts];
    const tokens = parts.map(([object]) => object.token);
    try {
      const delta = onlyDelta(row.total, row.id);
      const result = await ports.rows.add(row.appId, delta, tokens, sweeper.take(key, tokens));
      if (!result.applied) {
        // Some object of the batch reached this row before a crash: add the others one by one.
        for (const [object, add] of parts) {
          await ports.rows.add(row.appId, onlyDelta(RowDeltas.fromJournal({ [row.id]: add }), row.id), [object.token], []);
        }
        return;
      }
      const foreign = result.tokensOnRow.filter((token) => !tokens.includes(token));
      if (foreign.length >= SWEEP_AT) await sweep(ports, row.appId, delta, foreign);
    } catch (error) {
      for (const [object] of parts) object.failed ??= { step: 'rows', error: error as Error };
    }
  });
  await pool(writes, ROW_CONCURRENCY, (write) => write());
}

/** The one combined delta of a row: a journal never names a row it adds nothing to. */
function onlyDelta(deltas: RowDeltas, id: string): RowDelta {
  const [delta] = deltas;
  if (!delta) throw new Error(`the journal adds nothing to row ${id}`);
  return delta;
}

/**
 * Step 4: every paged day an object wrote is refreshed before the object is marked done. A refresh
 * that fails fails the objects that wrote to that day, so their redelivery refreshes it again.
 */
async function refreshPages(ports: AggregationPorts, taken: readonly Taken[]): Promise<void> {
  const days = new Map<string, { appId: string; family: RowFamily; day: string; objects: Set<Taken> }>();
  for (const object of taken) {
    for (const id of Object.keys(object.journal)) {
      const { family, day } = rowKeyOf(id);
      if (!PAGED_FAMILIES.has(family)) continue;
      const key = `${object.message.app_id}\u0000${family}\u0000${day}`;
      const entry = days.get(key) ?? { appId: object.message.app_id, family, day, objects: new Set<Taken>() };
      entry.objects.add(object);
      days.set(key, entry);
    }
  }
  await pool([...days.values()], ROW_CONCURRENCY, async ({ appId, family, day, objects }) => {
    try {
      await ports.rows.refreshPages(appId, family, [day]);
    } catch (error) {
      for (const object of objects) object.failed ??= { step: 'pages', error: error as Error };
    }
  });
}
