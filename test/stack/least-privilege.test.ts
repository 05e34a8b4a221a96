import {
  deletesWith,
  type FunctionSpec,
  functions,
  readsOriginSecret,
  readsWith,
  type TableAccess,
  type TableName,
  writesWith,
} from '../../lib/manifest';
import { logicalId, type SynthesizedService, synthesizeService } from './synthesize';

type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };
type Resource = { Type: string; Properties: Record<string, any> };

let service: SynthesizedService;
let resources: Record<string, Resource>;

beforeAll(() => {
  service = synthesizeService();
  resources = service.template.toJSON().Resources;
});

const functionEntries = Object.entries(functions) as [string, FunctionSpec][];

/** Every role of the template with the allowed statements of every policy attached to it. */
function statementsByRole(): Map<string, Statement[]> {
  const byRole = new Map<string, Statement[]>();
  for (const [id, resource] of Object.entries(resources)) {
    if (resource.Type === 'AWS::IAM::Role') byRole.set(id, []);
  }
  for (const resource of Object.values(resources)) {
    if (resource.Type !== 'AWS::IAM::Policy') continue;
    const statements = (resource.Properties.PolicyDocument.Statement as Statement[]).filter((s) => s.Effect === 'Allow');
    for (const role of resource.Properties.Roles as { Ref: string }[]) byRole.get(role.Ref)?.push(...statements);
  }
  return byRole;
}

/** Whether a granted action pattern (s3:Delete*, dynamodb:*, *) covers the action. */
const covers = (pattern: string, action: string) =>
  new RegExp(`^${pattern.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`, 'i').test(action);

/** The actions a role may take on a resource, given the resource's logical id. */
function actionsOn(statements: readonly Statement[], resourceId: string): string[] {
  const names = (resource: unknown) => JSON.stringify(resource).includes(`"${resourceId}"`) || JSON.stringify(resource) === '"*"';
  return statements.filter((s) => names(s.Resource)).flatMap((s) => [s.Action].flat());
}

const can = (actions: readonly string[], action: string) => actions.some((pattern) => covers(pattern, action));

const roleOf = (name: string) => logicalId(service.stack.functions.get(name)!.role!);

const healthFunctions = ['health', 'health-check'];
const reportFunctions = functionEntries.map(([name]) => name).filter((name) => name.startsWith('report-'));
/** A role's statements but those on its own log group. */
const nonLogStatements = (name: string) =>
  statementsByRole()
    .get(roleOf(name))!
    .filter((s) => ![s.Action].flat().every((action) => action.startsWith('logs:')));
const noAuditObjectRead = (name: string) => {
  const onBucket = actionsOn(statementsByRole().get(roleOf(name))!, logicalId(service.stack.stores.bucket));
  for (const action of ['s3:GetObject', 's3:GetObjectVersion', 's3:ListBucketVersions'])
    expect({ name, action, granted: can(onBucket, action) }).toEqual({ name, action, granted: false });
};

