import { Duration, RemovalPolicy, Stack, Token } from 'aws-cdk-lib';
import * as athena from 'aws-cdk-lib/aws-athena';
import * as glue from 'aws-cdk-lib/aws-glue';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import { PARTITION_COLUMNS, RAW_TABLES, type RawColumn, type RawColumnType } from '../../functions/domain/raw-data/tables';
import { type ExportTableName, exportBucket as exportBucketSpec } from '../manifest';
import { pascalCase } from './naming';

/**
 * Athena bills $5 per TB scanned (10 MB at least per query). A query that would read more than
 * this is cancelled when it gets there, so the most one query can cost is about $0.05: a query
 * without an app_id or day predicate, over years of exports, cannot run up a bill. An operator
 * who needs more raises it here (the workgroup enforces it; a query cannot set its own).
 */
export const BYTES_SCANNED_CUTOFF_PER_QUERY = 10 * 1024 ** 3;

/** Query results are for reading once; they are written again by running the query again. */
export const ATHENA_RESULTS_EXPIRE_AFTER_DAYS = 7;

/** The first day partition projection offers (dt); no export is older than the service. */
export const FIRST_EXPORT_DAY = '2024-01-01';

/** Glue column types of the raw tables' four types (Parquet, Athena and DuckDB read them alike). */
const GLUE_TYPES: Record<RawColumnType, glue.Type> = {
  string: glue.Schema.STRING,
  bigint: glue.Schema.BIG_INT,
  double: glue.Schema.DOUBLE,
  boolean: glue.Schema.BOOLEAN,
};

/** Glue keeps a column comment of at most 255 characters. */
const column = (raw: RawColumn): glue.Column => ({ name: raw.name, type: GLUE_TYPES[raw.type], comment: raw.doc.slice(0, 255) });

export interface WarehouseProps {
  /** The export bucket (lib/constructs/data-stores.ts): the tables' files are under `<table>/`. */
  readonly exportBucket: s3.IBucket;
  /** The service data key: the results bucket and Athena's results are encrypted with it. */
  readonly key: kms.IKey;
  /** Where the results bucket's server access logs go, as the other buckets'. */
  readonly accessLogs: s3.IBucket;
  /**
   * Named queries to save in the workgroup (the reports as Athena SQL), by name. They are the
   * operator's starting points in the Athena console; nothing runs them.
   */
  readonly namedQueries?: readonly WarehouseQuery[];
}

export interface WarehouseQuery {
  readonly name: string;
  readonly description: string;
  readonly sql: string;
}

/**
 * The raw data as a warehouse (docs/raw-data.md, "In the stack: Glue, Athena"): a Glue database
 * with one external Parquet table per export table over the export bucket, partitioned by app_id,
 * dt and hour with partition projection (Athena computes the partitions from the query's
 * predicates, so no crawler and no ALTER TABLE ADD PARTITION), and an Athena workgroup whose
 * configuration every query must use: results encrypted in a bucket of their own that forgets
 * them after a week, and a cap on the bytes one query may scan.
 *
 * No function uses any of it: the operator queries with their own credentials (admin sql --stack,
 * the Athena console), so no role of the service gains Glue or Athena permissions.
 */
export class Warehouse extends Construct {
  readonly database: glue.Database;
  readonly tables: Record<ExportTableName, glue.S3Table>;
  readonly resultsBucket: s3.Bucket;
  readonly workGroup: athena.CfnWorkGroup;
  readonly namedQueries: athena.CfnNamedQuery[] = [];

