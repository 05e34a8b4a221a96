import type { AttributionDecision, InstallFacts } from '../attribution/decision';
import type { AuditLine } from '../audit/types';
import { DAY_MS, dayOf, UTC } from '../common/days';
import type { ProbabilisticBasis } from '../privacy/probabilistic-basis';
import { aggregateDeliveries } from './aggregate';
import type { OpenToResolve } from './contributions';
import type { InstallStore } from './install-state';
import type { AggregationLedger } from './lease';
import { PoisonMessageError } from './message';
import type { ReengagementLink } from './reengagement';
import { CLICK_FAMILIES, ROW_COUNTERS, ROW_FAMILIES, ROW_GROUPS, type RowDelta, type RowFamily, type RowStore } from './rows';

/**
 * `admin rebuild`: the app's rows computed again from the audit store alone, by the very use case
 * the aggregator runs, on in-memory stores. Objects are replayed in the order they were received.
 * Attribution is the one thing the audit store cannot say: the clicks it used have expired since,
 * so each install takes the decision the live path recorded (the install record), and only an
 * install the live path has not decided yet is attributed afresh.
 */

export interface RebuildSource {
  readonly appId: string;
  readonly companyId: string;
  readonly probabilistic: boolean;
  /** The app's basis of probabilistic matching (legitimate_interest when absent). */
  readonly probabilisticBasis?: ProbabilisticBasis;
  /**
   * Whether the app's MAX pull is on: the rebuild decides which SDK-sent applovin_max impressions
   * the pull supersedes by the setting it is run with, as it applies the current time zone.
   */
  readonly maxPull?: boolean;
  /** The app's IANA time zone: the rows are rebuilt on its local days (UTC when absent). */
  readonly timeZone?: string;
  /** The app's re-engagement window in days (the default when absent). */
  readonly reengagementWindowDays?: number;
  /** The app's audit object keys received on one UTC day (yyyy-mm-dd). */
  keysOfDay(day: string): Promise<string[]>;
  lines(key: string): Promise<readonly AuditLine[]>;
  recordedDecision(installUuid: string, eventId: string): Promise<AttributionDecision | undefined>;
  /** Attribution for an install the live path has not recorded. */
  decideAfresh(facts: InstallFacts): Promise<AttributionDecision>;
  /**
   * A deep_link_open's link: as the live path resolved it (its claim log item), else afresh;
   * absent, no open re-engages.
   */
  reengagementLink?(open: OpenToResolve): Promise<ReengagementLink | undefined>;
}

/**
 * Empty stores the rebuild replays into (the in-memory ones of functions/adapters/memory/, which
 * the caller makes): the same use case as the live path, on stores nobody else reads.
 */
export interface RebuildStores {
  readonly installs: InstallStore;
  readonly rows: RowStore & { rowsOf(appId: string, family: RowFamily): readonly { key: RowDelta; counters: Record<string, number> }[] };
  readonly ledger: AggregationLedger;
}

export interface RebuiltRow {
  family: RowFamily;
  day: string;
  group: Record<string, string>;
  counters: Record<string, number>;
}

export interface Rebuild {
  objects: number;
  events: number;
  unreadable: string[];
  rows: RebuiltRow[];
}

