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
import type { AggregationLedger, Journal, LaneState, ObjectMark, Stamp, TakeResult } from '../domain/aggregation/lease';
import {
  CLICK_FAMILIES,
  ROW_COUNTERS,
  ROW_GROUPS,
  type RowDelta,
  type RowFamily,
  type RowStamp,
  type RowStore,
  sortKeyOf,
} from '../domain/aggregation/rows';
import { derivedClicks, isDerivedFamily } from '../domain/analytics/click-counts';
import type { ReportRows } from '../domain/reports/answer-report';
import type { StoredCounters } from '../domain/reports/report-rows';
import { clickTables } from '../shared/click-tables';
import { dynamoClient } from '../shared/clients/dynamo';
import { isConditionFailure } from './aws-errors';
import { clickCountsNow } from './click-count-items';
import type { ClickTables } from './click-store';
import { queryAll, queryRawPages, type RawItem } from './query-pages';

/**
 * The prebuilt report rows: pk `<app_id>#<family>`, sk `<day>\u0001<group>...`, the counters as
 * numbers, the day and group columns as attributes for the reports, `v` (the row's version, 1 more
 * with every write that changes a counter) and `l<lane>`, per lane, the last apply written to the
 * row (lease.ts): at most LANES small numbers, whatever the traffic. Rows written before lanes may
 * also carry `t_<token>` attributes of the objects that wrote them then (legacy, never added again
 * except by a legacy object's replay).
 *
 * The day pages of the paged families (day-pages.ts): pk `<app_id>#<family>#days`, sk `<day>`,
 * `rows` (the day's rows as compact JSON, each with its version), `ver` (the page's own version,
 * for replacing it only if unchanged since read), or `overflow` for a day too big for one item.
 */
