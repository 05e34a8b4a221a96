import { DynamoDBServiceException } from '@aws-sdk/client-dynamodb';
import { S3ServiceException } from '@aws-sdk/client-s3';
import { SecretsManagerServiceException } from '@aws-sdk/client-secrets-manager';
import { SQSServiceException } from '@aws-sdk/client-sqs';
import type { InitializeHandler, InitializeHandlerArguments, InitializeMiddleware, MetadataBearer, MiddlewareStack } from '@smithy/types';
import { addClientHook, type ClientService } from '../functions/shared/clients/reusable';
import { type FunctionSpec, functions, type QueueName, type TableName, tables } from '../lib/manifest';
import { allows, type PolicyResource } from '../lib/permissions';
import { currentFunction, type FunctionContext, type LocalDeployment } from './function-context';

/**
 * The local runtime's IAM: a middleware on every AWS client of the service that maps each call a
 * handler makes to the IAM actions and resources AWS would authorize (DynamoDB, S3, SQS, Secrets
 * Manager), and
 * refuses it with AWS's own AccessDenied error when the function's policy (lib/permissions.ts,
 * the same statements the stack writes into its role) does not allow it. Calls made outside a
 * function (the runtime, the admin CLI, a test's set-up) act as the operator and are not checked.
 */

/** One thing IAM authorizes: an action on a resource (undefined: a resource the deployment does not have). */
export interface Authorization {
  readonly action: string;
  readonly resource: PolicyResource | undefined;
  /** The ARN AWS would name in its refusal. */
  readonly arn: string;
  /** The partition key values a DynamoDB call names (dynamodb:LeadingKeys); undefined when it names none (Query, Scan). */
  readonly leadingKeys?: readonly string[];
  /** The attribute names a DynamoDB call (or one part of a transaction) names (dynamodb:Attributes). */
  readonly attributes?: readonly string[];
  /** A DynamoDB write's ReturnValues, NONE when it gives none (dynamodb:ReturnValues). */
  readonly returnValues?: string;
}

const ACCOUNT = '000000000000';
const REGION = 'us-east-1';

/** The DynamoDB action of a call; the document client's commands are named without "Item". */
const DOCUMENT_COMMANDS: Record<string, string> = {
  Get: 'GetItem',
  Put: 'PutItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  BatchGet: 'BatchGetItem',
  BatchWrite: 'BatchWriteItem',
  TransactGet: 'TransactGetItems',
  TransactWrite: 'TransactWriteItems',
};
const operationOf = (commandName: string) => commandName.replace(/Command$/, '');

type Input = Record<string, unknown>;
const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

function tableResource(
  target: LocalDeployment,
  physical: string | undefined,
  index?: string,
): { table?: TableName; resource?: PolicyResource; arn: string } {
  const table = Object.entries(target.tables).find(([, name]) => name === physical)?.[0] as TableName | undefined;
  const arn = `arn:aws:dynamodb:${REGION}:${ACCOUNT}:table/${physical ?? '*'}${index ? `/index/${index}` : ''}`;
  if (!table || !(table in tables)) return { arn };
  return { table, resource: index ? { kind: 'table-indexes', table } : { kind: 'table', table }, arn };
}

/**
 * The partition key value of one item's key (or of a whole item), as the document client takes it
 * ("health#probe") or marshalled ({S: "health#probe"}): a key attribute is a string, number or binary.
 */
function partitionKeyOf(table: TableName | undefined, key: unknown): string | undefined {
  if (!table || !key || typeof key !== 'object') return undefined;
  const value = (key as Input)[tables[table].partitionKey.name];
  if (typeof value === 'string' || typeof value === 'number') return String(value);
  const marshalled = value && typeof value === 'object' ? ((value as Input).S ?? (value as Input).N) : undefined;
  return typeof marshalled === 'string' ? marshalled : undefined;
}

/** The words of the expression grammar that are not attribute names (keywords case-insensitively, functions as written). */
const EXPRESSION_KEYWORDS = new Set(['set', 'remove', 'add', 'delete', 'and', 'or', 'not', 'between', 'in']);
const EXPRESSION_FUNCTIONS = new Set([
  'attribute_exists',
  'attribute_not_exists',
  'attribute_type',
  'begins_with',
  'contains',
  'size',
  'if_not_exists',
  'list_append',
]);
const EXPRESSIONS = ['UpdateExpression', 'ConditionExpression', 'ProjectionExpression', 'KeyConditionExpression', 'FilterExpression'];

