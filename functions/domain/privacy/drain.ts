import { type AdServicesAnswers, answersWithout } from '../adservices/answers';
import { tokensOf } from '../adservices/token';
import { type AuditReference, type EventClaim, type ObjectClaims, SK } from '../aggregation/install-state';
import type { FirstLaunchRecord } from '../attribution/first-launch';
import { AuditObjectError } from '../audit/decode';
import { lineOfInstall } from '../audit/lines';
import type { AuditErasure, AuditObjects } from '../audit/ports';
import type { AuditLine } from '../audit/types';
import { hourOf } from '../raw-data/export-layout';
import { installKey, type PrivacyMessage } from './privacy';
import { emptyRawDataCounts, eraseRawData, type RawDataCounts, type RawDataPorts } from './raw-data';

/**
 * The nightly privacy drain (docs/privacy.md): requests from the privacy queue, at most 25 a
 * batch, batch after batch until the queue has nothing new or the time budget is spent. Each
 * request removes everything keyed to the install, at most 1,000 rows per table per run:
 *
 *   - the install's partition in `installs` (install record, decisions, event identities, held
 *     events, flags), read 1,000 items at a time in key order;
 *   - the clicks its installs matched (named by the decisions in its install events' `e#` items);
 *   - its audit lines: each object its claim log (`c#`, or legacy `a#`) names is deleted when it holds nothing else, or
 *     rewritten without the install's lines, and (in AWS, the bucket being versioned) loses its
 *     older versions too. A line is the install's when its install_uuid is, or, malformed, holds
 *     the install's UUID (" <uuid>", "{<UUID>}"): such a line keeps the client IP and device hash
 *     of the install all the same (the aggregator indexes its object under that UUID). Apple's
 *     answers to the install's AdServices tokens go with them: the object's answers object
 *     (`<audit key>.adservices.json`, docs/ios.md section 4) is put again without them, or deleted
 *     with the audit object, before it;
 *   - its partner postbacks and their delivery attempts, found by the `by_install` index of the
 *     postbacks table: they hold the partner's click id and sub values, and a postback id derived
 *     from the install_uuid;
 *   - its raw data (raw-data.ts): its lines in the event stream's objects, erased in place, and its
 *     rows in the export's Parquet files (events, installs, the clicks it matched), each file
 *     written again without them. A stream object not final yet keeps the claims that lead to it
 *     for the next run.
 *
 * References are followed before the items that hold them are deleted, so a request stopped by the
 * limit loses nothing: it is sent again and the next run goes on where this one stopped.
 * Aggregates stay: they are anonymous counts.
 */

export const MAX_REQUESTS_PER_BATCH = 25;
export const MAX_ROWS_PER_TABLE = 1000;

export interface QueuedRequest {
  readonly message: PrivacyMessage;
  /** The queue's handle for the delivery. */
  readonly handle: string;
}

export interface DeletionCounts extends RawDataCounts {
  install_items: number;
  clicks: number;
  audit_objects_deleted: number;
  audit_objects_rewritten: number;
  audit_lines: number;
  /** Apple's answers to the install's AdServices tokens, taken out of answers objects. */
  adservices_answers: number;
  /** Postback records and delivery attempts. */
  postbacks: number;
}

/** The privacy queue (functions/adapters/privacy-queue.ts). */
export interface PrivacyRequestQueue {
  /** Up to `max` requests off the queue (several receives if need be); [] when it has none. */
  receive(max: number): Promise<QueuedRequest[]>;
  /** The request is finished: off the queue. */
  remove(request: QueuedRequest): Promise<void>;
  /** Rows are left: the request goes back on the queue, for the next run. */
  carry(request: QueuedRequest): Promise<void>;
  /** A request this run has already handled came round again: it is left for the next run. */
  release(request: QueuedRequest): Promise<void>;
}

/** An install's partition of the installs table (functions/adapters/install-store.ts). */
export interface InstallPartition {
  /** The first `limit` items of the partition, in key order, and whether more are left. */
  firstItems(pk: string, limit: number): Promise<{ items: Record<string, unknown>[]; more: boolean }>;
  deleteItems(pk: string, sortKeys: readonly string[]): Promise<void>;
}

/** The click log, and the old clicks table (functions/adapters/click-store.ts). */
export interface ClickEraser {
  /** How many of these clicks of the app were deleted. */
  deleteMany(appId: string, clickIds: readonly string[]): Promise<number>;
}

/** An install's partner postbacks and attempts (functions/adapters/postback-store.ts). */
export interface InstallPostbacks {
  /** Up to `limit` of the install's postback items (records and attempts), by `<app_id>#<install_hash>`. */
  ofInstall(installKey: string, limit: number): Promise<{ keys: PostbackItemKey[]; more: boolean }>;
  deleteItems(keys: readonly PostbackItemKey[]): Promise<void>;
}

/** The receipts of privacy_requests (functions/adapters/privacy-store.ts). */
export interface DrainReceipts {
  /** The drain's progress on a receipt, its counts added to what earlier runs deleted. */
  record(requestId: string, update: { state: 'in_progress' | 'done'; counts: DeletionCounts; nowMs: number }): Promise<void>;
}