export async function rebuildRows(source: RebuildSource, fromDay: string, toDay: string, stores: RebuildStores): Promise<Rebuild> {
  const { installs, rows, ledger } = stores;
  const cache = new Map<string, readonly AuditLine[]>();
  const ports = {
    installs,
    rows,
    ledger,
    app: async () => ({
      probabilistic: source.probabilistic,
      ...(source.probabilisticBasis === undefined ? {} : { probabilistic_basis: source.probabilisticBasis }),
      ...(source.maxPull ? { max_pull: true } : {}),
      time_zone: source.timeZone ?? UTC,
      ...(source.reengagementWindowDays === undefined ? {} : { reengagement_window_days: source.reengagementWindowDays }),
    }),
    readAudit: async (message: { audit_key: string }) => {
      const lines = cache.get(message.audit_key);
      if (!lines) throw new PoisonMessageError('missing_object', message.audit_key);
      return lines;
    },
    decide: async (facts: InstallFacts) => (await source.recordedDecision(facts.installUuid, facts.eventId)) ?? source.decideAfresh(facts),
    ...(source.reengagementLink ? { reengagementLink: source.reengagementLink } : {}),
  };
  let objects = 0;
  let events = 0;
  const unreadable: string[] = [];
  for (const day of daysBetween(fromDay, toDay)) {
    const batch: { key: string; receivedMs: number }[] = [];
    for (const key of await source.keysOfDay(day)) {
      try {
        const lines = await source.lines(key);
        cache.set(key, lines);
        batch.push({ key, receivedMs: lines[0]?.received_ms ?? 0 });
      } catch (error) {
        if (!(error instanceof PoisonMessageError)) throw error;
        unreadable.push(key);
      }
    }
    batch.sort((a, b) => a.receivedMs - b.receivedMs || (a.key < b.key ? -1 : 1));
    for (const { key, receivedMs } of batch) {
      const body = JSON.stringify({
        version: 1,
        bucket: 'rebuild',
        audit_key: key,
        company_id: source.companyId,
        app_id: source.appId,
        accepted: 0,
        rejected: 0,
        received_ms: receivedMs,
      });
      const [outcome] = await aggregateDeliveries(ports, [{ id: key, body }], { nowMs: () => receivedMs, leaseMs: 1 });
      if (outcome?.kind === 'counted') events += outcome.events;
      else if (outcome?.kind === 'poison') unreadable.push(key);
      else throw new Error(`rebuild of ${key}: ${outcome?.kind ?? 'no outcome'}`);
      objects++;
      cache.delete(key);
    }
  }
  const rebuilt: RebuiltRow[] = [];
  for (const family of ROW_FAMILIES) {
    for (const row of rows.rowsOf(source.appId, family)) rebuilt.push(rowOf(family, row.key.day, row.key.group, row.counters));
  }
  return { objects, events, unreadable, rows: rebuilt };
}

export function rowOf(family: RowFamily, day: string, group: readonly string[], counters: Readonly<Record<string, unknown>>): RebuiltRow {
  return {
    family,
    day,
    group: Object.fromEntries(ROW_GROUPS[family].map((column, i) => [column, group[i] ?? ''])),
    counters: Object.fromEntries((ROW_COUNTERS[family] as readonly string[]).map((name) => [name, Number(counters[name] ?? 0)])),
  };
}

export interface RowDifference {
  family: RowFamily;
  day: string;
  group: Record<string, string>;
  live: Record<string, number> | null;
  rebuilt: Record<string, number> | null;
}

/**
 * Rows whose counters differ, or that only one side has (a row of zeros counts as absent). What
 * the audit store cannot tell is the live side's (docs/analytics.md, "Rebuilding"): a perf, perf_partner
 * or link row's `clicks` (the link redirect counts them, and clicks are in no audit object), and the
 * `perf_stamp` rows, versions rather than counts, compared never (setting a perf row moves its
 * day's stamp: AggregateStore.setCounters).
 */
export function differences(live: readonly RebuiltRow[], rebuilt: readonly RebuiltRow[]): RowDifference[] {
  const key = (row: RebuiltRow) => JSON.stringify([row.family, row.day, ...Object.values(row.group)]);
  const nonZero = (row: RebuiltRow | undefined) => (row && Object.values(row.counters).some((v) => v !== 0) ? row.counters : null);
  const compared = (row: RebuiltRow) => row.family !== 'perf_stamp';
  const liveRows = new Map(live.filter(compared).map((row) => [key(row), row]));
  const rebuiltRows = new Map(rebuilt.filter(compared).map((row) => [key(row), row]));
  for (const [id, row] of liveRows) {
    const clicks = row.counters.clicks ?? 0;
    if (!CLICK_FAMILIES.has(row.family) || clicks === 0) continue;
    const twin = rebuiltRows.get(id);
    const zeros = Object.fromEntries(Object.keys(row.counters).map((name) => [name, 0]));
    rebuiltRows.set(id, { ...row, ...twin, counters: { ...zeros, ...twin?.counters, clicks } });
  }
  const out: RowDifference[] = [];
  for (const id of [...new Set([...liveRows.keys(), ...rebuiltRows.keys()])].sort()) {
    const a = liveRows.get(id);
    const b = rebuiltRows.get(id);
    const liveCounters = nonZero(a);
    const rebuiltCounters = nonZero(b);
    if (JSON.stringify(liveCounters) === JSON.stringify(rebuiltCounters)) continue;
    const row = (a ?? b) as RebuiltRow;
    out.push({ family: row.family, day: row.day, group: row.group, live: liveCounters, rebuilt: rebuiltCounters });
  }
  return out;
}

export function daysBetween(fromDay: string, toDay: string): string[] {
  const days: string[] = [];
  for (let ms = Date.parse(`${fromDay}T00:00:00Z`); ms <= Date.parse(`${toDay}T00:00:00Z`); ms += DAY_MS) days.push(dayOf(ms));
  return days;
}