export const TOKEN_PREFIX = 't_';
/** A row's attribute for a lane's last apply. */
export const laneAttribute = (lane: number) => `l${lane}`;
/** The attributes that record which applies reached a row (lanes, legacy tokens), not what it counts. */
const isBookkeeping = (name: string) => /^l\d+$/.test(name) || name.startsWith(TOKEN_PREFIX);
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
  /** clicksTables: the click log, whose clicks not yet counted the readers of click counts add (clickCountsNow). */
  constructor(
    private readonly tableName: string,
    private readonly clicksTables?: ClickTables,
  ) {}

  /** Resolved when first needed: a function that reads no click count has no click tables in its environment. */
  private get clickLog(): ClickTables {
    return this.clicksTables ?? clickTables();
  }

  /** `v` 1 up on the day's perf_stamp: the compactor builds the day's page again, and no report reads the old one. */
  async stamp(appId: string, day: string): Promise<void> {
    await dynamoClient().send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: `${appId}#perf_stamp`, sk: sortKeyOf({ day, group: [] }) },
        UpdateExpression: 'SET #day = :day ADD #v :one',
        ExpressionAttributeNames: { '#day': 'day', '#v': VERSION },
        ExpressionAttributeValues: { ':day': day, ':one': 1 },
      }),
    );
  }

  /**
   * `admin link stats`: the app's link rows of the days [firstDay, lastDay] summed per link (one
   * row per link and day that had a click or an install), with the clicks of its click counter
   * items. Eventually consistent, as the reports.
   */
  async linkCounts(
    appId: string,
    window: { firstDay: string; lastDay: string },
  ): Promise<Map<string, { clicks: number; installs: number }>> {
    const [items, counted] = await Promise.all([
      queryAll<Record<string, unknown>>({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':pk': `${appId}#link`, ':from': window.firstDay, ':to': `${window.lastDay}${DAY_END}` },
        ProjectionExpression: 'link_id, clicks, installs',
      }),
      clickCountsNow(this.tableName, this.clickLog, appId, window, false),
    ]);
    const sums = new Map<string, { clicks: number; installs: number }>();
    for (const count of counted) {
      const sum = sums.get(count.linkId) ?? { clicks: 0, installs: 0 };
      sum.clicks += count.clicks;
      sums.set(count.linkId, sum);
    }
    for (const item of items) {
      const linkId = String(item.link_id);
      const sum = sums.get(linkId) ?? { clicks: 0, installs: 0 };
      sum.clicks += Number(item.clicks ?? 0);
      sum.installs += Number(item.installs ?? 0);
      sums.set(linkId, sum);
    }
    return sums;
  }

  async add(appId: string, row: RowDelta, stamp: RowStamp): Promise<boolean> {
    const { names, values, set } = rowColumns(row);
    const add = Object.entries(row.add).map(([counter, value], i) => {
      names[`#c${i}`] = counter;
      values[`:c${i}`] = value;
      return `#c${i} :c${i}`;
    });
    // A family whose counter is the version itself (perf_stamp's `v`) adds it once, as a counter.
    if (add.length > 0 && !(VERSION in row.add)) {
      names['#v'] = VERSION;
      values[':one'] = 1;
      add.push('#v :one');
    }
    let condition: string;
    if ('legacyToken' in stamp) {
      names['#stamp'] = TOKEN_PREFIX + stamp.legacyToken;
      values[':stamp'] = 1;
      set.push('#stamp = :stamp');
      condition = 'attribute_not_exists(#stamp)';
    } else {
      names['#stamp'] = laneAttribute(stamp.lane);
      values[':stamp'] = stamp.seq;
      set.push('#stamp = :stamp');
      condition = 'attribute_not_exists(#stamp) OR #stamp < :stamp';
    }
    try {
      await dynamoClient().send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: `${appId}#${row.family}`, sk: sortKeyOf(row) },
          UpdateExpression: `SET ${set.join(', ')}${add.length ? ` ADD ${add.join(', ')}` : ''}`,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /**
   * Every row of an app's family, in key order (day, then the group columns): its columns and
   * counters, not its bookkeeping. The perf, perf_partner and link rows with the clicks of the
   * click counter items added (a row that only they make is in the list too).
   */
  async rows(appId: string, family: RowFamily): Promise<StoredRow[]> {
    const [rows, counted] = await Promise.all([
      queryAll<StoredRow>({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk',
        ExpressionAttributeValues: { ':pk': `${appId}#${family}` },
        ConsistentRead: true,
      }),
      isDerivedFamily(family) ? clickCountsNow(this.tableName, this.clickLog, appId, undefined, true) : [],
    ]);
    const counters = ROW_COUNTERS[family] as readonly string[];
    const stored = rows.map(
      (row) =>
        Object.fromEntries(
          Object.entries(row).filter(([name]) => (name !== VERSION || counters.includes(name)) && !isBookkeeping(name)),
        ) as StoredRow,
    );
    if (!isDerivedFamily(family)) return stored;
    const bySk = new Map(stored.map((row) => [row.sk, row]));
    for (const { day, group, clicks } of derivedClicks(family, counted)) {
      const sk = sortKeyOf({ day, group });
      const columns = Object.fromEntries(ROW_GROUPS[family].map((column, i) => [column, group[i] ?? '']));
      const row = bySk.get(sk) ?? { pk: `${appId}#${family}`, sk, day, ...columns };
      bySk.set(sk, { ...row, clicks: Number(row.clicks ?? 0) + clicks });
    }
    return [...bySk.values()].sort((a, b) => (a.sk < b.sk ? -1 : a.sk > b.sk ? 1 : 0));
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
    // A rebuild takes `clicks` from the live rows, which rows() derives in part from the click
    // counter items: setting them on the row would count those clicks twice. They stay as they are.
    const counters = (ROW_COUNTERS[row.family] as readonly string[]).filter(
      (counter) => !(counter === 'clicks' && CLICK_FAMILIES.has(row.family)),
    );
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
    // A perf row set moves its day's stamp, so the page compactor builds the day's page again.
    if (row.family === 'perf' || row.family === 'perf_partner') await this.stamp(appId, row.day);
  }
}

