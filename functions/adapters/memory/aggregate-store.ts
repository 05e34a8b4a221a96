import { type DayPage, mergePage, PAGED_FAMILIES } from '../../domain/aggregation/day-pages';
import type { AggregationLedger, Journal, LeaseResult } from '../../domain/aggregation/lease';
import { ROW_FAMILIES, type RowDelta, type RowFamily, type RowStore, sortKeyOf } from '../../domain/aggregation/rows';

/**
 * The report rows and the aggregation ledger in memory, standing in for functions/adapters/aggregate-store.ts
 * with the same conditional semantics. `admin rebuild` replays the audit store through them, and
 * the unit tests (fault injection included) run the whole use case on them. Items are copied in
 * and out, as a store would.
 */

export interface MemoryRow {
  counters: Record<string, number>;
  tokens: Set<string>;
  key: RowDelta;
  /** The row's version: 1 more with every write that adds to it (day-pages.ts). */
  v: number;
}

export class MemoryRowStore implements RowStore {
  /** `<app_id>#<family>` to sort key to row. */
  readonly partitions = new Map<string, Map<string, MemoryRow>>();
  /** `<app_id>#<family>` to day to page. */
  readonly pages = new Map<string, Map<string, DayPage>>();

  async add(
    appId: string,
    row: RowDelta,
    tokens: readonly string[],
    sweep: readonly string[],
  ): Promise<{ applied: boolean; tokensOnRow: string[] }> {
    const pk = `${appId}#${row.family}`;
    let partition = this.partitions.get(pk);
    if (!partition) {
      partition = new Map();
      this.partitions.set(pk, partition);
    }
    const sk = sortKeyOf(row);
    const stored = partition.get(sk) ?? {
      counters: {},
      tokens: new Set<string>(),
      key: { family: row.family, day: row.day, group: [...row.group], add: {} },
      v: 0,
    };
    if (tokens.some((token) => stored.tokens.has(token))) return { applied: false, tokensOnRow: [...stored.tokens] };
    for (const [name, value] of Object.entries(row.add)) stored.counters[name] = (stored.counters[name] ?? 0) + value;
    if (Object.keys(row.add).length > 0) stored.v += 1;
    for (const token of sweep) stored.tokens.delete(token);
    for (const token of tokens) stored.tokens.add(token);
    partition.set(sk, stored);
    return { applied: true, tokensOnRow: [...stored.tokens] };
  }

  async refreshPages(appId: string, family: RowFamily, days: readonly string[]): Promise<void> {
    if (!PAGED_FAMILIES.has(family)) return;
    const pk = `${appId}#${family}`;
    const pages = this.pages.get(pk) ?? new Map<string, DayPage>();
    this.pages.set(pk, pages);
    const rows = [...(this.partitions.get(pk)?.values() ?? [])];
    for (const day of days) {
      const snapshot = rows
        .filter((row) => row.key.day === day)
        .map((row) => ({ group: row.key.group, counters: { ...row.counters }, v: row.v }));
      const merged = mergePage(family, day, pages.get(day), snapshot);
      if (merged) pages.set(day, structuredClone(merged));
    }
  }

  /** The app's rows of one family in key order, counters only. */
  rowsOf(appId: string, family: RowFamily): { sk: string; key: RowDelta; counters: Record<string, number>; v: number }[] {
    const partition = this.partitions.get(`${appId}#${family}`) ?? new Map<string, MemoryRow>();
    return [...partition.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([sk, row]) => ({ sk, key: row.key, counters: { ...row.counters }, v: row.v }));
  }

  families(appId: string) {
    return Object.fromEntries(ROW_FAMILIES.map((family) => [family, this.rowsOf(appId, family)])) as Record<
      RowFamily,
      ReturnType<MemoryRowStore['rowsOf']>
    >;
  }
}

interface LedgerMark {
  state: 'running' | 'done';
  leaseUntil: number;
  journal?: Journal;
}

export class MemoryLedger implements AggregationLedger {
  readonly marks = new Map<string, LedgerMark>();

  async lease(token: string, nowMs: number, leaseMs: number): Promise<LeaseResult> {
    const mark = this.marks.get(token);
    if (mark?.state === 'done') return { state: 'done' };
    if (mark && mark.leaseUntil >= nowMs) return { state: 'busy', leaseUntilMs: mark.leaseUntil };
    const next: LedgerMark = { state: 'running', leaseUntil: nowMs + leaseMs, journal: mark?.journal };
    this.marks.set(token, next);
    return { state: 'acquired', journal: next.journal && structuredClone(next.journal) };
  }

  async saveJournal(token: string, journal: Journal): Promise<Journal> {
    const mark = this.marks.get(token);
    if (mark && !mark.journal) mark.journal = structuredClone(journal);
    return structuredClone(mark?.journal ?? journal);
  }

  async finish(token: string): Promise<void> {
    this.marks.set(token, { state: 'done', leaseUntil: 0 });
  }

  async release(token: string): Promise<void> {
    const mark = this.marks.get(token);
    if (mark?.state === 'running') mark.leaseUntil = 0;
  }

  async finished(tokens: readonly string[]): Promise<Set<string>> {
    return new Set(tokens.filter((token) => this.marks.get(token)?.state !== 'running'));
  }
}
