import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { ActiveSkanSchemas, SkanSchema, SkanSchemaVersion } from '../domain/skan/schema';
import { dynamoClient } from '../shared/clients/dynamo';
import { isConditionFailure } from './aws-errors';

/** The active schema of an app: one GetItem reads it whole. */
const activePk = (appId: string) => `skan_schema#${appId}`;
/** Each version ever set, kept so a report item's schema_version can always be looked up. */
const versionPk = (appId: string, version: number) => `skan_schema#${appId}#v${version}`;

/** Versions lost to writers racing for the same number before a put gives up (each loss means someone else just wrote). */
const MAX_PUT_ATTEMPTS = 5;

interface SchemaItem extends SkanSchemaVersion {
  readonly app_id: string;
}

/**
 * Apps' conversion-value schemas (docs/ios.md section 1) in the tenants table, beside the apps
 * they belong to: the item `skan_schema#<app_id>` holds the active version whole, and
 * `skan_schema#<app_id>#v<n>` each version ever set. Neither has an `id`, so the by_id index and
 * the listings by kind never see them.
 *
 * The table has no transactions locally (dynalite), so a put is two conditional writes in an
 * order that is safe to cut short: the version item first, claiming its number
 * (attribute_not_exists), then the active item, only if it holds an older version. A put that
 * dies between the two leaves a version nobody made active; the next put skips its number.
 */
export class SkanSchemaStore implements ActiveSkanSchemas {
  constructor(private readonly tableName: string) {}

  async active(appId: string): Promise<SkanSchemaVersion | undefined> {
    return this.read(activePk(appId));
  }

  /** A version set earlier, active or not; undefined when the app never had it. */
  async version(appId: string, version: number): Promise<SkanSchemaVersion | undefined> {
    return this.read(versionPk(appId, version));
  }

  /** Stores the schema as the app's next version and makes it the active one; returns its number. */
  async put(appId: string, schema: SkanSchema): Promise<number> {
    let version = ((await this.active(appId))?.version ?? 0) + 1;
    for (let attempt = 1; ; attempt++) {
      const item: SchemaItem = { app_id: appId, version, schema, updated_ms: Date.now() };
      try {
        await dynamoClient().send(
          new PutCommand({
            TableName: this.tableName,
            Item: { ...item, pk: versionPk(appId, version), kind: 'skan_schema_version' },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        );
      } catch (error) {
        if (!isConditionFailure(error) || attempt === MAX_PUT_ATTEMPTS) throw error;
        version += 1;
        continue;
      }
      try {
        await dynamoClient().send(
          new PutCommand({
            TableName: this.tableName,
            Item: { ...item, pk: activePk(appId), kind: 'skan_schema' },
            ConditionExpression: 'attribute_not_exists(pk) OR version < :version',
            ExpressionAttributeValues: { ':version': version },
          }),
        );
      } catch (error) {
        // A racing put made a newer version active first: it stays active, as the newer one.
        if (!isConditionFailure(error)) throw error;
      }
      return version;
    }
  }

  private async read(pk: string): Promise<SkanSchemaVersion | undefined> {
    const { Item } = await dynamoClient().send(new GetCommand({ TableName: this.tableName, Key: { pk }, ConsistentRead: true }));
    if (!Item) return undefined;
    const { version, schema, updated_ms } = Item as SchemaItem;
    return { version, schema, updated_ms };
  }
}
