import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { installPk } from '../domain/aggregation/install-state';
import { CONSENT_SK, type ConsentRecord } from '../domain/privacy/consent';
import { dynamoClient } from '../shared/clients/dynamo';
import { isConditionFailure } from './aws-errors';

/**
 * Each install's latest consent (docs/privacy.md, "Consent"): written by the aggregator, latest
 * wins by corrected time then event id, so redelivered and out-of-order objects leave the same
 * record; read, consistently, when a postback is made.
 */
export class ConsentStore {
  constructor(private readonly tableName: string) {}

  /** Keeps `record` unless the install already holds a later one. */
  async keep(appId: string, installUuid: string, record: ConsentRecord): Promise<void> {
    try {
      await dynamoClient().send(
        new PutCommand({
          TableName: this.tableName,
          Item: { pk: installPk(appId, installUuid), sk: CONSENT_SK, ...record },
          ConditionExpression: 'attribute_not_exists(pk) OR ts_ms < :ts OR (ts_ms = :ts AND event_id < :id)',
          ExpressionAttributeValues: { ':ts': record.ts_ms, ':id': record.event_id },
        }),
      );
    } catch (error) {
      if (!isConditionFailure(error)) throw error;
    }
  }

  async latest(appId: string, installUuid: string): Promise<ConsentRecord | undefined> {
    const { Item } = await dynamoClient().send(
      new GetCommand({ TableName: this.tableName, Key: { pk: installPk(appId, installUuid), sk: CONSENT_SK }, ConsistentRead: true }),
    );
    if (!Item) return undefined;
    const { pk: _pk, sk: _sk, ...record } = Item;
    return record as ConsentRecord;
  }
}
