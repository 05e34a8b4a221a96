// The health view's sources as the console API's function builds them from its environment
// (functions/adapters/health-sources.ts, healthSourcesOfEnvironment), on stubbed SDK clients: no AWS
// account runs in CI. What they ask SQS and CloudWatch with the variables the stack gives
// (lib/function-environment.ts, FunctionSpec.healthView), and what a failing or endless CloudWatch
// answer becomes. The local path runs in the runtime in test/integration/console-sign-in-browser.test.ts.

import { CloudWatchClient, DescribeAlarmsCommand, GetMetricDataCommand } from '@aws-sdk/client-cloudwatch';
import { GetQueueAttributesCommand, GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { healthSourcesOfEnvironment, LOCAL_CONTROL_VARIABLE } from '../../../functions/adapters/health-sources';
import { operatorHealth } from '../../../functions/domain/health/operator-health';
import { BASE_ENVIRONMENT } from '../../../lib/function-environment';
import { envName, queues } from '../../../lib/manifest';

const TOPIC = 'arn:aws:sns:eu-west-1:123456789012:Svc-AlarmsTopic';
const QUEUE_URL = 'https://sqs.eu-west-1.amazonaws.com/123456789012/';
const signal = new AbortController().signal;
const sqs = mockClient(SQSClient);
const cloudWatch = mockClient(CloudWatchClient);
const dynamo = mockClient(DynamoDBDocumentClient);
const saved = { ...process.env };

beforeEach(() => {
  sqs.reset();
  cloudWatch.reset();
  dynamo.reset();
  process.env = { ...saved, ...BASE_ENVIRONMENT, [envName.alarmTopicArn()]: TOPIC };
  delete process.env[LOCAL_CONTROL_VARIABLE];
  process.env[envName.table('tenants')] = 'Svc-tenants';
  process.env[envName.table('postbacks')] = 'Svc-postbacks';
  for (const name of Object.keys(queues)) {
    process.env[envName.queue(name)] = `${QUEUE_URL}Svc-${name}`;
    process.env[envName.deadLetterQueue(name)] = `${QUEUE_URL}Svc-${name}-dead`;
  }
});
afterAll(() => {
  process.env = saved;
});

it('reads each dead-letter queue at the URL its variable names: no RedrivePolicy, no GetQueueUrl', async () => {
  sqs.on(GetQueueAttributesCommand).callsFake((input: { QueueUrl: string }) => {
    const name = input.QueueUrl.split('/').pop() ?? '';
    return {
      Attributes: name.endsWith('-dead')
        ? { ApproximateNumberOfMessages: name === 'Svc-privacy-dead' ? '2' : '0' }
        : { ApproximateNumberOfMessages: '1', ApproximateNumberOfMessagesNotVisible: '0', QueueArn: `arn:aws:sqs:eu-west-1:1:${name}` },
    };
  });
  cloudWatch.on(GetMetricDataCommand).resolves({ MetricDataResults: [] });
  const depths = await healthSourcesOfEnvironment('https://svc.example').queues(signal);
  expect(Object.fromEntries(depths.map((d) => [d.queue, d.dead_letter_messages]))).toEqual({
    aggregation: 0,
    enrichment: 0,
    privacy: 2,
    postbacks: 0,
  });
  expect(depths.find((d) => d.queue === 'privacy')).toMatchObject({
    alarm_after_seconds: queues.privacy.ageAlarm.seconds,
    oldest_age_seconds: null,
  });
  expect(sqs.commandCalls(GetQueueUrlCommand)).toEqual([]);
  for (const call of sqs.commandCalls(GetQueueAttributesCommand)) expect(call.args[0].input.AttributeNames).not.toContain('RedrivePolicy');
});

it("lists the alarms on the topic ALARM_TOPIC_ARN names, and the metrics under the function's Powertools namespace", async () => {
  cloudWatch.on(DescribeAlarmsCommand).resolves({ MetricAlarms: [{ AlarmName: 'Svc-Healthy', StateValue: 'OK', StateReason: 'fine' }] });
  cloudWatch.on(GetMetricDataCommand).resolves({ MetricDataResults: [] });
  const sources = healthSourcesOfEnvironment('https://svc.example');
  expect(sources.environment).toBe('aws');
  await expect(sources.alarms(signal)).resolves.toEqual([{ name: 'Svc-Healthy', state: 'OK', reason: 'fine', updated_at: null }]);
  expect(cloudWatch.commandCalls(DescribeAlarmsCommand)[0]?.args[0].input).toMatchObject({ ActionPrefix: TOPIC });
  await sources.metricHours(['EventsAccepted'], 0, 3_600_000, signal);
  expect(cloudWatch.commandCalls(GetMetricDataCommand)[0]?.args[0].input.MetricDataQueries?.[0]?.MetricStat?.Metric).toEqual({
    Namespace: BASE_ENVIRONMENT.POWERTOOLS_METRICS_NAMESPACE,
    MetricName: 'EventsAccepted',
    Dimensions: [{ Name: 'service', Value: BASE_ENVIRONMENT.POWERTOOLS_SERVICE_NAME }],
  });
});

it('stops at five pages of a CloudWatch answer that never ends', async () => {
  cloudWatch.on(DescribeAlarmsCommand).resolves({ MetricAlarms: [{ AlarmName: 'a', StateValue: 'OK' }], NextToken: 'more' });
  cloudWatch.on(GetMetricDataCommand).resolves({ MetricDataResults: [], NextToken: 'more' });
  const sources = healthSourcesOfEnvironment('https://svc.example');
  await expect(sources.alarms(signal)).resolves.toHaveLength(5);
  await sources.metricHours(['EventsAccepted'], 0, 3_600_000, signal);
  expect(cloudWatch.commandCalls(DescribeAlarmsCommand)).toHaveLength(5);
  expect(cloudWatch.commandCalls(GetMetricDataCommand)).toHaveLength(5);
});

it('shows a CloudWatch refusal as the parts it fails, and reads the rest', async () => {
  const denied = Object.assign(new Error('not authorized to perform: cloudwatch:DescribeAlarms'), { name: 'AccessDenied' });
  cloudWatch.on(DescribeAlarmsCommand).rejects(denied);
  cloudWatch.on(GetMetricDataCommand).rejects(denied);
  sqs
    .on(GetQueueAttributesCommand)
    .resolves({ Attributes: { ApproximateNumberOfMessages: '0', ApproximateNumberOfMessagesNotVisible: '0' } });
  dynamo.on(ScanCommand).resolves({ Items: [] });
  const originalFetch = global.fetch;
  global.fetch = (async () => new Response(JSON.stringify({ status: 'ok', bindings: {} }))) as typeof fetch;
  try {
    const view = await operatorHealth(healthSourcesOfEnvironment('https://svc.example'), Date.UTC(2026, 10, 29, 4), 1000);
    expect(view.alarms).toEqual({ error: 'error: AccessDenied' });
    expect(view.ingestion).toEqual({ error: 'error: AccessDenied' });
    expect(view.dead_letter_queues).toEqual({ error: 'error: AccessDenied' });
    expect(view.postbacks).toMatchObject({ partners: [], truncated: false });
    expect(view.status).toBe('broken');
  } finally {
    global.fetch = originalFetch;
  }
});

it('reads the local runtime where no alarm topic is given and its control port is, and refuses to guess with neither', () => {
  process.env[envName.alarmTopicArn()] = '';
  process.env[LOCAL_CONTROL_VARIABLE] = 'http://127.0.0.1:9';
  expect(healthSourcesOfEnvironment('http://127.0.0.1:3000').environment).toBe('local');
  delete process.env[LOCAL_CONTROL_VARIABLE];
  expect(() => healthSourcesOfEnvironment('http://127.0.0.1:3000')).toThrow(/ALARM_TOPIC_ARN/);
});
