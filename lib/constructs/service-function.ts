import { Aws, CfnElement, Duration, RemovalPolicy, Stack, Validations } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction, OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as secretsmanager from 'aws-cdk-lib/aws-secretsmanager';
import type * as sns from 'aws-cdk-lib/aws-sns';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct, IConstruct } from 'constructs';
import { BASE_ENVIRONMENT } from '../function-environment';
import {
  type Access,
  deletesWith,
  envName,
  type FunctionSpec,
  type QueueName,
  readsWith,
  type TableAccess,
  type TableName,
  type TableSpec,
  tables,
  writesWith,
} from '../manifest';
import {
  assertKeyUseTable,
  BUCKET_PROBE_ACTIONS,
  CLOUDWATCH_READ_ACTIONS,
  DEAD_LETTER_QUEUE_ACTIONS,
  iamConditionOf,
  KEY_USE_CONDITION,
  ORIGIN_SECRET_ACTIONS,
  PREFIXED_SECRET_ACTIONS,
  TABLE_KEY_USE_ACTIONS,
  TABLE_PROBE_ACTIONS,
  TABLE_PROBE_CONDITION,
} from '../permissions';

export type QueueAccess = NonNullable<FunctionSpec['queues']>[QueueName];

export interface ServiceFunctionProps {
  /** Absolute path of the handler file. */
  readonly entry: string;
  readonly description?: string;
  readonly timeout?: Duration;
  readonly memorySize?: number;
  readonly environment?: Record<string, string>;
}

export { METRICS_NAMESPACE, SERVICE_NAME } from '../function-environment';

/**
 * Settings of the local runtime and the tests that no deployed function may act on: skan-postback
 * trusting the local test keys, the postback sender calling loopback, the aggregator taking over
 * another local run's lanes. Each is read by its literal name (`process.env.NAME`), which every
 * production bundle compiles to `undefined` (BUNDLING.define), so the code that acts on it is
 * dead there whatever a function's environment holds; test/stack/bundled-functions.test.ts fails
 * if any bundle still holds a name. The local runtime runs the handlers from source (tsx), where
 * they stay live. The local tuning settings (local/function-context.ts, LOCAL_SETTINGS: rate
 * limits, cache times, retry delays) are not here: they only shorten what a test waits for, and
 * the stack never sets them (test/stack/local-parity.test.ts).
 */
export const LOCAL_ONLY_SWITCHES = ['SKAN_TEST_KEYS', 'POSTBACK_ALLOW_LOOPBACK', 'LOCAL_RUN_ID'] as const;

/**
 * How every function is bundled; `npm run bench` bundles the handlers with these same options to
 * report each function's size and cold module-load time (bench/bundles.ts, esbuildOptionsOf).
 */
export const BUNDLING = {
  minify: true,
  sourceMap: true,
  // Stack traces need file and line, not the source text: keeps the bundle and cold start small.
  sourcesContent: false,
  target: 'node22',
  format: OutputFormat.CJS,
  // The AWS SDK the tests ran, pinned in package-lock.json, goes into every bundle: left external,
  // a function would run whatever SDK version the nodejs22.x runtime ships that day. With nothing
  // external, cdk.json's sdkV3ExcludeSmithyPackages (which only chooses the default externals) has
  // no effect.
  bundleAwsSDK: true,
  externalModules: [] as string[],
  // The SDK's and Powertools' ES module builds first: esbuild tree-shakes those and drops what a
  // function never calls (docs/benchmarks.md has the sizes and cold loads before and after).
  mainFields: ['module', 'main'] as string[],
  define: Object.fromEntries(LOCAL_ONLY_SWITCHES.map((name) => [`process.env.${name}`, 'undefined'])),
} as const;

export const DEFAULT_TIMEOUT = Duration.seconds(10);
export const DEFAULT_MEMORY_MB = 512;

/**
 * Every Lambda of the service: one place fixes runtime, architecture, bundling, logging and the
 * Powertools environment, so a handler file is all a new function needs. The `bind*` helpers
 * grant the least access a manifest access level needs and set the environment variable the
 * handler reads the resource's name from, in one call, so a grant and its variable cannot drift.
 *
 * A bare NodejsFunction anywhere in the app fails synth (see aspects/service-functions-only.ts).
 */
