import { BatchGetCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import {
  type DayPage,
  decodePageRows,
  encodePageRows,
  mergePage,
  PAGED_FAMILIES,
  type PageRow,
  pageReportRows,
} from '../domain/aggregation/day-pages';
import type { AggregationLedger, Journal, LeaseResult } from '../domain/aggregation/lease';
import { ROW_COUNTERS, ROW_GROUPS, type RowDelta, type RowFamily, type RowStore, sortKeyOf } from '../domain/aggregation/rows';
import type { ReportRows } from '../domain/reports/answer-report';
import type { StoredCounters } from '../domain/reports/report-rows';
import { dynamoClient } from '../shared/clients/dynamo';
import { isConditionFailure } from './aws-errors';
import { queryAll, queryRawPages, type RawItem } from './query-pages';

/**
 * The prebuilt report rows: pk `<app_id>#<family>`, sk `<day>\u0001<group>...`, the counters as
 * numbers, the day and group columns as attributes for the reports, `v` (the row's version, 1 more
 * with every write that changes a counter) and `t_<token>` for each audit object whose increment is
 * on the row and whose processing is not known finished yet.
 *
 * The day pages of the paged families (day-pages.ts): pk `<app_id>#<family>#days`, sk `<day>`,
 * `rows` (the day's rows as compact JSON, each with its version), `ver` (the page's own version,
 * for replacing it only if unchanged since read), or `overflow` for a day too big for one item.
 */
export const TOKEN_PREFIX = 't_';
const VERSION = 'v';
const pagesPk = (appId: string, family: RowFamily) => `${appId}#${family}#days`;
/** Every sort key of a day starts with the day; the day's last possible key sorts below day + U+0002. */
const DAY_END = '\u0002';
/** Tries at replacing a page that other refreshes keep replacing first, before the refresh fails (and its objects are retried). */
const PAGE_ATTEMPTS = 8;

export interface StoredRow {
  pk: string;
  sk: string;
  day: string;
  [column: string]: string | number;
}

export class AggregateStore implements RowStore, ReportRows {
  constructor(private readonly tableName: string) {}

  async add(
    appId: string,
    row: RowDelta,
    tokens: readonly string[],
    sweep: readonly string[],
  ): Promise<{ applied: boolean; tokensOnRow: string[] }> {
    const { names, values, set } = rowColumns(row);
    const add = Object.entries(row.add).map(([counter, value], i) => {
      names[`#c${i}`] = counter;
      values[`:c${i}`] = value;
      return `#c${i} :c${i}`;
    });
    if (add.length > 0) {
      names['#v'] = VERSION;
      values[':one'] = 1;
      add.push('#v :one');
    }
    tokens.forEach((token, i) => {
      names[`#t${i}`] = TOKEN_PREFIX + token;
      set.push(`#t${i} = :one`);
      values[':one'] = 1;
    });
    const remove = sweep.map((token, i) => {
      names[`#s${i}`] = TOKEN_PREFIX + token;
      return `#s${i}`;
    });
    const expression = [
      `SET ${set.join(', ')}`,
      add.length ? `ADD ${add.join(', ')}` : '',
      remove.length ? `REMOVE ${remove.join(', ')}` : '',
    ]
      .filter(Boolean)
      .join(' ');
    try {
      const { Attributes } = await dynamoClient().send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: `${appId}#${row.family}`, sk: sortKeyOf(row) },
          UpdateExpression: expression,
          ConditionExpression: tokens.length ? tokens.map((_, i) => `attribute_not_exists(#t${i})`).join(' AND ') : undefined,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { applied: true, tokensOnRow: tokensOf(Attributes ?? {}) };
    } catch (error) {
      if (isConditionFailure(error)) return { applied: false, tokensOnRow: [] };
      throw error;
    }
  }

  /** Every row of an app's family, in key order (day, then the group columns): columns, counters and tokens. */
  async rows(appId: string, family: RowFamily): Promise<StoredRow[]> {
    const rows = await queryAll<StoredRow>({
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': `${appId}#${family}` },
      ConsistentRead: true,
    });
    return rows.map(({ [VERSION]: _version, ...row }) => row as StoredRow);
  }

  async refreshPages(appId: string, family: RowFamily, days: readonly string[]): Promise<void> {
    if (!PAGED_FAMILIES.has(family)) return;
    for (const day of days) await this.refreshPage(appId, family, day);
  }

  /** Reads the day's rows (consistently: after the writes this refresh follows) and merges them into the page. */
  private async refreshPage(appId: string, family: RowFamily, day: string): Promise<void> {
    const stored = await queryAll<StoredRow>({
      TableName: this.tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': `${appId}#${family}`, ':from': day, ':to': `${day}${DAY_END}` },
      ConsistentRead: true,
    });
    const groups = ROW_GROUPS[family] as readonly string[];
    const counters = ROW_COUNTERS[family] as readonly string[];
    const snapshot: PageRow[] = stored.map((row) => ({
      group: groups.map((column) => String(row[column])),
      counters: Object.fromEntries(counters.map((name) => [name, Number(row[name] ?? 0)])),
      v: Number(row[VERSION] ?? 0),
    }));
    const key = { pk: pagesPk(appId, family), sk: day };
    for (let attempt = 1; ; attempt++) {
      const { Item } = await dynamoClient().send(new GetCommand({ TableName: this.tableName, Key: key, ConsistentRead: true }));
      const page: DayPage | undefined =
        Item && (Item.overflow === true ? { overflow: true } : { overflow: false, rows: decodePageRows(family, String(Item.rows)) });
      const merged = mergePage(family, day, page, snapshot);
      if (!merged) return;
      const ver = Number(Item?.ver ?? 0);
      try {
        await dynamoClient().send(
          new PutCommand({
            TableName: this.tableName,
            Item: { ...key, day, ver: ver + 1, ...(merged.overflow ? { overflow: true } : { rows: encodePageRows(family, merged.rows) }) },
            ConditionExpression: Item ? 'ver = :ver' : 'attribute_not_exists(pk)',
            ExpressionAttributeValues: Item ? { ':ver': ver } : undefined,
          }),
        );
        return;
      } catch (error) {
        if (!isConditionFailure(error) || attempt === PAGE_ATTEMPTS) throw error;
      }
    }
  }

  /**
   * At most `count` rows of the app's family whose day lies in [firstDay, lastDay], in key order:
   * the query stops there, so the read costs the page, not the window. Eventually consistent
   * (half the read cost): a report may trail the aggregator by a second. Only the columns a report
   * renders are read (not the keys, not the objects' tokens), and converted straight from the
   * query's own pages (docs/reports.md, "Speed").
   */
  async page(appId: string, family: RowFamily, window: { firstDay: string; lastDay: string }, count: number): Promise<StoredCounters[]> {
    return PAGED_FAMILIES.has(family) ? this.fromDayPages(appId, family, window, count) : this.fromRows(appId, family, window, count);
  }

  /**
   * The same rows from the day pages: a day's page at a time, in day order, for as many days as
   * the count needs. The first query asks for a few pages; the next ones for as many as the rows
   * still wanted need at the rows per page seen so far. A day too big for a page is read row by row.
   */
  private async fromDayPages(
    appId: string,
    family: RowFamily,
    window: { firstDay: string; lastDay: string },
    count: number,
  ): Promise<StoredCounters[]> {
    const rows: StoredCounters[] = [];
    let pagesRead = 0;
    const pages = queryRawPages(
      {
        TableName: this.tableName,
        ProjectionExpression: '#day, #rows, #overflow',
        ExpressionAttributeNames: { '#day': 'day', '#rows': 'rows', '#overflow': 'overflow' },
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': { S: pagesPk(appId, family) }, ':from': { S: window.firstDay }, ':to': { S: window.lastDay } },
      },
      () => (pagesRead === 0 ? FIRST_PAGES : Math.min(100, Math.ceil((count - rows.length) / Math.max(1, rows.length / pagesRead)) + 1)),
    );
    for await (const items of pages) {
      for (const item of items) {
        pagesRead++;
        const day = String(item.day?.S);
        const wanted = count - rows.length;
        const dayRows = item.overflow?.BOOL
          ? await this.fromRows(appId, family, { firstDay: day, lastDay: day }, wanted)
          : pageReportRows(family, day, String(item.rows?.S), wanted);
        for (const row of dayRows) rows.push(row);
        if (rows.length >= count) return rows;
      }
    }
    return rows;
  }

  private async fromRows(
    appId: string,
    family: RowFamily,
    window: { firstDay: string; lastDay: string },
    count: number,
  ): Promise<StoredCounters[]> {
    const rows: StoredCounters[] = [];
    const columns = ['day', ...ROW_GROUPS[family], ...ROW_COUNTERS[family]];
    const pages = queryRawPages(
      {
        TableName: this.tableName,
        ProjectionExpression: columns.map((_, i) => `#p${i}`).join(', '),
        ExpressionAttributeNames: Object.fromEntries(columns.map((column, i) => [`#p${i}`, column])),
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: {
          ':pk': { S: `${appId}#${family}` },
          ':from': { S: window.firstDay },
          ':to': { S: `${window.lastDay}${DAY_END}` },
        },
      },
      () => Math.min(count - rows.length, 1000),
    );
    for await (const items of pages) {
      for (const item of items) {
        rows.push(columnsOf(item, columns));
        if (rows.length >= count) return rows;
      }
    }
    return rows;
  }

  /** Sets a row's counters to the given values (admin rebuild --apply); its tokens stay. Its day's page needs a refresh after. */
  async setCounters(appId: string, row: RowDelta): Promise<void> {
    const counters = ROW_COUNTERS[row.family] as readonly string[];
    const { names, values, set } = rowColumns(row);
    counters.forEach((counter, i) => {
      names[`#c${i}`] = counter;
      values[`:c${i}`] = row.add[counter] ?? 0;
      set.push(`#c${i} = :c${i}`);
    });
    await dynamoClient().send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: `${appId}#${row.family}`, sk: sortKeyOf(row) },
        UpdateExpression: `SET ${set.join(', ')} ADD #v :one`,
        ExpressionAttributeNames: { ...names, '#v': VERSION },
        ExpressionAttributeValues: { ...values, ':one': 1 },
      }),
    );
  }
}