  constructor(scope: Construct, id: string, props: WarehouseProps) {
    super(scope, id);
    const stackName = Stack.of(this).stackName;

    this.database = new glue.Database(this, 'Database', {
      // Athena names a database in SQL unquoted only when it is lowercase letters, digits and underscores.
      databaseName: `${snakeCase(stackName)}_raw`,
      description: 'Raw data out of the attribution service: hourly Parquet exports (docs/raw-data.md).',
      // Deleted with the stack, unlike the data: the database and its tables are metadata over the
      // export bucket (kept), which the next deploy makes again from this file. Retained, the
      // database kept its name, and deploying the same stack name again failed on "already exists".
      removalPolicy: RemovalPolicy.DESTROY,
    });

    const tables = {} as Record<ExportTableName, glue.S3Table>;
    for (const name of exportBucketSpec.tables) {
      const location = `s3://${props.exportBucket.bucketName}/${name}/`;
      tables[name] = new glue.S3Table(this, `${pascalCase(name)}Table`, {
        database: this.database,
        // The SQL names the tables so: FROM events, JOIN installs.
        tableName: name,
        description: `The ${name} export: one Parquet file per app and UTC hour (docs/raw-data.md).`,
        storage: glue.S3TableStorage.fromBucket(props.exportBucket),
        s3Prefix: `${name}/`,
        columns: RAW_TABLES[name].columns.map(column),
        partitionKeys: PARTITION_COLUMNS.map(column),
        dataFormat: glue.DataFormat.PARQUET,
        // The files are encrypted at rest by S3 (SSE-KMS), which Athena reads transparently; the
        // table parameter is for client-side encryption only.
        hasEncryptedData: false,
        partitionProjection: {
          // An app has no list Athena could enumerate: every query names its app_id.
          app_id: glue.PartitionProjectionConfiguration.injected(),
          dt: glue.PartitionProjectionConfiguration.date({ min: FIRST_EXPORT_DAY, max: 'NOW', format: 'yyyy-MM-dd' }),
          hour: glue.PartitionProjectionConfiguration.integer({ min: 0, max: 23, digits: 2 }),
        },
        parameters: {
          // The export writes Hive-style keys (functions/domain/raw-data/tables.ts, PARTITION_COLUMNS).
          'storage.location.template': `${location}app_id=\${app_id}/dt=\${dt}/hour=\${hour}/`,
        },
      });
    }
    this.tables = tables;

    this.resultsBucket = new s3.Bucket(this, 'AthenaResultsBucket', {
      encryption: s3.BucketEncryption.KMS,
      encryptionKey: props.key,
      bucketKeyEnabled: true,
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      enforceSSL: true,
      // Athena writes each query's result as a new object; nothing is rewritten.
      versioned: false,
      serverAccessLogsBucket: props.accessLogs,
      serverAccessLogsPrefix: 's3/athena-results/',
      lifecycleRules: [
        {
          id: 'expire-query-results',
          // Results hold raw rows (install ids among them): gone after a week.
          expiration: Duration.days(ATHENA_RESULTS_EXPIRE_AFTER_DAYS),
          abortIncompleteMultipartUploadAfter: Duration.days(1),
        },
      ],
      removalPolicy: RemovalPolicy.RETAIN,
    });

    this.workGroup = new athena.CfnWorkGroup(this, 'WorkGroup', {
      name: `${stackName}-raw-data`,
      description: 'Queries over the raw-data exports; the configuration is enforced on every query (docs/raw-data.md).',
      state: 'ENABLED',
      // Deleting the stack deletes the workgroup with its saved queries and history.
      recursiveDeleteOption: true,
      workGroupConfiguration: {
        // A query cannot override the output location, encryption or the cutoff.
        enforceWorkGroupConfiguration: true,
        bytesScannedCutoffPerQuery: BYTES_SCANNED_CUTOFF_PER_QUERY,
        publishCloudWatchMetricsEnabled: true,
        engineVersion: { selectedEngineVersion: 'AUTO' },
        resultConfiguration: {
          outputLocation: `s3://${this.resultsBucket.bucketName}/results/`,
          encryptionConfiguration: { encryptionOption: 'SSE_KMS', kmsKey: props.key.keyArn },
        },
      },
    });

    for (const query of props.namedQueries ?? []) this.addNamedQuery(query);
  }

  /** A saved query of the workgroup, over the database. */
  addNamedQuery(query: WarehouseQuery): athena.CfnNamedQuery {
    const named = new athena.CfnNamedQuery(this, `${pascalCase(query.name)}Query`, {
      name: query.name,
      description: query.description,
      database: this.database.databaseName,
      // A reference, so CloudFormation makes the workgroup first.
      workGroup: this.workGroup.ref,
      queryString: query.sql,
    });
    this.namedQueries.push(named);
    return named;
  }
}

/** "AttributionService" as "attribution_service": Athena's unquoted database names. */
export function snakeCase(name: string): string {
  if (Token.isUnresolved(name)) throw new Error('the warehouse needs a stack name known at synth time');
  return name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase()
    .replace(/[^a-z0-9_]/g, '_');
}
