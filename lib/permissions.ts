import {
  type Access,
  deletesWith,
  type FunctionSpec,
  HEALTH_PROBE_KEY,
  KEY_USE_ATTRIBUTES,
  type QueueName,
  queues,
  readsOriginSecret,
  readsWith,
  SERVER_KEY_PREFIX,
  type TableAccess,
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
  /** A queue's dead-letter queue (lib/constructs/data-stores.ts). */
  | { readonly kind: 'dead-letter-queue'; readonly queue: QueueName }
  /** CloudWatch reads that IAM scopes to no resource narrower than `*` (CLOUDWATCH_READ_ACTIONS). */
  | { readonly kind: 'cloudwatch' }
  /** The CloudFront origin secret in Secrets Manager (lib/constructs/edge.ts). */
  | { readonly kind: 'origin-secret' }
  /** The console's Cognito user pool (lib/constructs/console-site.ts). */
  | { readonly kind: 'user-pool' }
  /** Every Secrets Manager secret whose name starts with `prefix` (FunctionSpec.secretPrefix: `secret:<prefix>*`). */
  | { readonly kind: 'secrets'; readonly prefix: string };

/**
 * A condition a statement holds only under, every part of it at once (IAM ands them). The kinds
 * the service needs, on DynamoDB calls:
 * - leadingKeys: every partition key value the call names is one of these (IAM's
 *   ForAllValues:StringEquals on dynamodb:LeadingKeys), which keeps the health probes to their key;
 * - leadingKeysLike: every partition key value matches one of these patterns, `*` any run of
 *   characters and `?` one (ForAllValues:StringLike on dynamodb:LeadingKeys);
 * - attributes: every attribute the call names is one of these (ForAllValues:StringEquals on
 *   dynamodb:Attributes): the item's key attributes, and those its expressions name (update,
 *   condition, projection, through ExpressionAttributeNames or not);
 * - returnValues: the call's ReturnValues is one of these (StringEquals on dynamodb:ReturnValues;
 *   a write without one has NONE).
 * Together the last three keep the 'read_key_use' level to a server key's last use.
 */
export interface PolicyCondition {
  readonly leadingKeys?: readonly string[];
  readonly leadingKeysLike?: readonly string[];
  readonly attributes?: readonly string[];
  readonly returnValues?: readonly string[];
}

export interface PolicyStatement {
  /** IAM action names; a `*` matches any run of characters, as in IAM. */
  readonly actions: readonly string[];
  readonly resources: readonly PolicyResource[];
  readonly condition?: PolicyCondition;
}

/** A condition as IAM writes it, for the stack (lib/constructs/service-function.ts) and the parity test. */
export function iamConditionOf(condition: PolicyCondition): Record<string, Record<string, string[]>> {
  const iam: Record<string, Record<string, string[]>> = {};
  const add = (operator: string, key: string, values: readonly string[] | undefined) => {
    if (values) iam[operator] = { ...iam[operator], [key]: [...values] };
  };
  add('ForAllValues:StringEquals', 'dynamodb:LeadingKeys', condition.leadingKeys);
  add('ForAllValues:StringLike', 'dynamodb:LeadingKeys', condition.leadingKeysLike);
  add('ForAllValues:StringEquals', 'dynamodb:Attributes', condition.attributes);
  add('StringEquals', 'dynamodb:ReturnValues', condition.returnValues);
  return iam;
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

/**
 * The 'read_key_use' level's one write (beside 'read'): UpdateItem of a server key's item, naming
 * its key and last_used_ms alone, as AWS's own example of an update limited to some attributes
 * writes it (DynamoDB Developer Guide, "Using IAM policy conditions for fine-grained access
 * control"): no PutItem or DeleteItem, which replace a whole item, and no ReturnValues ALL_OLD or
 * ALL_NEW, which would read the item's other attributes. An UpdateItem always has a ReturnValues
 * (NONE when the call gives none), hence StringEquals rather than StringEqualsIfExists.
 */
export const TABLE_KEY_USE_ACTIONS = ['dynamodb:UpdateItem'] as const;
export const KEY_USE_CONDITION: PolicyCondition = {
  leadingKeysLike: [`${SERVER_KEY_PREFIX}*`],
  attributes: KEY_USE_ATTRIBUTES,
  returnValues: ['NONE', 'UPDATED_OLD', 'UPDATED_NEW'],
};
/** The one table 'read_key_use' is for: its condition names that table's server-key items and attributes. */
export const KEY_USE_TABLE: TableName = 'tenants';

/** What a routed function may do with the origin secret: read its value, nothing else (not even DescribeSecret). */
export const ORIGIN_SECRET_ACTIONS = ['secretsmanager:GetSecretValue'] as const;
/** `user invite|remove|list` from the console (functions/adapters/cognito-users.ts): these calls on the console's pool alone. */
export const USER_POOL_ADMIN_ACTIONS = [
  'cognito-idp:AdminCreateUser',
  'cognito-idp:AdminDeleteUser',
  'cognito-idp:AdminGetUser',
  'cognito-idp:ListUsers',
] as const;
/** What a function may do with the secrets of its prefix (FunctionSpec.secretPrefix): read their values, as the origin secret's. */
export const PREFIXED_SECRET_ACTIONS = ORIGIN_SECRET_ACTIONS;

/**
 * The health view's CloudWatch reads (FunctionSpec.healthView), on `*`: GetMetricData has no
 * resource type, and DescribeAlarms answers composite alarms only to a grant on `*` (Service
 * Authorization Reference, Amazon CloudWatch; the DescribeAlarms API reference). Both only read.
 */
export const CLOUDWATCH_READ_ACTIONS = ['cloudwatch:DescribeAlarms', 'cloudwatch:GetMetricData'] as const;
/** A dead-letter queue's depth, for the health view: nothing else of it. */
export const DEAD_LETTER_QUEUE_ACTIONS = ['sqs:GetQueueAttributes'] as const;

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
  for (const [table, access] of Object.entries(spec.tables ?? {}) as [TableName, TableAccess][]) {
    const tableSpec: TableSpec = tables[table];
    const resources: PolicyResource[] = [{ kind: 'table', table }];
    if (access === 'probe') {
      statements.push({ actions: TABLE_PROBE_ACTIONS, resources: [{ kind: 'table', table }], condition: TABLE_PROBE_CONDITION });
      continue;
    }
    if (tableSpec.indexes?.length) resources.push({ kind: 'table-indexes', table });
    if (readsWith(access)) statements.push({ actions: TABLE_READ_ACTIONS, resources });
    if (access === 'read_key_use') {
      assertKeyUseTable(table);
      statements.push({ actions: TABLE_KEY_USE_ACTIONS, resources: [{ kind: 'table', table }], condition: KEY_USE_CONDITION });
    }
    if (writesWith(access)) {
      statements.push({ actions: [...TABLE_WRITE_ACTIONS, ...(deletesWith(access) ? TABLE_DELETE_ACTIONS : [])], resources });
    }
  }
  if (spec.bucket) statements.push(...bucketStatements(spec.bucket, { kind: 'bucket' }, { kind: 'objects' }));
  if (spec.exports) statements.push(...bucketStatements(spec.exports, { kind: 'export-bucket' }, { kind: 'export-objects' }));
  for (const [queue, access] of Object.entries(spec.queues ?? {}) as [QueueName, NonNullable<QueueAccess>][]) {
    statements.push({ actions: QUEUE_ACTIONS[access], resources: [{ kind: 'queue', queue }] });
  }
  if (spec.healthView) {
    const deadLetterQueues = (Object.keys(queues) as QueueName[]).map((queue): PolicyResource => ({ kind: 'dead-letter-queue', queue }));
    statements.push({ actions: DEAD_LETTER_QUEUE_ACTIONS, resources: deadLetterQueues });
    statements.push({ actions: CLOUDWATCH_READ_ACTIONS, resources: [{ kind: 'cloudwatch' }] });
  }
  // Routed functions and the authorizer check every request's origin header against it
  // (functions/shared/http.ts, functions/origin-authorizer.ts).
  if (readsOriginSecret(spec)) statements.push({ actions: ORIGIN_SECRET_ACTIONS, resources: [{ kind: 'origin-secret' }] });
  if (spec.consoleUsers) statements.push({ actions: USER_POOL_ADMIN_ACTIONS, resources: [{ kind: 'user-pool' }] });
  if (spec.secretPrefix !== undefined) {
    statements.push({ actions: PREFIXED_SECRET_ACTIONS, resources: [{ kind: 'secrets', prefix: spec.secretPrefix }] });
  }
  return statements;
}

/** 'read_key_use' names the tenants table's items and attributes: on another table it would mean nothing. */
export function assertKeyUseTable(table: TableName): void {
  if (table !== KEY_USE_TABLE) throw new Error(`'read_key_use' is the ${KEY_USE_TABLE} table's level, not the ${table} table's`);
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
    case 'dead-letter-queue':
      return `dead-letter-queue:${resource.queue}`;
    case 'secrets':
      return `secrets:${resource.prefix}`;
    default:
      return resource.kind;
  }
}

