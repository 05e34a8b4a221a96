import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamoClient } from '../shared/clients/dynamo';
import { clientAddress } from '../domain/links/ip-block';
import type { IpBlockEntry } from '../domain/links/tracking-link';

/**
 * Addresses blocked by honeypot links, one item per address. DynamoDB's TTL deletes an entry
 * some time after expires_at (and dynalite never does), so every read checks expires_at itself.
 */
export class IpBlockStore {
  constructor(
    private readonly tableName: string,
  ) {}

  /** A later hit replaces the entry, so the block runs from the latest honeypot hit. */
  async block(entry: IpBlockEntry): Promise<void> {
    await dynamoClient().send(new PutCommand({ TableName: this.tableName, Item: entry }));
  }

  /** The active block of an address (any spelling of it), if there is one. */
  async activeBlock(ip: string, nowMs = Date.now()): Promise<IpBlockEntry | undefined> {
    const { Item } = await dynamoClient().send(
      new GetCommand({ TableName: this.tableName, Key: { ip: clientAddress(ip).ip }, ConsistentRead: true }),
    );
    const entry = Item as IpBlockEntry | undefined;
    return entry && entry.expires_at * 1000 > nowMs ? entry : undefined;
  }

  async isBlocked(ip: string, nowMs = Date.now()): Promise<boolean> {
    return (await this.activeBlock(ip, nowMs)) !== undefined;
  }
}
