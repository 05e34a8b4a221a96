import { BatchWriteCommand, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { appDevice, type InstallHead, type InstallStore, SK } from '../domain/aggregation/install-state';
import type { InstallPartition } from '../domain/privacy/drain';
import { dynamoClient } from '../shared/clients/dynamo';
import { isConditionFailure } from './aws-errors';
import { queryAll, queryFirst, queryItems } from './query-pages';

/**
 * The installs table: everything the aggregator keeps about one install under pk
 * `<app_id>#<install_uuid>` (functions/domain/aggregation/install-state.ts). Reads are consistent:
 * a claim decided on a stale read would count twice.
 */
export class DynamoInstallStore implements InstallStore, InstallPartition {
  constructor(private readonly tableName: string) {}

  async get<T extends object>(pk: string, sk: string): Promise<T | undefined> {
    const { Item } = await dynamoClient().send(new GetCommand({ TableName: this.tableName, Key: { pk, sk }, ConsistentRead: true }));
    return Item as T | undefined;
  }

  async query<T extends object>(pk: string, skPrefix: string, after?: string): Promise<T[]> {
    if (after !== undefined) {
      // The prefix's items above `after`: BETWEEN includes its lower bound, which is dropped here.
      const items = await queryAll<T & { sk: string }>({
        TableName: this.tableName,
        KeyConditionExpression: 'pk = :pk AND sk BETWEEN :after AND :end',
        ExpressionAttributeValues: { ':pk': pk, ':after': after, ':end': `${skPrefix}\uffff` },
        ConsistentRead: true,
      });
      return items.filter((item) => item.sk > after && item.sk.startsWith(skPrefix));
    }
    // The whole partition without a sort key condition: DynamoDB refuses an empty string as a key value.
    return queryAll<T>({
      TableName: this.tableName,
      ...(skPrefix === ''
        ? { KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk } }
        : {
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
            ExpressionAttributeValues: { ':pk': pk, ':prefix': skPrefix },
          }),
      ConsistentRead: true,
    });
  }

  async claimItem<T extends { pk: string; sk: string }>(item: T): Promise<T> {
    try {
      await dynamoClient().send(new PutCommand({ TableName: this.tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
      return item;
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
      const stored = await this.get<T>(item.pk, item.sk);
      if (!stored) throw new Error(`claim of ${item.sk} refused but no item found`);
      return stored;
    }
  }

  async claimAttributes(pk: string, sk: string, attributes: Readonly<Record<string, unknown>>): Promise<Record<string, unknown>> {
    const result: Record<string, unknown> = {};
    let pending = Object.keys(attributes);
    // Each round sets every attribute still unset, or finds one set and re-reads: at most one
    // round per attribute somebody else sets meanwhile.
    for (let round = 0; pending.length > 0 && round <= pending.length + 1; round++) {
      const names = Object.fromEntries(pending.map((name, i) => [`#a${i}`, name]));
      const values = Object.fromEntries(pending.map((name, i) => [`:v${i}`, attributes[name]]));
      try {
        await dynamoClient().send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk, sk },
            UpdateExpression: `SET ${pending.map((_, i) => `#a${i} = :v${i}`).join(', ')}`,
            ConditionExpression: pending.map((_, i) => `attribute_not_exists(#a${i})`).join(' AND '),
            ExpressionAttributeNames: names,
            ExpressionAttributeValues: values,
          }),
        );
        for (const name of pending) result[name] = attributes[name];
        return result;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
        const stored = (await this.get<Record<string, unknown>>(pk, sk)) ?? {};
        for (const name of pending) if (name in stored) result[name] = stored[name];
        pending = pending.filter((name) => !(name in stored));
      }
    }
    if (pending.length > 0) throw new Error(`could not claim ${pending.join(', ')} on ${sk}`);
    return result;
  }

  async replaceHead(head: InstallHead, expectedMember: string | undefined): Promise<boolean> {
    try {
      await dynamoClient().send(
        new PutCommand({
          TableName: this.tableName,
          Item: head,
          ...(expectedMember === undefined
            ? { ConditionExpression: 'attribute_not_exists(pk)' }
            : {
                ConditionExpression: '#member = :member',
                ExpressionAttributeNames: { '#member': 'member' },
                ExpressionAttributeValues: { ':member': expectedMember },
              }),
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  /** Whether an install of another install_uuid of the app carried this device (the by_device index). */
  async deviceSeenElsewhere(appId: string, deviceHash: string, installUuid: string): Promise<boolean> {
    const own = `${appId}#${installUuid}`;
    const items = queryItems<{ pk: string; sk: string }>({
      TableName: this.tableName,
      IndexName: 'by_device',
      KeyConditionExpression: 'app_device = :device',
      ExpressionAttributeValues: { ':device': appDevice(appId, deviceHash) },
      Limit: 10,
    });
    for await (const item of items) if (item.pk !== own && item.sk === SK.device) return true;
    return false;
  }

  /** The first `limit` items of an install's partition, in key order, and whether more are left. */
  async firstItems(pk: string, limit: number): Promise<{ items: Record<string, unknown>[]; more: boolean }> {
    return queryFirst(
      { TableName: this.tableName, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': pk }, ConsistentRead: true },
      limit,
    );
  }

  async deleteItems(pk: string, sortKeys: readonly string[]): Promise<void> {
    await batchDelete(
      this.tableName,
      sortKeys.map((sk) => ({ pk, sk })),
    );
  }

  /** Every item of one install, for `admin install show`. */
  async installItems(appId: string, installUuid: string): Promise<Record<string, unknown>[]> {
    return this.query(`${appId}#${installUuid}`, '');
  }
}

/** Deletes the keys, 25 a request, sending again what DynamoDB leaves unprocessed. */
export async function batchDelete(tableName: string, keys: readonly Record<string, unknown>[]): Promise<void> {
  for (let start = 0; start < keys.length; start += 25) {
    let requests = keys.slice(start, start + 25).map((Key) => ({ DeleteRequest: { Key } }));
    for (let attempt = 0; requests.length > 0; attempt++) {
      if (attempt === 5) throw new Error(`${requests.length} deletes left unprocessed in ${tableName}`);
      const { UnprocessedItems } = await dynamoClient().send(new BatchWriteCommand({ RequestItems: { [tableName]: requests } }));
      requests = (UnprocessedItems?.[tableName] ?? []) as typeof requests;
      if (requests.length > 0) await new Promise((resolve) => setTimeout(resolve, 50 * 2 ** attempt));
    }
  }
}
