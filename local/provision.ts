import {
  CreateTableCommand,
  DynamoDBClient,
  ResourceInUseException,
  type AttributeDefinition,
  type GlobalSecondaryIndex,
  type KeySchemaElement,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { bucket, queues, tables, type IndexSpec, type KeySpec, type TableSpec } from '../lib/manifest';

/**
 * Creates every table, the bucket and every queue (with its dead-letter queue and the manifest's
 * maxReceiveCount) on the emulators. Idempotent: a restart over an existing data directory finds
 * everything in place. TTL is not set: dynalite does not implement it, so handlers that depend on
 * expiry also check the expiry attribute themselves.
 */
export interface ResourceNames {
  tables: Record<string, string>;
  bucket: string;
  queues: Record<string, string>;
  deadLetterQueues: Record<string, string>;
}

export interface EmulatorEndpoints {
  region: string;
  dynamodb: string;
  s3: string;
  sqs: string;
}

// s3rver accepts only its own fixed key pair; dynalite and the SQS emulator accept any.
export const localCredentials = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export const localBucketName = `attribution-${bucket.name}`;

export async function provision(endpoints: EmulatorEndpoints): Promise<ResourceNames> {
  const dynamo = new DynamoDBClient({ region: endpoints.region, endpoint: endpoints.dynamodb, credentials: localCredentials });
  const s3 = new S3Client({ region: endpoints.region, endpoint: endpoints.s3, credentials: localCredentials, forcePathStyle: true });
  const sqs = new SQSClient({ region: endpoints.region, endpoint: endpoints.sqs, credentials: localCredentials });
  try {
    const names: ResourceNames = { tables: {}, bucket: localBucketName, queues: {}, deadLetterQueues: {} };
    for (const [name, spec] of Object.entries(tables) as [string, TableSpec][]) {
      await createTable(dynamo, name, spec);
      names.tables[name] = name;
    }
    await s3.send(new CreateBucketCommand({ Bucket: localBucketName })).catch((error: Error) => {
      if (error.name !== 'BucketAlreadyOwnedByYou' && error.name !== 'BucketAlreadyExists') throw error;
    });
    for (const [name, spec] of Object.entries(queues)) {
      const dlq = await sqs.send(
        new CreateQueueCommand({
          QueueName: `${name}-dlq`,
          Attributes: { MessageRetentionPeriod: String(14 * 86400) },
        }),
      );
      const { Attributes } = await sqs.send(
        new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }),
      );
      const queue = await sqs.send(
        new CreateQueueCommand({
          QueueName: name,
          Attributes: {
            VisibilityTimeout: String(spec.visibilityTimeoutSeconds),
            MessageRetentionPeriod: String(spec.retentionDays * 86400),
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: Attributes?.QueueArn, maxReceiveCount: spec.maxReceiveCount }),
          },
        }),
      );
      names.queues[name] = queue.QueueUrl as string;
      names.deadLetterQueues[name] = dlq.QueueUrl as string;
    }
    return names;
  } finally {
    dynamo.destroy();
    s3.destroy();
    sqs.destroy();
  }
}

async function createTable(dynamo: DynamoDBClient, name: string, spec: TableSpec): Promise<void> {
  const attributes = new Map<string, KeySpec>();
  const keySchema = (pk: KeySpec, sk?: KeySpec): KeySchemaElement[] => {
    for (const key of [pk, sk]) if (key) attributes.set(key.name, key);
    return [{ AttributeName: pk.name, KeyType: 'HASH' }, ...(sk ? [{ AttributeName: sk.name, KeyType: 'RANGE' as const }] : [])];
  };
  const KeySchema = keySchema(spec.partitionKey, spec.sortKey);
  const indexes: GlobalSecondaryIndex[] = ((spec.indexes ?? []) as readonly IndexSpec[]).map((index) => ({
    IndexName: index.name,
    KeySchema: keySchema(index.partitionKey, index.sortKey),
    Projection: { ProjectionType: 'ALL' },
  }));
  const AttributeDefinitions: AttributeDefinition[] = [...attributes.values()].map((a) => ({
    AttributeName: a.name,
    AttributeType: a.type,
  }));
  try {
    await dynamo.send(
      new CreateTableCommand({
        TableName: name,
        KeySchema,
        AttributeDefinitions,
        BillingMode: 'PAY_PER_REQUEST',
        GlobalSecondaryIndexes: indexes.length > 0 ? indexes : undefined,
      }),
    );
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  }
}
