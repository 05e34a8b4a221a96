import { Duration, RemovalPolicy, Validations } from 'aws-cdk-lib';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import {
  bucket as bucketSpec,
  exportBucket as exportBucketSpec,
  type KeySpec,
  type QueueName,
  type QueueSpec,
  queues as queueSpecs,
  type TableName,
  type TableSpec,
  tables as tableSpecs,
} from '../manifest';
import { entriesOf, pascalCase } from './naming';

/** Operational logs (S3 and CloudFront access logs) hold client IPs: kept one month, like function logs. */
const ACCESS_LOG_RETENTION = Duration.days(30);
/**
 * Long enough to notice, investigate and redrive a failed message: SQS's most. A message moved to
 * a DLQ keeps its first enqueue time, so the DLQ's retention must exceed its source queue's (the
 * manifest's retentionDays, a week), or a message that failed late would expire on arrival.
 */
const DEAD_LETTER_RETENTION = Duration.days(14);

export interface DataStoresProps {
  /**
   * DynamoDB deletion protection on every table (default true): a table cannot be deleted, by
   * the console, the API or CloudFormation, until it is turned off. A dev stack that is torn down
   * often turns it off; docs/operations.md says what stays behind either way.
   */
  readonly deletionProtection?: boolean;
}

/**
 * Every table, the audit and export buckets and every queue of the manifest. Data is encrypted
 * with one customer-managed key (rotated yearly), kept when the stack is deleted, and recoverable
 * to any second of the last 35 days (tables) or 30 days of object versions (audit bucket). The
 * export bucket keeps no versions: everything in it is made again from the audit store.
 */
export class DataStores extends Construct {
  readonly key: kms.Key;
  readonly tables: Record<TableName, dynamodb.Table>;
  readonly bucket: s3.Bucket;
  /** Raw data out (docs/raw-data.md): stream objects and the hourly Parquet export files. */
  readonly exportBucket: s3.Bucket;
  readonly accessLogs: s3.Bucket;
  readonly queues: Record<QueueName, sqs.Queue>;
  readonly deadLetterQueues: Record<QueueName, sqs.Queue>;