export interface DrainPorts {
  readonly queue: PrivacyRequestQueue;
  readonly installs: InstallPartition;
  readonly clicks: ClickEraser;
  readonly postbacks: InstallPostbacks;
  /** Audit objects as stored: a missing one (AuditObjectError, missing_object) has nothing left to erase. */
  readonly auditObjects: Pick<AuditObjects, 'lines'>;
  readonly auditErasure: AuditErasure;
  readonly adServicesAnswers: AnswersErasure;
  /** The event stream's objects and the export files (docs/raw-data.md). */
  readonly rawData: RawDataPorts;
  readonly receipts: DrainReceipts;
  nowMs(): number;
  /** Waits a moment (a stream object of the install about to become final). */
  pause(ms: number): Promise<void>;
  /** Milliseconds before the function must stop. */
  timeLeftMs(): number;
}

/** Apple's answers beside audit objects (functions/adapters/adservices-answers.ts, docs/ios.md section 4). */
export interface AnswersErasure {
  get(auditKey: string): Promise<AdServicesAnswers | undefined>;
  /** Put again with these answers only, and its older versions gone. */
  rewrite(auditKey: string, answers: AdServicesAnswers): Promise<void>;
  /** Gone, older versions too. */
  delete(auditKey: string): Promise<void>;
}

/** A postback record's or delivery attempt's key in the postbacks table. */
export interface PostbackItemKey {
  readonly pk: string;
  readonly sk: string;
}

export interface DrainReport {
  /** Requests taken in each batch. */
  batches: number[];
  done: string[];
  carried: string[];
  /** Requests that failed, with their app: the run went on with the others (each comes back after the visibility timeout). */
  failed: { request_id: string; app_id: string; error: string }[];
  stopped: 'queue_empty' | 'time_budget';
}

/** What the run keeps in hand when it decides whether to take another batch. */
export const BATCH_TIME_RESERVE_MS = 120_000;

export async function drainPrivacyRequests(ports: DrainPorts): Promise<DrainReport> {
  const report: DrainReport = { batches: [], done: [], carried: [], failed: [], stopped: 'queue_empty' };
  const seen = new Set<string>();
  for (;;) {
    if (ports.timeLeftMs() < BATCH_TIME_RESERVE_MS) {
      report.stopped = 'time_budget';
      return report;
    }
    const batch = await ports.queue.receive(MAX_REQUESTS_PER_BATCH);
    const fresh = batch.filter((request) => !seen.has(request.message.request_id));
    await Promise.all(batch.filter((request) => !fresh.includes(request)).map((request) => ports.queue.release(request)));
    // Nothing new: the queue holds only what this run sent back (or nothing at all).
    if (fresh.length === 0) return report;
    report.batches.push(fresh.length);
    for (const request of fresh) {
      seen.add(request.message.request_id);
      try {
        const outcome = await eraseInstall(ports, request.message);
        if (outcome === 'done') {
          await ports.queue.remove(request);
          report.done.push(request.message.request_id);
        } else {
          await ports.queue.carry(request);
          report.carried.push(request.message.request_id);
        }
      } catch (error) {
        // Left on the queue: it comes back after the visibility timeout (and to the DLQ if it never works).
        report.failed.push({ request_id: request.message.request_id, app_id: request.message.app_id, error: (error as Error).message });
      }
    }
  }
}

