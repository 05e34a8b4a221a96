import { randomBytes } from 'node:crypto';
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { ChangeLog, ChangeRecord } from '../domain/team/changes';
import { dynamoClient } from '../shared/clients/dynamo';

/**
 * The console's change log in the changes table: one item per record under its company, sorted by
 * time; a random suffix keeps two changes of one millisecond apart.
 */
export class ChangeLogStore implements ChangeLog {
  constructor(private readonly tableName: string) {}

  async append(record: ChangeRecord): Promise<void> {
    const at = `${String(record.atMs).padStart(15, '0')}#${randomBytes(6).toString('hex')}`;
    await dynamoClient().send(
      new PutCommand({ TableName: this.tableName, Item: { company_id: record.companyId, at, record: JSON.stringify(record) } }),
    );
  }

  async recent(companyId: string, limit: number): Promise<ChangeRecord[]> {
    const { Items = [] } = await dynamoClient().send(
      new QueryCommand({
        TableName: this.tableName,
        KeyConditionExpression: 'company_id = :c',
        ExpressionAttributeValues: { ':c': companyId },
        ScanIndexForward: false,
        Limit: limit,
      }),
    );
    return Items.map((item) => JSON.parse(String(item.record)) as ChangeRecord);
  }
}