export const sameResource = (a: PolicyResource, b: PolicyResource): boolean => resourceKey(a) === resourceKey(b);

/** What a call names that a condition looks at, when the call has it (local/iam-guard.ts reads it from the call). */
export interface RequestContext {
  /** The partition key values of a DynamoDB call (dynamodb:LeadingKeys). */
  readonly leadingKeys?: readonly string[];
  /** The attribute names the call names (dynamodb:Attributes). */
  readonly attributes?: readonly string[];
  /** A write's ReturnValues, NONE when it gives none (dynamodb:ReturnValues); undefined for a call that takes none. */
  readonly returnValues?: string;
}

/** IAM's StringLike: case-sensitive, `*` any run of characters, `?` one character. */
export function stringLike(pattern: string, value: string): boolean {
  const escaped = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`, 's').test(value);
}

/**
 * Whether a condition holds for a call. A call whose leading keys or attributes are not known (a
 * Query's keys, a Scan's) does not meet a condition on them: stricter than IAM, whose ForAllValues
 * holds over no values at all, and never looser; the conditioned statements grant GetItem (the
 * probe key) and UpdateItem (a key's last use) alone, which always name their key.
 */
function holds(condition: PolicyCondition | undefined, request: RequestContext): boolean {
  if (!condition) return true;
  const everyOf = (values: readonly string[] | undefined, allowed: (value: string) => boolean) =>
    values !== undefined && values.length > 0 && values.every(allowed);
  const { leadingKeys, leadingKeysLike, attributes, returnValues } = condition;
  return (
    (!leadingKeys || everyOf(request.leadingKeys, (key) => leadingKeys.includes(key))) &&
    (!leadingKeysLike || everyOf(request.leadingKeys, (key) => leadingKeysLike.some((pattern) => stringLike(pattern, key)))) &&
    (!attributes || everyOf(request.attributes, (name) => attributes.includes(name))) &&
    (!returnValues || (request.returnValues !== undefined && returnValues.includes(request.returnValues)))
  );
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
