import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { CHANGEABLE, type LinkApp, type LinkChanges, type NewLink, newLinkConfig, updatedLinkConfig } from '../domain/links/link-config';
import type { LinkConfig, LinkSource } from '../domain/links/tracking-link';
import { newLinkId } from '../domain/tenants/keys';
import { dynamoClient } from '../shared/clients/dynamo';
import { TtlCache } from '../shared/ttl-cache';
import { isConditionFailure } from './aws-errors';
import { scanItems } from './query-pages';
import { NotFoundError } from './tenant-store';

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

  /**
   * Changes the link's settings (the rules are updatedLinkConfig's): one write that sets the
   * settings given and removes those cleared, leaving the rest of the item (`disabled` among it)
   * as it is. The redirect sees the change once its cache of the link expires (30 s).
   */
  async update(linkId: string, changes: LinkChanges, nowMs = Date.now()): Promise<LinkConfig> {
    const link = await this.byId(linkId);
    if (!link) throw new NotFoundError('link');
    const updated = updatedLinkConfig(link, changes, nowMs);
    const names: Record<string, string> = { '#updated': 'updated_ms' };
    const values: Record<string, unknown> = { ':updated': nowMs };
    const set = ['#updated = :updated'];
    const remove: string[] = [];
    for (const [i, field] of CHANGEABLE.entries()) {
      if (changes[field] === undefined) continue;
      names[`#f${i}`] = field;
      if (updated[field] === undefined) remove.push(`#f${i}`);
      else {
        values[`:f${i}`] = updated[field];
        set.push(`#f${i} = :f${i}`);
      }
    }
    await this.write(linkId, `SET ${set.join(', ')}${remove.length ? ` REMOVE ${remove.join(', ')}` : ''}`, names, values);
    return { ...updated, ...(link.disabled === undefined ? {} : { disabled: link.disabled }) };
  }

  /** `link disable` / `link enable`: a disabled link answers as an unknown one (docs/tracking-links.md). */
  async setDisabled(linkId: string, disabled: boolean, nowMs = Date.now()): Promise<void> {
    await this.write(
      linkId,
      'SET #disabled = :disabled, #updated = :updated',
      { '#disabled': 'disabled', '#updated': 'updated_ms' },
      {
        ':disabled': disabled,
        ':updated': nowMs,
      },
    );
  }

  /** An update of an existing link only: a missing one is NotFoundError, never made half. */
  private async write(linkId: string, expression: string, names: Record<string, string>, values: Record<string, unknown>) {
    try {
      await dynamoClient().send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { link_id: linkId },
          UpdateExpression: expression,
          ConditionExpression: 'attribute_exists(link_id)',
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: values,
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) throw new NotFoundError('link');
      throw error;
    }
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
