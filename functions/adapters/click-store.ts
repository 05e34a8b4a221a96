import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { LoggedClick } from '../domain/aggregation/click-counts';
import { appHourKey, appIpPlatform, CLICK_HOUR_SHARDS, type ClickRecord, clickAppHour } from '../domain/links/click';
import { clientAddress } from '../domain/links/ip-block';
import type { Platform } from '../domain/links/platform';
import type { ClickLog } from '../domain/links/tracking-link';
import type { ClickEraser } from '../domain/privacy/drain';
import { dynamoClient } from '../shared/clients/dynamo';
import { batchDelete } from './install-store';
import { queryItems } from './query-pages';

/**
 * Click records. The redirect writes them; the aggregator reads one by id (deterministic
 * attribution) or the latest of an (app, IP, platform) through the by_app_ip_platform index
 * (probabilistic). DynamoDB's TTL removes a click some time after expires_at (long after its claim
 * deadline, click.ts) and dynalite never does, so the reads here can skip clicks past it
 * themselves; attribution reads with nowMs 0 (attribution-lookups.ts) and applies the lookback.
 */
export class ClickStore implements ClickLog, ClickEraser {
  constructor(private readonly tableName: string) {}

  /** With app_hour, the key of the by_app_hour index the warehouse export reads an app's hour through. */
  async record(click: ClickRecord): Promise<void> {
    await dynamoClient().send(
      new PutCommand({
        TableName: this.tableName,
        Item: { ...click, app_hour: clickAppHour(click) },
        ConditionExpression: 'attribute_not_exists(click_id)',
      }),
    );
  }

  /** The app's clicks recorded in a UTC hour (`YYYY-MM-DDTHH`): the 16 shards of by_app_hour, expired ones included. */
  async ofHour(appId: string, hour: string): Promise<ClickRecord[]> {
    const shards = await Promise.all(
      CLICK_HOUR_SHARDS.map(async (shard) => {
        const clicks: ClickRecord[] = [];
        const pages = queryItems<ClickRecord & { app_hour?: string }>({
          TableName: this.tableName,
          IndexName: 'by_app_hour',
          KeyConditionExpression: 'app_hour = :key',
          ExpressionAttributeValues: { ':key': appHourKey(appId, hour, shard) },
        });
        for await (const { app_hour: _key, ...click } of pages) clicks.push(click);
        return clicks;
      }),
    );
    return shards.flat();
  }

  /**
   * The click-count lane's read (functions/domain/aggregation/click-counts.ts): the app's clicks
   * of a UTC hour with ts_ms at or after `fromTs`, from the hour's 16 shards of by_app_hour, only
   * the attributes a count needs.
   */
  async clicksAfter(appId: string, hour: string, fromTs: number): Promise<LoggedClick[]> {
    const shards = await Promise.all(
      CLICK_HOUR_SHARDS.map(async (shard) => {
        const clicks: LoggedClick[] = [];
        const pages = queryItems<LoggedClick>({
          TableName: this.tableName,
          IndexName: 'by_app_hour',
          KeyConditionExpression: 'app_hour = :key AND ts_ms >= :from',
          ProjectionExpression: LOGGED_FIELDS.map((_, i) => `#f${i}`).join(', '),
          ExpressionAttributeNames: Object.fromEntries(LOGGED_FIELDS.map((field, i) => [`#f${i}`, field])),
          ExpressionAttributeValues: { ':key': appHourKey(appId, hour, shard), ':from': fromTs },
        });
        for await (const click of pages) clicks.push(click);
        return clicks;
      }),
    );
    return shards.flat();
  }

  /** Deletes the clicks (a privacy deletion); returns how many ids it was given. */
  async deleteMany(clickIds: readonly string[]): Promise<number> {
    await batchDelete(
      this.tableName,
      clickIds.map((click_id) => ({ click_id })),
    );
    return clickIds.length;
  }

  async byId(clickId: string, nowMs = Date.now()): Promise<ClickRecord | undefined> {
    const { Item } = await dynamoClient().send(new GetCommand({ TableName: this.tableName, Key: { click_id: clickId } }));
    return live(Item as ClickRecord | undefined, nowMs);
  }

  /** The latest unexpired click of the (app, IP in any spelling, platform) made within [fromMs, toMs]. */
  async latest(
    query: { appId: string; ip: string; platform: Platform; fromMs: number; toMs: number },
    nowMs = Date.now(),
  ): Promise<ClickRecord | undefined> {
    const clicks = queryItems<ClickRecord>({
      TableName: this.tableName,
      IndexName: 'by_app_ip_platform',
      KeyConditionExpression: 'app_ip_platform = :key AND ts_ms BETWEEN :from AND :to',
      ExpressionAttributeValues: {
        ':key': appIpPlatform(query.appId, clientAddress(query.ip).ip, query.platform),
        ':from': query.fromMs,
        ':to': query.toMs,
      },
      ScanIndexForward: false,
      Limit: 10,
    });
    for await (const click of clicks) if (live(click, nowMs)) return click;
    return undefined;
  }
}

/** What the click-count lane reads of a click (LoggedClick). */
const LOGGED_FIELDS = ['click_id', 'ts_ms', 'link_id', 'partner', 'campaign', 'country', 'platform', 'count_day'] as const;

function live(click: ClickRecord | undefined, nowMs: number): ClickRecord | undefined {
  return click && click.expires_at * 1000 > nowMs ? click : undefined;
}