/** Day pages the first query of a paged report asks for: a short window's, and enough to learn a long one's rows per page. */
const FIRST_PAGES = 8;

/** The day and group columns every write of a row sets, so the reports can render it from its attributes. */
function rowColumns(row: Pick<RowDelta, 'family' | 'day' | 'group'>) {
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

/** Ledger marks of the aggregator live 30 days: longer than a message can (14 days' retention, then the DLQ's). */
export const LEDGER_MARK_DAYS = 30;

const markPk = (token: string) => `agg#${token}`;
const lanePk = (lane: number) => `lane#${lane}`;
const MARK = 'included';
const VOID = 'void';

/**
 * The aggregator's ledger in the ledger table (lease.ts): one mark per audit object (pk
 * `agg#<token>`: `m` included or void, `lane`, `seq`, `app_id`, `journal`; expired by the table
 * after LEDGER_MARK_DAYS) and one item per lane (pk `lane#<n>`: `seq`, `applied`, `objects` of the
 * open apply, `opened_ms` and `apps` of its stream objects, `holder`, `lease_until`, never expired). Marks of the protocol before lanes
 * (`state` running or done) are read as legacy.
 */
export class AggregationLedgerStore implements AggregationLedger {
  /**
   * `run` is given by the local runtime only (LOCAL_RUN_ID, local/runtime.ts): each lane lease
   * records the run that took it, and a lane another run holds is taken over at once, unexpired.
   * Locally that is sound because a data directory admits one runtime at a time
   * (local/emulators.ts), so a lease of another run is a dead process's, as after a kill -9; its
   * open apply is a crash the protocol recovers from (docs/aggregation.md). In AWS nothing sets
   * it: concurrent invocations run in many processes, and a lease held is only ever run out or
   * given back.
   */
  constructor(
    private readonly tableName: string,
    private readonly options: { readonly run?: string } = {},
  ) {}

  async marks(tokens: readonly string[]): Promise<Map<string, ObjectMark>> {
    const found = new Map<string, ObjectMark>();
    for (const item of await this.batchGet(tokens.map(markPk))) {
      const mark = markOf(item);
      if (mark) found.set(String(item.pk).slice('agg#'.length), mark);
    }
    return found;
  }

  async include(token: string, mark: Extract<ObjectMark, { kind: 'included' }>, nowMs: number): Promise<ObjectMark> {
    return this.putMark(
      {
        pk: markPk(token),
        m: MARK,
        lane: mark.stamp.lane,
        seq: mark.stamp.seq,
        ...(mark.stamp.openedMs === undefined ? {} : { opened_ms: mark.stamp.openedMs }),
        app_id: mark.appId,
        journal: JSON.stringify(mark.journal),
        ...(mark.usage ? { usage: mark.usage } : {}),
        expires_at: Math.floor(nowMs / 1000) + LEDGER_MARK_DAYS * 86_400,
      },
      // A void mark of another apply, and a legacy lease run out, give way; a void of this apply does not.
      'attribute_not_exists(pk) OR (m = :void AND (lane <> :lane OR seq <> :seq)) OR (#state = :running AND lease_until < :now)',
      { ':void': VOID, ':lane': mark.stamp.lane, ':seq': mark.stamp.seq, ':running': 'running', ':now': nowMs },
    );
  }

  void(token: string, stamp: Stamp, nowMs: number): Promise<ObjectMark> {
    return this.putMark(
      { pk: markPk(token), m: VOID, lane: stamp.lane, seq: stamp.seq, expires_at: Math.floor(nowMs / 1000) + LEDGER_MARK_DAYS * 86_400 },
      'attribute_not_exists(pk)',
      {},
    );
  }

  async lanes(numbers: readonly number[]): Promise<Map<number, LaneState>> {
    const items = new Map((await this.batchGet(numbers.map(lanePk))).map((item) => [String(item.pk), item]));
    return new Map(numbers.map((lane) => [lane, laneOf(lane, items.get(lanePk(lane)))]));
  }

  async take(
    lane: number,
    holder: string,
    objects: readonly string[],
    nowMs: number,
    leaseMs: number,
    apps: readonly string[] = [],
  ): Promise<TakeResult> {
    const { run } = this.options;
    const free = `(attribute_not_exists(lease_until) OR lease_until < :now${run === undefined ? '' : ' OR (attribute_exists(lease_run) AND lease_run <> :run)'})`;
    const lease = {
      ':holder': holder,
      ':until': nowMs + leaseMs,
      ':now': nowMs,
      ...(run === undefined ? {} : { ':run': run }),
    };
    const leaseSet = `holder = :holder, lease_until = :until${run === undefined ? '' : ', lease_run = :run'}`;
    try {
      // Nothing open on a free lane: taken and the next apply reserved in one write.
      const { Attributes } = await dynamoClient().send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: lanePk(lane) },
          UpdateExpression: `SET ${leaseSet}, seq = if_not_exists(seq, :zero) + :one, applied = if_not_exists(applied, :zero), objects = :objects, opened_ms = :now, apps = :apps`,
          ConditionExpression: `attribute_not_exists(pk) OR (${free} AND seq = applied)`,
          ExpressionAttributeValues: { ...lease, ':zero': 0, ':one': 1, ':objects': [...objects], ':apps': [...apps] },
          ReturnValues: 'UPDATED_NEW',
        }),
      );
      return { state: 'reserved', seq: Number(Attributes?.seq) };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
    try {
      // Free with an apply open (a dead holder's): taken as it is, to replay that apply first.
      const { Attributes } = await dynamoClient().send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: lanePk(lane) },
          UpdateExpression: `SET ${leaseSet}`,
          ConditionExpression: `attribute_exists(pk) AND ${free}`,
          ExpressionAttributeValues: lease,
          ReturnValues: 'ALL_NEW',
        }),
      );
      return { state: 'open', lane: laneOf(lane, Attributes) };
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const [item] = await this.batchGet([lanePk(lane)]);
      return { state: 'held', leaseUntilMs: laneOf(lane, item).leaseUntilMs };
    }
  }

  reserveAfter(
    lane: number,
    holder: string,
    applied: number,
    objects: readonly string[],
    openedMs?: number,
    apps: readonly string[] = [],
  ): Promise<boolean> {
    const opened = openedMs === undefined ? ' REMOVE opened_ms' : ', opened_ms = :opened';
    return this.onLane(lane, holder, `SET applied = :applied, seq = :next, objects = :objects, apps = :apps${opened}`, 'seq = :applied', {
      ':applied': applied,
      ':next': applied + 1,
      ':objects': [...objects],
      ':apps': [...apps],
      ...(openedMs === undefined ? {} : { ':opened': openedMs }),
    });
  }

  async settle(lane: number, holder: string, seq: number): Promise<void> {
    await this.onLane(lane, holder, 'SET applied = :seq, lease_until = :zero REMOVE objects, opened_ms, apps', 'seq = :seq', {
      ':seq': seq,
      ':zero': 0,
    });
  }

  async release(lane: number, holder: string): Promise<void> {
    await this.onLane(lane, holder, 'SET lease_until = :zero', undefined, { ':zero': 0 });
  }

  async finishLegacy(token: string, nowMs: number): Promise<void> {
    await dynamoClient().send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: markPk(token) },
        UpdateExpression: 'SET #state = :done, finished_ms = :now REMOVE journal, lease_until, lease_run',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':done': 'done', ':now': nowMs },
      }),
    );
  }

  /** An update of the lane that holds only while `holder` has it: false when it does not any more. */
  private async onLane(
    lane: number,
    holder: string,
    UpdateExpression: string,
    condition: string | undefined,
    values: Record<string, unknown>,
  ): Promise<boolean> {
    try {
      await dynamoClient().send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: lanePk(lane) },
          UpdateExpression,
          ConditionExpression: ['holder = :holder', condition].filter(Boolean).join(' AND '),
          ExpressionAttributeValues: { ...values, ':holder': holder },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Puts a mark under the condition; the mark that stands either way. */
  private async putMark(item: Record<string, unknown>, condition: string, values: Record<string, unknown>): Promise<ObjectMark> {
    try {
      await dynamoClient().send(
        new PutCommand({
          TableName: this.tableName,
          Item: item,
          ConditionExpression: condition,
          ExpressionAttributeNames: condition.includes('#state') ? { '#state': 'state' } : undefined,
          ExpressionAttributeValues: Object.keys(values).length > 0 ? values : undefined,
        }),
      );
      return markOf(item) as ObjectMark;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const [stored] = await this.batchGet([String(item.pk)]);
      const mark = stored && markOf(stored);
      if (!mark) throw new Error(`ledger mark ${String(item.pk)} refused and then not found`);
      return mark;
    }
  }

  /** The items of these keys, read consistently, in any order; absent ones left out. */
  private async batchGet(keys: readonly string[]): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    for (let i = 0; i < keys.length; i += 100) {
      let unread: Record<string, unknown>[] = [...new Set(keys.slice(i, i + 100))].map((pk) => ({ pk }));
      for (let attempt = 0; unread.length > 0; attempt++) {
        if (attempt === 5) throw new Error('ledger: items left unread by the batch read');
        const { Responses, UnprocessedKeys } = await dynamoClient().send(
          new BatchGetCommand({ RequestItems: { [this.tableName]: { Keys: unread, ConsistentRead: true } } }),
        );
        items.push(...(Responses?.[this.tableName] ?? []));
        unread = UnprocessedKeys?.[this.tableName]?.Keys ?? [];
      }
    }
    return items;
  }
}