describe('least privilege', () => {
  const bucketDeletes = ['s3:DeleteObject', 's3:DeleteObjectVersion'];
  const itemDeletes = ['dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'];

  it("lets no role but the privacy drain's delete audit objects, install rows or clicks", () => {
    const drain = roleOf('privacy-drain');
    const bucket = logicalId(service.stack.stores.bucket);
    const installs = logicalId(service.stack.stores.tables.installs);
    const clicks = logicalId(service.stack.stores.tables.clicks);
    const deleters = (resourceId: string, deletes: readonly string[]) =>
      [...statementsByRole()]
        .filter(([, statements]) => deletes.some((action) => can(actionsOn(statements, resourceId), action)))
        .map(([role]) => role);

    expect(deleters(bucket, bucketDeletes)).toEqual([drain]);
    expect(deleters(installs, itemDeletes)).toEqual([drain]);
    expect(deleters(clicks, itemDeletes)).toEqual([drain]);
  });

  it('gives the privacy drain what erasing an install takes: object versions listed and deleted, rows deleted in batches', () => {
    const statements = statementsByRole().get(roleOf('privacy-drain'))!;
    const onBucket = actionsOn(statements, logicalId(service.stack.stores.bucket));
    for (const action of [...bucketDeletes, 's3:ListBucketVersions', 's3:GetObject', 's3:PutObject'])
      expect({ action, granted: can(onBucket, action) }).toEqual({ action, granted: true });
    for (const table of ['installs', 'clicks'] as const) {
      const onTable = actionsOn(statements, logicalId(service.stack.stores.tables[table]));
      for (const action of [...itemDeletes, 'dynamodb:Query'])
        expect({ table, action, granted: can(onTable, action) }).toEqual({ table, action, granted: true });
    }
  });

  it('grants each function exactly the manifest access level on every table and the bucket: writing is not deleting', () => {
    const byRole = statementsByRole();
    const level = (actions: readonly string[], read: string, write: string, deletes: readonly string[]) => ({
      reads: can(actions, read),
      writes: can(actions, write),
      deletes: deletes.some((action) => can(actions, action)),
    });
    const expected = (access: TableAccess | undefined) => ({
      reads: access !== undefined && readsWith(access),
      writes: access !== undefined && writesWith(access),
      deletes: access !== undefined && deletesWith(access),
    });
    for (const [name, spec] of functionEntries) {
      const statements = byRole.get(roleOf(name))!;
      for (const table of Object.keys(service.stack.stores.tables) as TableName[]) {
        const actions = actionsOn(statements, logicalId(service.stack.stores.tables[table]));
        // Query stands for reading: the 'probe' level's one GetItem, under its key condition, is not (tested below).
        expect({ name, table, ...level(actions, 'dynamodb:Query', 'dynamodb:PutItem', itemDeletes) }).toEqual({
          name,
          table,
          ...expected(spec.tables?.[table]),
        });
      }
      const onBucket = actionsOn(statements, logicalId(service.stack.stores.bucket));
      expect({ name, bucket: level(onBucket, 's3:GetObject', 's3:PutObject', bucketDeletes) }).toEqual({
        name,
        bucket: expected(spec.bucket),
      });
    }
  });
});

describe('the functions that check server keys', () => {
  const keyCheckers = functionEntries.filter(([, spec]) => spec.tables?.tenants === 'read_key_use').map(([name]) => name);

  it('are the reports, the stream, the cost upload and the ad-revenue upload', () => {
    expect(keyCheckers.sort()).toEqual([...reportFunctions, 'stream-events', 'cost-upload', 'ad-revenue-upload'].sort());
  });

  it.each(keyCheckers)(
    "lets %s write nothing in the tenants table but a server key's last use: UpdateItem on server_key# items, of pk and last_used_ms",
    (name) => {
      const tenants = logicalId(service.stack.stores.tables.tenants);
      const writes = [
        'dynamodb:PutItem',
        'dynamodb:UpdateItem',
        'dynamodb:DeleteItem',
        'dynamodb:BatchWriteItem',
        'dynamodb:PartiQLUpdate',
      ];
      const writing = nonLogStatements(name)
        .filter((s) => JSON.stringify(s.Resource).includes(`"${tenants}"`))
        .filter((s) => writes.some((action) => can([s.Action].flat(), action)));
      expect(writing.map(({ Action, Resource, Condition }) => ({ Action, Resource, Condition }))).toEqual([
        {
          Action: 'dynamodb:UpdateItem',
          Resource: { 'Fn::GetAtt': [tenants, 'Arn'] },
          Condition: {
            'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['server_key#*'] },
            'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'last_used_ms'] },
            StringEquals: { 'dynamodb:ReturnValues': ['NONE', 'UPDATED_OLD', 'UPDATED_NEW'] },
          },
        },
      ]);
    },
  );
});

