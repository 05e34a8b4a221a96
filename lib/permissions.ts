import {
  type Access,
  deletesWith,
  type FunctionSpec,
  HEALTH_PROBE_KEY,
  type QueueName,
  readsWith,
  type TableName,
  type TableSpec,
  tables,
  writesWith,
} from './manifest';

/**
 * The IAM policy each function's manifest grants turn into, as plain data: the actions the CDK
 * grant helpers of lib/constructs/service-function.ts put in the role, on which resources. The
 * local runtime enforces exactly this on every AWS call a handler makes (local/iam-guard.ts), and
 * test/stack/local-parity.test.ts holds it equal to the synthesized role policies, so a call that
 * AWS would refuse is refused at `npm start` and in every integration test as well.
 *
 * KMS statements (the data key that encrypts the stores) are left out: the emulators encrypt
 * nothing, and the stack test checks them on their own.
 */
export type PolicyResource =
  | { readonly kind: 'table'; readonly table: TableName }
  /** Every secondary index of a table (the grant's `<table arn>/index/*`). */
  | { readonly kind: 'table-indexes'; readonly table: TableName }
  /** The audit bucket. */
  | { readonly kind: 'bucket' }
  /** Every object of the audit bucket (`<bucket arn>/*`). */
  | { readonly kind: 'objects' }
  /** The export bucket (manifest `exportBucket`, a function's `exports` grant). */
  | { readonly kind: 'export-bucket' }
  /** Every object of the export bucket. */
  | { readonly kind: 'export-objects' }
  | { readonly kind: 'queue'; readonly queue: QueueName }
  /** The CloudFront origin secret in Secrets Manager (lib/constructs/edge.ts). */
  | { readonly kind: 'origin-secret' };

/**
 * A condition a statement holds only under. The one kind the service needs: every partition key
 * value a DynamoDB call names is one of these (IAM's ForAllValues:StringEquals on
 * dynamodb:LeadingKeys), which keeps the health probes to their probe key.
 */
export interface PolicyCondition {
  readonly leadingKeys: readonly string[];
}

export interface PolicyStatement {
  /** IAM action names; a `*` matches any run of characters, as in IAM. */
  readonly actions: readonly string[];
  readonly resources: readonly PolicyResource[];
  readonly condition?: PolicyCondition;
}

