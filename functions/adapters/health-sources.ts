import {
  DescribeAlarmsCommand,
  type DescribeAlarmsCommandOutput,
  GetMetricDataCommand,
  type MetricDataQuery,
  type MetricDataResult,
} from '@aws-sdk/client-cloudwatch';
import { GetQueueAttributesCommand, GetQueueUrlCommand, type QueueAttributeName } from '@aws-sdk/client-sqs';
import { envName, QUEUE_AGE_ALARM_SECONDS } from '../../lib/function-constants';
import type { QueueName } from '../../lib/manifest';
import type { HealthReport } from '../domain/health/health';
import type { AlarmState, HealthSources, PostbackAttempt, QueueDepth } from '../domain/health/operator-health';
import { cloudWatchClient } from '../shared/clients/cloudwatch';
import { sqsClient } from '../shared/clients/sqs';
import { requireEnv, resourceName } from '../shared/config';
import { PostbackRecords } from './postback-store';
import { TenantStore } from './tenant-store';

/**
 * Where the operators' health view (functions/domain/health/operator-health.ts) reads each figure:
 * the same SQS, DynamoDB and /health reads in both environments, and what only one has from its
 * own source. In AWS, CloudWatch (the metrics ingest publishes, SQS's ApproximateAgeOfOldestMessage,
 * which is a CloudWatch metric and no queue attribute, and the alarms that notify the stack's
 * topic); locally, the runtime (its control port's /metrics, the SQS emulator's
 * ApproximateAgeOfOldestMessage extension) and no alarms.
 *
 * Bundle-safe: the console API's function runs it with its own role and environment
 * (healthSourcesOfEnvironment); the admin CLI runs it with the operator's credentials and finds the
 * alarm topic and dead-letter queues itself (admin/health-sources.ts).
 */
export type HealthWhere =
  /** The stack's alarm topic: DescribeAlarms lists the alarms whose action it is (every alarm of the stack, lib/constructs/alarms.ts). */
  | { readonly kind: 'aws'; readonly alarmTopicArn: (signal: AbortSignal) => Promise<string> }
  /** The local runtime's private control port. */
  | { readonly kind: 'local'; readonly control: string };

export interface HealthSetting {
  readonly where: HealthWhere;
  /** The service's public base URL: the view calls its GET /health as a client does. */
  readonly baseUrl: string;
  /** The namespace and `service` dimension the service's metrics are published under (Powertools). */
  readonly metrics: { readonly namespace: string; readonly service: string };
  /** Each queue's dead-letter queue URL, where it is known; else found through the queue's RedrivePolicy (GetQueueUrl). */
  readonly deadLetterQueueUrl?: (queue: QueueName) => string;
}

/** Every queue of the manifest and its age alarm; typed by QueueName, so a queue added there does not compile until it is here. */
const QUEUES: Readonly<Record<QueueName, number | null>> = QUEUE_AGE_ALARM_SECONDS;

/** At most this many attempts per app are read (newest first); an app with more makes the answer `truncated`. */
const ATTEMPTS_PER_APP = 2000;
/** At most this many pages of one CloudWatch read: the view's answers fit in one or two; more is a fault, not a bigger answer. */
const MAX_PAGES = 5;

/** The variable the local runtime sets to its control port (local/runtime.ts); the stack never sets it. */
export const LOCAL_CONTROL_VARIABLE = 'LOCAL_CONTROL_URL';

/**
 * The sources from a function's environment (FunctionSpec.healthView, lib/function-environment.ts):
 * ALARM_TOPIC_ARN, each queue's QUEUE_<NAME>_URL and DEAD_LETTER_QUEUE_<NAME>_URL, the tables, and
 * the metrics' namespace and service as Powertools reads them. The local runtime gives no alarm
 * topic ('') and its control port instead, so the signed-in console under `npm start` reads the
 * runtime's own figures as `admin health` does there.
 */
export function healthSourcesOfEnvironment(baseUrl: string): HealthSources {
  const topic = process.env[envName.alarmTopicArn()];
  const control = process.env[LOCAL_CONTROL_VARIABLE];
  const where: HealthWhere = topic
    ? { kind: 'aws', alarmTopicArn: async () => topic }
    : { kind: 'local', control: control || requireEnv(envName.alarmTopicArn()) };
  return healthSources({
    where,
    baseUrl,
    metrics: { namespace: requireEnv('POWERTOOLS_METRICS_NAMESPACE'), service: requireEnv('POWERTOOLS_SERVICE_NAME') },
    deadLetterQueueUrl: (queue) => requireEnv(envName.deadLetterQueue(queue)),
  });
}

