import { TEST_KEYS_VARIABLE } from '../../functions/domain/skan/postback-keys';
import { environmentOf } from '../../lib/function-environment';
import { type FunctionSpec, functions, type QueueName, type TableName, tables } from '../../lib/manifest';
import { iamConditionOf, type PolicyResource, type PolicyStatement, policyOf, resourceKey } from '../../lib/permissions';
import { LOCAL_EMULATOR_VARIABLES, LOCAL_SETTINGS, templateEnvironment } from '../../local/function-context';
import { LOCAL_ONLY_VARIABLES } from '../../local/skan-test-key';
import { logicalId, type SynthesizedService, synthesizeService } from './synthesize';

/**
 * The local runtime gives each handler exactly what the stack gives its function: the same
 * environment variables (local/function-context.ts) and the same IAM policy, which the local IAM
 * check enforces (local/iam-guard.ts). These hold the two to the synthesized template, so they
 * cannot drift: a grant or a variable added on one side only fails here.
 */
type Statement = { Effect: string; Action: string | string[]; Resource: unknown; Condition?: unknown };
type Resource = { Type: string; Properties: Record<string, any>; Metadata?: Record<string, unknown> };

let service: SynthesizedService;
let resources: Record<string, Resource>;

beforeAll(() => {
  service = synthesizeService();
  resources = service.template.toJSON().Resources;
});

const specs = Object.entries(functions) as [string, FunctionSpec][];

function lambdaOf(name: string): Resource {
  const role = logicalId(service.stack.functions.get(name)!.role!);
  const found = Object.values(resources).find(
    (resource) => resource.Type === 'AWS::Lambda::Function' && resource.Properties.Role?.['Fn::GetAtt']?.[0] === role,
  );
  if (!found) throw new Error(`no Lambda function with the role of ${name}`);
  return found;
}

function statementsOf(name: string): Statement[] {
  const role = logicalId(service.stack.functions.get(name)!.role!);
  return Object.values(resources)
    .filter(
      (resource) =>
        resource.Type === 'AWS::IAM::Policy' && (resource.Properties.Roles as { Ref: string }[]).some((ref) => ref.Ref === role),
    )
    .flatMap((resource) => resource.Properties.PolicyDocument.Statement as Statement[]);
}

/** The manifest resource a template resource reference names ({Fn::GetAtt: [id, Arn]}, or joined with /index/* or /*, or the origin secret's {Ref}). */
function manifestResource(reference: unknown): PolicyResource | 'other' {
  const stores = service.stack.stores;
  const arnOf = (value: unknown): string | undefined => (value as { 'Fn::GetAtt'?: [string, string] })['Fn::GetAtt']?.[0];
  const join = (reference as { 'Fn::Join'?: [string, unknown[]] })['Fn::Join'];
  const id = join ? arnOf(join[1][0]) : arnOf(reference);
  const suffix = join ? String(join[1][1]) : '';
  const table = (Object.keys(tables) as TableName[]).find((name) => logicalId(stores.tables[name]) === id);
  if (table && suffix === '') return { kind: 'table', table };
  if (table && suffix === '/index/*') return { kind: 'table-indexes', table };
  if (id === logicalId(stores.bucket)) return suffix === '/*' ? { kind: 'objects' } : suffix === '' ? { kind: 'bucket' } : 'other';
  if (id === logicalId(stores.exportBucket)) {
    return suffix === '/*' ? { kind: 'export-objects' } : suffix === '' ? { kind: 'export-bucket' } : 'other';
  }
  const queue = (Object.keys(stores.queues) as QueueName[]).find((name) => logicalId(stores.queues[name]) === id);
  if (queue && suffix === '') return { kind: 'queue', queue };
  const deadLetterQueue = (Object.keys(stores.deadLetterQueues) as QueueName[]).find(
    (name) => logicalId(stores.deadLetterQueues[name]) === id,
  );
  if (deadLetterQueue && suffix === '') return { kind: 'dead-letter-queue', queue: deadLetterQueue };
  // The health view's CloudWatch reads (FunctionSpec.healthView) are the one grant on `*`.
  if (reference === '*') return { kind: 'cloudwatch' };
  // A secret's ARN is its Ref.
  if ((reference as { Ref?: string }).Ref === logicalId(service.stack.edge.originSecret)) return { kind: 'origin-secret' };
  if (id === logicalId(service.stack.console.userPool)) return { kind: 'user-pool' };
  // The secrets of a prefix: arn:<partition>:secretsmanager:<region>:<account>:secret:<prefix>*, joined from parts.
  const joined = join ? join[1].filter((part): part is string => typeof part === 'string').join('') : '';
  const prefix = /^arn::secretsmanager:::secret:(.+)\*$/.exec(joined)?.[1];
  if (prefix !== undefined) return { kind: 'secrets', prefix };
  return 'other';
}

