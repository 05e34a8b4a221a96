import { SendMessageBatchCommand } from '@aws-sdk/client-sqs';
import { DeleteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { PostbackConfig } from '../domain/partner-postbacks/config';
import { type AttemptRecord, attemptOf, type DeliveryRecords } from '../domain/partner-postbacks/deliver';
import type { PostbackMessage, PostbackRecord, PostbackState } from '../domain/partner-postbacks/trigger';
import type { InstallPostbacks, PostbackItemKey } from '../domain/privacy/drain';
import { dynamoClient } from '../shared/clients/dynamo';
import { sqsClient } from '../shared/clients/sqs';
import { isConditionFailure } from './aws-errors';
import { batchDelete } from './install-store';
import { queryFirst, queryItems } from './query-pages';

/**
 * The postbacks table, one partition per app (pk = app_id):
 *   cfg#<partner>                         a partner's configuration (`admin postback set`)
 *   pb#<postback_id>                      a postback: made once per decision, then its state
 *   log#<at_ms>#<postback_id>#<attempt>   one delivery attempt, newest last (`admin postback log`)
 * Postbacks and attempts expire after LOG_DAYS; configurations stay. Both carry app_install
 * (`<app_id>#<install_hash>`), the by_install index by which the privacy drain finds an install's.
 */
export const LOG_DAYS = 30;
const expiresAt = (nowMs: number) => Math.floor(nowMs / 1000) + LOG_DAYS * 86_400;
const SK = {
  config: (partner: string) => `cfg#${partner}`,
  postback: (postbackId: string) => `pb#${postbackId}`,
  attempt: (a: AttemptRecord) => `log#${String(a.at_ms).padStart(13, '0')}#${a.postback_id}#${a.attempt}`,
};

export class PostbackConfigs {
  constructor(private readonly table: string) {}

  async put(config: PostbackConfig): Promise<void> {
    await dynamoClient().send(
      new PutCommand({ TableName: this.table, Item: { pk: config.app_id, sk: SK.config(config.partner), ...config } }),
    );
  }

  async list(appId: string): Promise<PostbackConfig[]> {
    const configs: PostbackConfig[] = [];
    for await (const item of queryItems<Record<string, unknown>>({
      TableName: this.table,
      KeyConditionExpression: 'pk = :app AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':app': appId, ':prefix': 'cfg#' },
    })) {
      const { pk: _pk, sk: _sk, ...config } = item;
      configs.push(config as unknown as PostbackConfig);
    }
    return configs;
  }

  /** False when the partner had no configuration. */
  async delete(appId: string, partner: string): Promise<boolean> {
    const { Attributes } = await dynamoClient().send(
      new DeleteCommand({ TableName: this.table, Key: { pk: appId, sk: SK.config(partner) }, ReturnValues: 'ALL_OLD' }),
    );
    return Attributes !== undefined;
  }
}

/** Postbacks and their attempts: what the aggregator makes and the sender delivers. */
export class PostbackRecords implements DeliveryRecords, InstallPostbacks {
  constructor(
    private readonly table: string,
    private readonly queueUrl?: string,
  ) {}

  async get(appId: string, postbackId: string): Promise<PostbackRecord | undefined> {
    const { Item } = await dynamoClient().send(
      new GetCommand({ TableName: this.table, Key: { pk: appId, sk: SK.postback(postbackId) }, ConsistentRead: true }),
    );
    if (!Item) return undefined;
    const { pk: _pk, sk: _sk, lease_until: _lease, expires_at: _expires, ...record } = Item;
    return record as PostbackRecord;
  }

  /**
   * Makes each postback once and queues it. A record is written only if absent ('new'), then its
   * message is sent, then it is marked 'queued'. A redelivered aggregation finds its records: one
   * still 'new' (the crash fell between the write and the send) is sent again, and a duplicate
   * message is harmless because the sender claims the record before calling the partner.
   * Withheld postbacks are recorded, with a log line saying why, and never queued.
   */
  async enqueue(records: readonly PostbackRecord[], nowMs: number): Promise<void> {
    if (!this.queueUrl) throw new Error('PostbackRecords.enqueue needs the postback queue URL');
    const toSend: PostbackRecord[] = [];
    await Promise.all(
      records.map(async (record) => {
        const stored = await this.createOnce(record, nowMs);
        if (stored.state === 'new') toSend.push(stored);
      }),
    );
    for (let start = 0; start < toSend.length; start += 10) {
      const chunk = toSend.slice(start, start + 10);
      const { Failed = [] } = await sqsClient().send(
        new SendMessageBatchCommand({
          QueueUrl: this.queueUrl,
          Entries: chunk.map((record, i) => ({
            Id: String(i),
            MessageBody: JSON.stringify({ version: 1, app_id: record.app_id, postback_id: record.postback_id } satisfies PostbackMessage),
          })),
        }),
      );
      if (Failed.length > 0) throw new Error(`the postback queue refused ${Failed.length} message(s): ${Failed[0]?.Code}`);
      await Promise.all(chunk.map((record) => this.markQueued(record)));
    }
  }

  private async createOnce(record: PostbackRecord, nowMs: number): Promise<PostbackRecord> {
    try {
      await dynamoClient().send(
        new PutCommand({
          TableName: this.table,
          Item: { pk: record.app_id, sk: SK.postback(record.postback_id), ...record, expires_at: expiresAt(nowMs) },
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      return (await this.get(record.app_id, record.postback_id)) ?? record;
    }
    if (record.state === 'withheld') {
      await this.logAttempt({ ...attemptOf(record, 0, nowMs, 'withheld'), error: record.withheld_reason });
    }
    return record;
  }

  private async markQueued(record: PostbackRecord): Promise<void> {
    await dynamoClient()
      .send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: record.app_id, sk: SK.postback(record.postback_id) },
          UpdateExpression: 'SET #state = :queued',
          ConditionExpression: '#state = :new',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: { ':queued': 'queued', ':new': 'new' },
        }),
      )
      .catch((error) => {
        // The sender got there first: its state stands.
        if (!isConditionFailure(error)) throw error;
      });
  }

  async claim(appId: string, postbackId: string, nowMs: number, leaseMs: number, attempt: number): Promise<boolean> {
    try {
      await dynamoClient().send(
        new UpdateCommand({
          TableName: this.table,
          Key: { pk: appId, sk: SK.postback(postbackId) },
          UpdateExpression: 'SET lease_until = :until',
          // attempts: a copy of a message whose attempt was made already finds it made.
          ConditionExpression:
            '#state IN (:new, :queued) AND (attribute_not_exists(lease_until) OR lease_until < :now) AND ' +
            '(attribute_not_exists(attempts) OR attempts < :attempt)',
          ExpressionAttributeNames: { '#state': 'state' },
          ExpressionAttributeValues: {
            ':until': nowMs + leaseMs,
            ':now': nowMs,
            ':new': 'new',
            ':queued': 'queued',
            ':attempt': attempt,
          },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async settle(appId: string, postbackId: string, state: PostbackState, attempts: number): Promise<void> {
    await dynamoClient().send(
      new UpdateCommand({
        TableName: this.table,
        Key: { pk: appId, sk: SK.postback(postbackId) },
        UpdateExpression: 'SET #state = :state, attempts = :attempts REMOVE lease_until',
        ExpressionAttributeNames: { '#state': 'state' },
        ExpressionAttributeValues: { ':state': state, ':attempts': attempts },
      }),
    );
  }

  /** Up to `limit` keys of an install's postbacks and attempts (the privacy drain). */
  async ofInstall(installKey: string, limit: number): Promise<{ keys: PostbackItemKey[]; more: boolean }> {
    const { items, more } = await queryFirst<Record<string, unknown>>(
      {
        TableName: this.table,
        IndexName: 'by_install',
        KeyConditionExpression: 'app_install = :install',
        ExpressionAttributeValues: { ':install': installKey },
        ProjectionExpression: 'pk, sk',
      },
      limit,
    );
    return { keys: items.map((item) => ({ pk: String(item.pk), sk: String(item.sk) })), more };
  }

  async deleteItems(keys: readonly PostbackItemKey[]): Promise<void> {
    await batchDelete(
      this.table,
      keys.map(({ pk, sk }) => ({ pk, sk })),
    );
  }

  async logAttempt(attempt: AttemptRecord): Promise<void> {
    await dynamoClient().send(
      new PutCommand({
        TableName: this.table,
        Item: { pk: attempt.app_id, sk: SK.attempt(attempt), ...attempt, expires_at: expiresAt(attempt.at_ms) },
      }),
    );
  }

  /**
   * The app's attempts, newest first, optionally of one partner (`admin postback log`) or since a
   * time (`admin health`'s window), at most `limit`.
   */
  async attempts(appId: string, options: { partner?: string; limit?: number; sinceMs?: number } = {}): Promise<AttemptRecord[]> {
    const limit = options.limit ?? 200;
    const attempts: AttemptRecord[] = [];
    for await (const item of queryItems<Record<string, unknown>>({
      TableName: this.table,
      KeyConditionExpression: 'pk = :app AND begins_with(sk, :prefix)',
      ExpressionAttributeValues: { ':app': appId, ':prefix': 'log#' },
      ScanIndexForward: false,
    })) {
      const { pk: _pk, sk: _sk, expires_at: _expires, app_id: _app, app_install: _install, ...attempt } = item;
      if (options.sinceMs !== undefined && Number(attempt.at_ms) < options.sinceMs) break;
      if (options.partner !== undefined && attempt.partner !== options.partner) continue;
      attempts.push({ app_id: appId, ...attempt } as AttemptRecord);
      if (attempts.length >= limit) break;
    }
    return attempts;
  }

  /** The app's attempts made in [sinceMs, untilMs) with one outcome (`admin postback withheld`): a range of the log's keys. */
  async attemptsBetween(appId: string, sinceMs: number, untilMs: number, outcome: AttemptRecord['outcome']): Promise<AttemptRecord[]> {
    const attempts: AttemptRecord[] = [];
    for await (const item of queryItems<Record<string, unknown>>({
      TableName: this.table,
      // `log#<at_ms, 13 digits>#...`: from the first millisecond to before the last, in key order.
      KeyConditionExpression: 'pk = :app AND sk BETWEEN :from AND :to',
      FilterExpression: '#outcome = :outcome',
      ExpressionAttributeNames: { '#outcome': 'outcome' },
      ExpressionAttributeValues: {
        ':app': appId,
        ':from': `log#${String(Math.max(0, sinceMs)).padStart(13, '0')}`,
        ':to': `log#${String(Math.max(0, untilMs - 1)).padStart(13, '0')}$`,
        ':outcome': outcome,
      },
    })) {
      const { pk: _pk, sk: _sk, expires_at: _expires, app_id: _app, app_install: _install, ...attempt } = item;
      attempts.push({ app_id: appId, ...attempt } as AttemptRecord);
    }
    return attempts;
  }
}
