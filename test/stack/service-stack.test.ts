import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Match, Template } from 'aws-cdk-lib/assertions';
import { CachePolicy, OriginRequestPolicy } from 'aws-cdk-lib/aws-cloudfront';
import * as sns from 'aws-cdk-lib/aws-sns';
import { createApp } from '../../bin/app';
import { routeKeyOf } from '../../lib/constructs/endpoint';
import {
  bucket as bucketSpec,
  envName,
  type FunctionSpec,
  functions,
  outputKey,
  type QueueName,
  type QueueSpec,
  queues,
  readsOriginSecret,
  type ScheduleSpec,
  schedules,
  type TableName,
  type TableSpec,
  tables,
} from '../../lib/manifest';
import { cdkJsonContext, logicalId, type SynthesizedService, synthesizeService } from './synthesize';

type Resource = { Type: string; Properties: Record<string, any>; DeletionPolicy?: string; Metadata?: Record<string, any> };

const functionEntries = Object.entries(functions) as [string, FunctionSpec][];
const routedFunctions = functionEntries.filter(([, spec]) => spec.routes?.length);
// The functions API Gateway routes to; CloudFront reaches the others through their function URLs (issue 41).
const apiRoutedFunctions = routedFunctions.filter(([, spec]) => !spec.functionUrl);
const tableEntries = Object.entries(tables) as [TableName, TableSpec][];
const queueEntries = Object.entries(queues) as [QueueName, QueueSpec][];
const scheduleEntries = Object.entries(schedules) as [string, ScheduleSpec][];

let service: SynthesizedService;
let resources: Record<string, Resource>;

beforeAll(() => {
  service = synthesizeService();
  resources = service.template.toJSON().Resources;
});

const functionId = (name: string) => logicalId(service.stack.functions.get(name)!);
// The console's own HTTP API (lib/constructs/console-site.ts, its own test) is left out: these tests are of the service's API.
const ofConsoleApi = (resource: { Properties?: Record<string, unknown> }) =>
  (resource.Properties?.ApiId as { Ref?: string } | undefined)?.Ref === logicalId(service.stack.console.httpApi);
const ofType = (type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type && !ofConsoleApi(resource));
const getAtt = (id: string, attribute: string) => ({ 'Fn::GetAtt': [id, attribute] });
const secretReference = () => ({
  'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: ofType('AWS::SecretsManager::Secret')[0][0] }, ':SecretString:::}}']],
});

