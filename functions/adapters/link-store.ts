import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dynamoClient } from '../shared/clients';
import { TtlCache } from '../shared/ttl-cache';
import { newLinkId } from '../domain/keys';
import { hasDestination, type Destinations } from '../domain/redirect-url';
import type { LinkConfig } from '../domain/tracking-link';
import type { App } from './tenant-store';

export type { LinkConfig };

export interface NewLink extends Destinations {
  partner: string;
  campaign?: string;
  honeypot?: boolean;
  countries_allow?: string[];
  countries_block?: string[];
  lookback_days?: number;
}

/** A link that could not be made as asked (the admin CLI prints the message). */
export class LinkConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'LinkConfigError';
  }
}

const countryCodes = (codes: string[] | undefined) => (codes?.length ? codes.map((c) => c.trim().toUpperCase()) : undefined);

export class LinkStore {
  constructor(
    private readonly tableName: string,
  ) {}

  /**
   * The app's destinations and lookback are copied onto the link here, so that a redirect is
   * one read of one item; a link keeps what it was made with if the app changes later. A link
   * must lead somewhere, except a honeypot, which only ever answers 404.
   */
  async create(app: App, input: NewLink, nowMs = Date.now()): Promise<LinkConfig> {
    const link: LinkConfig = {
      link_id: newLinkId(),
      app_id: app.app_id,
      company_id: app.company_id,
      partner: input.partner,
      campaign: input.campaign,
      honeypot: input.honeypot ?? false,
      ios_url: input.ios_url ?? app.ios_url,
      android_url: input.android_url ?? app.android_url,
      web_url: input.web_url ?? app.web_url,
      countries_allow: countryCodes(input.countries_allow),
      countries_block: countryCodes(input.countries_block),
      lookback_days: input.lookback_days ?? app.lookback_days,
      created_ms: nowMs,
    };
    if (!link.honeypot && !hasDestination(link)) {
      throw new LinkConfigError('the link has no destination: give --ios-url, --android-url or --web-url, or set them on the app');
    }
    await dynamoClient().send(
      new PutCommand({ TableName: this.tableName, Item: link, ConditionExpression: 'attribute_not_exists(link_id)' }),
    );
    return link;
  }

  async byId(linkId: string): Promise<LinkConfig | undefined> {
    const { Item } = await dynamoClient().send(new GetCommand({ TableName: this.tableName, Key: { link_id: linkId } }));
    return Item as LinkConfig | undefined;
  }
}

/**
 * The redirect's view of the links: cached for ttlMs (a change to a link takes that long to be
 * seen), and an unknown id for less, so a link made a moment ago works almost at once while a
 * flood of made-up ids still costs few reads.
 */
export class CachedLinks {
  private readonly cache: TtlCache<LinkConfig | undefined>;

  constructor(
    private readonly store: Pick<LinkStore, 'byId'>,
    private readonly ttlMs = 30_000,
    private readonly missTtlMs = Math.min(ttlMs, 2_000),
  ) {
    this.cache = new TtlCache(ttlMs);
  }

  byId(linkId: string): Promise<LinkConfig | undefined> {
    return this.cache.getOrLoad(linkId, () => this.store.byId(linkId), (link) => (link ? this.ttlMs : this.missTtlMs));
  }
}
