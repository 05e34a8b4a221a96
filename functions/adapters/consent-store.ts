import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { installPk } from '../domain/aggregation/install-state';
import { CONSENT_SK, type ConsentRecord } from '../domain/privacy/consent';
import { dynamoClient } from '../shared/clients/dynamo';
import { isConditionFailure } from './aws-errors';
import { batchGetItems } from './batch-get';

/**
 * Each install's latest consent (docs/privacy.md, "Consent"): written by the aggregator, latest
 * wins by corrected time then event id, so redelivered and out-of-order objects leave the same
 * record; read, consistently, when postbacks are made: one BatchGetItem per 100 installs.
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

  /** The latest consent of each install that has one, by install_uuid, read consistently. */
  async latestOf(appId: string, installUuids: readonly string[]): Promise<Map<string, ConsentRecord>> {
    const byPk = new Map([...new Set(installUuids)].map((installUuid) => [installPk(appId, installUuid), installUuid]));
    const items = await batchGetItems(
      this.tableName,
      [...byPk.keys()].map((pk) => ({ pk, sk: CONSENT_SK })),
    );
    const latest = new Map<string, ConsentRecord>();
    for (const { pk, sk: _sk, ...record } of items) {
      const installUuid = byPk.get(String(pk));
      if (installUuid !== undefined) latest.set(installUuid, record as unknown as ConsentRecord);
    }
    return latest;
  }
}