describe('the service stack', () => {
  it('passes the AWS Solutions checks, every acknowledged finding carrying its reason', () => {
    const nagReports = service.validationReport.pluginReports.filter((report) => report.pluginName === 'AwsSolutions');
    expect(nagReports.flatMap((report) => report.violations ?? [])).toEqual([]);

    const acknowledgements = Object.values(resources).flatMap(
      (resource) => (resource.Metadata?.cdk_nag?.rules_to_suppress ?? []) as { id: string; reason: string }[],
    );
    expect(acknowledgements.length).toBeGreaterThan(0);
    for (const { id, reason } of acknowledgements) expect({ id, reason: reason.length > 40 }).toEqual({ id, reason: true });
  });

  it('builds one arm64 Node 22 function per manifest entry, with its own log group and a role without managed policies', () => {
    const lambdas = ofType('AWS::Lambda::Function');
    expect(lambdas).toHaveLength(functionEntries.length);
    for (const [name] of functionEntries) {
      expect(resources[functionId(name)].Properties).toMatchObject({
        Runtime: 'nodejs22.x',
        Architectures: ['arm64'],
        LoggingConfig: { LogGroup: { Ref: expect.any(String) } },
        Environment: {
          Variables: expect.objectContaining({
            NODE_OPTIONS: '--enable-source-maps',
            POWERTOOLS_SERVICE_NAME: 'attribution',
            POWERTOOLS_METRICS_NAMESPACE: 'AttributionService',
          }),
        },
      });
    }
    for (const [, role] of ofType('AWS::IAM::Role')) expect(role.Properties.ManagedPolicyArns).toBeUndefined();
    service.template.allResourcesProperties('AWS::Logs::LogGroup', { RetentionInDays: 30 });
  });

  it('gives each routed function one Lambda integration (payload 2.0) that every route key of its manifest entry targets', () => {
    const integrations = Object.fromEntries(ofType('AWS::ApiGatewayV2::Integration'));
    const routeTargets = new Map(
      ofType('AWS::ApiGatewayV2::Route').map(([, route]) => [route.Properties.RouteKey, route.Properties.Target]),
    );
    expect(Object.keys(integrations)).toHaveLength(apiRoutedFunctions.length);
    expect(routeTargets.size).toBe(apiRoutedFunctions.flatMap(([, spec]) => spec.routes ?? []).length);

    for (const [name, spec] of apiRoutedFunctions) {
      const ownIntegrations = Object.entries(integrations).filter(
        ([, integration]) => JSON.stringify(integration.Properties.IntegrationUri) === JSON.stringify(getAtt(functionId(name), 'Arn')),
      );
      expect(ownIntegrations).toHaveLength(1);
      const [integrationId, integration] = ownIntegrations[0];
      expect(integration.Properties).toMatchObject({ IntegrationType: 'AWS_PROXY', PayloadFormatVersion: '2.0' });
      for (const route of spec.routes ?? []) {
        expect([route, routeTargets.get(route)]).toEqual([route, { 'Fn::Join': ['', ['integrations/', { Ref: integrationId }]] }]);
      }
    }
  });

  it("sets the environment variable of every table, bucket and queue a function is granted, and the origin secret's ARN on HTTP functions and the authorizer", () => {
    for (const [name, spec] of functionEntries) {
      const variables = resources[functionId(name)].Properties.Environment.Variables;
      for (const table of Object.keys(spec.tables ?? {}) as TableName[]) {
        expect(variables[envName.table(table)]).toEqual({ Ref: logicalId(service.stack.stores.tables[table]) });
      }
      if (spec.bucket) expect(variables[envName.bucket()]).toEqual({ Ref: logicalId(service.stack.stores.bucket) });
      for (const queue of Object.keys(spec.queues ?? {}) as QueueName[]) {
        expect(variables[envName.queue(queue)]).toEqual({ Ref: logicalId(service.stack.stores.queues[queue]) });
      }
      if (readsOriginSecret(spec)) expect(variables.ORIGIN_VERIFY_SECRET_ARN).toEqual({ Ref: ofType('AWS::SecretsManager::Secret')[0][0] });
      else expect(variables.ORIGIN_VERIFY_SECRET_ARN).toBeUndefined();
    }
  });

  it('grants the health function its probes only: HeadBucket is s3:ListBucket, queues give their attributes and nothing else', () => {
    const roleId = logicalId(service.stack.functions.get('health')!.role!);
    const [, policy] = ofType('AWS::IAM::Policy').find(
      ([, p]) => JSON.stringify(p.Properties.Roles) === JSON.stringify([{ Ref: roleId }]),
    )!;
    const actions = (policy.Properties.PolicyDocument.Statement as { Action: string | string[] }[]).flatMap((s) => s.Action);
    expect(actions).toEqual(expect.arrayContaining(['s3:ListBucket', 'sqs:GetQueueAttributes', 'dynamodb:GetItem']));
    expect(actions.filter((action) => /^(s3:Get|dynamodb:(Query|Scan|BatchGet))/.test(action))).toEqual([]);
    expect(
      actions.filter((action) =>
        /^(sqs:(Send|Receive|Delete|Change)|s3:(Put|Delete|Abort)|dynamodb:(Put|Update|Delete|BatchWrite))/.test(action),
      ),
    ).toEqual([]);
  });

  it('keeps every table on demand, point-in-time recoverable, encrypted with the rotated data key, retained, with its TTL and indexes', () => {
    const dataKeyId = logicalId(service.stack.stores.key);
    expect(resources[dataKeyId].Properties.EnableKeyRotation).toBe(true);
    expect(ofType('AWS::DynamoDB::Table')).toHaveLength(tableEntries.length);
    for (const [name, spec] of tableEntries) {
      const table = resources[logicalId(service.stack.stores.tables[name])];
      expect(table).toMatchObject({
        DeletionPolicy: 'Retain',
        Properties: {
          BillingMode: 'PAY_PER_REQUEST',
          PointInTimeRecoverySpecification: { PointInTimeRecoveryEnabled: true },
          SSESpecification: { SSEEnabled: true, SSEType: 'KMS', KMSMasterKeyId: getAtt(dataKeyId, 'Arn') },
        },
      });
      if (spec.ttlAttribute) expect(table.Properties.TimeToLiveSpecification).toEqual({ AttributeName: spec.ttlAttribute, Enabled: true });
      const indexes = (table.Properties.GlobalSecondaryIndexes ?? []) as { IndexName: string; Projection: unknown }[];
      expect(indexes.map((index) => [index.IndexName, index.Projection])).toEqual(
        (spec.indexes ?? []).map((index) => [index.name, { ProjectionType: 'ALL' }]),
      );
    }
  });

  it('keeps the audit bucket private, versioned, TLS-only, KMS-encrypted, access-logged and on the manifest lifecycle', () => {
    const bucketId = logicalId(service.stack.stores.bucket);
    expect(resources[bucketId]).toMatchObject({
      DeletionPolicy: 'Retain',
      Properties: {
        PublicAccessBlockConfiguration: {
          BlockPublicAcls: true,
          BlockPublicPolicy: true,
          IgnorePublicAcls: true,
          RestrictPublicBuckets: true,
        },
        VersioningConfiguration: { Status: 'Enabled' },
        BucketEncryption: {
          ServerSideEncryptionConfiguration: [
            {
              BucketKeyEnabled: true,
              ServerSideEncryptionByDefault: {
                SSEAlgorithm: 'aws:kms',
                KMSMasterKeyID: getAtt(logicalId(service.stack.stores.key), 'Arn'),
              },
            },
          ],
        },
        LoggingConfiguration: { DestinationBucketName: { Ref: logicalId(service.stack.stores.accessLogs) } },
        LifecycleConfiguration: {
          Rules: [
            expect.objectContaining({
              Transitions: [
                { StorageClass: 'STANDARD_IA', TransitionInDays: bucketSpec.infrequentAccessAfterDays },
                { StorageClass: 'GLACIER_IR', TransitionInDays: bucketSpec.glacierInstantAfterDays },
              ],
              NoncurrentVersionExpiration: { NoncurrentDays: bucketSpec.noncurrentVersionsExpireAfterDays },
            }),
            expect.objectContaining({ Id: 'expire-invalid-skan-postbacks' }),
          ],
        },
      },
    });
    service.template.hasResourceProperties('AWS::S3::BucketPolicy', {
      Bucket: { Ref: bucketId },
      PolicyDocument: {
        Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
      },
    });
  });

  it('gives every queue a dead-letter queue after the manifest maxReceiveCount, with the manifest timeouts, encrypted and TLS-only', () => {
    for (const [name, spec] of queueEntries) {
      const queueId = logicalId(service.stack.stores.queues[name]);
      const deadLetterQueueId = logicalId(service.stack.stores.deadLetterQueues[name]);
      expect(resources[queueId].Properties).toMatchObject({
        RedrivePolicy: { deadLetterTargetArn: getAtt(deadLetterQueueId, 'Arn'), maxReceiveCount: spec.maxReceiveCount },
        VisibilityTimeout: spec.visibilityTimeoutSeconds,
        MessageRetentionPeriod: spec.retentionDays * 86_400,
        KmsMasterKeyId: getAtt(logicalId(service.stack.stores.key), 'Arn'),
      });
      expect(resources[deadLetterQueueId].Properties).toMatchObject({
        MessageRetentionPeriod: 14 * 86_400,
        KmsMasterKeyId: expect.anything(),
      });
      for (const id of [queueId, deadLetterQueueId]) {
        service.template.hasResourceProperties('AWS::SQS::QueuePolicy', {
          Queues: [{ Ref: id }],
          PolicyDocument: {
            Statement: Match.arrayWith([Match.objectLike({ Effect: 'Deny', Condition: { Bool: { 'aws:SecureTransport': 'false' } } })]),
          },
        });
      }
    }
  });

  it('feeds each queue to its consumer with partial batch failures, and only when the consumer is in the manifest', () => {
    const mappings = ofType('AWS::Lambda::EventSourceMapping').map(([, mapping]) => mapping.Properties);
    for (const [name, spec] of queueEntries) {
      const queueArn = getAtt(logicalId(service.stack.stores.queues[name]), 'Arn');
      const mapping = mappings.filter((m) => JSON.stringify(m.EventSourceArn) === JSON.stringify(queueArn));
      const consumer = spec.consumer && service.stack.functions.get(spec.consumer.function);
      if (!spec.consumer || !consumer) {
        expect(mapping).toEqual([]);
        continue;
      }
      expect(mapping).toEqual([
        expect.objectContaining({
          FunctionName: { Ref: logicalId(consumer) },
          BatchSize: spec.consumer.batchSize,
          FunctionResponseTypes: ['ReportBatchItemFailures'],
        }),
      ]);
      const window = (spec.consumer as { maxBatchingWindowSeconds?: number }).maxBatchingWindowSeconds;
      expect(mapping[0].MaximumBatchingWindowInSeconds).toBe(window);
    }
  });

  it('aggregates with the aggregator: big batches, a DLQ alarm and the 15-minute lag alarm on its queue', () => {
    const aggregator = service.stack.functions.get('aggregator');
    expect(aggregator).toBeDefined();
    service.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalId(aggregator!) },
      BatchSize: 100,
      MaximumBatchingWindowInSeconds: 1,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    const alarms = ofType('AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties);
    const onQueue = (queue: 'aggregation', metric: string) =>
      alarms.filter(
        (alarm) =>
          alarm.MetricName === metric && JSON.stringify(alarm.Dimensions ?? []).includes(queue === 'aggregation' ? 'Aggregation' : queue),
      );
    expect(onQueue('aggregation', 'ApproximateAgeOfOldestMessage')).toEqual([expect.objectContaining({ Threshold: 15 * 60 })]);
    expect(onQueue('aggregation', 'ApproximateNumberOfMessagesVisible').length).toBeGreaterThanOrEqual(1);
  });

  it('delivers postbacks from their own queue: batches of 10, partial failures, a DLQ alarm, and no local-only setting', () => {
    const sender = service.stack.functions.get('postback-sender');
    expect(sender).toBeDefined();
    service.template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      FunctionName: { Ref: logicalId(sender!) },
      BatchSize: 10,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
    });
    const alarms = ofType('AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties);
    expect(
      alarms.filter(
        (alarm) =>
          alarm.MetricName === 'ApproximateNumberOfMessagesVisible' &&
          JSON.stringify(alarm.Dimensions ?? []).includes('PostbacksDeadLetterQueue'),
      ).length,
    ).toBe(1);
    // Loopback destinations and second-long retries are for the local runtime and tests only.
    for (const [, fn] of ofType('AWS::Lambda::Function')) {
      expect(Object.keys(fn.Properties.Environment?.Variables ?? {})).not.toEqual(expect.arrayContaining(['POSTBACK_ALLOW_LOOPBACK']));
      expect(Object.keys(fn.Properties.Environment?.Variables ?? {})).not.toEqual(
        expect.arrayContaining(['POSTBACK_RETRY_DELAYS_SECONDS']),
      );
    }
    const body = JSON.stringify(ofType('AWS::CloudWatch::Dashboard')[0][1].Properties.DashboardBody);
    expect(body).toContain('Partner postbacks by outcome');
  });

  it("puts the aggregation counts and each report's latency on the dashboard", () => {
    const [[, dashboard]] = ofType('AWS::CloudWatch::Dashboard');
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    for (const metric of ['EventsAggregated', 'PoisonMessages', 'AggregationFailed', 'InstallsAttributed', 'PrivacyRequestsDrained'])
      expect(body).toContain(metric);
    for (const title of [
      'Aggregation lag (s): oldest message waiting',
      'Installs by attribution type',
      'Privacy requests drained',
      'SKAN postbacks by verification result',
      'Report latency p95 (ms)',
    ]) {
      expect(body).toContain(title);
    }
    for (const type of ['deterministic', 'probabilistic', 'organic']) expect(body).toContain(`\\"attribution_type\\",\\"${type}\\"`);
    for (const report of ['attribution', 'revenue', 'cohorts', 'events']) expect(body).toContain(`\\"report\\",\\"${report}\\"`);
  });

  it('drains privacy requests nightly with a function that has its own error and throttle alarms', () => {
    const drain = service.stack.functions.get('privacy-drain');
    expect(drain).toBeDefined();
    service.template.hasResourceProperties('AWS::Events::Rule', {
      ScheduleExpression: 'cron(37 3 * * ? *)',
      Targets: [Match.objectLike({ Arn: getAtt(logicalId(drain!), 'Arn') })],
    });
    // Its error rate reads Errors in a metric math expression; Throttles directly.
    const alarms = ofType('AWS::CloudWatch::Alarm').map(([, alarm]) => JSON.stringify(alarm.Properties));
    for (const metric of ['Errors', 'Throttles']) {
      expect(
        alarms.filter((alarm) => alarm.includes(`"MetricName":"${metric}"`) && alarm.includes(`"Ref":"${logicalId(drain!)}"`)),
      ).toHaveLength(1);
    }
  });

  it('fires each manifest schedule at its function', () => {
    for (const [, spec] of scheduleEntries) {
      if (!service.stack.functions.has(spec.function)) continue;
      service.template.hasResourceProperties('AWS::Events::Rule', {
        ScheduleExpression:
          spec.kind === 'rate'
            ? `rate(${spec.minutes} ${spec.minutes === 1 ? 'minute' : 'minutes'})`
            : `cron(${spec.minuteUtc} ${spec.kind === 'hourly' ? '*' : spec.hourUtc} * * ? *)`,
        State: 'ENABLED',
        Targets: [Match.objectLike({ Arn: getAtt(functionId(spec.function), 'Arn') })],
      });
    }
  });

  describe('alarms, all notifying the alarm topic', () => {
    const alarms = () => ofType('AWS::CloudWatch::Alarm').map(([, alarm]) => alarm.Properties);
    const topic = () => [{ Ref: logicalId(service.stack.alarms.topic) }];

    it('fire when any dead-letter queue holds a message', () => {
      for (const [name] of queueEntries) {
        const queueName = getAtt(logicalId(service.stack.stores.deadLetterQueues[name]), 'QueueName');
        expect(alarms()).toContainEqual(
          expect.objectContaining({
            Namespace: 'AWS/SQS',
            MetricName: 'ApproximateNumberOfMessagesVisible',
            Dimensions: [{ Name: 'QueueName', Value: queueName }],
            ComparisonOperator: 'GreaterThanThreshold',
            Threshold: 0,
            AlarmActions: topic(),
          }),
        );
      }
    });

    it('fire when the health check reports a failure or stops reporting', () => {
      expect(alarms()).toContainEqual(
        expect.objectContaining({
          Namespace: 'AttributionService',
          MetricName: 'Healthy',
          Dimensions: [{ Name: 'service', Value: 'attribution' }],
          ComparisonOperator: 'LessThanThreshold',
          Threshold: 1,
          TreatMissingData: 'breaching',
          AlarmActions: topic(),
        }),
      );
    });

    // The rates, latencies and throttles (5xx, each function's errors) are test/stack/deploy-config.test.ts's.
    it('fire on any audit write failure', () => {
      expect(alarms()).toContainEqual(
        expect.objectContaining({
          Namespace: 'AttributionService',
          MetricName: 'AuditWriteFailed',
          Dimensions: [{ Name: 'service', Value: 'attribution' }],
          Statistic: 'Sum',
          Threshold: 0,
          AlarmActions: topic(),
        }),
      );
    });

    it('fire when privacy requests wait over 36 hours and aggregation lags over 15 minutes', () => {
      for (const [name, seconds] of [
        ['privacy', 129_600],
        ['aggregation', 900],
      ] as const) {
        expect(alarms()).toContainEqual(
          expect.objectContaining({
            MetricName: 'ApproximateAgeOfOldestMessage',
            Dimensions: [{ Name: 'QueueName', Value: getAtt(logicalId(service.stack.stores.queues[name]), 'QueueName') }],
            ComparisonOperator: 'GreaterThanThreshold',
            Threshold: seconds,
            AlarmActions: topic(),
          }),
        );
      }
    });
  });

  it('puts CloudFront before the API: no caching, all methods, viewer headers but Host forwarded, the origin secret added', () => {
    service.template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        DefaultCacheBehavior: Match.objectLike({
          CachePolicyId: CachePolicy.CACHING_DISABLED.cachePolicyId,
          // The managed AllViewerExceptHostHeader policy: every viewer header except Host, all query
          // strings, and CloudFront's headers, CloudFront-Viewer-Address, -Country and -ASN among them.
          OriginRequestPolicyId: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER.originRequestPolicyId,
          AllowedMethods: ['GET', 'HEAD', 'OPTIONS', 'PUT', 'PATCH', 'POST', 'DELETE'],
          ViewerProtocolPolicy: 'redirect-to-https',
        }),
        // The API's origin, among the others (the redirect's function URL, issue 41).
        Origins: Match.arrayWith([
          Match.objectLike({
            DomainName: {
              'Fn::Join': [
                '',
                [{ Ref: logicalId(service.stack.edge.api) }, '.execute-api.', { Ref: 'AWS::Region' }, '.', { Ref: 'AWS::URLSuffix' }],
              ],
            },
            CustomOriginConfig: Match.objectLike({ OriginProtocolPolicy: 'https-only', OriginSSLProtocols: ['TLSv1.2'] }),
            OriginCustomHeaders: [{ HeaderName: 'x-origin-verify', HeaderValue: secretReference() }],
          }),
        ]),
      }),
    });
    service.template.hasResourceProperties('AWS::SecretsManager::Secret', {
      GenerateSecretString: Match.objectLike({ ExcludePunctuation: true }),
    });
  });

  describe('GET /l/{link_id} from the redirect function URL, without API Gateway (issue 41)', () => {
    const urlOf = () => {
      const urls = ofType('AWS::Lambda::Url');
      expect(urls).toHaveLength(1);
      return urls[0]!;
    };
    const distribution = () => ofType('AWS::CloudFront::Distribution')[0]![1].Properties.DistributionConfig;
    const distributionArn = () => ({
      'Fn::Join': [
        '',
        [
          'arn:',
          { Ref: 'AWS::Partition' },
          ':cloudfront::',
          { Ref: 'AWS::AccountId' },
          ':distribution/',
          { Ref: ofType('AWS::CloudFront::Distribution')[0]![0] },
        ],
      ],
    });

    it('gives the redirect a function URL that takes only signed requests (AWS_IAM), and no other function one', () => {
      const [, url] = urlOf();
      expect(url.Properties).toEqual({ AuthType: 'AWS_IAM', TargetFunctionArn: getAtt(functionId('link-redirect'), 'Arn') });
    });

    it('routes /l/* to it: GET and HEAD, no caching, viewer headers but Host, the origin secret added, signed by OAC always', () => {
      const [urlId] = urlOf();
      const config = distribution();
      const behavior = (config.CacheBehaviors as Record<string, any>[]).find((b) => b.PathPattern === '/l/*');
      expect(behavior).toMatchObject({
        AllowedMethods: ['GET', 'HEAD'],
        CachePolicyId: CachePolicy.CACHING_DISABLED.cachePolicyId,
        OriginRequestPolicyId: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER.originRequestPolicyId,
        ViewerProtocolPolicy: 'redirect-to-https',
      });
      const origin = (config.Origins as Record<string, any>[]).find((o) => o.Id === behavior?.TargetOriginId);
      // The URL's host: https://<id>.lambda-url.<region>.on.aws/ split on "/", its third part.
      expect(origin?.DomainName).toEqual({ 'Fn::Select': [2, { 'Fn::Split': ['/', getAtt(urlId, 'FunctionUrl')] }] });
      expect(origin?.OriginCustomHeaders).toEqual([{ HeaderName: 'x-origin-verify', HeaderValue: secretReference() }]);
      expect(origin?.CustomOriginConfig).toMatchObject({ OriginProtocolPolicy: 'https-only' });
      const [controlId, control] = ofType('AWS::CloudFront::OriginAccessControl').find(
        ([id]) => JSON.stringify(origin?.OriginAccessControlId) === JSON.stringify(getAtt(id, 'Id')),
      )!;
      expect(controlId).toBeDefined();
      expect(control.Properties.OriginAccessControlConfig).toMatchObject({
        OriginAccessControlOriginType: 'lambda',
        SigningBehavior: 'always',
        SigningProtocol: 'sigv4',
      });
    });

    it('lets this distribution alone invoke the redirect, and only through its URL', () => {
      // The URL's FunctionArn attribute: the redirect's ARN, read from the URL so the grant follows it.
      const redirectArn = getAtt(urlOf()[0], 'FunctionArn');
      const permissions = ofType('AWS::Lambda::Permission')
        .map(([, permission]) => permission.Properties)
        .filter((properties) => JSON.stringify(properties.FunctionName) === JSON.stringify(redirectArn));
      expect(permissions).toEqual(
        expect.arrayContaining([
          {
            Action: 'lambda:InvokeFunctionUrl',
            FunctionName: redirectArn,
            Principal: 'cloudfront.amazonaws.com',
            SourceArn: distributionArn(),
          },
          {
            Action: 'lambda:InvokeFunction',
            FunctionName: redirectArn,
            Principal: 'cloudfront.amazonaws.com',
            SourceArn: distributionArn(),
            InvokedViaFunctionUrl: true,
          },
        ]),
      );
      expect(permissions).toHaveLength(2);
    });

    it('leaves the HTTP API without the route, its integration and its throttle', () => {
      const routeKeys = ofType('AWS::ApiGatewayV2::Route').map(([, route]) => route.Properties.RouteKey);
      expect(routeKeys).not.toContain('GET /l/{link_id}');
      expect(routeKeys.length).toBeGreaterThan(0);
      const [[, stage]] = ofType('AWS::ApiGatewayV2::Stage');
      expect(Object.keys(stage.Properties.RouteSettings)).not.toContain('GET /l/{link_id}');
    });
  });

  it("passes the viewer's Host to the well-known files: a CloudFront Function on /.well-known/* copies it into x-viewer-host", () => {
    const [[functionId, cfFunction]] = ofType('AWS::CloudFront::Function');
    service.template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        CacheBehaviors: Match.arrayWith([
          Match.objectLike({
            PathPattern: '/.well-known/*',
            CachePolicyId: CachePolicy.CACHING_DISABLED.cachePolicyId,
            // Every viewer header, a function's among them: x-viewer-host reaches API Gateway, Host does not.
            OriginRequestPolicyId: OriginRequestPolicy.ALL_VIEWER_EXCEPT_HOST_HEADER.originRequestPolicyId,
            AllowedMethods: ['GET', 'HEAD'],
            FunctionAssociations: [{ EventType: 'viewer-request', FunctionARN: getAtt(functionId, 'FunctionARN') }],
          }),
        ]),
      }),
    });
    expect(cfFunction.Properties.FunctionConfig.Runtime).toBe('cloudfront-js-2.0');
    // The deployed code run on CloudFront's event shape: the viewer's Host, over anything a client sent.
    const handler = new Function(`${cfFunction.Properties.FunctionCode}; return handler;`)() as (event: unknown) => {
      headers: Record<string, { value: string }>;
    };
    const forwarded = handler({ request: { headers: { host: { value: 'go.example.com' }, 'x-viewer-host': { value: 'evil.example' } } } });
    expect(forwarded.headers['x-viewer-host']).toEqual({ value: 'go.example.com' });
    expect(handler({ request: { headers: {} } }).headers['x-viewer-host']).toEqual({ value: '' });
  });

  it("lets Apple's postbacks to /.well-known/skadnetwork/* and /.well-known/appattribution/* through to the API, POST included, before the GET-only /.well-known/*", () => {
    const [[, distribution]] = ofType('AWS::CloudFront::Distribution');
    const behaviors = distribution.Properties.DistributionConfig.CacheBehaviors as Record<string, any>[];
    expect(
      behaviors.map((behavior) => [behavior.PathPattern, behavior.AllowedMethods.includes('POST'), 'FunctionAssociations' in behavior]),
    ).toEqual([
      ['/.well-known/skadnetwork/*', true, false],
      ['/.well-known/appattribution/*', true, false],
      ['/.well-known/*', false, true],
      ['/l/*', false, false],
    ]);
    const [skadnetwork, , wellKnown] = behaviors;
    expect({ ...skadnetwork, PathPattern: undefined, AllowedMethods: undefined, CachedMethods: undefined }).toEqual({
      ...wellKnown,
      PathPattern: undefined,
      AllowedMethods: undefined,
      CachedMethods: undefined,
      FunctionAssociations: undefined,
    });
    for (const route of ['POST /.well-known/skadnetwork/report-attribution', 'POST /.well-known/appattribution/report-attribution']) {
      expect(functionEntries.find(([, spec]) => (spec.routes as readonly string[] | undefined)?.includes(route))?.[0]).toBe(
        'skan-postback',
      );
    }
  });

  it('throttles the API stage at the documented defaults, 1,000 requests/s with bursts of 2,000', () => {
    service.template.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      DefaultRouteSettings: Match.objectLike({ ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 }),
    });
  });

  it("fetches the exchange rates from the ECB's daily reference rates unless the configuration names another source", () => {
    const sources = ofType('AWS::Lambda::Function')
      .map(([, fn]) => fn.Properties.Environment.Variables.FX_SOURCE_URL)
      .filter(Boolean);
    expect(sources).toEqual(['https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml']);
  });

  it('makes CloudFront send the version of the origin secret the originSecretVersion context names, the last step of a rotation', () => {
    const version = 'a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d';
    const { stack } = createApp({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], originSecretVersion: version } });
    const template = Template.fromStack(stack);
    const [secretId] = Object.keys(template.findResources('AWS::SecretsManager::Secret'));
    template.hasResourceProperties('AWS::CloudFront::Distribution', {
      DistributionConfig: Match.objectLike({
        // The API's origin, among the others (the redirect's function URL, issue 41).
        Origins: Match.arrayWith([
          Match.objectLike({
            OriginCustomHeaders: [
              {
                HeaderName: 'x-origin-verify',
                HeaderValue: { 'Fn::Join': ['', ['{{resolve:secretsmanager:', { Ref: secretId }, `:SecretString:::${version}}}`]] },
              },
            ],
          }),
        ]),
      }),
    });
    expect(() => createApp({ context: { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [], originSecretVersion: 'latest' } })).toThrow(
      /originSecretVersion/,
    );
  });

  describe('unauthenticated storage (issue 19)', () => {
    /** Every route's own limits, [requests per second, burst]; POST /event has the stage's (DEFAULT_THROTTLE). */
    const ROUTE_LIMITS: Record<string, [number, number]> = {
      'POST /skan-postback': [100, 200],
      'POST /.well-known/skadnetwork/report-attribution': [10, 20],
      'POST /.well-known/appattribution/report-attribution': [10, 20],
      'GET /sdk/v1/skan-schema': [100, 200],
      'POST /sdk/v1/attribution': [100, 200],
      'GET /sdk/v1/attribution': [100, 200],
      'OPTIONS /{proxy+}': [100, 200],
      'POST /privacy/delete': [20, 40],
      'GET /api/v1/reports/attribution': [50, 100],
      'GET /api/v1/reports/revenue': [50, 100],
      'GET /api/v1/reports/cohorts': [50, 100],
      'GET /api/v1/reports/events': [50, 100],
      'GET /api/v1/reports/performance': [50, 100],
      'GET /api/v1/reports/skan': [50, 100],
      'GET /api/v1/stream/events': [50, 100],
      'POST /api/v1/cost': [20, 40],
      'POST /api/v1/ad-revenue': [20, 40],
      'GET /.well-known/apple-app-site-association': [20, 40],
      'GET /.well-known/assetlinks.json': [20, 40],
      'ANY /api/v1/reports/{proxy+}': [10, 20],
      $default: [10, 20],
      'GET /health': [10, 20],
    };
    const stageOf = (template: Template) => {
      const stages = Object.entries(template.findResources('AWS::ApiGatewayV2::Stage')).filter(([, stage]) => !ofConsoleApi(stage));
      expect(stages).toHaveLength(1);
      return stages[0] as [string, Resource & { DependsOn?: string[] }];
    };
    const limitsOf = (stage: Resource) =>
      Object.fromEntries(
        Object.entries(stage.Properties.RouteSettings ?? {}).map(([route, settings]: [string, any]) => [
          route,
          [settings.ThrottlingRateLimit, settings.ThrottlingBurstLimit],
        ]),
      );

    it('gives POST /skan-postback its own throttle, 100 requests/s with bursts of 200, apart from the stage default POST /event has', () => {
      const [, stage] = stageOf(service.template);
      expect(stage.Properties.RouteSettings['POST /skan-postback']).toEqual({ ThrottlingRateLimit: 100, ThrottlingBurstLimit: 200 });
      expect(stage.Properties.RouteSettings).not.toHaveProperty(['POST /event']);
      expect(stage.Properties.DefaultRouteSettings).toMatchObject({ ThrottlingRateLimit: 1000, ThrottlingBurstLimit: 2000 });
    });

    it("gives every other route its own throttle, all of them together within API Gateway's default account limits (10,000/s, bursts of 5,000)", () => {
      const [, stage] = stageOf(service.template);
      const limits = limitsOf(stage);
      expect(limits).toEqual(ROUTE_LIMITS);
      const routes = apiRoutedFunctions.flatMap(([, spec]) => spec.routes ?? []);
      expect(routes.filter((route) => !(route in limits)).sort()).toEqual(['POST /event']);
      const all = [
        ...Object.values(limits),
        [stage.Properties.DefaultRouteSettings.ThrottlingRateLimit, stage.Properties.DefaultRouteSettings.ThrottlingBurstLimit],
      ];
      expect(all.reduce((sum, [rate]) => sum + rate, 0)).toBeLessThanOrEqual(10_000);
      expect(all.reduce((sum, [, burst]) => sum + burst, 0)).toBeLessThanOrEqual(5_000);
    });

    it('deploys the stage after every route it throttles: API Gateway refuses route settings for a route it does not have yet', () => {
      const [, stage] = stageOf(service.template);
      const routeIds = new Map(ofType('AWS::ApiGatewayV2::Route').map(([id, route]) => [route.Properties.RouteKey as string, id]));
      for (const route of Object.keys(stage.Properties.RouteSettings))
        expect([route, stage.DependsOn]).toEqual([route, expect.arrayContaining([routeIds.get(route)])]);
    });

    it('lets invalid SKAN postbacks expire after 30 days: a lifecycle rule on their prefix, and a TTL on their table items', () => {
      const rules = resources[logicalId(service.stack.stores.bucket)].Properties.LifecycleConfiguration.Rules as Record<string, unknown>[];
      expect(rules.find((rule) => rule.Id === 'expire-invalid-skan-postbacks')).toEqual({
        Id: 'expire-invalid-skan-postbacks',
        Status: 'Enabled',
        Prefix: 'audit/skan/invalid/',
        ExpirationInDays: 30,
        NoncurrentVersionExpiration: { NoncurrentDays: 1 },
      });
      expect(resources[logicalId(service.stack.stores.tables.skan_postbacks)].Properties.TimeToLiveSpecification).toEqual({
        AttributeName: 'expires_at',
        Enabled: true,
      });
    });

    it("lists every route's limits in docs/route-limits.md as the stack sets them", () => {
      const [, stage] = stageOf(service.template);
      const documented = Object.fromEntries(
        [
          ...readFileSync(join(__dirname, '..', '..', 'docs', 'route-limits.md'), 'utf8').matchAll(
            /^\| `([^`]+)` \| ([\d,]+) \| ([\d,]+) \|/gm,
          ),
        ].map(([, route, rate, burst]) => [route, [Number(rate.replace(/,/g, '')), Number(burst.replace(/,/g, ''))]]),
      );
      expect(documented).toEqual({
        ...limitsOf(stage),
        'POST /event': [
          stage.Properties.DefaultRouteSettings.ThrottlingRateLimit,
          stage.Properties.DefaultRouteSettings.ThrottlingBurstLimit,
        ],
      });
    });
  });

  it('publishes physical names under the manifest output keys', () => {
    const { stores, edge } = service.stack;
    for (const [name] of tableEntries) {
      service.template.hasOutput(outputKey.table(name), { Value: { Ref: logicalId(stores.tables[name]) } });
    }
    service.template.hasOutput(outputKey.bucket(), { Value: { Ref: logicalId(stores.bucket) } });
    for (const [name] of queueEntries) {
      service.template.hasOutput(outputKey.queue(name), { Value: { Ref: logicalId(stores.queues[name]) } });
    }
    service.template.hasOutput(outputKey.baseUrl(), {
      Value: { 'Fn::Join': ['', ['https://', getAtt(logicalId(edge.distribution), 'DomainName')]] },
    });
    // The execute-api URL is no output: only CloudFront is meant to call it (its origin authorizer).
    expect(service.template.findOutputs('ApiUrl')).toEqual({});
    // The ARN a rotation names (docs/secrets.md); the value is in no output.
    service.template.hasOutput('OriginSecretArn', { Value: { Ref: logicalId(edge.originSecret) } });
  });
});

describe('route keys', () => {
  it('reads "<METHOD> /path" and "$default" as API Gateway route keys', () => {
    expect(routeKeyOf('GET /l/{link_id}').key).toBe('GET /l/{link_id}');
    expect(routeKeyOf('ANY /api/v1/reports/{proxy+}').key).toBe('ANY /api/v1/reports/{proxy+}');
    expect(routeKeyOf('$default').key).toBe('$default');
  });

  it('rejects a route key without a known method', () => {
    expect(() => routeKeyOf('/health')).toThrow(/neither "\$default" nor "<METHOD> \/path"/);
    expect(() => routeKeyOf('FETCH /health')).toThrow(/neither/);
  });
});

describe('the app', () => {
  it('builds config/dev.json: the stack AttributionService, its alarm topic without a subscriber, no reserved concurrency', () => {
    expect(service.stack.stackName).toBe('AttributionService');
    expect(service.stack.alarms.topic.node.findAll().filter((c) => c instanceof sns.Subscription)).toEqual([]);
    expect(ofType('AWS::Lambda::Function').filter(([, fn]) => fn.Properties.ReservedConcurrentExecutions !== undefined)).toEqual([]);
  });
});