/** One run's worth of one request: at most MAX_ROWS_PER_TABLE rows of each table. */
export async function eraseInstall(ports: DrainPorts, message: PrivacyMessage): Promise<'done' | 'more'> {
  const counts: DeletionCounts = {
    install_items: 0,
    clicks: 0,
    audit_objects_deleted: 0,
    audit_objects_rewritten: 0,
    audit_lines: 0,
    adservices_answers: 0,
    postbacks: 0,
    ...emptyRawDataCounts(),
  };
  await ports.receipts.record(message.request_id, { state: 'in_progress', counts, nowMs: ports.nowMs() });
  const pk = `${message.app_id}#${message.install_uuid}`;
  const { items, more } = await ports.installs.firstItems(pk, MAX_ROWS_PER_TABLE);

  // Each object holding lines of the install has an item in its claim log (`c#`), or in a partition
  // written before the log, an `a#` reference. Those whose claim took event ids (legacy references:
  // not known) have the install's counted events, so lines in the stream and rows in export files.
  const references = items.filter((item) => String(item.sk).startsWith(SK.claimsPrefix) || String(item.sk).startsWith(SK.auditPrefix));
  const auditKeys = [...new Set(references.map((item) => (item as unknown as ObjectClaims | AuditReference).audit_key))];
  const counted = new Set(
    references
      .filter((item) => String(item.sk).startsWith(SK.auditPrefix) || ((item as unknown as ObjectClaims).ids?.length ?? 0) > 0)
      .map((item) => (item as unknown as ObjectClaims | AuditReference).audit_key),
  );
  /** Receive hours of the install's accepted lines: where the export put its events and installs. */
  const hours = new Set<string>();
  const hoursUnknown: string[] = [];
  for (const key of auditKeys) {
    const lines = await linesOrGone(ports.auditObjects, key);
    const ofInstall = (lines ?? []).filter((line) => lineOfInstall(line, message.install_uuid));
    const accepted = ofInstall.filter((line) => line.status === 'accepted');
    for (const line of accepted) hours.add(hourOf(line.received_ms));
    // An earlier run rewrote it (or it is gone): its receive day says when its events were received.
    if (accepted.length === 0 && counted.has(key)) hoursUnknown.push(key);
    if (!lines || ofInstall.length === 0) continue;
    const kept = lines.filter((line) => !lineOfInstall(line, message.install_uuid));
    counts.audit_lines += lines.length - kept.length;
    // The answers first: a run stopped between the two finds the install's lines again and does both.
    counts.adservices_answers += await eraseAnswers(ports.adServicesAnswers, key, ofInstall, kept.length === 0);
    if (kept.length === 0) {
      await ports.auditErasure.delete(key);
      counts.audit_objects_deleted++;
    } else {
      await ports.auditErasure.rewrite(key, kept);
      counts.audit_objects_rewritten++;
    }
  }

  const decisions = items.flatMap((item): { clickId: string; clickMs: number | undefined }[] => {
    const sk = String(item.sk);
    if (sk.startsWith(SK.eventPrefix)) {
      const decision = (item as unknown as EventClaim).decision;
      return decision?.click_id ? [{ clickId: decision.click_id, clickMs: decision.click_ms }] : [];
    }
    // The click the first-launch answer named (docs/deep-links.md) is the install's too, counted or not.
    const named = sk === SK.firstLaunch ? (item as unknown as Partial<FirstLaunchRecord>).answer?.attribution : undefined;
    return named?.click_id ? [{ clickId: named.click_id, clickMs: named.click_ms ?? undefined }] : [];
  });
  const clicks = [...new Map(decisions.map((click) => [click.clickId, click])).values()].slice(0, MAX_ROWS_PER_TABLE);

  // Before the clicks and the claims that lead to them are deleted: stream objects, then export files.
  const raw = await eraseRawData(
    ports.rawData,
    { appId: message.app_id, installUuid: message.install_uuid, counted: [...counted], hours, hoursUnknown, clicks },
    ports,
  );
  Object.assign(counts, raw.counts);

  counts.clicks = await ports.clicks.deleteMany(
    message.app_id,
    clicks.map((click) => click.clickId),
  );

  // Found by their own index, not through the install's items: none of these needs to go first.
  const postbacks = await ports.postbacks.ofInstall(installKey(message.app_id, message.install_uuid), MAX_ROWS_PER_TABLE);
  await ports.postbacks.deleteItems(postbacks.keys);
  counts.postbacks = postbacks.keys.length;

  // The claims of audit objects whose stream lines wait for a final object stay, for the next run.
  const waiting = (item: Record<string, unknown>) =>
    references.includes(item) && counted.has(String(item.audit_key)) && (raw.pending === 'all' || raw.pending.has(String(item.audit_key)));
  const deleted = items.filter((item) => !waiting(item));
  await ports.installs.deleteItems(
    pk,
    deleted.map((item) => String(item.sk)),
  );
  counts.install_items = deleted.length;
  const left = more || postbacks.more || deleted.length < items.length;
  await ports.receipts.record(message.request_id, { state: left ? 'in_progress' : 'done', counts, nowMs: ports.nowMs() });
  return left ? 'more' : 'done';
}

/**
 * Apple's answers to the install's tokens in one audit object taken out of its answers object, or
 * the answers object deleted when the audit object is. The answers left keep their line indexes,
 * as the lines left do (answersWithout). Left empty beside an object that stays, rather than
 * deleted: the aggregator reads an enriched object's answers, and a redelivery finding none would
 * be poison. Returns how many answers went.
 */
async function eraseAnswers(store: AnswersErasure, key: string, removed: readonly AuditLine[], objectDeleted: boolean): Promise<number> {
  // Apple was asked only for accepted install lines with a token (tokensOf): no other line has an answer.
  const indexes = new Set(tokensOf(removed).map((token) => token.index));
  if (indexes.size === 0) return 0;
  const stored = await store.get(key);
  if (stored === undefined) return 0;
  const left = answersWithout(stored, indexes);
  if (objectDeleted) await store.delete(key);
  else if (left.answers.length < stored.answers.length) await store.rewrite(key, left);
  return stored.answers.length - left.answers.length;
}

/** The object's lines, or undefined when it is gone: deleted by an earlier run of the request, or never written. */
async function linesOrGone(objects: Pick<AuditObjects, 'lines'>, key: string): Promise<readonly AuditLine[] | undefined> {
  try {
    return await objects.lines(key);
  } catch (error) {
    if (error instanceof AuditObjectError && error.reason === 'missing_object') return undefined;
    throw error;
  }
}
