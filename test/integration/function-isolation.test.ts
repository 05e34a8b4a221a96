import { DeleteObjectCommand, GetObjectCommand, HeadBucketCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { ReceiveMessageCommand } from '@aws-sdk/client-sqs';
import { BatchGetCommand, GetCommand, PutCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { dynamoClient, s3Client, secretsManagerClient, sqsClient } from '../../functions/shared/clients';
import { environmentOf } from '../../lib/function-environment';
import { type FunctionSpec, functions, readsOriginSecret } from '../../lib/manifest';
import { policyOf, resourceKey } from '../../lib/permissions';
import { LAMBDA_PLATFORM_VARIABLES, LOCAL_EMULATOR_VARIABLES, LOCAL_SETTINGS, runAsFunction } from '../../local/function-context';
import { LOCAL_ORIGIN_SECRET_VARIABLE } from '../../local/origin-secret';
import { LOCAL_ONLY_VARIABLES } from '../../local/skan-test-key';
import { createTenant, type LocalStack, startLocalStack } from '../support/local-stack';
import { post, signedBytes, validEvent } from './ingest-support';

/**
 * Each handler runs locally with exactly its function's environment and IAM policy, as in
 * Lambda (local/function-context.ts, local/iam-guard.ts): what AWS would refuse is refused here.
 */
let stack: LocalStack;

beforeAll(async () => {
  stack = await startLocalStack();
});
afterAll(async () => {
  await stack?.stop();
});

const specs = Object.entries(functions) as [string, FunctionSpec][];
const local = new Set<string>([...LAMBDA_PLATFORM_VARIABLES, ...LOCAL_EMULATOR_VARIABLES, ...LOCAL_SETTINGS]);

describe("a function's environment", () => {
  it.each(specs)("%s sees its template variables and the platform's, and no other function's", (name, spec) => {
    const seen = runAsFunction(name, () => Object.keys(process.env));
    const template = Object.keys(environmentOf(spec));
    expect(seen).toEqual(expect.arrayContaining(template));
    // Beside them, only the local stand-ins the runtime gives this function alone (skan-postback's test keys).
    const standIns = Object.keys(LOCAL_ONLY_VARIABLES[name] ?? {});
    expect(seen.filter((variable) => !template.includes(variable) && !local.has(variable))).toEqual(standIns);
    // The whole process environment (the test's own) still has every table's variable.
    expect(Object.keys(process.env).length).toBeGreaterThan(seen.length);
  });

  it('hides a variable of another function: link-redirect cannot find the installs table or the audit bucket', () => {
    expect(process.env.TABLE_INSTALLS).toBeDefined();
    runAsFunction('link-redirect', () => {
      expect(process.env.TABLE_INSTALLS).toBeUndefined();
      expect(process.env.AUDIT_BUCKET).toBeUndefined();
      expect('TABLE_INSTALLS' in process.env).toBe(false);
      expect(process.env.TABLE_LINKS).toBe(stack.endpoints.tables.links);
      expect(process.env.AWS_LAMBDA_FUNCTION_NAME).toBe('link-redirect');
    });
  });

  it('keeps what a function sets for itself to that function', () => {
    runAsFunction('fallback', () => {
      process.env.SET_BY_FALLBACK = 'yes';
      expect(process.env.SET_BY_FALLBACK).toBe('yes');
    });
    expect(process.env.SET_BY_FALLBACK).toBeUndefined();
    expect(runAsFunction('health', () => process.env.SET_BY_FALLBACK)).toBeUndefined();
  });
});

describe('the IAM check on every AWS call', () => {
  const refusal = async (promise: Promise<unknown>) => {
    const error = (await promise.then(
      () => undefined,
      (caught: unknown) => caught,
    )) as { name?: string; message?: string; $metadata?: { httpStatusCode?: number } } | undefined;
    return error && { name: error.name, status: error.$metadata?.httpStatusCode, message: error.message };
  };

  it("refuses a write to a table the function may only read, with DynamoDB's AccessDeniedException", async () => {
    const tenants = stack.endpoints.tables.tenants;
    const refused = await refusal(
      runAsFunction('health', () => dynamoClient().send(new PutCommand({ TableName: tenants, Item: { pk: 'health#probe' } }))),
    );
    expect(refused).toEqual({
      name: 'AccessDeniedException',
      status: 400,
      message: expect.stringContaining(
        `is not authorized to perform: dynamodb:PutItem on resource: arn:aws:dynamodb:us-east-1:000000000000:table/${tenants}`,
      ),
    });
    // Reading it is granted, and answers.
    await expect(
      runAsFunction('health', () => dynamoClient().send(new GetCommand({ TableName: tenants, Key: { pk: 'health#probe' } }))),
    ).resolves.toBeDefined();
  });

  it.each(['health', 'health-check'])(
    'keeps %s to its probes: the probe key, HeadBucket, and no tenant item, counter or audit object',
    async (name) => {
      const tenant = await createTenant();
      const { tables, bucket: Bucket } = stack.endpoints;
      const read = (command: GetCommand | ScanCommand | QueryCommand | BatchGetCommand) =>
        runAsFunction(name, () => dynamoClient().send(command as GetCommand));
      const denied = { name: 'AccessDeniedException', message: expect.stringContaining(`table/${tables.tenants}`) };
      await expect(read(new GetCommand({ TableName: tables.tenants, Key: { pk: 'health#probe' } }))).resolves.toBeDefined();
      await expect(read(new GetCommand({ TableName: tables.counters, Key: { pk: 'health#probe' } }))).resolves.toBeDefined();
      expect(await refusal(read(new GetCommand({ TableName: tables.tenants, Key: { pk: `app#${tenant.app.app_key}` } })))).toMatchObject(
        denied,
      );
      expect(await refusal(read(new ScanCommand({ TableName: tables.tenants })))).toMatchObject(denied);
      expect(
        await refusal(
          read(
            new BatchGetCommand({
              RequestItems: { [tables.tenants]: { Keys: [{ pk: 'health#probe' }, { pk: `app#${tenant.app.app_key}` }] } },
            }),
          ),
        ),
      ).toMatchObject(denied);
      const byId = new QueryCommand({
        TableName: tables.tenants,
        IndexName: 'by_id',
        KeyConditionExpression: 'id = :id',
        ExpressionAttributeValues: { ':id': tenant.app.app_id },
      });
      expect(await refusal(read(byId))).toMatchObject({ name: 'AccessDeniedException' });
      expect(
        await refusal(read(new GetCommand({ TableName: tables.counters, Key: { pk: `cap#${tenant.company.company_id}#2026-01` } }))),
      ).toMatchObject({ name: 'AccessDeniedException' });

      await expect(runAsFunction(name, () => s3Client().send(new HeadBucketCommand({ Bucket })))).resolves.toBeDefined();
      await s3Client().send(new PutObjectCommand({ Bucket, Key: 'audit/health-test', Body: 'x' }));
      expect(
        await refusal(runAsFunction(name, () => s3Client().send(new GetObjectCommand({ Bucket, Key: 'audit/health-test' })))),
      ).toMatchObject({ name: 'AccessDenied', status: 403 });
    },
  );

  it('refuses a table the function has no grant on at all, and an index of it', async () => {
    const clicks = stack.endpoints.tables.clicks;
    expect(
      await refusal(
        runAsFunction('report-events', () => dynamoClient().send(new GetCommand({ TableName: clicks, Key: { click_id: 'x' } }))),
      ),
    ).toMatchObject({ name: 'AccessDeniedException' });
    const query = new QueryCommand({
      TableName: clicks,
      IndexName: 'by_app_ip_platform',
      KeyConditionExpression: 'app_ip_platform = :k',
      ExpressionAttributeValues: { ':k': 'x' },
    });
    expect(await refusal(runAsFunction('report-events', () => dynamoClient().send(query)))).toMatchObject({
      message: expect.stringContaining(`table/${clicks}/index/by_app_ip_platform`),
    });
    // The aggregator reads clicks through that index.
    await expect(runAsFunction('aggregator', () => dynamoClient().send(query))).resolves.toBeDefined();
  });

  it("refuses reading audit objects to a function that may only put them, with S3's 403 AccessDenied", async () => {
    const Bucket = stack.endpoints.bucket;
    await runAsFunction('ingest', () => s3Client().send(new PutObjectCommand({ Bucket, Key: 'audit/iam-test', Body: 'x' })));
    expect(await refusal(runAsFunction('ingest', () => s3Client().send(new GetObjectCommand({ Bucket, Key: 'audit/iam-test' }))))).toEqual({
      name: 'AccessDenied',
      status: 403,
      message: expect.stringContaining(`s3:GetObject on resource: arn:aws:s3:::${Bucket}/audit/iam-test`),
    });
  });

  it("keeps the export bucket to its own grant (exports): the audit bucket's grant opens nothing there", async () => {
    const Bucket = stack.endpoints.export_bucket;
    const audit = stack.endpoints.bucket;
    expect(Bucket).toBe('attribution-exports');
    const s3 = (name: string, command: PutObjectCommand | GetObjectCommand | DeleteObjectCommand | ListObjectsV2Command) =>
      runAsFunction(name, () => s3Client().send(command as GetObjectCommand));
    const key = 'stream/app_isolation/0000000000001-00-0000000001.jsonl.gz';
    // The aggregator writes stream objects, reads them back, and deletes one a replay finds holds
    // nothing (issue 35: the lane sweep's replays, docs/aggregation.md).
    await s3('aggregator', new PutObjectCommand({ Bucket, Key: key, Body: 'x' }));
    await expect(s3('aggregator', new GetObjectCommand({ Bucket, Key: key }))).resolves.toBeDefined();
    await expect(s3('aggregator', new DeleteObjectCommand({ Bucket, Key: key }))).resolves.toBeDefined();
    await s3('aggregator', new PutObjectCommand({ Bucket, Key: key, Body: 'x' }));
    // The stream endpoint deletes nothing.
    expect(await refusal(s3('stream-events', new DeleteObjectCommand({ Bucket, Key: key })))).toMatchObject({
      name: 'AccessDenied',
      message: expect.stringContaining(`s3:DeleteObject on resource: arn:aws:s3:::${Bucket}/${key}`),
    });
    // The stream endpoint only reads.
    await expect(s3('stream-events', new ListObjectsV2Command({ Bucket, Prefix: 'stream/' }))).resolves.toBeDefined();
    expect(await refusal(s3('stream-events', new PutObjectCommand({ Bucket, Key: key, Body: 'y' })))).toMatchObject({
      name: 'AccessDenied',
      status: 403,
    });
    // Ingest may put audit objects, and nothing in the export bucket; the health probes may
    // HeadBucket the audit bucket, not this one.
    await expect(s3('ingest', new PutObjectCommand({ Bucket: audit, Key: 'audit/exports-isolation', Body: 'x' }))).resolves.toBeDefined();
    expect(await refusal(s3('ingest', new PutObjectCommand({ Bucket, Key: 'events/x.parquet', Body: 'x' })))).toEqual({
      name: 'AccessDenied',
      status: 403,
      message: expect.stringContaining(`s3:PutObject on resource: arn:aws:s3:::${Bucket}/events/x.parquet`),
    });
    expect(await refusal(runAsFunction('health', () => s3Client().send(new HeadBucketCommand({ Bucket }))))).toMatchObject({
      name: 'AccessDenied',
      message: expect.stringContaining(`s3:ListBucket on resource: arn:aws:s3:::${Bucket}`),
    });
    // Nor the other way round: the stream endpoint reads no audit object.
    expect(await refusal(s3('stream-events', new GetObjectCommand({ Bucket: audit, Key: 'audit/exports-isolation' })))).toMatchObject({
      name: 'AccessDenied',
    });
    // The export and the privacy drain delete export files.
    await expect(s3('export', new DeleteObjectCommand({ Bucket, Key: key }))).resolves.toBeDefined();
    runAsFunction('link-redirect', () => expect(process.env.EXPORT_BUCKET).toBeUndefined());
    runAsFunction('aggregator', () => expect(process.env.EXPORT_BUCKET).toBe(Bucket));
  });

  it('refuses receiving from a queue the function may only send to', async () => {
    const QueueUrl = stack.endpoints.queues.aggregation;
    expect(
      await refusal(runAsFunction('ingest', () => sqsClient().send(new ReceiveMessageCommand({ QueueUrl, WaitTimeSeconds: 0 })))),
    ).toMatchObject({
      name: 'AccessDeniedException',
      message: expect.stringContaining('sqs:ReceiveMessage'),
    });
  });

  it("lets the routed functions and the authorizer alone read the origin secret, whose value no function's environment holds", async () => {
    // Read here, as the operator: inside a function without the grant, the variable is not there either.
    const arn = process.env.ORIGIN_VERIFY_SECRET_ARN;
    const value = process.env[LOCAL_ORIGIN_SECRET_VARIABLE];
    const read = (name: string) => runAsFunction(name, () => secretsManagerClient().send(new GetSecretValueCommand({ SecretId: arn })));
    for (const [name, spec] of specs) {
      const environment = runAsFunction(name, () => ({ ...process.env }));
      expect({ name, holdsValue: Object.values(environment).includes(value) }).toEqual({ name, holdsValue: false });
      if (readsOriginSecret(spec)) {
        expect(environment.ORIGIN_VERIFY_SECRET_ARN).toBe(arn);
        await expect(read(name)).resolves.toMatchObject({ SecretString: value });
      } else {
        expect(await refusal(read(name))).toEqual({
          name: 'AccessDeniedException',
          status: 400,
          message: expect.stringContaining(`secretsmanager:GetSecretValue on resource: ${arn}`),
        });
      }
    }
  });

  it('lets the operator (code outside any function) do anything, as the admin CLI does', async () => {
    await expect(
      dynamoClient().send(new PutCommand({ TableName: stack.endpoints.tables.tenants, Item: { pk: 'operator#write' } })),
    ).resolves.toBeDefined();
  });
});

describe('a grant taken away', () => {
  let narrowed: LocalStack;
  afterAll(async () => {
    await narrowed?.stop();
  });

  it('makes the handler fail as it would in AWS: ingest without its counters grant answers 503 audit_write_failed', async () => {
    const batch = () => Buffer.from(JSON.stringify({ sent_at_ms: Date.now(), events: [validEvent()] }));
    // With every grant of the manifest, a batch is accepted.
    const granted = await createTenant();
    expect(await post(stack.baseUrl, '/event', signedBytes(granted, batch()))).toMatchObject({ status: 200 });
    await stack.stop();

    const withoutCounters = policyOf(functions.ingest)
      .map((statement) => ({
        ...statement,
        resources: statement.resources.filter((resource) => resourceKey(resource) !== 'table:counters'),
      }))
      .filter((statement) => statement.resources.length > 0);
    narrowed = await startLocalStack({ policies: { ingest: withoutCounters } });
    const tenant = await createTenant();
    // The cap read is refused (AccessDeniedException), so the batch is neither stored nor counted:
    // the interface's answer for a batch that cannot be taken (docs/ingestion.md).
    expect(await post(narrowed.baseUrl, '/event', signedBytes(tenant, batch()))).toEqual({
      status: 503,
      body: { error: 'audit_write_failed' },
    });
  });
});