/** Day pages the first query of a paged report asks for: a short window's, and enough to learn a long one's rows per page. */
const FIRST_PAGES = 8;

/** The day and group columns every write of a row sets, so the reports can render it from its attributes. */
function rowColumns(row: RowDelta) {
  const names: Record<string, string> = { '#day': 'day' };
  const values: Record<string, unknown> = { ':day': row.day };
  const set = ['#day = :day'];
  ROW_GROUPS[row.family].forEach((column, i) => {
    names[`#g${i}`] = column;
    values[`:g${i}`] = row.group[i];
    set.push(`#g${i} = :g${i}`);
  });
  return { names, values, set };
}

function tokensOf(item: Record<string, unknown>): string[] {
  return Object.keys(item)
    .filter((name) => name.startsWith(TOKEN_PREFIX))
    .map((name) => name.slice(TOKEN_PREFIX.length));
}

/** Ledger marks of the aggregator live 30 days: longer than a message can (14 days' retention, then the DLQ's). */
export const LEDGER_MARK_DAYS = 30;

const ledgerPk = (token: string) => `agg#${token}`;

/**
 * The aggregator's marks in the ledger table, one per audit object (pk `agg#<token>`): the lease,
 * then the journal, then `done`. The table expires them (expires_at) after LEDGER_MARK_DAYS.
 */