/**
 * The attribute names a request (or one part of a transaction) names, as IAM's dynamodb:Attributes
 * sees them: "the attribute names in a request", those read, written or evaluated in a
 * conditional write (DynamoDB Developer Guide, "Using IAM policy conditions for fine-grained
 * access control"), which is why a policy with it must list the key attributes. So: the key's (or
 * the whole item's) attributes, every name in the expressions (a #placeholder through
 * ExpressionAttributeNames, every segment of a nested path), every ExpressionAttributeNames value
 * whether used or not, and the legacy parameters' attributes. Never fewer names than IAM sees: a
 * nested path's inner segments make it stricter, never looser.
 */
export function attributeNamesOf(request: Input): string[] {
  const names = new Set<string>();
  const placeholders = (request.ExpressionAttributeNames as Record<string, string> | undefined) ?? {};
  const keysOf = (value: unknown) => (value && typeof value === 'object' && !Array.isArray(value) ? Object.keys(value) : []);
  for (const name of [
    ...keysOf(request.Key ?? request.Item),
    ...Object.values(placeholders),
    ...keysOf(request.AttributeUpdates),
    ...keysOf(request.Expected),
    ...keysOf(request.QueryFilter),
    ...keysOf(request.ScanFilter),
    ...keysOf(request.KeyConditions),
    ...(Array.isArray(request.AttributesToGet) ? (request.AttributesToGet as unknown[]).map(String) : []),
  ]) {
    names.add(name);
  }
  for (const field of EXPRESSIONS) {
    for (const [token] of (text(request[field]) ?? '').matchAll(/[#:]?[A-Za-z_][A-Za-z0-9_]*/g)) {
      if (token.startsWith(':')) continue;
      if (token.startsWith('#')) names.add(placeholders[token] ?? token);
      else if (!EXPRESSION_KEYWORDS.has(token.toLowerCase()) && !EXPRESSION_FUNCTIONS.has(token)) names.add(token);
    }
  }
  return [...names];
}

/** The ReturnValues IAM sees for a write (NONE when the call gives none); none for a call that takes none. */
const WRITES_WITH_RETURN_VALUES = new Set(['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem']);
const returnValuesOf = (action: string, request: Input): string | undefined =>
  WRITES_WITH_RETURN_VALUES.has(action) ? (text(request.ReturnValues) ?? 'NONE') : undefined;

export function dynamodbAuthorizations(commandName: string, input: Input, target: LocalDeployment): Authorization[] {
  const operation = operationOf(commandName);
  const action = `dynamodb:${DOCUMENT_COMMANDS[operation] ?? operation}`;
  /**
   * keys: the items the call names (their keys or whole items); undefined for a call that names
   * none. request: the call, or its part of a transaction, whose attributes and ReturnValues IAM
   * looks at (a batch's parts name only keys or items: their attributes, and no ReturnValues).
   */
  const on = (
    physical: unknown,
    act: string,
    options: { index?: unknown; keys?: readonly unknown[]; request?: Input } = {},
  ): Authorization => {
    const { table, resource, arn } = tableResource(target, text(physical), text(options.index));
    const leading = options.keys?.map((key) => partitionKeyOf(table, key));
    const leadingKeys = leading?.every((key): key is string => key !== undefined) ? leading : undefined;
    const request = options.request;
    const attributes = request
      ? attributeNamesOf(request)
      : options.keys?.flatMap((key) => (key && typeof key === 'object' ? Object.keys(key) : []));
    return { action: act, resource, arn, leadingKeys, attributes, returnValues: request && returnValuesOf(act, request) };
  };
  if (action === 'dynamodb:BatchGetItem') {
    return Object.entries((input.RequestItems as Record<string, Input> | undefined) ?? {}).map(([table, request]) =>
      on(table, action, { keys: (request.Keys as unknown[] | undefined) ?? [] }),
    );
  }
  if (action === 'dynamodb:BatchWriteItem') {
    return Object.entries((input.RequestItems as Record<string, Input[]> | undefined) ?? {}).map(([table, requests]) =>
      on(table, action, {
        keys: requests.map(
          (request) => (request.PutRequest as Input | undefined)?.Item ?? (request.DeleteRequest as Input | undefined)?.Key,
        ),
      }),
    );
  }
  if (action === 'dynamodb:TransactWriteItems' || action === 'dynamodb:TransactGetItems') {
    const parts: Record<string, string> = {
      Put: 'PutItem',
      Update: 'UpdateItem',
      Delete: 'DeleteItem',
      ConditionCheck: 'ConditionCheckItem',
      Get: 'GetItem',
    };
    return ((input.TransactItems as Input[] | undefined) ?? []).flatMap((item) =>
      Object.entries(item).flatMap(([kind, part]) =>
        parts[kind]
          ? [
              on((part as Input).TableName, `dynamodb:${parts[kind]}`, {
                keys: [(part as Input).Key ?? (part as Input).Item],
                request: part as Input,
              }),
            ]
          : [],
      ),
    );
  }
  const item = input.Key ?? input.Item;
  return [on(input.TableName, action, { index: input.IndexName, keys: item === undefined ? undefined : [item], request: input })];
}

/** The deployment's two buckets, each its own resources (the bucket, its objects); any other bucket is none of ours. */
function bucketResources(
  target: LocalDeployment,
  name: string | undefined,
): { bucket: PolicyResource; objects: PolicyResource } | undefined {
  if (name === undefined) return undefined;
  if (name === target.bucket) return { bucket: { kind: 'bucket' }, objects: { kind: 'objects' } };
  if (name === target.exportBucket) return { bucket: { kind: 'export-bucket' }, objects: { kind: 'export-objects' } };
  return undefined;
}

export function s3Authorizations(commandName: string, input: Input, target: LocalDeployment): Authorization[] {
  const operation = operationOf(commandName);
  const bucketName = text(input.Bucket);
  const onBucket = (action: string): Authorization => ({
    action,
    resource: bucketResources(target, bucketName)?.bucket,
    arn: `arn:aws:s3:::${bucketName}`,
  });
  const onObject = (action: string, key: unknown, inBucket = bucketName): Authorization => ({
    action,
    resource: bucketResources(target, inBucket)?.objects,
    arn: `arn:aws:s3:::${inBucket}/${text(key) ?? ''}`,
  });
  const versioned = (plain: string, version: string) => (input.VersionId ? version : plain);
  switch (operation) {
    case 'GetObject':
    case 'HeadObject':
      return [onObject(versioned('s3:GetObject', 's3:GetObjectVersion'), input.Key)];
    case 'PutObject':
    case 'CreateMultipartUpload':
    case 'UploadPart':
    case 'CompleteMultipartUpload':
      return [onObject('s3:PutObject', input.Key)];
    case 'CopyObject': {
      // CopySource is "<bucket>/<key>" (a leading slash allowed), the source possibly the other bucket.
      const [sourceBucket, ...sourceKey] = (text(input.CopySource) ?? '').replace(/^\//, '').split('/');
      return [onObject('s3:PutObject', input.Key), onObject('s3:GetObject', decodeURIComponent(sourceKey.join('/')), sourceBucket)];
    }
    case 'AbortMultipartUpload':
      return [onObject('s3:AbortMultipartUpload', input.Key)];
    case 'DeleteObject':
      return [onObject(versioned('s3:DeleteObject', 's3:DeleteObjectVersion'), input.Key)];
    case 'DeleteObjects': {
      const objects = ((input.Delete as Input | undefined)?.Objects as Input[] | undefined) ?? [];
      return objects.map((object) => onObject(object.VersionId ? 's3:DeleteObjectVersion' : 's3:DeleteObject', object.Key));
    }
    case 'HeadBucket':
    case 'ListObjects':
    case 'ListObjectsV2':
      return [onBucket('s3:ListBucket')];
    case 'ListObjectVersions':
      return [onBucket('s3:ListBucketVersions')];
    default:
      return [onBucket(`s3:${operation}`)];
  }
}

const SQS_ACTIONS: Record<string, string> = {
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
};

export function sqsAuthorizations(commandName: string, input: Input, target: LocalDeployment): Authorization[] {
  const operation = operationOf(commandName);
  const action = `sqs:${SQS_ACTIONS[operation] ?? operation}`;
  // A queue URL's last segment is its name, whatever host the client used to reach it.
  const name = text(input.QueueName) ?? text(input.QueueUrl)?.split('/').pop();
  const named = (urls: Readonly<Record<string, string>>) =>
    Object.entries(urls).find(([, url]) => url.split('/').pop() === name)?.[0] as QueueName | undefined;
  const queue = named(target.queues);
  const deadLetterQueue = queue ? undefined : named(target.deadLetterQueues);
  const resource: PolicyResource | undefined = queue
    ? { kind: 'queue', queue }
    : deadLetterQueue
      ? { kind: 'dead-letter-queue', queue: deadLetterQueue }
      : undefined;
  return [{ action, resource, arn: `arn:aws:sqs:${REGION}:${ACCOUNT}:${name ?? '*'}` }];
}

/** The manifest's secret prefixes (FunctionSpec.secretPrefix). */
const SECRET_PREFIXES = [
  ...new Set(
    Object.values(functions as Record<string, FunctionSpec>).flatMap((spec) =>
      spec.secretPrefix === undefined ? [] : [spec.secretPrefix],
    ),
  ),
];

/**
 * A secret is named by its ARN or its name: the origin secret, or a secret whose name starts with
 * a manifest prefix (IAM matches `secret:<prefix>*` against the ARN, which holds the name).
 */
export function secretsManagerAuthorizations(commandName: string, input: Input, target: LocalDeployment): Authorization[] {
  const action = `secretsmanager:${operationOf(commandName)}`;
  const id = text(input.SecretId);
  const name = id?.startsWith('arn:') ? id.split(':secret:')[1] : id;
  const prefix = SECRET_PREFIXES.find((p) => name?.startsWith(p));
  if (prefix !== undefined) {
    return [
      {
        action,
        resource: { kind: 'secrets', prefix },
        arn: id?.startsWith('arn:') ? id : `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:${name}`,
      },
    ];
  }
  const ours =
    id !== undefined &&
    (id === target.originSecretArn ||
      target.originSecretArn
        .split(':')
        .pop()
        ?.replace(/-[0-9a-f]{6}$/, '') === id);
  const arn = ours ? target.originSecretArn : `arn:aws:secretsmanager:${REGION}:${ACCOUNT}:secret:${id ?? '*'}`;
  return [{ action, resource: ours ? { kind: 'origin-secret' } : undefined, arn }];
}

const authorizationsBy: Record<ClientService, typeof dynamodbAuthorizations> = {
  dynamodb: dynamodbAuthorizations,
  s3: s3Authorizations,
  sqs: sqsAuthorizations,
  secretsmanager: secretsManagerAuthorizations,
};

/** The first authorization the function's policy does not give, if any. */
export function refusalOf(service: ClientService, commandName: string, input: Input, context: FunctionContext): Authorization | undefined {
  return authorizationsBy[service](commandName, input, context.deployment).find(
    (needed) =>
      !needed.resource ||
      !allows(context.policy, needed.action, needed.resource, {
        leadingKeys: needed.leadingKeys,
        attributes: needed.attributes,
        returnValues: needed.returnValues,
      }),
  );
}

/** The error AWS answers a refused call with, as the SDK would throw it. */
export function accessDenied(service: ClientService, refused: Authorization, context: FunctionContext): Error {
  const message =
    `User: arn:aws:sts::${ACCOUNT}:assumed-role/${context.name}-role/${context.name} is not authorized to perform: ` +
    `${refused.action} on resource: ${refused.arn} because no identity-based policy allows the ${refused.action} action`;
  if (service === 's3') {
    return new S3ServiceException({ name: 'AccessDenied', $fault: 'client', $metadata: { httpStatusCode: 403 }, message });
  }
  const options = { name: 'AccessDeniedException', $fault: 'client' as const, $metadata: { httpStatusCode: 400 }, message };
  if (service === 'secretsmanager') return new SecretsManagerServiceException(options);
  return service === 'dynamodb' ? new DynamoDBServiceException(options) : new SQSServiceException(options);
}

function guard(service: ClientService): InitializeMiddleware<object, MetadataBearer> {
  return (next: InitializeHandler<object, MetadataBearer>, handlerContext) => async (args: InitializeHandlerArguments<object>) => {
    const context = currentFunction();
    if (context) {
      const refused = refusalOf(service, String(handlerContext.commandName ?? ''), args.input as Input, context);
      if (refused) throw accessDenied(service, refused, context);
    }
    return next(args);
  };
}

let installed = false;

/** Adds the check to every client the service builds (once per process; idempotent). */
export function installIamGuard(): void {
  if (installed) return;
  installed = true;
  addClientHook((client, service) => {
    (client as { middlewareStack: MiddlewareStack<object, MetadataBearer> }).middlewareStack.add(guard(service), {
      step: 'initialize',
      name: 'localIamGuard',
      override: true,
    });
  });
}