export function healthSources(setting: HealthSetting): HealthSources {
  const common = {
    postbackAttempts,
    probe: (signal: AbortSignal) => probe(setting.baseUrl, signal),
  };
  const { where } = setting;
  if (where.kind === 'aws') {
    return {
      environment: 'aws',
      ...common,
      metricHours: (names, fromMs, toMs, signal) => serviceHours(setting.metrics, names, fromMs, toMs, signal),
      queues: async (signal) => {
        const depths = await queueDepths(setting, signal, false);
        const ages = await queueAges(
          depths.map((d) => d.name),
          signal,
        );
        return depths.map(({ name, ...depth }) => ({ ...depth, oldest_age_seconds: ages.get(name) ?? null }));
      },
      alarms: async (signal) => alarmsOf(await where.alarmTopicArn(signal), signal),
    };
  }
  return {
    environment: 'local',
    ...common,
    metricHours: (names, fromMs, toMs, signal) => localMetricHours(where.control, names, fromMs, toMs, signal),
    queues: async (signal) => (await queueDepths(setting, signal, true)).map(({ name: _name, ...depth }) => depth),
    alarms: async () => null,
  };
}

async function postbackAttempts(sinceMs: number): Promise<{ attempts: PostbackAttempt[]; truncated: boolean }> {
  const apps = await new TenantStore(resourceName.table('tenants')).listApps();
  const records = new PostbackRecords(resourceName.table('postbacks'));
  const attempts: PostbackAttempt[] = [];
  let truncated = false;
  for (const app of apps) {
    const ofApp = await records.attempts(app.app_id, { sinceMs, limit: ATTEMPTS_PER_APP });
    truncated ||= ofApp.length >= ATTEMPTS_PER_APP;
    for (const { partner, outcome } of ofApp) attempts.push({ partner, outcome });
  }
  return { attempts, truncated };
}

/** GET /health as a client calls it: 200 and 503 both carry the report. */
async function probe(baseUrl: string, signal: AbortSignal): Promise<HealthReport> {
  const response = await fetch(`${baseUrl}/health`, { signal });
  const body = (await response.json().catch(() => undefined)) as Partial<HealthReport> | undefined;
  if (!body || (body.status !== 'ok' && body.status !== 'failing') || typeof body.bindings !== 'object')
    throw new Error(`GET /health answered ${response.status} without a report`);
  return body as HealthReport;
}

type Depth = Omit<QueueDepth, 'oldest_age_seconds'> & { oldest_age_seconds: number | null; name: string };

/** The local SQS emulator's extension (local/sqs/README.md): SQS has no such attribute, so the SDK's type does not name it. */
const EMULATOR_AGE = 'ApproximateAgeOfOldestMessage' as string as QueueAttributeName;

/**
 * Every queue and its dead-letter queue: messages waiting and in flight. The local SQS emulator
 * also answers ApproximateAgeOfOldestMessage (its extension); SQS does not have the attribute, so
 * in AWS the age comes from CloudWatch and this one is null.
 */
async function queueDepths(setting: HealthSetting, signal: AbortSignal, emulatorAge: boolean): Promise<Depth[]> {
  const sqs = sqsClient();
  return Promise.all(
    (Object.keys(QUEUES) as QueueName[]).map(async (queue) => {
      const QueueUrl = resourceName.queueUrl(queue);
      const { Attributes: a = {} } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl,
          AttributeNames: [
            'ApproximateNumberOfMessages',
            'ApproximateNumberOfMessagesNotVisible',
            'QueueArn',
            ...(setting.deadLetterQueueUrl ? [] : (['RedrivePolicy'] as const)),
            ...(emulatorAge ? [EMULATOR_AGE] : []),
          ],
        }),
        { abortSignal: signal },
      );
      const age = (a as Record<string, string>)[EMULATOR_AGE];
      const deadLetterUrl = setting.deadLetterQueueUrl?.(queue) ?? (await redriveTarget(a.RedrivePolicy, signal));
      return {
        queue,
        name: a.QueueArn?.split(':').pop() ?? queue,
        messages: Number(a.ApproximateNumberOfMessages ?? 0),
        in_flight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
        oldest_age_seconds: emulatorAge && age !== undefined ? Number(age) : null,
        alarm_after_seconds: QUEUES[queue],
        dead_letter_messages: deadLetterUrl ? await depthOf(deadLetterUrl, signal) : 0,
      };
    }),
  );
}

/** The URL of the dead-letter queue a RedrivePolicy names (as SQS names it, by ARN), if any. */
async function redriveTarget(redrivePolicy: string | undefined, signal: AbortSignal): Promise<string | undefined> {
  const arn = redrivePolicy ? (JSON.parse(redrivePolicy) as { deadLetterTargetArn?: string }).deadLetterTargetArn : undefined;
  if (!arn) return undefined;
  const [, , , , account, name] = arn.split(':');
  const { QueueUrl } = await sqsClient().send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }), {
    abortSignal: signal,
  });
  return QueueUrl;
}

async function depthOf(QueueUrl: string, signal: AbortSignal): Promise<number> {
  const { Attributes } = await sqsClient().send(
    new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
    {
      abortSignal: signal,
    },
  );
  return Number(Attributes?.ApproximateNumberOfMessages ?? 0);
}

