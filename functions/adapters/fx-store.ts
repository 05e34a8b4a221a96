import { BatchGetCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { FxRateStore, FxRateWriter, FxTable, UsdRates } from '../domain/fx/rates';
import { dynamoClient } from '../shared/clients/dynamo';

/** BatchGetItem reads at most 100 keys a call. */
const BATCH_GET_KEYS = 100;

/** One day of rates as stored: pk `day`, `rates` a map CODE -> US dollars per unit. */
interface FxItem {
  readonly day: string;
  readonly rates: Record<string, number>;
  readonly source?: string;
  readonly updated_ms?: number;
}

/** The `fx_rates` table (lib/manifest.ts): one item per day. */
export class FxStore implements FxRateStore, FxRateWriter {
  constructor(private readonly tableName: string) {}

  /** The days' rates in one BatchGetItem (a window of 8 days is one call); what DynamoDB leaves unprocessed is read again. */
  async ratesOf(days: readonly string[]): Promise<FxTable> {
    const found = new Map<string, UsdRates>();
    for (let from = 0; from < days.length; from += BATCH_GET_KEYS) {
      let unread: Record<string, unknown>[] = days.slice(from, from + BATCH_GET_KEYS).map((day) => ({ day }));
      for (let attempt = 0; unread.length > 0; attempt++) {
        if (attempt === 3) throw new Error('fx rates: days left unread by the batch read');
        const { Responses, UnprocessedKeys } = await dynamoClient().send(
          new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: unread } } }),
        );
        for (const item of (Responses?.[this.tableName] ?? []) as FxItem[]) found.set(item.day, item.rates ?? {});
        unread = UnprocessedKeys?.[this.tableName]?.Keys ?? [];
      }
    }
    return found;
  }

  /** One day's rates as stored, with where they came from; undefined when the day has none. */
  async day(day: string): Promise<FxItem | undefined> {
    const { Item } = await dynamoClient().send(new GetCommand({ TableName: this.tableName, Key: { day }, ConsistentRead: true }));
    return Item as FxItem | undefined;
  }

  /** Replaces the day's rates (`source` names who set them: the ECB's address, or `admin fx set`). */
  async putRates(day: string, rates: UsdRates, source = 'admin', nowMs = Date.now()): Promise<void> {
    await dynamoClient().send(new PutCommand({ TableName: this.tableName, Item: { day, rates, source, updated_ms: nowMs } }));
  }
}

/**
 * Ingest's view of the rates: each day's read kept for ttlMs in the Lambda instance (rates of a
 * day change once, when they are set), a day without rates for missTtlMs only, so rates set a
 * moment ago are used soon. Days not cached are read together in one call.
 */
export class CachedFxRates implements FxRateStore {
  private readonly days = new Map<string, { rates: UsdRates | undefined; expiresAt: number }>();

  constructor(
    private readonly store: FxRateStore,
    private readonly ttlMs = 5 * 60_000,
    private readonly missTtlMs = 30_000,
    private readonly now: () => number = Date.now,
    private readonly maxDays = 1_000,
  ) {}

  async ratesOf(days: readonly string[]): Promise<FxTable> {
    const nowMs = this.now();
    const table = new Map<string, UsdRates>();
    const unread: string[] = [];
    for (const day of days) {
      const hit = this.days.get(day);
      if (hit === undefined || hit.expiresAt <= nowMs) unread.push(day);
      else if (hit.rates !== undefined) table.set(day, hit.rates);
    }
    if (unread.length === 0) return table;
    const read = await this.store.ratesOf(unread);
    for (const day of unread) {
      const rates = read.get(day);
      if (rates !== undefined) table.set(day, rates);
      if (this.days.size >= this.maxDays) this.days.delete(this.days.keys().next().value as string);
      this.days.delete(day);
      this.days.set(day, { rates, expiresAt: nowMs + (rates === undefined ? this.missTtlMs : this.ttlMs) });
    }
    return table;
  }
}
