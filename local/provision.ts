import {
  type AttributeDefinition,
  type AttributeValue,
  BatchWriteItemCommand,
  CreateTableCommand,
  type CreateTableCommandInput,
  DeleteTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  type GlobalSecondaryIndex,
  type KeySchemaElement,
  paginateScan,
} from '@aws-sdk/client-dynamodb';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { hasErrorName } from '../functions/adapters/aws-errors';
import { bucket, exportBucket, type IndexSpec, type KeySpec, type QueueSpec, queues, type TableSpec, tables } from '../lib/manifest';

/**
 * Creates every table, both buckets and every queue (with its dead-letter queue and the manifest's
 * maxReceiveCount) on the emulators. Idempotent: a restart over an existing data directory finds
 * everything in place. TTL is not set: dynalite does not implement it, so handlers that depend on
 * expiry also check the expiry attribute themselves.
 */
export interface ResourceNames {
  tables: Record<string, string>;
  bucket: string;
  /** The export bucket (manifest `exportBucket`). */
  exportBucket: string;
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
export const localExportBucketName = `attribution-${exportBucket.name}`;

export async function provision(endpoints: EmulatorEndpoints): Promise<ResourceNames> {
  const dynamo = new DynamoDBClient({ region: endpoints.region, endpoint: endpoints.dynamodb, credentials: localCredentials });
  const s3 = new S3Client({ region: endpoints.region, endpoint: endpoints.s3, credentials: localCredentials, forcePathStyle: true });
  const sqs = new SQSClient({ region: endpoints.region, endpoint: endpoints.sqs, credentials: localCredentials });
  try {
    const names: ResourceNames = {
      tables: {},
      bucket: localBucketName,
      exportBucket: localExportBucketName,
      queues: {},
      deadLetterQueues: {},
    };
    for (const [name, spec] of Object.entries(tables) as [string, TableSpec][]) {
      await createTable(dynamo, name, spec);
      names.tables[name] = name;
    }
    for (const Bucket of [localBucketName, localExportBucketName]) {
      await s3.send(new CreateBucketCommand({ Bucket })).catch((error: unknown) => {
        if (!hasErrorName(error, 'BucketAlreadyOwnedByYou', 'BucketAlreadyExists')) throw error;
      });
    }
    for (const [name, spec] of Object.entries(queues)) {
      const created = await createQueue(sqs, name, spec);
      names.queues[name] = created.queueUrl;
      names.deadLetterQueues[name] = created.deadLetterQueueUrl;
    }
    return names;
  } finally {
    dynamo.destroy();
    s3.destroy();
    sqs.destroy();
  }
}

/** A manifest queue and its dead-letter queue, with the manifest's settings. */
export async function createQueue(
  sqs: SQSClient,
  name: string,
  spec: QueueSpec,
): Promise<{ queueUrl: string; deadLetterQueueUrl: string }> {
  const dlq = await sqs.send(
    new CreateQueueCommand({
      QueueName: `${name}-dlq`,
      Attributes: { MessageRetentionPeriod: String(14 * 86400) },
    }),
  );
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }));
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
  return { queueUrl: queue.QueueUrl as string, deadLetterQueueUrl: dlq.QueueUrl as string };
}

function tableDefinition(name: string, spec: TableSpec): CreateTableCommandInput {
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
  return {
    TableName: name,
    KeySchema,
    AttributeDefinitions,
    BillingMode: 'PAY_PER_REQUEST',
    GlobalSecondaryIndexes: indexes.length > 0 ? indexes : undefined,
  };
}

export async function createTable(dynamo: DynamoDBClient, name: string, spec: TableSpec): Promise<void> {
  const definition = tableDefinition(name, spec);
  try {
    await dynamo.send(new CreateTableCommand(definition));
  } catch (error) {
    if (!hasErrorName(error, 'ResourceInUseException')) throw error;
    await addMissingIndexes(dynamo, definition);
  }
  await untilActive(dynamo, name);
}

/**
 * Waits for a table to be ACTIVE. CreateTable answers while the table is CREATING, and dynalite
 * refuses reads and writes of it until a timer (0 ms here, but a timer) makes it ACTIVE: on a
 * loaded machine the first write after the create could come first and find no table.
 */
export async function untilActive(dynamo: DynamoDBClient, name: string): Promise<void> {
  for (;;) {
    const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: name }));
    if (Table?.TableStatus === 'ACTIVE') return;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/**
 * A data directory made by an earlier version lacks an index the manifest has since gained (in AWS,
 * CloudFormation adds it to the live table). dynalite cannot add an index to a table, so the table
 * is made again with every index and its items copied back: local data is small, and the runtime
 * has not started serving yet.
 */
async function addMissingIndexes(dynamo: DynamoDBClient, definition: CreateTableCommandInput): Promise<void> {
  const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: definition.TableName }));
  const present = new Set((Table?.GlobalSecondaryIndexes ?? []).map((index) => index.IndexName));
  const missing = (definition.GlobalSecondaryIndexes ?? []).filter((index) => !present.has(index.IndexName));
  if (missing.length === 0) return;
  const items: Record<string, AttributeValue>[] = [];
  for await (const page of paginateScan({ client: dynamo }, { TableName: definition.TableName })) items.push(...(page.Items ?? []));
  console.log(
    `Adding index ${missing.map((index) => index.IndexName).join(', ')} to the local table ${definition.TableName} (${items.length} items copied)`,
  );
  await dynamo.send(new DeleteTableCommand({ TableName: definition.TableName }));
  // DeleteTable answers while the table is DELETING; CreateTable of the name waits for it to go.
  for (;;) {
    const gone = await dynamo.send(new DescribeTableCommand({ TableName: definition.TableName })).then(
      () => false,
      (error: unknown) => {
        if (hasErrorName(error, 'ResourceNotFoundException')) return true;
        throw error;
      },
    );
    if (gone) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await dynamo.send(new CreateTableCommand(definition));
  await untilActive(dynamo, definition.TableName as string);
  for (let start = 0; start < items.length; start += 25) {
    let RequestItems: Record<string, { PutRequest: { Item: Record<string, AttributeValue> } }[]> | undefined = {
      [definition.TableName as string]: items.slice(start, start + 25).map((Item) => ({ PutRequest: { Item } })),
    };
    while (RequestItems && Object.keys(RequestItems).length > 0) {
      const written = await dynamo.send(new BatchWriteItemCommand({ RequestItems }));
      RequestItems = written.UnprocessedItems as typeof RequestItems;
    }
  }
}