function markOf(item: Record<string, unknown>): ObjectMark | undefined {
  const stamp = {
    lane: Number(item.lane),
    seq: Number(item.seq),
    ...(typeof item.opened_ms === 'number' ? { openedMs: item.opened_ms } : {}),
  };
  if (item.m === MARK) {
    const usage = item.usage as { key?: unknown; events?: unknown } | undefined;
    return {
      kind: 'included',
      stamp,
      appId: String(item.app_id),
      journal: JSON.parse(String(item.journal)) as Journal,
      ...(usage ? { usage: { key: String(usage.key), events: Number(usage.events) } } : {}),
    };
  }
  if (item.m === VOID) return { kind: 'void', stamp };
  if (item.state === 'done' || item.state === 'running') {
    const journal = typeof item.journal === 'string' ? (JSON.parse(item.journal) as Journal) : undefined;
    return {
      kind: 'legacy',
      done: item.state === 'done',
      leaseUntilMs: typeof item.lease_until === 'number' ? item.lease_until : 0,
      ...(journal ? { journal } : {}),
    };
  }
  return undefined;
}

function laneOf(lane: number, item: Record<string, unknown> | undefined): LaneState {
  const holder = typeof item?.holder === 'string' ? item.holder : undefined;
  return {
    lane,
    seq: Number(item?.seq ?? 0),
    applied: Number(item?.applied ?? 0),
    objects: Array.isArray(item?.objects) ? item.objects.map(String) : [],
    ...(typeof item?.opened_ms === 'number' ? { openedMs: item.opened_ms } : {}),
    apps: Array.isArray(item?.apps) ? item.apps.map(String) : [],
    ...(holder === undefined ? {} : { holder }),
    leaseUntilMs: Number(item?.lease_until ?? 0),
  };
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