/** A grant as compared: its actions and resources, and its IAM condition as the template writes it. */
type Grant = { actions: readonly string[]; resources: readonly PolicyResource[]; condition?: unknown };
const grantOf = (statement: PolicyStatement): Grant => ({
  ...statement,
  condition: statement.condition && iamConditionOf(statement.condition),
});

/** "action on resource [when condition]" pairs, one per action and resource, sorted. */
const pairs = (statements: readonly Grant[]) =>
  [
    ...new Set(
      statements.flatMap((statement) =>
        statement.actions.flatMap((action) =>
          statement.resources.map(
            (resource) =>
              `${action} on ${resourceKey(resource)}${statement.condition ? ` when ${JSON.stringify(statement.condition)}` : ''}`,
          ),
        ),
      ),
    ),
  ].sort();

describe('the local runtime and the stack', () => {
  it.each(specs)('give %s the same environment variables', (name, spec) => {
    const variables = Object.keys(lambdaOf(name).Properties.Environment.Variables as Record<string, unknown>).sort();
    expect(Object.keys(environmentOf(spec)).sort()).toEqual(variables);
    // The local values for those names, from a local deployment's physical names.
    const local = templateEnvironment(name, spec, {
      tables: Object.fromEntries(Object.keys(tables).map((table) => [table, table])),
      bucket: 'attribution-audit',
      exportBucket: 'attribution-exports',
      queues: Object.fromEntries(
        Object.keys(service.stack.stores.queues).map((queue) => [queue, `http://127.0.0.1:9324/000000000000/${queue}`]),
      ),
      deadLetterQueues: Object.fromEntries(
        Object.keys(service.stack.stores.queues).map((queue) => [queue, `http://127.0.0.1:9324/000000000000/${queue}-dlq`]),
      ),
      originSecretArn: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:origin-verify-a1b2c3',
      console: { issuer: 'http://127.0.0.1:4010', clientId: 'console', userPoolId: 'local', baseUrl: 'http://127.0.0.1:3000' },
    });
    expect(Object.keys(local).sort()).toEqual(variables);
  });

  it('set none of the local-only variables in any function', () => {
    const localOnly = new Set<string>([...LOCAL_SETTINGS.filter((name) => name !== 'POWERTOOLS_LOG_LEVEL'), ...LOCAL_EMULATOR_VARIABLES]);
    const found = specs.flatMap(([name]) =>
      Object.keys(lambdaOf(name).Properties.Environment.Variables)
        .filter((variable) => localOnly.has(variable))
        .map((variable) => `${name}: ${variable}`),
    );
    expect(found).toEqual([]);
  });

  it("give skan-postback no SKAN_TEST_KEYS: in AWS only Apple's keys verify, the local runtime alone adds its test keys", () => {
    expect(LOCAL_ONLY_VARIABLES['skan-postback']).toHaveProperty(TEST_KEYS_VARIABLE);
    const everywhere = specs.flatMap(([name]) => Object.keys(lambdaOf(name).Properties.Environment.Variables as Record<string, unknown>));
    expect(everywhere).not.toContain(TEST_KEYS_VARIABLE);
    expect(Object.keys(lambdaOf('skan-postback').Properties.Environment.Variables as Record<string, unknown>)).toContain(
      'TABLE_AGGREGATES',
    );
  });

  it.each(specs)('give %s the same IAM policy on every table, both buckets, every queue and the origin secret', (name, spec) => {
    const synthesized = statementsOf(name)
      .filter((statement) => statement.Effect === 'Allow')
      .map((statement) => ({
        actions: [statement.Action].flat().filter((action) => !/^(logs|kms):/.test(action)),
        resources: [statement.Resource].flat().map(manifestResource),
        condition: statement.Condition,
      }))
      .filter((statement) => statement.actions.length > 0);
    // Every statement on a store names only manifest resources, none another kind of ARN.
    expect(synthesized.filter((statement) => statement.resources.includes('other'))).toEqual([]);
    expect(pairs(policyOf(spec).map(grantOf))).toEqual(pairs(synthesized as Grant[]));
  });

  it('finds the pairs the local check enforces for a function with every kind of grant', () => {
    // A guard against comparing two empty lists: the drain reads, writes and deletes.
    expect(pairs(policyOf(functions['privacy-drain']).map(grantOf))).toEqual(
      expect.arrayContaining([
        'dynamodb:DeleteItem on table:installs',
        's3:DeleteObjectVersion on objects',
        's3:List* on bucket',
        's3:DeleteObject on export-objects',
        's3:List* on export-bucket',
        'sqs:SendMessage on queue:privacy',
      ]),
    );
    expect(pairs(policyOf(functions.ingest).map(grantOf))).toEqual(
      expect.arrayContaining(['secretsmanager:GetSecretValue on origin-secret']),
    );
    // And the one conditioned grant: the health probe's item read.
    expect(pairs(policyOf(functions.health).map(grantOf))).toEqual(
      expect.arrayContaining([
        'dynamodb:GetItem on table:tenants when {"ForAllValues:StringEquals":{"dynamodb:LeadingKeys":["health#probe"]}}',
      ]),
    );
  });
});