export class ServiceFunction extends NodejsFunction {
  constructor(scope: Construct, id: string, props: ServiceFunctionProps) {
    const { role, logGroup } = executionResources(scope, id);
    super(scope, id, {
      entry: props.entry,
      handler: 'handler',
      description: props.description,
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      timeout: props.timeout ?? DEFAULT_TIMEOUT,
      memorySize: props.memorySize ?? DEFAULT_MEMORY_MB,
      role,
      logGroup,
      // Structured logs and EMF metrics (Powertools) carry what operating the service needs; X-Ray
      // would add a cost per trace and permissions to every role for little more.
      tracing: lambda.Tracing.DISABLED,
      // The constants of lib/function-environment.ts, which the local runtime gives each handler too.
      environment: { ...BASE_ENVIRONMENT, ...props.environment },
      bundling: BUNDLING,
    });
    Validations.of(this).acknowledge({
      id: 'AwsSolutions-L1',
      reason:
        'Node.js 22 is pinned on purpose: the bundle targets node22, and the local runtime and tests run on ' +
        'Node 20/22; moving to Node 24 is a deliberate upgrade of every function at once, not a silent default.',
    });
  }

  /**
   * Access to one manifest table; its physical name goes to TABLE_<NAME>. Writing is PutItem and
   * UpdateItem; only a '_delete' level adds DeleteItem and BatchWriteItem (which can delete too),
   * unlike CDK's grantWriteData, which gives every writer both. 'read_key_use' (the tenants table)
   * reads, and adds UpdateItem under KEY_USE_CONDITION alone: a server key's last use.
   */
  bindTable(name: TableName, table: dynamodb.Table, access: TableAccess): this {
    if (access === 'probe') return this.bindProbedTable(name, table);
    if (readsWith(access)) table.grantReadData(this);
    if (writesWith(access)) {
      const deletes = deletesWith(access) ? ['dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'] : [];
      table.grant(this, 'dynamodb:PutItem', 'dynamodb:UpdateItem', ...deletes, 'dynamodb:DescribeTable');
    }
    if (access === 'read_key_use') {
      assertKeyUseTable(name);
      this.addToRolePolicy(
        new iam.PolicyStatement({
          actions: [...TABLE_KEY_USE_ACTIONS],
          resources: [table.tableArn],
          conditions: iamConditionOf(KEY_USE_CONDITION),
        }),
      );
    }
    const updates = writesWith(access) || access === 'read_key_use';
    // The key actions grantWriteData would add: writing under the table's key reads it too.
    if (updates) {
      table.encryptionKey?.grant(this, 'kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:ReEncrypt*', 'kms:GenerateDataKey*');
    }
    this.addEnvironment(envName.table(name), table.tableName);
    const spec: TableSpec = tables[name];
    if (spec.indexes?.length) {
      this.acknowledgeWildcard(
        `Resource::<${logicalIdOf(table)}.Arn>/index/*`,
        `The grant covers the ${name} table's secondary indexes (queries need the index ARNs); the wildcard spans only this table's indexes.`,
      );
    }
    if (updates) this.acknowledgeKmsDataKeyActions(table.encryptionKey !== undefined);
    return this;
  }

  /**
   * The 'probe' level (lib/permissions.ts, policyOf): GetItem of the probe key alone, by an IAM
   * condition on the leading key, so the health functions read no tenant item and no counter.
   * DynamoDB decrypts with the data key on the caller's behalf, so the role may use the key, but
   * only through DynamoDB (kms:ViaService): never to decrypt an audit object's data key in S3.
   */
  private bindProbedTable(name: TableName, table: dynamodb.Table): this {
    this.addToRolePolicy(
      new iam.PolicyStatement({
        actions: [...TABLE_PROBE_ACTIONS],
        resources: [table.tableArn],
        conditions: iamConditionOf(TABLE_PROBE_CONDITION),
      }),
    );
    if (table.encryptionKey) {
      const stack = Stack.of(this);
      this.addToRolePolicy(
        new iam.PolicyStatement({
          actions: ['kms:Decrypt', 'kms:DescribeKey'],
          resources: [table.encryptionKey.keyArn],
          conditions: { StringEquals: { 'kms:ViaService': `dynamodb.${stack.region}.${stack.urlSuffix}` } },
        }),
      );
    }
    this.addEnvironment(envName.table(name), table.tableName);
    return this;
  }