  constructor(scope: Construct, id: string, props: DataStoresProps = {}) {
    super(scope, id);

    this.key = new kms.Key(this, 'DataKey', {
      description: 'Encrypts the attribution service data: tables, audit objects, exports and queued messages.',
      enableKeyRotation: true,
      // Retained tables and objects stay readable only while their key exists.
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const tables = {} as Record<TableName, dynamodb.Table>;
    for (const [name, spec] of entriesOf<TableName, TableSpec>(tableSpecs)) {
      const table = new dynamodb.Table(this, `${pascalCase(name)}Table`, {
        partitionKey: attribute(spec.partitionKey),
        sortKey: spec.sortKey && attribute(spec.sortKey),
        billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
        pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
        encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED,
        encryptionKey: this.key,
        timeToLiveAttribute: spec.ttlAttribute,
        // Retained and protected: `cdk destroy` leaves the table, and nothing deletes it by mistake.
        removalPolicy: RemovalPolicy.RETAIN,
        deletionProtection: props.deletionProtection ?? true,
      });
      for (const index of spec.indexes ?? []) {
        table.addGlobalSecondaryIndex({
          indexName: index.name,
          partitionKey: attribute(index.partitionKey),
          sortKey: index.sortKey && attribute(index.sortKey),
          projectionType: dynamodb.ProjectionType.ALL,
        });
      }
      tables[name] = table;
    }
    this.tables = tables;

    this.accessLogs = new s3.Bucket(this, 'AccessLogsBucket', {
      // Server access logs and CloudFront standard logs cannot be delivered to SSE-KMS buckets.
      encryption: s3.BucketEncryption.S3_MANAGED,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      // CloudFront standard logging writes through the bucket ACL, so ACLs stay enabled here.
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [{ id: 'expire-access-logs', expiration: ACCESS_LOG_RETENTION }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    Validations.of(this.accessLogs).acknowledge({
      id: 'AwsSolutions-S1',
      reason: 'This bucket is the access-log destination itself; logging it into itself would log its own log deliveries.',
    });

    this.bucket = new s3.Bucket(this, `${pascalCase(bucketSpec.name)}Bucket`, {
      encryption: s3.BucketEncryption.KMS,
      encryptionKey: this.key,
      // One data key per bucket instead of one KMS call per object: the audit store writes one object per batch.
      bucketKeyEnabled: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      versioned: true,
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: `s3/${bucketSpec.name}/`,
      lifecycleRules: [
        {
          id: 'audit-storage-classes',
          transitions: [
            { storageClass: s3.StorageClass.INFREQUENT_ACCESS, transitionAfter: Duration.days(bucketSpec.infrequentAccessAfterDays) },
            { storageClass: s3.StorageClass.GLACIER_INSTANT_RETRIEVAL, transitionAfter: Duration.days(bucketSpec.glacierInstantAfterDays) },
          ],
          // Privacy deletions rewrite objects: the old version must not outlive the deletion for long.
          noncurrentVersionExpiration: Duration.days(bucketSpec.noncurrentVersionsExpireAfterDays),
          expiredObjectDeleteMarker: true,
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
        {
          // Postbacks anybody can send (the signature did not verify): gone after a month, old
          // versions a day later. They are a few KiB, below the 128 KiB under which S3 does not
          // move objects to another class, so the rule above never transitions them first.
          id: 'expire-invalid-skan-postbacks',
          prefix: bucketSpec.invalidSkanPostbacks.prefix,
          expiration: Duration.days(bucketSpec.invalidSkanPostbacks.expireAfterDays),
          noncurrentVersionExpiration: Duration.days(1),
        },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.exportBucket = new s3.Bucket(this, `${pascalCase(exportBucketSpec.name)}Bucket`, {
      encryption: s3.BucketEncryption.KMS,
      encryptionKey: this.key,
      // The stream endpoint and the export read many small objects: one data key per bucket, not a KMS call each.
      bucketKeyEnabled: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      // No versions: a privacy deletion rewrites stream objects and export files, and an old
      // version would keep the deleted install's rows; everything here can be made again from the
      // audit store.
      versioned: false,
      serverAccessLogsBucket: this.accessLogs,
      serverAccessLogsPrefix: `s3/${exportBucketSpec.name}/`,
      lifecycleRules: [
        {
          id: 'expire-stream-objects',
          prefix: exportBucketSpec.stream.prefix,
          expiration: Duration.days(exportBucketSpec.stream.expireAfterDays),
        },
        // Export files are kept. One rule per table prefix, so the stream objects (expired above)
        // are never moved first. S3 does not move objects under 128 KiB to another class: a
        // small app's hourly files stay where they are, and cost little there.
        ...exportBucketSpec.tables.map((table) => ({
          id: `export-files-${table}`,
          prefix: `${table}/`,
          transitions: [
            { storageClass: s3.StorageClass.INFREQUENT_ACCESS, transitionAfter: Duration.days(exportBucketSpec.infrequentAccessAfterDays) },
          ],
        })),
        { id: 'abort-incomplete-uploads', abortIncompleteMultipartUploadAfter: Duration.days(1) },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    const queues = {} as Record<QueueName, sqs.Queue>;
    const deadLetterQueues = {} as Record<QueueName, sqs.Queue>;
    for (const [name, spec] of entriesOf<QueueName, QueueSpec>(queueSpecs)) {
      const id = pascalCase(name);
      const deadLetterQueue = new sqs.Queue(this, `${id}DeadLetterQueue`, {
        retentionPeriod: DEAD_LETTER_RETENTION,
        encryption: sqs.QueueEncryption.KMS,
        encryptionMasterKey: this.key,
        enforceSSL: true,
      });
      queues[name] = new sqs.Queue(this, `${id}Queue`, {
        visibilityTimeout: Duration.seconds(spec.visibilityTimeoutSeconds),
        retentionPeriod: Duration.days(spec.retentionDays),
        deadLetterQueue: { queue: deadLetterQueue, maxReceiveCount: spec.maxReceiveCount },
        encryption: sqs.QueueEncryption.KMS,
        encryptionMasterKey: this.key,
        enforceSSL: true,
      });
      deadLetterQueues[name] = deadLetterQueue;
    }
    this.queues = queues;
    this.deadLetterQueues = deadLetterQueues;
  }
}

function attribute(key: KeySpec): dynamodb.Attribute {
  return { name: key.name, type: key.type === 'S' ? dynamodb.AttributeType.STRING : dynamodb.AttributeType.NUMBER };
}
