import type { InitializeHandler, InitializeHandlerArguments, MetadataBearer, MiddlewareStack } from '@smithy/types';
import fc from 'fast-check';
import { TenantStore } from '../../../functions/adapters/tenant-store';
import { addClientHook } from '../../../functions/shared/clients/reusable';
import { functions, KEY_USE_ATTRIBUTES, MAX_REPORT_KEY_SECRET_PREFIX, SERVER_KEY_PREFIX, tables } from '../../../lib/manifest';
import { iamConditionOf, KEY_USE_CONDITION, policyOf, stringLike } from '../../../lib/permissions';
import type { FunctionContext, LocalDeployment } from '../../../local/function-context';
import { attributeNamesOf, refusalOf } from '../../../local/iam-guard';

/**
 * The 'read_key_use' level (lib/manifest.ts): the functions that check server keys read the
 * tenants table and may write one thing in it, a server key's last use. The local IAM check
 * (local/iam-guard.ts) enforces its conditions as IAM would: the server_key# items alone, the key
 * and last_used_ms alone (in the update and in its condition), no ReturnValues reading the rest.
 */

const deployment: LocalDeployment = {
  tables: Object.fromEntries(Object.keys(tables).map((table) => [table, `local-${table}`])),
  bucket: 'local-audit',
  exportBucket: 'local-exports',
  queues: {},
  deadLetterQueues: {},
  originSecretArn: 'arn:aws:secretsmanager:us-east-1:000000000000:secret:origin-verify-a1b2c3',
};
const TENANTS = deployment.tables.tenants;
const contextOf = (name: keyof typeof functions): FunctionContext => ({
  name,
  template: {},
  platform: {},
  policy: policyOf(functions[name]),
  deployment,
  own: {},
});
const keyCheckers = (Object.keys(functions) as (keyof typeof functions)[]).filter(
  (name) => (functions[name] as { tables?: { tenants?: string } }).tables?.tenants === 'read_key_use',
);
const reportSkan = contextOf('report-skan');
const hash = 'a'.repeat(64);
const refusedAction = (command: string, input: Record<string, unknown>, context = reportSkan) =>
  refusalOf('dynamodb', command, input, context)?.action;

/** The calls the service's own code sends, captured before they leave (no DynamoDB here). */
const sent: { command: string; input: Record<string, unknown> }[] = [];
beforeAll(() => {
  process.env.AWS_REGION ??= 'us-east-1';
  addClientHook((client) => {
    (client as { middlewareStack: MiddlewareStack<object, MetadataBearer> }).middlewareStack.add(
      (_next: InitializeHandler<object, MetadataBearer>, context) => async (args: InitializeHandlerArguments<object>) => {
        sent.push({ command: String(context.commandName), input: args.input as Record<string, unknown> });
        return { output: { $metadata: {} }, response: {} };
      },
      { step: 'initialize', name: 'captureForTest', priority: 'low' },
    );
  });
});

