import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { dynamoClient } from '../shared/clients/dynamo';
import { TtlCache } from '../shared/ttl-cache';
import { isConditionFailure } from './aws-errors';

/** Points a web origin to the apps that list it (docs/sdk.md, "CORS"). */
const webOriginPk = (origin: string) => `web_origin#${origin}`;

/**
 * The tenants table's `web_origin#<origin>` items: per origin, the set of app ids that list it.
 * A preflight carries no keys, so it cannot name its app: this global index is what answers it,
 * one GetItem by the request's Origin. Written by `admin app update --web-origin` alone
 * (TenantStore.updateApp); ADD and DELETE on a string set are atomic, so two apps changing their
 * lists at once cannot lose each other's entry.
 */
export class WebOriginStore {
  constructor(private readonly tableName: string) {}

  /** Whether any app lists the origin. */
  async isListed(origin: string): Promise<boolean> {
    const { Item } = await dynamoClient().send(new GetCommand({ TableName: this.tableName, Key: { pk: webOriginPk(origin) } }));
    const apps = Item?.app_ids as ReadonlySet<string> | undefined;
    return (apps?.size ?? 0) > 0;
  }

  async allow(origin: string, appId: string): Promise<void> {
    await dynamoClient().send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: webOriginPk(origin) },
        UpdateExpression: 'SET #kind = :kind, origin = :origin ADD app_ids :app',
        ExpressionAttributeNames: { '#kind': 'kind' },
        ExpressionAttributeValues: { ':kind': 'web_origin', ':origin': origin, ':app': new Set([appId]) },
      }),
    );
  }

  /** Takes the app off the origin (nothing when it was not on it); DynamoDB drops a set left empty. */
  async withdraw(origin: string, appId: string): Promise<void> {
    await dynamoClient()
      .send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { pk: webOriginPk(origin) },
          UpdateExpression: 'DELETE app_ids :app',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeValues: { ':app': new Set([appId]) },
        }),
      )
      .catch((error: unknown) => {
        if (!isConditionFailure(error)) throw error;
      });
  }
}

/**
 * The preflight function's view: each origin's answer cached for the tenant cache's time, origins
 * nobody lists for less (CachedTenants' rule), so a flood of made-up origins costs few reads and
 * a newly listed one is answered within seconds.
 */
export class CachedWebOrigins {
  private readonly cache: TtlCache<boolean>;

  constructor(
    private readonly store: Pick<WebOriginStore, 'isListed'>,
    private readonly ttlMs = Number(process.env.KEY_CACHE_TTL_MS ?? 30_000),
    private readonly missTtlMs = Math.min(ttlMs, 2_000),
  ) {
    this.cache = new TtlCache(ttlMs);
  }

  isListed(origin: string): Promise<boolean> {
    return this.cache.getOrLoad(
      origin,
      () => this.store.isListed(origin),
      (listed) => (listed ? this.ttlMs : this.missTtlMs),
    );
  }
}
