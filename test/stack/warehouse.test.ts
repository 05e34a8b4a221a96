import { athenaNamedQueries } from '../../functions/domain/raw-data/report-sql';
import { PARTITION_COLUMNS, RAW_TABLE_NAMES, RAW_TABLES } from '../../functions/domain/raw-data/tables';
import {
  ATHENA_RESULTS_EXPIRE_AFTER_DAYS,
  BYTES_SCANNED_CUTOFF_PER_QUERY,
  FIRST_EXPORT_DAY,
  snakeCase,
} from '../../lib/constructs/warehouse';
import { exportBucket, type FunctionSpec, functions, outputKey } from '../../lib/manifest';
import { logicalId, type SynthesizedService, synthesizeService } from './synthesize';

/**
 * Raw data out in the stack (docs/raw-data.md, "In the stack: Glue, Athena"): the export bucket,
 * the Glue tables over it with partition projection, the Athena workgroup and its results bucket.
 */
type Resource = { Type: string; Properties: Record<string, any>; DependsOn?: string[]; DeletionPolicy?: string };

let service: SynthesizedService;
let resources: Record<string, Resource>;

beforeAll(() => {
  service = synthesizeService();
  resources = service.template.toJSON().Resources;
});

const ofType = (type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type);
const ref = (id: string) => ({ Ref: id });
const getAtt = (id: string, attribute: string) => ({ 'Fn::GetAtt': [id, attribute] });

/** The bucket's policy statements (enforceSSL writes one denying aws:SecureTransport false). */
function sslOnly(bucketId: string): void {
  const [, policy] = ofType('AWS::S3::BucketPolicy').find(
    ([, p]) => JSON.stringify(p.Properties.Bucket) === JSON.stringify(ref(bucketId)),
  )!;
  expect(policy.Properties.PolicyDocument.Statement).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        Effect: 'Deny',
        Action: 's3:*',
        Condition: { Bool: { 'aws:SecureTransport': 'false' } },
      }),
    ]),
  );
}

const PRIVATE = { BlockPublicAcls: true, BlockPublicPolicy: true, IgnorePublicAcls: true, RestrictPublicBuckets: true };

describe('the export bucket', () => {
  it('is encrypted with the data key, private, SSL only, logged, unversioned and kept', () => {
    const id = logicalId(service.stack.stores.exportBucket);
    const bucket = resources[id];
    expect(bucket.Properties.BucketEncryption).toEqual({
      ServerSideEncryptionConfiguration: [
        {
          BucketKeyEnabled: true,
          ServerSideEncryptionByDefault: { SSEAlgorithm: 'aws:kms', KMSMasterKeyID: getAtt(logicalId(service.stack.stores.key), 'Arn') },
        },
      ],
    });
    expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual(PRIVATE);
    expect(bucket.Properties.VersioningConfiguration).toBeUndefined();
    expect(bucket.Properties.LoggingConfiguration).toEqual({
      DestinationBucketName: ref(logicalId(service.stack.stores.accessLogs)),
      LogFilePrefix: 's3/exports/',
    });
    expect(bucket.DeletionPolicy).toBe('Retain');
    sslOnly(id);
  });

  it('expires stream objects after 30 days and moves each table export to Infrequent Access after 30', () => {
    const rules = resources[logicalId(service.stack.stores.exportBucket)].Properties.LifecycleConfiguration.Rules;
    expect(rules).toEqual([
      { Id: 'expire-stream-objects', Status: 'Enabled', Prefix: 'stream/', ExpirationInDays: 30 },
      ...RAW_TABLE_NAMES.map((table) => ({
        Id: `export-files-${table}`,
        Status: 'Enabled',
        Prefix: `${table}/`,
        Transitions: [{ StorageClass: 'STANDARD_IA', TransitionInDays: 30 }],
      })),
      { Id: 'abort-incomplete-uploads', Status: 'Enabled', AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } },
    ]);
  });

  it('has a prefix per table the export writes (RAW_TABLES), and an output admin --stack reads', () => {
    expect([...exportBucket.tables]).toEqual([...RAW_TABLE_NAMES]);
    expect(Object.keys(RAW_TABLES).sort()).toEqual([...exportBucket.tables].sort());
    service.template.hasOutput(outputKey.exportBucket(), { Value: ref(logicalId(service.stack.stores.exportBucket)) });
  });

  it('gives EXPORT_BUCKET to exactly the functions with an exports grant', () => {
    const specs = Object.entries(functions) as [string, FunctionSpec][];
    for (const [name, spec] of specs) {
      const role = logicalId(service.stack.functions.get(name)!.role!);
      const [, lambda] = ofType('AWS::Lambda::Function').find(([, f]) => f.Properties.Role?.['Fn::GetAtt']?.[0] === role)!;
      const variable = lambda.Properties.Environment.Variables.EXPORT_BUCKET;
      expect({ name, variable }).toEqual({ name, variable: spec.exports ? ref(logicalId(service.stack.stores.exportBucket)) : undefined });
    }
    expect(
      specs
        .filter(([, spec]) => spec.exports)
        .map(([name]) => name)
        .sort(),
    ).toEqual(['aggregator', 'export', 'lane-sweep', 'privacy-drain', 'stream-events']);
  });
});

