import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { newSigningSecret } from '../domain/tenants/keys';
import { type RetiredSecret, rotated, type SigningKeys } from '../domain/tenants/signing-keys';
import { dynamoClient } from '../shared/clients/dynamo';
import { isConditionFailure } from './aws-errors';

/**
 * Each app's signing secret in the signing_secrets table, by app id: a table of its own so that
 * IAM lets only the functions that verify signatures (ingest, privacy-request) read one, while the
 * report functions and the aggregator read the tenants table (lib/manifest.ts). The operator (the
 * admin CLI, the console, npm start's demo tenant) writes them; no function does.
 */
export class SigningSecretStore {
  constructor(private readonly tableName: string) {}

  /** A new app's secret; refused if the app has one already. */
  async create(appId: string): Promise<string> {
    const secret = newSigningSecret();
    if (!(await this.putIfAbsent(appId, secret))) throw new Error(`app ${appId} has a signing secret already`);
    return secret;
  }

  /** The app's current secret (what `app show` prints and new builds embed). */
  async get(appId: string): Promise<string | undefined> {
    return (await this.keys(appId))?.current;
  }

  /** The app's current secret and the retired ones still in their grace (one read). */
  async keys(appId: string): Promise<SigningKeys | undefined> {
    const { Item } = await dynamoClient().send(new GetCommand({ TableName: this.tableName, Key: { app_id: appId }, ConsistentRead: true }));
    if (typeof Item?.signing_secret !== 'string') return undefined;
    return { current: Item.signing_secret, previous: retiredOf(Item.retired) };
  }

  /**
   * Replaces the app's secret by a new one, the old one verifying for `graceMs` more
   * (signing-keys.ts). Conditional on the secret read, so two rotations at once cannot both
   * retire the same secret and lose one: the second is refused and may run again. Undefined when
   * the app has no secret in this table (an app not moved from the tenants table yet).
   */
  async rotate(appId: string, graceMs: number, nowMs = Date.now()): Promise<SigningKeys | undefined> {
    const keys = await this.keys(appId);
    if (!keys) return undefined;
    const next = rotated(keys, newSigningSecret(), nowMs, graceMs);
    try {
      await dynamoClient().send(
        new UpdateCommand({
          TableName: this.tableName,
          Key: { app_id: appId },
          UpdateExpression: 'SET signing_secret = :next, retired = :retired, rotated_ms = :now',
          ConditionExpression: 'signing_secret = :current',
          ExpressionAttributeValues: { ':next': next.current, ':retired': next.previous, ':now': nowMs, ':current': keys.current },
        }),
      );
    } catch (error) {
      if (isConditionFailure(error)) throw new Error(`app ${appId}'s signing secret was rotated at the same time; run the rotation again`);
      throw error;
    }
    return next;
  }

  /**
   * Puts the app's secret unless it has one. Returns false when it had one: a move from the
   * tenants table run twice, or cut short and run again, keeps the secret already moved.
   */
  async putIfAbsent(appId: string, secret: string): Promise<boolean> {
    try {
      await dynamoClient().send(
        new PutCommand({
          TableName: this.tableName,
          Item: { app_id: appId, signing_secret: secret, created_ms: Date.now() },
          ConditionExpression: 'attribute_not_exists(app_id)',
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }
}

/** The retired secrets as stored; anything malformed is left out, so it verifies nothing. */
function retiredOf(stored: unknown): RetiredSecret[] {
  if (!Array.isArray(stored)) return [];
  return stored.flatMap((entry: unknown) => {
    const { secret, until_ms } = (entry ?? {}) as Record<string, unknown>;
    return typeof secret === 'string' && typeof until_ms === 'number' ? [{ secret, until_ms }] : [];
  });
}