  /**
   * Access to a bucket of the manifest; its name goes to `variable` (AUDIT_BUCKET for the audit
   * bucket, EXPORT_BUCKET for the export bucket). 'read' includes s3:ListBucket and
   * s3:ListBucketVersions. 'probe' is s3:ListBucket on the bucket alone, which HeadBucket (the
   * health probe) needs, and no object. Writing is putting objects (grantPut); only
   * 'readwrite_delete' may delete objects and their versions. lib/permissions.ts (policyOf) says
   * the same of both buckets.
   */
  bindBucket(bucket: s3.Bucket, access: Access, variable: string = envName.bucket()): this {
    if (access === 'probe') {
      this.addToRolePolicy(new iam.PolicyStatement({ actions: [...BUCKET_PROBE_ACTIONS], resources: [bucket.bucketArn] }));
      this.addEnvironment(variable, bucket.bucketName);
      return this;
    }
    if (readsWith(access)) bucket.grantRead(this);
    if (writesWith(access)) bucket.grantPut(this);
    if (deletesWith(access)) {
      // Named actions, not grantDelete's s3:DeleteObject*: deleting tags is nothing the service does.
      this.addToRolePolicy(
        new iam.PolicyStatement({ actions: ['s3:DeleteObject', 's3:DeleteObjectVersion'], resources: [bucket.arnForObjects('*')] }),
      );
    }
    this.addEnvironment(variable, bucket.bucketName);
    const objects = `objects of the ${bucket.node.id} bucket`;
    this.acknowledgeWildcard(
      `Resource::<${logicalIdOf(bucket)}.Arn>/*`,
      `Objects are keyed per batch, apply or hour (audit objects, stream objects, export files), so access is to the ${objects}, not to named keys.`,
    );
    if (readsWith(access)) {
      for (const action of ['s3:GetObject*', 's3:GetBucket*', 's3:List*']) {
        this.acknowledgeWildcard(
          `Action::${action}`,
          `Read actions of grantRead on the ${objects} (object versions and tags included); s3:List* gives ListBucket, which HeadBucket needs, and ListBucketVersions.`,
        );
      }
    }
    if (writesWith(access)) {
      this.acknowledgeWildcard(
        'Action::s3:Abort*',
        `grantPut on the ${objects} includes aborting a failed multipart upload; it deletes nothing that was stored.`,
      );
      this.acknowledgeKmsDataKeyActions(bucket.encryptionKey !== undefined);
    }
    return this;
  }

  /**
   * Access to one manifest queue; its URL goes to QUEUE_<NAME>_URL. 'read' is only
   * sqs:GetQueueAttributes (health probes read the depth and nothing else).
   */
  bindQueue(name: QueueName, queue: sqs.Queue, access: QueueAccess): this {
    if (access === 'send' || access === 'requeue') queue.grantSendMessages(this);
    if (access === 'consume' || access === 'requeue') queue.grantConsumeMessages(this);
    if (access === 'read') queue.grant(this, 'sqs:GetQueueAttributes');
    this.addEnvironment(envName.queue(name), queue.queueUrl);
    if (access === 'send' || access === 'requeue') this.acknowledgeKmsDataKeyActions(queue.encryptionMasterKey !== undefined);
    return this;
  }

  /**
   * The operators' health view (FunctionSpec.healthView; lib/permissions.ts, policyOf): each
   * dead-letter queue's depth (sqs:GetQueueAttributes, its URL in DEAD_LETTER_QUEUE_<NAME>_URL),
   * the alarm topic's ARN (ALARM_TOPIC_ARN, by which it finds the stack's alarms) and CloudWatch's
   * DescribeAlarms and GetMetricData, which IAM scopes to no resource narrower than `*`.
   */
  bindHealthView(deadLetterQueues: Readonly<Record<QueueName, sqs.Queue>>, alarmTopic: sns.ITopic): this {
    for (const [name, queue] of Object.entries(deadLetterQueues) as [QueueName, sqs.Queue][]) {
      queue.grant(this, ...DEAD_LETTER_QUEUE_ACTIONS);
      this.addEnvironment(envName.deadLetterQueue(name), queue.queueUrl);
    }
    this.addToRolePolicy(new iam.PolicyStatement({ actions: [...CLOUDWATCH_READ_ACTIONS], resources: ['*'] }));
    this.addEnvironment(envName.alarmTopicArn(), alarmTopic.topicArn);
    this.acknowledgeWildcard(
      'Resource::*',
      'cloudwatch:GetMetricData has no resource type, and cloudwatch:DescribeAlarms answers composite alarms only to a grant on *; ' +
        "both only read, and the health view asks for the stack's metrics and the alarms on its own topic.",
    );
    return this;
  }