describe('the Glue tables', () => {
  const databaseId = () => logicalId(service.stack.warehouse.database);
  const tableOf = (name: string) => {
    const found = ofType('AWS::Glue::Table').filter(([, t]) => t.Properties.TableInput.Name === name);
    expect(found).toHaveLength(1);
    return found[0][1].Properties;
  };
  const bucketName = () => ref(logicalId(service.stack.stores.exportBucket));
  const s3Url = (suffix: string) => ({ 'Fn::Join': ['', ['s3://', bucketName(), suffix]] });

  it('are in one Glue database named after the stack, which Athena reads unquoted', () => {
    expect(ofType('AWS::Glue::Database')).toHaveLength(1);
    service.template.hasResourceProperties('AWS::Glue::Database', {
      CatalogId: ref('AWS::AccountId'),
      DatabaseInput: { Name: `${snakeCase(service.stack.stackName)}_raw` },
    });
    expect(`${snakeCase('AttributionService')}_raw`).toBe('attribution_service_raw');
    expect(ofType('AWS::Glue::Table')).toHaveLength(4);
  });

  it.each([...RAW_TABLE_NAMES])('%s: the columns of RAW_TABLES, Parquet, under its prefix of the export bucket', (name) => {
    const table = tableOf(name);
    expect(table.DatabaseName).toEqual(ref(databaseId()));
    expect(table.TableInput.TableType).toBe('EXTERNAL_TABLE');
    const storage = table.TableInput.StorageDescriptor;
    expect(storage.Columns.map((c: { Name: string; Type: string }) => [c.Name, c.Type])).toEqual(
      RAW_TABLES[name].columns.map((c) => [c.name, c.type]),
    );
    expect(table.TableInput.PartitionKeys.map((c: { Name: string; Type: string }) => [c.Name, c.Type])).toEqual(
      PARTITION_COLUMNS.map((c) => [c.name, c.type]),
    );
    expect(PARTITION_COLUMNS.map((c) => c.name)).toEqual(['app_id', 'dt', 'hour']);
    expect(storage.Location).toEqual(s3Url(`/${name}/`));
    expect(storage.InputFormat).toBe('org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat');
    expect(storage.OutputFormat).toBe('org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat');
    expect(storage.SerdeInfo.SerializationLibrary).toBe('org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe');
  });

  it.each([...RAW_TABLE_NAMES])('%s: partition projection on app_id (injected), dt (days) and hour (00-23)', (name) => {
    expect(tableOf(name).TableInput.Parameters).toEqual(
      expect.objectContaining({
        classification: 'parquet',
        has_encrypted_data: false,
        'projection.enabled': 'true',
        'projection.app_id.type': 'injected',
        'projection.dt.type': 'date',
        'projection.dt.format': 'yyyy-MM-dd',
        'projection.dt.range': `${FIRST_EXPORT_DAY},NOW`,
        'projection.hour.type': 'integer',
        'projection.hour.range': '0,23',
        'projection.hour.digits': '2',
        'storage.location.template': s3Url(`/${name}/app_id=\${app_id}/dt=\${dt}/hour=\${hour}/`),
      }),
    );
    expect(FIRST_EXPORT_DAY).toBe('2024-01-01');
  });
});