describe('the read_key_use level', () => {
  it('is the level of the nine functions that check server keys, and no other function but the console API writes the tenants table', () => {
    expect(keyCheckers.sort()).toEqual(
      [
        'ad-revenue-upload',
        'cost-upload',
        'report-attribution',
        'report-cohorts',
        'report-events',
        'report-performance',
        'report-revenue',
        'report-skan',
        'stream-events',
      ].sort(),
    );
    const writers = (Object.keys(functions) as (keyof typeof functions)[]).filter(
      (name) =>
        refusalOf('dynamodb', 'PutCommand', { TableName: TENANTS, Item: { pk: `server_key#${hash}` } }, contextOf(name)) === undefined,
    );
    // The intended exception (ADR 0007, "Commands and grants"): an admin creates apps, server keys
    // and SKAN settings from the console, and an operator companies, as the admin CLI does.
    expect(writers).toEqual(['console-api']);
  });

  it('writes the IAM condition AWS documents for an update kept to some attributes of some items', () => {
    expect(iamConditionOf(KEY_USE_CONDITION)).toEqual({
      'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': ['server_key#*'] },
      'ForAllValues:StringEquals': { 'dynamodb:Attributes': ['pk', 'last_used_ms'] },
      StringEquals: { 'dynamodb:ReturnValues': ['NONE', 'UPDATED_OLD', 'UPDATED_NEW'] },
    });
    // The key attribute is the tenants table's own (IAM needs the key attributes listed).
    expect(KEY_USE_ATTRIBUTES).toContain(tables.tenants.partitionKey.name);
    expect(() => policyOf({ entry: 'x.ts', description: 'x', tables: { aggregates: 'read_key_use' as 'read' } })).toThrow(
      /tenants table's level/,
    );
  });

  it.each(keyCheckers)("lets %s send TenantStore's own last-use update, and read any tenant item", async (name) => {
    sent.length = 0;
    await expect(new TenantStore(TENANTS).recordServerKeyUse(hash, 1_700_000_000_000, 3_600_000)).resolves.toBe(true);
    // The document client's command, as the guard sees it (the low-level UpdateItem's name).
    expect(sent.map((call) => call.command)).toEqual(['UpdateItemCommand']);
    const [{ command, input }] = sent;
    expect(input).toMatchObject({ TableName: TENANTS, Key: { pk: `${SERVER_KEY_PREFIX}${hash}` } });
    expect(refusalOf('dynamodb', command, input, contextOf(name))).toBeUndefined();
    expect(refusedAction('GetCommand', { TableName: TENANTS, Key: { pk: 'app#k' } }, contextOf(name))).toBeUndefined();
    expect(
      refusedAction(
        'QueryCommand',
        { TableName: TENANTS, IndexName: 'by_id', KeyConditionExpression: 'id = :id', ExpressionAttributeValues: { ':id': 'a' } },
        contextOf(name),
      ),
    ).toBeUndefined();
  });

  const lastUse = {
    TableName: TENANTS,
    Key: { pk: `server_key#${hash}` },
    UpdateExpression: 'SET last_used_ms = :now',
    ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(last_used_ms) OR last_used_ms < :cutoff)',
    ExpressionAttributeValues: { ':now': 2, ':cutoff': 1 },
  };

  it.each([
    ['another attribute set (revoking the key)', { UpdateExpression: 'SET revoked = :now' }],
    ['another attribute set through a placeholder', { UpdateExpression: 'SET #r = :now', ExpressionAttributeNames: { '#r': 'revoked' } }],
    ['last_used_ms and another attribute', { UpdateExpression: 'SET last_used_ms = :now, app_id = :cutoff' }],
    ['another attribute removed', { UpdateExpression: 'SET last_used_ms = :now REMOVE scopes' }],
    ['a condition on another attribute', { ConditionExpression: 'attribute_exists(pk) AND app_id = :cutoff' }],
    ['an unused placeholder for another attribute', { ExpressionAttributeNames: { '#x': 'revoked' } }],
    ['the whole item returned (ALL_NEW)', { ReturnValues: 'ALL_NEW' }],
    ['the whole old item returned (ALL_OLD)', { ReturnValues: 'ALL_OLD' }],
    ['an app item', { Key: { pk: 'app#k' } }],
    ['a company item', { Key: { pk: 'company#k' } }],
    ['a SKAN schema item', { Key: { pk: 'skan_schema#app' } }],
    ['a key prefix in the wrong case', { Key: { pk: `SERVER_KEY#${hash}` } }],
    ['the legacy AttributeUpdates of another attribute', { UpdateExpression: undefined, AttributeUpdates: { revoked: { Action: 'PUT' } } }],
  ])('refuses an UpdateItem with %s', (_, change) => {
    const input = { ...lastUse, ...change };
    expect(refusedAction('UpdateCommand', input)).toBe('dynamodb:UpdateItem');
    // Marshalled, through the low-level client, the same.
    expect(refusedAction('UpdateItemCommand', { ...input, Key: { pk: { S: input.Key.pk } } })).toBe('dynamodb:UpdateItem');
  });

  it('allows the last-use update with ReturnValues that name only the updated attribute, and through a placeholder', () => {
    for (const ReturnValues of ['NONE', 'UPDATED_OLD', 'UPDATED_NEW']) {
      expect(refusedAction('UpdateCommand', { ...lastUse, ReturnValues })).toBeUndefined();
    }
    expect(
      refusedAction('UpdateCommand', {
        ...lastUse,
        UpdateExpression: 'SET #u = :now',
        ExpressionAttributeNames: { '#u': 'last_used_ms' },
      }),
    ).toBeUndefined();
  });

  it('refuses every other write to the tenants table: PutItem, DeleteItem, batches and transactions', () => {
    const key = { pk: `server_key#${hash}` };
    expect(refusedAction('PutCommand', { TableName: TENANTS, Item: { ...key, last_used_ms: 1 } })).toBe('dynamodb:PutItem');
    expect(refusedAction('DeleteCommand', { TableName: TENANTS, Key: key })).toBe('dynamodb:DeleteItem');
    expect(
      refusedAction('BatchWriteCommand', { RequestItems: { [TENANTS]: [{ PutRequest: { Item: { ...key, last_used_ms: 1 } } }] } }),
    ).toBe('dynamodb:BatchWriteItem');
    const inTransaction = (update: Record<string, unknown>) =>
      refusedAction('TransactWriteCommand', { TransactItems: [{ Update: { ...lastUse, ...update } }] });
    expect(inTransaction({ UpdateExpression: 'SET revoked = :now' })).toBe('dynamodb:UpdateItem');
    // IAM authorizes a transaction's parts, each as its own action: the last-use update passes there too.
    expect(inTransaction({})).toBeUndefined();
    expect(inTransaction({ Key: { pk: 'app#k' } })).toBe('dynamodb:UpdateItem');
  });

  it('refuses, for any attribute but the two, an update naming it; allows the update of any key hash', () => {
    const allowed = new Set(KEY_USE_ATTRIBUTES);
    const name = fc
      .stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,20}$/)
      .filter(
        (candidate) =>
          !allowed.has(candidate) &&
          !['SET', 'REMOVE', 'ADD', 'DELETE', 'AND', 'OR', 'NOT', 'IN', 'BETWEEN'].includes(candidate.toUpperCase()),
      );
    fc.assert(
      fc.property(name, fc.boolean(), (attribute, placeholder) => {
        const input = placeholder
          ? { ...lastUse, UpdateExpression: 'SET last_used_ms = :now, #a = :now', ExpressionAttributeNames: { '#a': attribute } }
          : { ...lastUse, UpdateExpression: `SET last_used_ms = :now, ${attribute} = :now` };
        expect(attributeNamesOf(input)).toContain(attribute);
        expect(refusedAction('UpdateCommand', input)).toBe('dynamodb:UpdateItem');
      }),
    );
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 80 }), (suffix) => {
        expect(refusedAction('UpdateCommand', { ...lastUse, Key: { pk: `server_key#${suffix}` } })).toBeUndefined();
      }),
    );
  });
});

