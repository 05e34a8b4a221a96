// `admin health`'s sources (admin/health-sources.ts, on functions/adapters/health-sources.ts) on stubbed clients: what it asks
// CloudWatch, SQS, CloudFormation and DynamoDB, and how it reads their answers. No AWS account runs in CI;
// the local adapter runs against the emulators in test/integration/reliability/health-view.test.ts.

import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { GetQueueAttributesCommand, GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { healthSources } from '../../../admin/health-sources';
import { envName, queues } from '../../../lib/manifest';

const sent: { command: string; input: Record<string, unknown> }[] = [];
let metricAnswer: unknown;
let alarmPages: unknown[];

jest.mock('@aws-sdk/client-cloudwatch', () => {
  class Command {
    constructor(readonly input: Record<string, unknown>) {}
  }
  class GetMetricDataCommand extends Command {}
  class DescribeAlarmsCommand extends Command {}
  class CloudWatchClient {
    async send(command: Command) {
      sent.push({ command: command.constructor.name, input: command.input });
      return command instanceof GetMetricDataCommand ? metricAnswer : alarmPages.shift();
    }
  }
  return { CloudWatchClient, GetMetricDataCommand, DescribeAlarmsCommand };
});

const HOUR = 3_600_000;
const target = { baseUrl: 'https://example.invalid', stack: 'Svc' };
const signal = new AbortController().signal;
const sqs = mockClient(SQSClient);
const cloudFormation = mockClient(CloudFormationClient);
const dynamo = mockClient(DynamoDBDocumentClient);

beforeEach(() => {
  sent.length = 0;
  sqs.reset();
  cloudFormation.reset();
  dynamo.reset();
  process.env[envName.table('tenants')] = 'Svc-tenants';
  process.env[envName.table('postbacks')] = 'Svc-postbacks';
  for (const name of Object.keys(queues)) process.env[envName.queue(name)] = `https://sqs.eu-west-1.amazonaws.com/123456789012/Svc-${name}`;
});

it('sums the service metrics per hour from GetMetricData, one query per name', async () => {
  const at = Date.UTC(2026, 10, 28, 20);
  metricAnswer = {
    MetricDataResults: [
      { Id: 'm0', Timestamps: [new Date(at + HOUR), new Date(at)], Values: [5, 7] },
      { Id: 'm1', Timestamps: [new Date(at)], Values: [2] },
    ],
  };
  const hours = await healthSources(target).metricHours(['EventsAccepted', 'EventsRejected'], at, at + 2 * HOUR, signal);
  expect([...hours]).toEqual([
    [at + HOUR, { EventsAccepted: 5 }],
    [at, { EventsAccepted: 7, EventsRejected: 2 }],
  ]);
  expect(sent[0]?.input).toMatchObject({
    StartTime: new Date(at),
    EndTime: new Date(at + 2 * HOUR),
    MetricDataQueries: [
      {
        Id: 'm0',
        MetricStat: {
          Metric: {
            Namespace: 'AttributionService',
            MetricName: 'EventsAccepted',
            Dimensions: [{ Name: 'service', Value: 'attribution' }],
          },
          Period: 3600,
          Stat: 'Sum',
        },
      },
      { Id: 'm1', MetricStat: { Metric: { MetricName: 'EventsRejected' } } },
    ],
  });
});

it("reads depths from SQS, each DLQ through its RedrivePolicy, and the age from CloudWatch's SQS metric", async () => {
  sqs.on(GetQueueAttributesCommand).callsFake((input: { QueueUrl: string }) => {
    const name = input.QueueUrl.split('/').pop() ?? '';
    if (name.endsWith('-dlq')) return { Attributes: { ApproximateNumberOfMessages: name === 'Svc-postbacks-dlq' ? '3' : '0' } };
    return {
      Attributes: {
        ApproximateNumberOfMessages: '4',
        ApproximateNumberOfMessagesNotVisible: '1',
        QueueArn: `arn:aws:sqs:eu-west-1:123456789012:${name}`,
        RedrivePolicy: JSON.stringify({ deadLetterTargetArn: `arn:aws:sqs:eu-west-1:123456789012:${name}-dlq`, maxReceiveCount: 5 }),
      },
    };
  });
  sqs
    .on(GetQueueUrlCommand)
    .callsFake((input: { QueueName: string }) => ({ QueueUrl: `https://sqs.eu-west-1.amazonaws.com/123456789012/${input.QueueName}` }));
  metricAnswer = { MetricDataResults: [{ Id: 'q0', Timestamps: [new Date(), new Date(Date.now() - 300_000)], Values: [1200, 30] }] };
  const depths = await healthSources(target).queues(signal);
  expect(depths.find((d) => d.queue === 'aggregation')).toEqual({
    queue: 'aggregation',
    messages: 4,
    in_flight: 1,
    oldest_age_seconds: 1200,
    alarm_after_seconds: 900,
    dead_letter_messages: 0,
  });
  expect(depths.find((d) => d.queue === 'postbacks')).toMatchObject({
    dead_letter_messages: 3,
    oldest_age_seconds: null,
    alarm_after_seconds: null,
  });
  const ageQuery = sent[0]?.input.MetricDataQueries as { MetricStat: { Metric: unknown } }[];
  expect(ageQuery[0]?.MetricStat.Metric).toEqual({
    Namespace: 'AWS/SQS',
    MetricName: 'ApproximateAgeOfOldestMessage',
    Dimensions: [{ Name: 'QueueName', Value: 'Svc-aggregation' }],
  });
  // SQS has no age attribute: the emulator's extension is never asked of AWS.
  for (const call of sqs.commandCalls(GetQueueAttributesCommand))
    expect(call.args[0].input.AttributeNames).not.toContain('ApproximateAgeOfOldestMessage');
});

it("lists the alarms on the stack's topic, every page, firing first", async () => {
  cloudFormation.on(DescribeStacksCommand).resolves({
    Stacks: [
      {
        StackName: 'Svc',
        CreationTime: new Date(),
        StackStatus: 'UPDATE_COMPLETE',
        Outputs: [{ OutputKey: 'AlarmTopicArn', OutputValue: 'arn:aws:sns:eu-west-1:123456789012:Svc-Alarms' }],
      },
    ],
  });
  alarmPages = [
    { MetricAlarms: [{ AlarmName: 'Svc-Healthy', StateValue: 'OK', StateReason: 'fine' }], NextToken: 't' },
    { MetricAlarms: [{ AlarmName: 'Svc-Dlq', StateValue: 'ALARM', StateReason: 'Threshold Crossed', StateUpdatedTimestamp: new Date(0) }] },
  ];
  const alarms = await healthSources(target).alarms(signal);
  expect(alarms).toEqual([
    { name: 'Svc-Dlq', state: 'ALARM', reason: 'Threshold Crossed', updated_at: '1970-01-01T00:00:00.000Z' },
    { name: 'Svc-Healthy', state: 'OK', reason: 'fine', updated_at: null },
  ]);
  expect(sent.map((s) => s.input)).toEqual([
    expect.objectContaining({ ActionPrefix: 'arn:aws:sns:eu-west-1:123456789012:Svc-Alarms' }),
    expect.objectContaining({ ActionPrefix: 'arn:aws:sns:eu-west-1:123456789012:Svc-Alarms', NextToken: 't' }),
  ]);
});

it('has no alarms to read locally', async () => {
  await expect(healthSources({ baseUrl: 'http://127.0.0.1:1', control: 'http://127.0.0.1:2' }).alarms(signal)).resolves.toBeNull();
});

it("reads every app's attempts newest first down to the window's start, and says when an app had more than it reads", async () => {
  const since = Date.UTC(2026, 10, 27, 22);
  dynamo.on(ScanCommand).resolves({
    Items: [
      { pk: 'app#a', kind: 'app', app_id: 'busy', created_ms: 2 },
      { pk: 'app#b', kind: 'app', app_id: 'quiet', created_ms: 1 },
    ],
  });
  const attempt = (partner: string, at_ms: number, outcome: string) => ({ pk: 'x', sk: `log#${at_ms}`, partner, at_ms, outcome });
  dynamo.on(QueryCommand, { ExpressionAttributeValues: { ':app': 'quiet', ':prefix': 'log#' } }).resolves({
    Items: [attempt('meta', since + 5, 'delivered'), attempt('meta', since, 'failed'), attempt('meta', since - 1, 'failed')],
  });
  dynamo.on(QueryCommand, { ExpressionAttributeValues: { ':app': 'busy', ':prefix': 'log#' } }).resolves({
    Items: Array.from({ length: 2500 }, (_, i) => attempt('google', since + 10_000 - i, 'retry')),
  });
  const { attempts, truncated } = await healthSources(target).postbackAttempts(since, signal);
  expect(truncated).toBe(true);
  expect(attempts.filter((a) => a.partner === 'meta')).toEqual([
    { partner: 'meta', outcome: 'delivered' },
    { partner: 'meta', outcome: 'failed' },
  ]);
  expect(attempts.filter((a) => a.partner === 'google')).toHaveLength(2000);
});
