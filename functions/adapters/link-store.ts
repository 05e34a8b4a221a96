import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { type LinkApp, type NewLink, newLinkConfig } from '../domain/links/link-config';
import type { LinkConfig, LinkSource } from '../domain/links/tracking-link';
import { newLinkId } from '../domain/tenants/keys';
import { dynamoClient } from '../shared/clients/dynamo';
import { TtlCache } from '../shared/ttl-cache';
import { scanItems } from './query-pages';

export class LinkStore implements LinkSource {
  constructor(private readonly tableName: string) {}

  /** Makes the link (the rules are newLinkConfig's) and stores it under a fresh id. */
  async create(app: LinkApp, input: NewLink, nowMs = Date.now()): Promise<LinkConfig> {
    const link = newLinkConfig(app, input, { linkId: newLinkId(), nowMs });
    await dynamoClient().send(
      new PutCommand({ TableName: this.tableName, Item: link, ConditionExpression: 'attribute_not_exists(link_id)' }),
    );
    return link;
  }

  async byId(linkId: string): Promise<LinkConfig | undefined> {
    const { Item } = await dynamoClient().send(new GetCommand({ TableName: this.tableName, Key: { link_id: linkId } }));
    return Item as LinkConfig | undefined;
  }

  /**
   * An app's links, oldest first, for the admin CLI and console. The table is keyed by link id
   * for the redirect, so this scans it; an operator's listing is rare.
   */
  async linksOfApp(appId: string): Promise<LinkConfig[]> {
    const links: LinkConfig[] = [];
    const items = scanItems<LinkConfig>({
      TableName: this.tableName,
      FilterExpression: 'app_id = :app',
      ExpressionAttributeValues: { ':app': appId },
    });
    for await (const link of items) links.push(link);
    return links.sort((a, b) => a.created_ms - b.created_ms);
  }
}

/**
 * The redirect's view of the links: cached for ttlMs (a change to a link takes that long to be
 * seen), and an unknown id for less, so a link made a moment ago works almost at once while a
 * flood of made-up ids still costs few reads.
 */
export class CachedLinks implements LinkSource {
  private readonly cache: TtlCache<LinkConfig | undefined>;

  constructor(
    private readonly store: Pick<LinkStore, 'byId'>,
    private readonly ttlMs = 30_000,
    private readonly missTtlMs = Math.min(ttlMs, 2_000),
  ) {
    this.cache = new TtlCache(ttlMs);
  }

  byId(linkId: string): Promise<LinkConfig | undefined> {
    return this.cache.getOrLoad(
      linkId,
      () => this.store.byId(linkId),
      (link) => (link ? this.ttlMs : this.missTtlMs),
    );
  }
}