describe('the Athena workgroup', () => {
  const workGroup = () => {
    const found = ofType('AWS::Athena::WorkGroup');
    expect(found).toHaveLength(1);
    return found[0];
  };
  const resultsId = () => logicalId(service.stack.warehouse.resultsBucket);

  it('enforces its configuration: results in its own bucket encrypted with the data key, a 10 GiB scan cutoff, metrics, engine auto', () => {
    const [, group] = workGroup();
    expect(group.Properties).toEqual({
      Name: `${service.stack.stackName}-raw-data`,
      Description: expect.any(String),
      State: 'ENABLED',
      RecursiveDeleteOption: true,
      WorkGroupConfiguration: {
        EnforceWorkGroupConfiguration: true,
        BytesScannedCutoffPerQuery: 10 * 1024 ** 3,
        PublishCloudWatchMetricsEnabled: true,
        EngineVersion: { SelectedEngineVersion: 'AUTO' },
        ResultConfiguration: {
          OutputLocation: { 'Fn::Join': ['', ['s3://', ref(resultsId()), '/results/']] },
          EncryptionConfiguration: { EncryptionOption: 'SSE_KMS', KmsKey: getAtt(logicalId(service.stack.stores.key), 'Arn') },
        },
      },
    });
    // $5 per TB scanned: the most one query can cost is about 5 cents.
    expect((BYTES_SCANNED_CUTOFF_PER_QUERY / 1e12) * 5).toBeLessThan(0.06);
  });

  it('writes results to a private, encrypted, SSL-only bucket that forgets them after 7 days', () => {
    const bucket = resources[resultsId()];
    expect(bucket.Properties.BucketEncryption.ServerSideEncryptionConfiguration[0].ServerSideEncryptionByDefault).toEqual({
      SSEAlgorithm: 'aws:kms',
      KMSMasterKeyID: getAtt(logicalId(service.stack.stores.key), 'Arn'),
    });
    expect(bucket.Properties.PublicAccessBlockConfiguration).toEqual(PRIVATE);
    expect(bucket.Properties.LoggingConfiguration).toEqual({
      DestinationBucketName: ref(logicalId(service.stack.stores.accessLogs)),
      LogFilePrefix: 's3/athena-results/',
    });
    expect(ATHENA_RESULTS_EXPIRE_AFTER_DAYS).toBe(7);
    expect(bucket.Properties.LifecycleConfiguration.Rules).toEqual([
      {
        Id: 'expire-query-results',
        Status: 'Enabled',
        ExpirationInDays: 7,
        AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 },
      },
    ]);
    sslOnly(resultsId());
  });

  it('saves the four reports as named queries over the database, their SQL that of report-sql.ts', () => {
    const [groupId] = workGroup();
    const queries = ofType('AWS::Athena::NamedQuery').map(([, query]) => query);
    expect(queries.map((query) => query.Properties.Name).sort()).toEqual([
      'report-attribution',
      'report-cohorts',
      'report-events',
      'report-revenue',
    ]);
    for (const expected of athenaNamedQueries()) {
      const query = queries.find((q) => q.Properties.Name === expected.name)!;
      expect(query.Properties).toEqual({
        Name: expected.name,
        Description: expected.description,
        Database: ref(logicalId(service.stack.warehouse.database)),
        WorkGroup: ref(groupId),
        QueryString: expected.sql,
      });
      // Athena's limits on a named query.
      expect(expected.name.length).toBeLessThanOrEqual(128);
      expect(expected.description.length).toBeLessThanOrEqual(1024);
      expect(expected.sql).toMatch(/FROM (installs|events)/);
    }
  });

  it('publishes the database, workgroup and results bucket names for admin --stack', () => {
    service.template.hasOutput(outputKey.warehouseDatabase(), { Value: ref(logicalId(service.stack.warehouse.database)) });
    service.template.hasOutput(outputKey.athenaWorkGroup(), { Value: ref(workGroup()[0]) });
    service.template.hasOutput(outputKey.athenaResultsBucket(), { Value: ref(resultsId()) });
  });

  it('gives no function any Glue or Athena permission: the operator queries with their own credentials', () => {
    const actions = ofType('AWS::IAM::Policy').flatMap(([, policy]) =>
      (policy.Properties.PolicyDocument.Statement as { Action: string | string[] }[]).flatMap((s) => [s.Action].flat()),
    );
    expect(actions.filter((action) => /^(glue|athena):/.test(action))).toEqual([]);
  });

  it('passes the AWS Solutions checks', () => {
    const nagReports = service.validationReport.pluginReports.filter((report) => report.pluginName === 'AwsSolutions');
    expect(nagReports.flatMap((report) => report.violations ?? [])).toEqual([]);
  });
});