/** A condition as IAM writes it, for the stack (lib/constructs/service-function.ts) and the parity test. */
export function iamConditionOf(condition: PolicyCondition): Record<string, Record<string, string[]>> {
  return { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': [...condition.leadingKeys] } };
}

/** grantReadData's actions. */
export const TABLE_READ_ACTIONS = [
  'dynamodb:BatchGetItem',
  'dynamodb:ConditionCheckItem',
  'dynamodb:DescribeTable',
  'dynamodb:GetItem',
  'dynamodb:GetRecords',
  'dynamodb:GetShardIterator',
  'dynamodb:Query',
  'dynamodb:Scan',
] as const;
/** bindTable's writing actions; deleting is a level of its own. */
export const TABLE_WRITE_ACTIONS = ['dynamodb:DescribeTable', 'dynamodb:PutItem', 'dynamodb:UpdateItem'] as const;
export const TABLE_DELETE_ACTIONS = ['dynamodb:BatchWriteItem', 'dynamodb:DeleteItem'] as const;
/** grantRead on a bucket, on the bucket and its objects. */
export const BUCKET_READ_ACTIONS = ['s3:GetBucket*', 's3:GetObject*', 's3:List*'] as const;
/** grantPut, on the objects. */
export const BUCKET_WRITE_ACTIONS = [
  's3:Abort*',
  's3:PutObject',
  's3:PutObjectLegalHold',
  's3:PutObjectRetention',
  's3:PutObjectTagging',
  's3:PutObjectVersionTagging',
] as const;
export const BUCKET_DELETE_ACTIONS = ['s3:DeleteObject', 's3:DeleteObjectVersion'] as const;
/** The 'probe' level: one item read (under the probe-key condition) and HeadBucket, which IAM authorizes as s3:ListBucket. */
export const TABLE_PROBE_ACTIONS = ['dynamodb:GetItem'] as const;
export const TABLE_PROBE_CONDITION: PolicyCondition = { leadingKeys: [HEALTH_PROBE_KEY] };
export const BUCKET_PROBE_ACTIONS = ['s3:ListBucket'] as const;

/** What a routed function may do with the origin secret: read its value, nothing else (not even DescribeSecret). */
export const ORIGIN_SECRET_ACTIONS = ['secretsmanager:GetSecretValue'] as const;

type QueueAccess = NonNullable<FunctionSpec['queues']>[QueueName];
const QUEUE_SEND_ACTIONS = ['sqs:GetQueueAttributes', 'sqs:GetQueueUrl', 'sqs:SendMessage'];
const QUEUE_CONSUME_ACTIONS = [
  'sqs:ChangeMessageVisibility',
  'sqs:DeleteMessage',
  'sqs:GetQueueAttributes',
  'sqs:GetQueueUrl',
  'sqs:ReceiveMessage',
];
export const QUEUE_ACTIONS: Record<NonNullable<QueueAccess>, readonly string[]> = {
  send: QUEUE_SEND_ACTIONS,
  consume: QUEUE_CONSUME_ACTIONS,
  requeue: [...new Set([...QUEUE_CONSUME_ACTIONS, ...QUEUE_SEND_ACTIONS])].sort(),
  read: ['sqs:GetQueueAttributes'],
};

export function policyOf(spec: FunctionSpec): PolicyStatement[] {
  const statements: PolicyStatement[] = [];
  for (const [table, access] of Object.entries(spec.tables ?? {}) as [TableName, Access][]) {
    const tableSpec: TableSpec = tables[table];
    const resources: PolicyResource[] = [{ kind: 'table', table }];
    if (access === 'probe') {
      statements.push({ actions: TABLE_PROBE_ACTIONS, resources: [{ kind: 'table', table }], condition: TABLE_PROBE_CONDITION });
      continue;
    }
    if (tableSpec.indexes?.length) resources.push({ kind: 'table-indexes', table });
    if (readsWith(access)) statements.push({ actions: TABLE_READ_ACTIONS, resources });
    if (writesWith(access)) {
      statements.push({ actions: [...TABLE_WRITE_ACTIONS, ...(deletesWith(access) ? TABLE_DELETE_ACTIONS : [])], resources });
    }
  }
  if (spec.bucket) statements.push(...bucketStatements(spec.bucket, { kind: 'bucket' }, { kind: 'objects' }));
  if (spec.exports) statements.push(...bucketStatements(spec.exports, { kind: 'export-bucket' }, { kind: 'export-objects' }));
  for (const [queue, access] of Object.entries(spec.queues ?? {}) as [QueueName, NonNullable<QueueAccess>][]) {
    statements.push({ actions: QUEUE_ACTIONS[access], resources: [{ kind: 'queue', queue }] });
  }
  // Routed functions check every request's origin header against it (functions/shared/http.ts).
  if (spec.routes?.length) statements.push({ actions: ORIGIN_SECRET_ACTIONS, resources: [{ kind: 'origin-secret' }] });
  return statements;
}

/** The same action sets on either bucket: the bucket itself, and its objects. */
function bucketStatements(access: Access, bucket: PolicyResource, objects: PolicyResource): PolicyStatement[] {
  const statements: PolicyStatement[] = [];
  if (access === 'probe') statements.push({ actions: BUCKET_PROBE_ACTIONS, resources: [bucket] });
  if (readsWith(access)) statements.push({ actions: BUCKET_READ_ACTIONS, resources: [bucket, objects] });
  if (writesWith(access)) statements.push({ actions: BUCKET_WRITE_ACTIONS, resources: [objects] });
  if (deletesWith(access)) statements.push({ actions: BUCKET_DELETE_ACTIONS, resources: [objects] });
  return statements;
}

/** Whether an IAM action pattern (s3:GetObject*, dynamodb:*) covers an action; IAM compares actions case-insensitively. */
export function actionMatches(pattern: string, action: string): boolean {
  const escaped = pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*');
  return new RegExp(`^${escaped}$`, 'i').test(action);
}

/** A resource as one string ("table:installs", "table-indexes:clicks", "objects", "export-objects", "queue:privacy"). */
export function resourceKey(resource: PolicyResource): string {
  switch (resource.kind) {
    case 'table':
    case 'table-indexes':
      return `${resource.kind}:${resource.table}`;
    case 'queue':
      return `queue:${resource.queue}`;
    default:
      return resource.kind;
  }
}

export const sameResource = (a: PolicyResource, b: PolicyResource): boolean => resourceKey(a) === resourceKey(b);

/** What a call names that a condition looks at: the partition key values of a DynamoDB call, when the call has them. */
export interface RequestContext {
  readonly leadingKeys?: readonly string[];
}

/**
 * Whether a condition holds for a call. A call whose leading keys are not known (a Query, a Scan)
 * does not meet a leading-key condition: stricter than IAM, whose ForAllValues holds over no keys
 * at all, and never looser; the one conditioned statement grants GetItem alone.
 */
function holds(condition: PolicyCondition | undefined, request: RequestContext): boolean {
  if (!condition) return true;
  const keys = request.leadingKeys;
  return keys !== undefined && keys.length > 0 && keys.every((key) => condition.leadingKeys.includes(key));
}

/** Whether the statements allow the action on the resource, for a call with that context. */
export function allows(
  statements: readonly PolicyStatement[],
  action: string,
  resource: PolicyResource,
  request: RequestContext = {},
): boolean {
  return statements.some(
    (statement) =>
      statement.resources.some((granted) => sameResource(granted, resource)) &&
      statement.actions.some((pattern) => actionMatches(pattern, action)) &&
      holds(statement.condition, request),
  );
}
