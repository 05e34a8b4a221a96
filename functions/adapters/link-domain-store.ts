import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { APP_LINK_LIMITS, type AppLinkIdentity, type LinkDomainApp, linkIdentityOf } from '../domain/links/app-links';
import { dynamoClient } from '../shared/clients/dynamo';
import { TtlCache } from '../shared/ttl-cache';
import { isConditionFailure } from './aws-errors';

/** Points a link domain to the apps its well-known files name (docs/deep-links.md). */
const linkDomainPk = (domain: string) => `link_domain#${domain}`;

/** A link domain belongs to the company whose app named it first: another company's app is the admin tools' 409. */
export class LinkDomainTakenError extends Error {
  constructor(domain: string) {
    super(`link_domain_taken: ${domain} serves another company's apps`);
    this.name = 'LinkDomainTakenError';
  }
}

/** The domain holds APP_LINK_LIMITS.appsPerDomain apps already: the admin tools' 409. */
export class LinkDomainFullError extends Error {
  constructor(domain: string) {
    super(`link_domain_full: ${domain} already serves ${APP_LINK_LIMITS.appsPerDomain} apps`);
    this.name = 'LinkDomainFullError';
  }
}

interface LinkDomainItem {
  company_id: string;
  apps?: Record<string, AppLinkIdentity>;
}

/**
 * The tenants table's `link_domain#<domain>` items: per domain, its company and a map of app_id to
 * the app's link identity, so that serving a well-known file is one GetItem by the request's host.
 * Written by `admin app update` alone (TenantStore.updateApp).
 */
export class LinkDomainStore {
  constructor(private readonly tableName: string) {}

  /** The apps on the domain; undefined when no app ever named it. */
  async apps(domain: string): Promise<LinkDomainApp[] | undefined> {
    const { Item } = await dynamoClient().send(new GetCommand({ TableName: this.tableName, Key: { pk: linkDomainPk(domain) } }));
    if (!Item) return undefined;
    return Object.entries((Item as LinkDomainItem).apps ?? {}).map(([app_id, identity]) => ({ app_id, ...identity }));
  }

  /**
   * Puts the app's identity on the domain (replacing what it had there): the map's entry when the
   * item is the company's, else a new item. Conditional both ways, so two operators naming one
   * domain for two companies at once cannot both win.
   */
  async serve(domain: string, app: { app_id: string; company_id: string } & AppLinkIdentity): Promise<void> {
    const identity = linkIdentityOf(app);
    for (let attempt = 0; attempt < 2; attempt++) {
      try {
        await dynamoClient().send(
          new UpdateCommand({
            TableName: this.tableName,
            Key: { pk: linkDomainPk(domain) },
            UpdateExpression: 'SET #apps.#app = :identity',
            ConditionExpression: 'company_id = :company AND (attribute_exists(#apps.#app) OR size(#apps) < :max)',
            ExpressionAttributeNames: { '#apps': 'apps', '#app': app.app_id },
            ExpressionAttributeValues: { ':identity': identity, ':company': app.company_id, ':max': APP_LINK_LIMITS.appsPerDomain },
          }),
        );
        return;
      } catch (error) {
        if (!isConditionFailure(error)) throw error;
      }
      const existing = await this.item(domain);
      if (existing && existing.company_id !== app.company_id) throw new LinkDomainTakenError(domain);
      if (existing) throw new LinkDomainFullError(domain);
      try {
        await dynamoClient().send(
          new PutCommand({
            TableName: this.tableName,
            Item: { pk: linkDomainPk(domain), kind: 'link_domain', domain, company_id: app.company_id, apps: { [app.app_id]: identity } },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
        return;
      } catch (error) {
        // Another app made the item meanwhile: try its map again.
        if (!isConditionFailure(error)) throw error;
      }
    }
    throw new Error(`the link domain ${domain} changed while the app was put on it; try again`);
  }

  /** Takes the app off the domain (nothing when it was not on it). */
  async withdraw(domain: string, appId: string): Promise<void> {
    try {
      await dynamoClient().send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: linkDomainPk(domain) },
          UpdateExpression: 'REMOVE #apps.#app',
          ConditionExpression: 'attribute_exists(#apps.#app)',
          ExpressionAttributeNames: { '#apps': 'apps', '#app': appId },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  private async item(domain: string): Promise<LinkDomainItem | undefined> {
    const { Item } = await dynamoClient().send(
      new GetCommand({ TableName: this.tableName, Key: { pk: linkDomainPk(domain) }, ConsistentRead: true }),
    );
    return Item as LinkDomainItem | undefined;
  }
}

/**
 * The well-known function's view: each domain's apps cached for the tenant cache's time (the
 * files carry max-age an hour anyway), unknown hosts for less, so a flood of made-up hosts costs
 * few reads and a newly named domain answers almost at once.
 */
export class CachedLinkDomains {
  private readonly cache: TtlCache<LinkDomainApp[] | undefined>;

  constructor(
    private readonly store: Pick<LinkDomainStore, 'apps'>,
    private readonly ttlMs = Number(process.env.KEY_CACHE_TTL_MS ?? 30_000),
    private readonly missTtlMs = Math.min(ttlMs, 2_000),
  ) {
    this.cache = new TtlCache(ttlMs);
  }

  apps(domain: string): Promise<LinkDomainApp[] | undefined> {
    return this.cache.getOrLoad(
      domain,
      () => this.store.apps(domain),
      (apps) => (apps === undefined ? this.missTtlMs : this.ttlMs),
    );
  }
}
