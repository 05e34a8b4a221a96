import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { newSigningSecret } from '../domain/tenants/keys';
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

  async get(appId: string): Promise<string | undefined> {
    const { Item } = await dynamoClient().send(new GetCommand({ TableName: this.tableName, Key: { app_id: appId }, ConsistentRead: true }));
    return typeof Item?.signing_secret === 'string' ? Item.signing_secret : undefined;
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
