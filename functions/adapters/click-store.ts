import { GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { LoggedClick } from '../domain/aggregation/click-counts';
import { appHourKey, appIpPlatform, CLICK_HOUR_SHARDS, type ClickRecord } from '../domain/links/click';
import {
  CLICK_LOG_SHARDS,
  clickLogKey,
  clickLogPk,
  clickLogRange,
  clickLogShard,
  ipPlatformHash,
  utcHourOf,
} from '../domain/links/click-log-key';
import { clientAddress } from '../domain/links/ip-block';
import type { Platform } from '../domain/links/platform';
import type { ClickLog } from '../domain/links/tracking-link';
import type { ClickEraser } from '../domain/privacy/drain';
import { dynamoClient } from '../shared/clients/dynamo';
import { batchDelete } from './install-store';
import { queryAll, queryItems } from './query-pages';

const HOUR_MS = 3_600_000;
/** How many hours `latest` reads at once, newest first: a window of 24 hours is at most 5 round trips. */
const LATEST_HOURS_AT_ONCE = 6;
/** At most this many hours per `latest`: the longest lookback (30 days) and a day more. */
const LATEST_MAX_HOURS = 31 * 24;

/** The tables a ClickStore reads: the click log, and the clicks table it replaced (read until it empties by TTL). */
export interface ClickTables {
  /** click_log (lib/manifest.ts): written and read. */
  readonly log: string;
  /**
   * clicks, no longer written (docs/adr/0008, "Migration"): a click recorded before the upgrade is read
   * from it by id, by its by_app_ip_platform index and its by_app_hour index.
   */
  readonly legacy: string;
}

/** The redirect's side of the click log: one item per click, under the key its id encodes. */
export class ClickLogWriter implements ClickLog {
  constructor(protected readonly logTable: string) {}

  /** Records the click; an id of another format is a caller's bug. */
  async record(click: ClickRecord): Promise<void> {
    const key = clickLogKey(click.app_id, click.click_id);
    if (!key) throw new Error(`click id ${click.click_id} does not encode a click_log key`);
    await dynamoClient().send(
      new PutCommand({ TableName: this.logTable, Item: { ...click, ...key }, ConditionExpression: 'attribute_not_exists(pk)' }),
    );
  }
}

/**
 * Click records. The redirect writes one item per click to click_log, under the key its id encodes
 * (functions/domain/links/click-log-key.ts), one write unit and no index; the aggregator reads one
 * by app and id (deterministic attribution) or the latest of an (app, IP, platform)
 * (probabilistic), the export and the click-count lane an app's hour. DynamoDB's TTL removes a
 * click some time after expires_at (long after its claim deadline, click.ts) and dynalite never
 * does, so the reads here can skip clicks past it themselves; attribution reads with nowMs 0
 * (attribution-lookups.ts) and applies the lookback.
 *
 * A click recorded before click_log is in the old clicks table until its TTL: each read falls back
 * to it as its own doc says (docs/adr/0008, section 2 revised, "Migration").
 */
export class ClickStore extends ClickLogWriter implements ClickEraser {
  private readonly iphOf: (appIpPlatform: string) => string;

  /** `iphOf` is a test seam (two addresses with one hash): the reads hash with it, an id carries its own hash. */
  constructor(
    private readonly tables: ClickTables,
    options: { readonly iphOf?: (appIpPlatform: string) => string } = {},
  ) {
    super(tables.log);
    this.iphOf = options.iphOf ?? ipPlatformHash;
  }

  /** The app's clicks recorded in a UTC hour (`YYYY-MM-DDTHH`): the hour's keys of each table (4 and 16), expired ones included. */
  async ofHour(appId: string, hour: string): Promise<ClickRecord[]> {
    const [logged, legacy] = await Promise.all([this.logHour<StoredClick>(appId, hour), this.legacyHour<StoredClick>(appId, hour)]);
    return [...logged, ...legacy].map(recordOf);
  }

  /**
   * The click-count lane's read (functions/domain/aggregation/click-counts.ts): the app's clicks
   * of a UTC hour with ts_ms at or after `fromTs`, only the attributes a count needs, from
   * click_log's 4 keys of the hour, and from the old table's by_app_hour index as well when
   * `withLegacy` (such clicks carry `legacy`). The sort key orders an hour by address, not time, so
   * `fromTs` is a filter: each read pays for the whole hour so far (docs/analytics.md, "Where a
   * click's write units go"). Eventually consistent, at half the price: the lane counts up to
   * HORIZON_MS before now only, as it did on the index.
   */
  async clicksAfter(appId: string, hour: string, fromTs: number, withLegacy: boolean): Promise<LoggedClick[]> {
    const projection = {
      ProjectionExpression: LOGGED_FIELDS.map((_, i) => `#f${i}`).join(', '),
      ExpressionAttributeNames: Object.fromEntries(LOGGED_FIELDS.map((field, i) => [`#f${i}`, field])),
    };
    const [logged, legacy] = await Promise.all([
      this.logHour<LoggedClick>(appId, hour, {
        ...projection,
        FilterExpression: '#ts >= :from',
        ExpressionAttributeNames: { ...projection.ExpressionAttributeNames, '#ts': 'ts_ms' },
        ExpressionAttributeValues: { ':from': fromTs },
      }),
      withLegacy
        ? this.legacyHour<LoggedClick>(appId, hour, {
            ...projection,
            KeyConditionExpression: 'app_hour = :key AND ts_ms >= :from',
            ExpressionAttributeValues: { ':from': fromTs },
          })
        : [],
    ]);
    return [...logged, ...legacy.map((click) => ({ ...click, legacy: true }))];
  }

  /** Whether the old clicks table holds any item (the click-count lane's `no_legacy`): a scan that stops at the first. */
  async legacyHolds(): Promise<boolean> {
    const { Items, LastEvaluatedKey } = await dynamoClient().send(
      new ScanCommand({ TableName: this.tables.legacy, Limit: 1, ProjectionExpression: 'click_id' }),
    );
    // A page may come back empty with more to scan: that is not an empty table.
    return (Items?.length ?? 0) > 0 || LastEvaluatedKey !== undefined;
  }

  /** Deletes the app's clicks (a privacy deletion) from whichever table holds each; returns how many ids it was given. */
  async deleteMany(appId: string, clickIds: readonly string[]): Promise<number> {
    const logKeys: LogKey[] = [];
    const legacyKeys: { click_id: string }[] = [];
    for (const clickId of clickIds) {
      const key = clickLogKey(appId, clickId);
      if (key) logKeys.push(key);
      else legacyKeys.push({ click_id: clickId });
    }
    await Promise.all([batchDelete(this.tables.log, logKeys), batchDelete(this.tables.legacy, legacyKeys)]);
    return clickIds.length;
  }

  /**
   * The app's click of this id: one GetItem of the key the id encodes; an id of the old format is
   * looked up in the old table, and only a click of the app is returned from either.
   */
  async byId(appId: string, clickId: string, nowMs = Date.now()): Promise<ClickRecord | undefined> {
    const key = clickLogKey(appId, clickId);
    if (key) {
      const { Item } = await dynamoClient().send(new GetCommand({ TableName: this.tables.log, Key: key }));
      if (!Item) return undefined;
      const click = recordOf(Item as StoredClick);
      return click.app_id === appId ? live(click, nowMs) : undefined;
    }
    const { Item } = await dynamoClient().send(new GetCommand({ TableName: this.tables.legacy, Key: { click_id: clickId } }));
    return Item && live(recordOf(Item as StoredClick), nowMs);
  }

  /**
   * The latest unexpired click of the (app, IP in any spelling, platform) made within [fromMs, toMs]:
   * one query per UTC hour of the window, newest hour first, a few hours at once, stopping at the
   * first hour with a match; then, if none, the old table's by_app_ip_platform index.
   */
  async latest(
    query: { appId: string; ip: string; platform: Platform; fromMs: number; toMs: number },
    nowMs = Date.now(),
  ): Promise<ClickRecord | undefined> {
    const key = appIpPlatform(query.appId, clientAddress(query.ip).ip, query.platform);
    const iph = this.iphOf(key);
    const range = clickLogRange(iph, query.fromMs, query.toMs);
    if (!range) return undefined;
    const hours: string[] = [];
    for (let ms = query.toMs; hours.length < LATEST_MAX_HOURS && utcHourOf(ms) >= utcHourOf(query.fromMs); ms -= HOUR_MS) {
      hours.push(utcHourOf(ms));
    }
    for (let at = 0; at < hours.length; at += LATEST_HOURS_AT_ONCE) {
      const found = await Promise.all(
        hours.slice(at, at + LATEST_HOURS_AT_ONCE).map((hour) =>
          firstLive(
            queryItems<StoredClick>({
              TableName: this.tables.log,
              KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
              ExpressionAttributeValues: { ':pk': clickLogPk(query.appId, hour, clickLogShard(iph)), ':from': range.from, ':to': range.to },
              ScanIndexForward: false,
              Limit: 10,
            }),
            // Another (IP, platform) of the app whose hash is the same is in the same range.
            (click) => click.app_ip_platform === key,
            nowMs,
          ),
        ),
      );
      const newest = found.find((click) => click !== undefined);
      if (newest) return recordOf(newest);
    }
    const old = await firstLive(
      queryItems<StoredClick>({
        TableName: this.tables.legacy,
        IndexName: 'by_app_ip_platform',
        KeyConditionExpression: 'app_ip_platform = :key AND ts_ms BETWEEN :from AND :to',
        ExpressionAttributeValues: { ':key': key, ':from': query.fromMs, ':to': query.toMs },
        ScanIndexForward: false,
        Limit: 10,
      }),
      () => true,
      nowMs,
    );
    return old && recordOf(old);
  }

  /** The items of click_log's keys of the app's hour (CLICK_LOG_SHARDS). */
  private async logHour<T>(appId: string, hour: string, extra: QueryExtra = {}): Promise<T[]> {
    const shards = await Promise.all(
      CLICK_LOG_SHARDS.map((shard) =>
        queryAll<T>({
          TableName: this.tables.log,
          ...extra,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: { ...extra.ExpressionAttributeValues, ':pk': clickLogPk(appId, hour, shard) },
        }),
      ),
    );
    return shards.flat();
  }

  /** The items of the old table's by_app_hour index for the app's hour (16 keys). */
  private async legacyHour<T>(appId: string, hour: string, extra: QueryExtra = {}): Promise<T[]> {
    const shards = await Promise.all(
      CLICK_HOUR_SHARDS.map((shard) =>
        queryAll<T>({
          TableName: this.tables.legacy,
          IndexName: 'by_app_hour',
          KeyConditionExpression: 'app_hour = :key',
          ...extra,
          ExpressionAttributeValues: { ...extra.ExpressionAttributeValues, ':key': appHourKey(appId, hour, shard) },
        }),
      ),
    );
    return shards.flat();
  }
}

type LogKey = { pk: string; sk: string };
/** A click as a table holds it: with click_log's key, or the old table's by_app_hour key. */
type StoredClick = ClickRecord & Partial<LogKey> & { app_hour?: string };

/** The click record without the tables' keys. */
const recordOf = ({ pk: _pk, sk: _sk, app_hour: _appHour, ...click }: StoredClick): ClickRecord => click;

interface QueryExtra {
  readonly KeyConditionExpression?: string;
  readonly FilterExpression?: string;
  readonly ProjectionExpression?: string;
  readonly ExpressionAttributeNames?: Record<string, string>;
  readonly ExpressionAttributeValues?: Record<string, unknown>;
  readonly ConsistentRead?: boolean;
}

/** What the click-count lane reads of a click (LoggedClick). */
const LOGGED_FIELDS = ['click_id', 'ts_ms', 'link_id', 'partner', 'campaign', 'country', 'platform', 'count_day'] as const;

/** The first item, in the query's order, that is the click sought and unexpired; reading stops there. */
async function firstLive<T extends ClickRecord>(
  items: AsyncIterable<T>,
  sought: (click: T) => boolean,
  nowMs: number,
): Promise<T | undefined> {
  for await (const click of items) if (sought(click) && live(click, nowMs)) return click;
  return undefined;
}

function live<T extends ClickRecord>(click: T | undefined, nowMs: number): T | undefined {
  return click && click.expires_at * 1000 > nowMs ? click : undefined;
}