describe('the secrets of a prefix', () => {
  const read = (SecretId: string, name: keyof typeof functions) =>
    refusalOf('secretsmanager', 'GetSecretValueCommand', { SecretId }, contextOf(name))?.action;
  const key = `${MAX_REPORT_KEY_SECRET_PREFIX}game`;

  it("lets max-revenue-pull read a secret under its prefix, by name or by ARN, and nothing else's", () => {
    expect(read(key, 'max-revenue-pull')).toBeUndefined();
    expect(read(`arn:aws:secretsmanager:us-east-1:000000000000:secret:${key}-x1y2z3`, 'max-revenue-pull')).toBeUndefined();
    expect(read('attribution/other/game', 'max-revenue-pull')).toBe('secretsmanager:GetSecretValue');
    expect(read(deployment.originSecretArn, 'max-revenue-pull')).toBe('secretsmanager:GetSecretValue');
  });

  it('refuses the report keys to every other function, the ones reading the origin secret too', () => {
    const others = (Object.keys(functions) as (keyof typeof functions)[]).filter((name) => name !== 'max-revenue-pull');
    expect(others.filter((name) => read(key, name) === undefined)).toEqual([]);
    expect(read(deployment.originSecretArn, 'ingest')).toBeUndefined();
  });
});

describe("IAM's StringLike", () => {
  it('matches * to any run of characters and ? to one, case-sensitively, and nothing else specially', () => {
    expect(stringLike('server_key#*', 'server_key#')).toBe(true);
    expect(stringLike('server_key#*', 'server_key#a\nb')).toBe(true);
    expect(stringLike('server_key#*', 'Server_key#a')).toBe(false);
    expect(stringLike('server_key#*', 'app#server_key#a')).toBe(false);
    expect(stringLike('a?c', 'abc')).toBe(true);
    expect(stringLike('a?c', 'ac')).toBe(false);
    expect(stringLike('a.c', 'abc')).toBe(false);
    fc.assert(
      fc.property(fc.string(), fc.string(), (prefix, rest) => {
        const literal = prefix.replace(/[*?]/g, '');
        expect(stringLike(`${literal}*`, `${literal}${rest}`)).toBe(true);
        expect(stringLike(literal, `${literal}${rest}`)).toBe(rest === '');
      }),
    );
  });
});