  /**
   * The CloudFront origin secret: its ARN goes to ORIGIN_VERIFY_SECRET_ARN and the role may read
   * its value (secretsmanager:GetSecretValue, on that secret alone). The value itself never goes
   * into the environment, which lambda:GetFunctionConfiguration shows to whoever may call it; the
   * function reads it at its first request (functions/adapters/origin-secret.ts). The secret is
   * encrypted with Secrets Manager's AWS-managed key, which needs no grant.
   */
  bindOriginSecret(secret: secretsmanager.ISecret): this {
    this.addToRolePolicy(new iam.PolicyStatement({ actions: [...ORIGIN_SECRET_ACTIONS], resources: [secret.secretArn] }));
    this.addEnvironment(envName.originVerifySecretArn(), secret.secretArn);
    return this;
  }

  /**
   * The secrets whose names start with `prefix` (lib/manifest.ts, FunctionSpec.secretPrefix):
   * secretsmanager:GetSecretValue on `secret:<prefix>*` and nothing else. An app's settings name
   * one of them, which the operator made; the function reads its value when it needs it, never
   * into its environment. Secrets Manager's own key encrypts them: no KMS grant.
   */
  bindSecretPrefix(prefix: string): this {
    // Pseudo parameters whatever the stack's environment, so that the nag acknowledgement below names the ARN as cdk-nag writes it.
    const resource = `arn:${Aws.PARTITION}:secretsmanager:${Aws.REGION}:${Aws.ACCOUNT_ID}:secret:${prefix}*`;
    this.addToRolePolicy(new iam.PolicyStatement({ actions: [...PREFIXED_SECRET_ACTIONS], resources: [resource] }));
    this.acknowledgeWildcard(
      `Resource::arn:<AWS::Partition>:secretsmanager:<AWS::Region>:<AWS::AccountId>:secret:${prefix}*`,
      'The secrets an app names are made by the operator under this prefix; the function reads their values and only theirs.',
    );
    return this;
  }

  /**
   * Encrypting under a customer-managed key needs kms:GenerateDataKey* and kms:ReEncrypt*; the
   * grant names only the one key, so the wildcard is over actions, never over keys.
   */
  private acknowledgeKmsDataKeyActions(customerManagedKey: boolean): void {
    if (!customerManagedKey) return;
    for (const action of ['kms:GenerateDataKey*', 'kms:ReEncrypt*']) {
      this.acknowledgeWildcard(
        `Action::${action}`,
        'Writing to a store encrypted with the service data key needs data-key generation and re-encryption; the grant is scoped to that one key.',
      );
    }
  }

  private acknowledgeWildcard(finding: string, reason: string): void {
    if (!this.role) return;
    Validations.of(this.role).acknowledge({ id: `AwsSolutions-IAM5[${finding}]`, reason });
  }
}

/**
 * The role and log group are made beside the function (they must exist before the super call).
 * The role gets only what the function's own log group needs instead of the AWS managed
 * AWSLambdaBasicExecutionRole, which would allow creating log groups anywhere.
 */
function executionResources(scope: Construct, id: string): { role: iam.Role; logGroup: logs.LogGroup } {
  const logGroup = new logs.LogGroup(scope, `${id}LogGroup`, {
    retention: logs.RetentionDays.ONE_MONTH,
    // Operational logs only; the audit store is the record that must outlive the stack.
    removalPolicy: RemovalPolicy.DESTROY,
  });
  const role = new iam.Role(scope, `${id}Role`, {
    assumedBy: new iam.ServicePrincipal('lambda.amazonaws.com'),
  });
  logGroup.grantWrite(role);
  return { role, logGroup };
}

/** The logical id cdk-nag prints in a finding (`<LogicalId.Arn>`), for acknowledging exactly that finding. */
function logicalIdOf(resource: IConstruct): string {
  const child = resource.node.defaultChild;
  if (!child || !CfnElement.isCfnElement(child)) throw new Error(`${resource.node.path} has no CloudFormation resource`);
  return Stack.of(resource).getLogicalId(child);
}