async function localMetricHours(
  control: string,
  names: readonly string[],
  fromMs: number,
  toMs: number,
  signal: AbortSignal,
): Promise<Map<number, Record<string, number>>> {
  const response = await fetch(`${control}/metrics?${new URLSearchParams({ from_ms: String(fromMs), to_ms: String(toMs) })}`, { signal });
  if (!response.ok) throw new Error(`the local runtime's /metrics answered ${response.status}`);
  const { hours } = (await response.json()) as { hours: { hour_ms: number; sums: Record<string, number> }[] };
  return new Map(hours.map(({ hour_ms, sums }) => [hour_ms, Object.fromEntries(names.map((name) => [name, sums[name] ?? 0]))]));
}

/**
 * GetMetricData over [fromMs, toMs), every page up to MAX_PAGES. One call holds up to 500
 * queries: the view's metrics (two and one per rejection reason) and its queues fit in one each.
 */
async function metricData(queries: MetricDataQuery[], fromMs: number, toMs: number, signal: AbortSignal): Promise<MetricDataResult[]> {
  const results: MetricDataResult[] = [];
  let NextToken: string | undefined;
  let pages = 0;
  do {
    const answer = await cloudWatchClient().send(
      new GetMetricDataCommand({ MetricDataQueries: queries, StartTime: new Date(fromMs), EndTime: new Date(toMs), NextToken }),
      { abortSignal: signal },
    );
    results.push(...(answer.MetricDataResults ?? []));
    NextToken = answer.NextToken;
  } while (NextToken && ++pages < MAX_PAGES);
  return results;
}

/** Hourly sums of the service's own metrics (namespace and `service` dimension as Powertools publishes them). */
async function serviceHours(
  metrics: HealthSetting['metrics'],
  names: readonly string[],
  fromMs: number,
  toMs: number,
  signal: AbortSignal,
): Promise<Map<number, Record<string, number>>> {
  const queries = names.map((name, i) => ({
    Id: `m${i}`,
    MetricStat: {
      Metric: { Namespace: metrics.namespace, MetricName: name, Dimensions: [{ Name: 'service', Value: metrics.service }] },
      Period: 3600,
      Stat: 'Sum',
    },
  }));
  const hours = new Map<number, Record<string, number>>();
  for (const result of await metricData(queries, fromMs, toMs, signal)) {
    const name = names[Number(result.Id?.slice(1))];
    if (name === undefined) continue;
    (result.Timestamps ?? []).forEach((at, i) => {
      const sums = hours.get(at.getTime()) ?? {};
      sums[name] = (sums[name] ?? 0) + (result.Values?.[i] ?? 0);
      hours.set(at.getTime(), sums);
    });
  }
  return hours;
}

/**
 * Each queue's ApproximateAgeOfOldestMessage by its physical name: the latest five-minute maximum
 * of the last quarter hour; none for a queue without data.
 */
async function queueAges(queueNames: readonly string[], signal: AbortSignal): Promise<Map<string, number>> {
  const toMs = Date.now();
  const queries = queueNames.map((name, i) => ({
    Id: `q${i}`,
    MetricStat: {
      Metric: { Namespace: 'AWS/SQS', MetricName: 'ApproximateAgeOfOldestMessage', Dimensions: [{ Name: 'QueueName', Value: name }] },
      Period: 300,
      Stat: 'Maximum',
    },
  }));
  const ages = new Map<string, number>();
  for (const result of await metricData(queries, toMs - 15 * 60_000, toMs, signal)) {
    const queue = queueNames[Number(result.Id?.slice(1))];
    const latest = result.Values?.[0]; // GetMetricData answers newest first by default (TimestampDescending).
    if (queue !== undefined && latest !== undefined) ages.set(queue, latest);
  }
  return ages;
}

type Alarm =
  | NonNullable<DescribeAlarmsCommandOutput['MetricAlarms']>[number]
  | NonNullable<DescribeAlarmsCommandOutput['CompositeAlarms']>[number];

/** The alarms whose action is the topic, every page up to MAX_PAGES (100 alarms a page), firing first. */
async function alarmsOf(topicArn: string, signal: AbortSignal): Promise<AlarmState[]> {
  const alarms: AlarmState[] = [];
  let NextToken: string | undefined;
  let pages = 0;
  do {
    const answer = await cloudWatchClient().send(
      new DescribeAlarmsCommand({ ActionPrefix: topicArn, AlarmTypes: ['MetricAlarm', 'CompositeAlarm'], MaxRecords: 100, NextToken }),
      { abortSignal: signal },
    );
    const page: Alarm[] = [...(answer.MetricAlarms ?? []), ...(answer.CompositeAlarms ?? [])];
    for (const alarm of page)
      alarms.push({
        name: alarm.AlarmName ?? '',
        state: alarm.StateValue ?? 'INSUFFICIENT_DATA',
        reason: alarm.StateReason ?? '',
        updated_at: alarm.StateUpdatedTimestamp?.toISOString() ?? null,
      });
    NextToken = answer.NextToken;
  } while (NextToken && ++pages < MAX_PAGES);
  return alarms.sort((a, b) => (a.state === b.state ? (a.name < b.name ? -1 : 1) : a.state === 'ALARM' ? -1 : 1));
}
