import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { clientAddress } from '../domain/links/ip-block';
import type { IpBlockEntry, IpBlocks } from '../domain/links/tracking-link';
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

  /** A later hit replaces the entry, so the block runs from the latest honeypot hit. */
  async block(entry: IpBlockEntry): Promise<void> {
    const { ip, ...rest } = entry;
    const item: StoredBlock = { ...rest, ip: blockKey(entry.company_id, ip), address: clientAddress(ip).ip };
    await dynamoClient().send(new PutCommand({ TableName: this.tableName, Item: item }));
  }

  /** The company's active block of an address (any spelling of it), if there is one. */
  async activeBlock(companyId: string, ip: string, nowMs = Date.now()): Promise<IpBlockEntry | undefined> {
    const { Item } = await dynamoClient().send(
      new GetCommand({ TableName: this.tableName, Key: { ip: blockKey(companyId, ip) }, ConsistentRead: true }),
    );
    const stored = Item as StoredBlock | undefined;
    if (!stored || stored.expires_at * 1000 <= nowMs) return undefined;
    const { address, ...rest } = stored;
    return { ...rest, ip: address };
  }

  async isBlocked(companyId: string, ip: string, nowMs = Date.now()): Promise<boolean> {
    return (await this.activeBlock(companyId, ip, nowMs)) !== undefined;
  }
}

/** The item as stored: the key in `ip`, the address in `address`. */
type StoredBlock = Omit<IpBlockEntry, 'ip'> & { ip: string; address: string };

/** Company ids (com_<hex>) hold no `#`, so a key's company is everything before the first one. */
export const blockKey = (companyId: string, ip: string): string => `${companyId}#${clientAddress(ip).ip}`;
