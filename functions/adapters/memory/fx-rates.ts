import type { FxRateStore, FxRateWriter, FxTable, UsdRates } from '../../domain/fx/rates';

/** The fx_rates table in memory, for unit tests and the bench: counts its reads, and can be made to fail. */
export class MemoryFxRates implements FxRateStore, FxRateWriter {
  readonly days = new Map<string, UsdRates>();
  /** The days each read asked for, in order. */
  readonly reads: string[][] = [];
  failing: Error | undefined;

  constructor(rates: Record<string, UsdRates> = {}) {
    for (const [day, dayRates] of Object.entries(rates)) this.days.set(day, dayRates);
  }

  async ratesOf(days: readonly string[]): Promise<FxTable> {
    this.reads.push([...days]);
    if (this.failing) throw this.failing;
    const table = new Map<string, UsdRates>();
    for (const day of days) {
      const rates = this.days.get(day);
      if (rates !== undefined) table.set(day, rates);
    }
    return table;
  }

  async putRates(day: string, rates: UsdRates): Promise<void> {
    this.days.set(day, rates);
  }
}
