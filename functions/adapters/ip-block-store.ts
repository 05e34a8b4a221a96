import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { clientAddress } from '../domain/links/ip-block';
import { blockInForce, type IpBlockEntry, type IpBlocks, renewedBlock } from '../domain/links/tracking-link';
import { dynamoClient } from '../shared/clients/dynamo';

/**
 * Addresses blocked by honeypot links, one item per company and address: a block is the company's
 * own, and no look-up ever reads another company's (docs/tracking-links.md, "Honeypot blocks").
 *
 * The table's key attribute is still called `ip`, but holds `<company_id>#<address>`, with the
 * address itself in `address`: renaming the key would replace the deployed table and break the
 * local runtime's existing data directories. Items written before blocks were per company are
 * keyed by the bare address, which no look-up asks for, so they are not honoured by anyone; TTL
 * removes them within days.
 *
 * DynamoDB's TTL deletes an entry some time after expires_at (and dynalite never does), so every
 * read checks expires_at itself.
 */
export class IpBlockStore implements IpBlocks {
  constructor(private readonly tableName: string) {}

  /**
   * A later hit replaces the entry, so the block runs until the latest hit's expiry; a hit while a
   * block is in force keeps its start (renewedBlock), so the installs it flagged stay flagged. Two
   * hits at once both read the same entry and write starts no later than either: harmless.
   */
  async block(entry: IpBlockEntry): Promise<void> {
    const renewed = renewedBlock(entry, await this.stored(entry.company_id, entry.ip));
    const { ip, ...rest } = renewed;
    const item: StoredBlock = { ...rest, ip: blockKey(entry.company_id, ip), address: clientAddress(ip).ip };
    await dynamoClient().send(new PutCommand({ TableName: this.tableName, Item: item }));
  }

  /** The company's block of an address (any spelling of it) in force at atMs, if there is one. */
  async activeBlock(companyId: string, ip: string, atMs = Date.now()): Promise<IpBlockEntry | undefined> {
    const stored = await this.stored(companyId, ip);
    return stored && blockInForce(stored, atMs) ? stored : undefined;
  }

  async isBlocked(companyId: string, ip: string, atMs = Date.now()): Promise<boolean> {
    return (await this.activeBlock(companyId, ip, atMs)) !== undefined;
  }

  private async stored(companyId: string, ip: string): Promise<IpBlockEntry | undefined> {
    const { Item } = await dynamoClient().send(
      new GetCommand({ TableName: this.tableName, Key: { ip: blockKey(companyId, ip) }, ConsistentRead: true }),
    );
    if (!Item) return undefined;
    const { address, ...rest } = Item as StoredBlock;
    return { ...rest, ip: address };
  }
}

/** The item as stored: the key in `ip`, the address in `address`. */
type StoredBlock = Omit<IpBlockEntry, 'ip'> & { ip: string; address: string };

/** Company ids (com_<hex>) hold no `#`, so a key's company is everything before the first one. */
export const blockKey = (companyId: string, ip: string): string => `${companyId}#${clientAddress(ip).ip}`;