export class AggregationLedgerStore implements AggregationLedger {
  /**
   * `run` is given by the local runtime only (LOCAL_RUN_ID, local/runtime.ts): each lease records
   * the run that took it, and a lease another run took is taken over at once, unexpired. Locally
   * that is sound because a data directory admits one runtime at a time (local/emulators.ts), so a
   * lease of another run is a dead process's, as after a kill -9; its delivery is a crash the
   * protocol recovers from (docs/aggregation.md). In AWS nothing sets it: concurrent deliveries
   * run in many processes, and a lease held is only ever run out or given back.
   */
  constructor(
    private readonly tableName: string,
    private readonly options: { readonly run?: string } = {},
  ) {}

  async lease(token: string, nowMs: number, leaseMs: number): Promise<LeaseResult> {
    const { run } = this.options;
    try {
      const { Attributes } = await dynamoClient().send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: ledgerPk(token) },
          UpdateExpression: `SET #state = :running, lease_until = :until, expires_at = :expires${run === undefined ? '' : ', lease_run = :run'}`,
          ConditionExpression:
            run === undefined
              ? 'attribute_not_exists(pk) OR (#state = :running AND lease_until < :now)'
              : 'attribute_not_exists(pk) OR (#state = :running AND (lease_until < :now OR (attribute_exists(lease_run) AND lease_run <> :run)))',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':running': 'running',
            ':until': nowMs + leaseMs,
            ':now': nowMs,
            ':expires': Math.floor(nowMs / 1000) + LEDGER_MARK_DAYS * 86_400,
            ...(run === undefined ? {} : { ':run': run }),
          },
          ReturnValues: 'ALL_NEW',
        }),
      );
      const journal = Attributes?.journal;
      return { state: 'acquired', journal: typeof journal === 'string' ? (JSON.parse(journal) as Journal) : undefined };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const { Item } = await dynamoClient().send(
        new GetCommand({ TableName: this.tableName, Key: { pk: ledgerPk(token) }, ConsistentRead: true }),
      );
      if (Item?.state === 'done') return { state: 'done' };
      return { state: 'busy', leaseUntilMs: typeof Item?.lease_until === 'number' ? Item.lease_until : nowMs };
    }
  }

  async saveJournal(token: string, journal: Journal): Promise<Journal> {
    try {
      await dynamoClient().send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: ledgerPk(token) },
          UpdateExpression: 'SET journal = :journal',
          ConditionExpression: 'attribute_not_exists(journal)',
          ExpressionAttributeValues: { ':journal': JSON.stringify(journal) },
        }),
      );
      return journal;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const { Item } = await dynamoClient().send(
        new GetCommand({ TableName: this.tableName, Key: { pk: ledgerPk(token) }, ConsistentRead: true }),
      );
      return JSON.parse(String(Item?.journal)) as Journal;
    }
  }

  async finish(token: string, nowMs: number): Promise<void> {
    await dynamoClient().send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: ledgerPk(token) },
        UpdateExpression: 'SET #state = :done, finished_ms = :now REMOVE journal, lease_until, lease_run',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':done': 'done', ':now': nowMs },
      }),
    );
  }

  async release(token: string): Promise<void> {
    try {
      await dynamoClient().send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: ledgerPk(token) },
          UpdateExpression: 'SET lease_until = :zero',
          ConditionExpression: '#state = :running',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':zero': 0, ':running': 'running' },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async finished(tokens: readonly string[]): Promise<Set<string>> {
    const done = new Set<string>();
    for (let i = 0; i < tokens.length; i += 100) {
      const chunk = tokens.slice(i, i + 100);
      const { Responses, UnprocessedKeys } = await dynamoClient().send(
        new BatchGetCommand({
          RequestItems: { [this.tableName]: { Keys: chunk.map((token) => ({ pk: ledgerPk(token) })), ConsistentRead: true } },
        }),
      );
      // Not read (running, or left unprocessed by the batch read) is not known finished.
      const running = new Set(
        [
          ...(Responses?.[this.tableName] ?? []).filter((item) => item.state === 'running'),
          ...(UnprocessedKeys?.[this.tableName]?.Keys ?? []),
        ].map((item) => String(item.pk).slice('agg#'.length)),
      );
      // A mark that is gone expired long after its object finished (or was never leased again).
      for (const token of chunk) if (!running.has(token)) done.add(token);
    }
    return done;
  }
}

/** The named columns of a raw item: strings as they are, numbers as numbers (counters are integers). */
function columnsOf(item: RawItem, columns: readonly string[]): StoredCounters {
  const row: Record<string, string | number> = {};
  for (const column of columns) {
    const value = item[column];
    if (value?.S !== undefined) row[column] = value.S;
    else if (value?.N !== undefined) row[column] = Number(value.N);
  }
  return row;
}
