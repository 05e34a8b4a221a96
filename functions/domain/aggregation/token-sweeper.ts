import type { AggregationLedger } from './lease';
import type { RowDelta, RowStore } from './rows';

/**
 * Tokens of finished objects, per row, remembered by this execution environment so that its next
 * write to the row removes them for free. Rows it does not write again are swept when they carry
 * more than SWEEP_AT foreign tokens. A sweep removes at most MAX_SWEEP tokens, so a row written by
 * more objects than that between sweeps (a backlog) keeps growing: docs/aggregation.md, issue 21.
 */
export class TokenSweeper {
  private readonly removable = new Map<string, Set<string>>();

  constructor(private readonly maxRows = 50_000) {}

  take(row: string, except: readonly string[]): string[] {
    const tokens = this.removable.get(row);
    if (!tokens) return [];
    this.removable.delete(row);
    return [...tokens].filter((token) => !except.includes(token)).slice(0, MAX_SWEEP);
  }

  remember(row: string, tokens: Iterable<string>): void {
    if (this.removable.size >= this.maxRows) this.removable.clear();
    const set = this.removable.get(row) ?? new Set<string>();
    for (const token of tokens) set.add(token);
    if (set.size > 0) this.removable.set(row, set);
  }
}

/** Foreign tokens a row may carry before this delivery checks and removes the finished ones. */
export const SWEEP_AT = 6;
const MAX_SWEEP = 40;

/** Removes the tokens of finished objects from a row that gathered many; best effort. */
export async function sweep(
  ports: { readonly ledger: Pick<AggregationLedger, 'finished'>; readonly rows: Pick<RowStore, 'add'> },
  appId: string,
  row: RowDelta,
  tokens: readonly string[],
): Promise<void> {
  try {
    const finished = await ports.ledger.finished(tokens);
    if (finished.size > 0) await ports.rows.add(appId, { ...row, add: {} }, [], [...finished].slice(0, MAX_SWEEP));
  } catch {
    // A sweep that fails leaves tokens for the next one; the counters are already right.
  }
}

/** The sweeper's name for a row: its app and its row id. */
export const sweepKey = (appId: string, id: string) => `${appId}\u0000${id}`;
