import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { appIpPlatform, type ClickRecord } from '../domain/links/click';
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
 * (probabilistic). DynamoDB's TTL removes a click some time after expires_at and dynalite never
 * does, so the reads here skip expired clicks themselves.
 */
export class ClickStore implements ClickLog, ClickEraser {
  constructor(private readonly tableName: string) {}

  async record(click: ClickRecord): Promise<void> {
    await dynamoClient().send(
      new PutCommand({ TableName: this.tableName, Item: click, ConditionExpression: 'attribute_not_exists(click_id)' }),
    );
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

function live(click: ClickRecord | undefined, nowMs: number): ClickRecord | undefined {
  return click && click.expires_at * 1000 > nowMs ? click : undefined;
}