describe('the health functions', () => {
  it.each(healthFunctions)('gives %s no read of an audit object', noAuditObjectRead);

  it.each(healthFunctions)(
    'gives %s exactly its probes: GetItem of the probe key, HeadBucket, queue attributes, the data key through DynamoDB only',
    (name) => {
      const { stores } = service.stack;
      const arn = (construct: Parameters<typeof logicalId>[0]) => ({ 'Fn::GetAtt': [logicalId(construct), 'Arn'] });
      const probeKey = { 'ForAllValues:StringEquals': { 'dynamodb:LeadingKeys': ['health#probe'] } };
      const throughDynamoDb = {
        StringEquals: { 'kms:ViaService': { 'Fn::Join': ['', ['dynamodb.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }]] } },
      };
      // One (action, resource, condition) per grant, whichever statements CDK merged them into.
      const granted = nonLogStatements(name).flatMap(({ Action, Resource, Condition }) =>
        [Action]
          .flat()
          .flatMap((action) => [Resource].flat().map((resource) => JSON.stringify({ action, resource, condition: Condition }))),
      );
      const expected = [
        { action: 'dynamodb:GetItem', resource: arn(stores.tables.tenants), condition: probeKey },
        { action: 'dynamodb:GetItem', resource: arn(stores.tables.counters), condition: probeKey },
        { action: 's3:ListBucket', resource: arn(stores.bucket) },
        ...Object.values(stores.queues).map((queue) => ({ action: 'sqs:GetQueueAttributes', resource: arn(queue) })),
        { action: 'kms:Decrypt', resource: arn(stores.key), condition: throughDynamoDb },
        { action: 'kms:DescribeKey', resource: arn(stores.key), condition: throughDynamoDb },
        // GET /health is routed: it checks the origin header like every routed function.
        ...((functions as Record<string, FunctionSpec>)[name].routes
          ? [{ action: 'secretsmanager:GetSecretValue', resource: { Ref: logicalId(service.stack.edge.originSecret) } }]
          : []),
      ].map((grant) => JSON.stringify(grant));
      expect(granted.sort()).toEqual(expected.sort());
    },
  );
});

describe('signing secrets, audit objects and the origin secret', () => {
  const signatureVerifiers = ['ingest', 'privacy-request', 'sdk-skan-schema', 'sdk-attribution'];

  it('lets only the functions that verify signatures, and the console API, read signing secrets, which no tenant item holds any more', () => {
    const secretsTable = logicalId(service.stack.stores.tables.signing_secrets);
    const readers = [...statementsByRole()]
      .filter(([, statements]) => can(actionsOn(statements, secretsTable), 'dynamodb:GetItem'))
      .map(([role]) => role);
    // The intended exception (ADR 0007, "Commands and grants"): an admin creates an app, shows its
    // signing secret and rotates it from the console (app create, app show, app rotate-signing-secret).
    expect(readers.sort()).toEqual([...signatureVerifiers, 'console-api'].map(roleOf).sort());
  });

  it.each([...healthFunctions, ...reportFunctions, 'aggregator'])('gives %s no read of a signing secret', (name) => {
    const statements = statementsByRole().get(roleOf(name))!;
    expect(actionsOn(statements, logicalId(service.stack.stores.tables.signing_secrets))).toEqual([]);
  });

  it.each(reportFunctions)('gives %s no read of an audit object', noAuditObjectRead);

  it("holds the origin secret in no function's environment: routed functions and the authorizer get its ARN and may read that one secret", () => {
    const secrets = Object.entries(resources).filter(([, resource]) => resource.Type === 'AWS::SecretsManager::Secret');
    expect(secrets).toHaveLength(1);
    const [[secretId]] = secrets;
    for (const [name, spec] of functionEntries) {
      const lambda = resources[logicalId(service.stack.functions.get(name)!)];
      const variables = lambda.Properties.Environment.Variables as Record<string, unknown>;
      expect({
        name,
        resolved: JSON.stringify(variables).includes('resolve:secretsmanager'),
        plain: 'ORIGIN_VERIFY_SECRET' in variables,
      }).toEqual({ name, resolved: false, plain: false });
      const onSecrets = nonLogStatements(name).filter((s) => [s.Action].flat().some((action) => action.startsWith('secretsmanager:')));
      if (readsOriginSecret(spec)) {
        expect({ name, arn: variables.ORIGIN_VERIFY_SECRET_ARN }).toEqual({ name, arn: { Ref: secretId } });
        expect(onSecrets.map(({ Action, Resource }) => ({ Action, Resource }))).toEqual([
          { Action: 'secretsmanager:GetSecretValue', Resource: { Ref: secretId } },
        ]);
      } else {
        expect({ name, arn: variables.ORIGIN_VERIFY_SECRET_ARN, onSecrets: onSecrets.filter((s) => !prefixStatement(s)) }).toEqual({
          name,
          arn: undefined,
          onSecrets: [],
        });
      }
    }
  });

  it('lets a function with a secret prefix read the values of the secrets under that prefix alone, and no other function any', () => {
    for (const [name, spec] of functionEntries) {
      const onPrefixes = nonLogStatements(name).filter(prefixStatement);
      expect({ name, onPrefixes: onPrefixes.map(({ Action, Resource }) => ({ Action, Resource: arnText(Resource) })) }).toEqual({
        name,
        onPrefixes:
          spec.secretPrefix === undefined
            ? []
            : [
                {
                  Action: 'secretsmanager:GetSecretValue',
                  Resource: `arn:\${AWS::Partition}:secretsmanager:\${AWS::Region}:\${AWS::AccountId}:secret:${spec.secretPrefix}*`,
                },
              ],
      });
    }
    expect(functionEntries.filter(([, spec]) => spec.secretPrefix !== undefined).map(([name]) => name)).toEqual(['max-revenue-pull']);
  });
});

/** An ARN the template joins from parts ({Fn::Join: ['', [...]]}), with pseudo parameters as `${AWS::...}`. */
function arnText(resource: unknown): string {
  const join = (resource as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  if (!join) return typeof resource === 'string' ? resource : JSON.stringify(resource);
  return join[1].map((part) => (typeof part === 'string' ? part : `\${${(part as { Ref: string }).Ref}}`)).join(join[0]);
}

/** A statement on the secrets of a prefix (an ARN ending in `*`), not on one secret. */
function prefixStatement(statement: { Action: unknown; Resource: unknown }): boolean {
  return (
    [statement.Action].flat().some((action) => String(action).startsWith('secretsmanager:')) && arnText(statement.Resource).endsWith('*')
  );
}

describe("the console API's health view (FunctionSpec.healthView)", () => {
  const granted = (name: string, service: RegExp) =>
    nonLogStatements(name).flatMap(({ Action, Resource, Condition }) =>
      [Action]
        .flat()
        .filter((action) => service.test(action))
        .flatMap((action) => [Resource].flat().map((resource) => JSON.stringify({ action, resource, condition: Condition }))),
    );

  it('gives console-api the alarm topic and each queue and dead-letter queue by its URL', () => {
    const { stores } = service.stack;
    const role = roleOf('console-api');
    const lambda = Object.values(resources).find(
      (resource) => resource.Type === 'AWS::Lambda::Function' && resource.Properties.Role?.['Fn::GetAtt']?.[0] === role,
    );
    const variables = lambda?.Properties.Environment.Variables as Record<string, unknown>;
    expect(variables.ALARM_TOPIC_ARN).toEqual({ Ref: logicalId(service.stack.alarms.topic) });
    for (const queue of Object.keys(stores.queues) as (keyof typeof stores.queues)[]) {
      expect(variables[`QUEUE_${queue.toUpperCase()}_URL`]).toEqual({ Ref: logicalId(stores.queues[queue]) });
      expect(variables[`DEAD_LETTER_QUEUE_${queue.toUpperCase()}_URL`]).toEqual({ Ref: logicalId(stores.deadLetterQueues[queue]) });
    }
    // GET /health, which the view calls as a client does.
    expect(variables.PUBLIC_BASE_URL).toBeDefined();
  });

  it('grants console-api queue attributes on exactly the stack queues and DLQs, and CloudWatch reads on * alone', () => {
    const { stores } = service.stack;
    const arn = (construct: Parameters<typeof logicalId>[0]) => ({ 'Fn::GetAtt': [logicalId(construct), 'Arn'] });
    const expected = [
      ...[...Object.values(stores.queues), ...Object.values(stores.deadLetterQueues)].map((queue) => ({
        action: 'sqs:GetQueueAttributes',
        resource: arn(queue),
      })),
      { action: 'cloudwatch:DescribeAlarms', resource: '*' },
      { action: 'cloudwatch:GetMetricData', resource: '*' },
    ].map((grant) => JSON.stringify(grant));
    expect(granted('console-api', /^(sqs|cloudwatch):/).sort()).toEqual(expected.sort());
  });

  it('gives no other function any CloudWatch action or any dead-letter queue', () => {
    const { stores } = service.stack;
    const deadLetterIds = Object.values(stores.deadLetterQueues).map(logicalId);
    for (const [name] of functionEntries.filter(([name]) => name !== 'console-api')) {
      const grants = granted(name, /./);
      expect({ name, cloudwatch: grants.filter((grant) => grant.includes('"cloudwatch:')) }).toEqual({ name, cloudwatch: [] });
      expect({ name, dlq: grants.filter((grant) => deadLetterIds.some((id) => grant.includes(`"${id}"`))) }).toEqual({ name, dlq: [] });
    }
  });
});
