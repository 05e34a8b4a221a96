import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import * as cloudWatchClient from '@aws-sdk/client-cloudwatch';
import { GetQueueAttributesCommand, GetQueueUrlCommand, type QueueAttributeName } from '@aws-sdk/client-sqs';
import { PostbackRecords } from '../functions/adapters/postback-store';
import { TenantStore } from '../functions/adapters/tenant-store';
import { type Target, TargetError } from '../functions/commands/command';
import type { HealthReport } from '../functions/domain/health/health';
import type { AlarmState, HealthSources, PostbackAttempt, QueueDepth } from '../functions/domain/health/operator-health';
import { sqsClient } from '../functions/shared/clients/sqs';
import { resourceName } from '../functions/shared/config';
import { METRICS_NAMESPACE, SERVICE_NAME } from '../lib/function-environment';
import { outputKey, type QueueName, type QueueSpec, queues } from '../lib/manifest';

/**
 * Where `admin health` reads each figure (functions/domain/health/operator-health.ts), with the
 * operator's credentials as every admin command: the same SQS, DynamoDB and /health reads in both
 * environments, and what only one has from its own source. In AWS, CloudWatch (the metrics ingest
 * publishes, SQS's ApproximateAgeOfOldestMessage, which is a CloudWatch metric and no queue
 * attribute, and the alarms that notify the stack's topic); locally, the runtime (its control
 * port's /metrics, the SQS emulator's ApproximateAgeOfOldestMessage extension) and no alarms.
 */
export function healthSources(target: Target): HealthSources {
  const common = { postbackAttempts, probe: (signal: AbortSignal) => probe(target, signal) };
  if (target.stack) {
    const stack = target.stack;
    const cloudWatch = new CloudWatchReads();
    return {
      environment: 'aws',
      ...common,
      metricHours: (names, fromMs, toMs, signal) => cloudWatch.serviceHours(names, fromMs, toMs, signal),
      queues: async (signal) => {
        const depths = await queueDepths(signal, false);
        const ages = await cloudWatch.queueAges(
          depths.map((d) => d.name),
          signal,
        );
        return depths.map(({ name, ...depth }) => ({ ...depth, oldest_age_seconds: ages.get(name) ?? null }));
      },
      alarms: async (signal) => cloudWatch.alarmsOf(await alarmTopicArn(stack, signal), signal),
    };
  }
  const control = target.control;
  if (!control) throw new TargetError('admin health needs the local runtime or --stack NAME');
  return {
    environment: 'local',
    ...common,
    metricHours: (names, fromMs, toMs, signal) => localMetricHours(control, names, fromMs, toMs, signal),
    queues: async (signal) => (await queueDepths(signal, true)).map(({ name: _name, ...depth }) => depth),
    alarms: async () => null,
  };
}

/** At most this many attempts per app are read (newest first); an app with more makes the answer `truncated`. */
const ATTEMPTS_PER_APP = 2000;

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
async function probe(target: Target, signal: AbortSignal): Promise<HealthReport> {
  const response = await fetch(`${target.baseUrl}/health`, { signal });
  const body = (await response.json().catch(() => undefined)) as Partial<HealthReport> | undefined;
  if (!body || (body.status !== 'ok' && body.status !== 'failing') || typeof body.bindings !== 'object')
    throw new Error(`GET /health answered ${response.status} without a report`);
  return body as HealthReport;
}

type Depth = Omit<QueueDepth, 'oldest_age_seconds'> & { oldest_age_seconds: number | null; name: string };

/**
 * Every queue of the manifest and its dead-letter queue (found through its RedrivePolicy, as SQS
 * names it): messages waiting and in flight. The local SQS emulator also answers
 * ApproximateAgeOfOldestMessage (its extension); SQS does not have the attribute, so in AWS the
 * age comes from CloudWatch and this one is null.
 */
/** The local SQS emulator's extension (local/sqs/README.md): SQS has no such attribute, so the SDK's type does not name it. */
const EMULATOR_AGE = 'ApproximateAgeOfOldestMessage' as string as QueueAttributeName;

async function queueDepths(signal: AbortSignal, emulatorAge: boolean): Promise<Depth[]> {
  const sqs = sqsClient();
  return Promise.all(
    (Object.keys(queues) as QueueName[]).map(async (queue) => {
      const { Attributes: a = {} } = await sqs.send(
        new GetQueueAttributesCommand({
          QueueUrl: resourceName.queueUrl(queue),
          AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible', 'RedrivePolicy', 'QueueArn'],
        }),
        { abortSignal: signal },
      );
      const local = emulatorAge
        ? await sqs
            .send(
              new GetQueueAttributesCommand({
                QueueUrl: resourceName.queueUrl(queue),
                AttributeNames: [EMULATOR_AGE],
              }),
              { abortSignal: signal },
            )
            .then((r) => (r.Attributes as Record<string, string> | undefined)?.ApproximateAgeOfOldestMessage)
        : undefined;
      const deadLetterArn = a.RedrivePolicy
        ? (JSON.parse(a.RedrivePolicy) as { deadLetterTargetArn?: string }).deadLetterTargetArn
        : undefined;
      const spec: QueueSpec = queues[queue];
      return {
        queue,
        name: a.QueueArn?.split(':').pop() ?? queue,
        messages: Number(a.ApproximateNumberOfMessages ?? 0),
        in_flight: Number(a.ApproximateNumberOfMessagesNotVisible ?? 0),
        oldest_age_seconds: local === undefined ? null : Number(local),
        alarm_after_seconds: spec.ageAlarm?.seconds ?? null,
        dead_letter_messages: deadLetterArn ? await depthOf(deadLetterArn, signal) : 0,
      };
    }),
  );
}

async function depthOf(queueArn: string, signal: AbortSignal): Promise<number> {
  const [, , , , account, name] = queueArn.split(':');
  const sqs = sqsClient();
  const { QueueUrl } = await sqs.send(new GetQueueUrlCommand({ QueueName: name, QueueOwnerAWSAccountId: account }), {
    abortSignal: signal,
  });
  const { Attributes } = await sqs.send(new GetQueueAttributesCommand({ QueueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }), {
    abortSignal: signal,
  });
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

async function alarmTopicArn(stack: string, signal: AbortSignal): Promise<string> {
  const { Stacks } = await new CloudFormationClient({}).send(new DescribeStacksCommand({ StackName: stack }), { abortSignal: signal });
  const arn = Stacks?.[0]?.Outputs?.find((o) => o.OutputKey === outputKey.alarmTopicArn())?.OutputValue;
  if (!arn) throw new TargetError(`stack ${stack} has no output ${outputKey.alarmTopicArn()}`);
  return arn;
}

/**
 * The CloudWatch calls the view makes: GetMetricData (hourly sums of the service's metrics, the
 * queues' ApproximateAgeOfOldestMessage) and DescribeAlarms (the alarms whose action is the
 * stack's topic: every alarm of the stack, lib/constructs/alarms.ts).
 */
interface CloudWatchModule {
  CloudWatchClient: new (config: object) => { send(command: object, options?: { abortSignal?: AbortSignal }): Promise<unknown> };
  GetMetricDataCommand: new (input: object) => object;
  DescribeAlarmsCommand: new (input: object) => object;
}
interface MetricDataAnswer {
  MetricDataResults?: { Id?: string; Timestamps?: Date[]; Values?: number[] }[];
  NextToken?: string;
}
interface AlarmsAnswer {
  MetricAlarms?: { AlarmName?: string; StateValue?: string; StateReason?: string; StateUpdatedTimestamp?: Date }[];
  CompositeAlarms?: { AlarmName?: string; StateValue?: string; StateReason?: string; StateUpdatedTimestamp?: Date }[];
  NextToken?: string;
}

class CloudWatchReads {
  readonly #cw: CloudWatchModule;
  readonly #client: InstanceType<CloudWatchModule['CloudWatchClient']>;

  constructor() {
    this.#cw = cloudWatchClient as unknown as CloudWatchModule;
    this.#client = new this.#cw.CloudWatchClient({});
  }

  private client(): { cw: CloudWatchModule; send: (command: object, signal: AbortSignal) => Promise<unknown> } {
    return { cw: this.#cw, send: (command, signal) => this.#client.send(command, { abortSignal: signal }) };
  }

  private async metricData(
    queries: object[],
    fromMs: number,
    toMs: number,
    signal: AbortSignal,
  ): Promise<MetricDataAnswer['MetricDataResults']> {
    const { cw, send } = this.client();
    const results: NonNullable<MetricDataAnswer['MetricDataResults']> = [];
    let NextToken: string | undefined;
    do {
      const answer = (await send(
        new cw.GetMetricDataCommand({ MetricDataQueries: queries, StartTime: new Date(fromMs), EndTime: new Date(toMs), NextToken }),
        signal,
      )) as MetricDataAnswer;
      results.push(...(answer.MetricDataResults ?? []));
      NextToken = answer.NextToken;
    } while (NextToken);
    return results;
  }

  /** Hourly sums of the service's own metrics (namespace and `service` dimension as Powertools publishes them). */
  async serviceHours(
    names: readonly string[],
    fromMs: number,
    toMs: number,
    signal: AbortSignal,
  ): Promise<Map<number, Record<string, number>>> {
    const queries = names.map((name, i) => ({
      Id: `m${i}`,
      MetricStat: {
        Metric: { Namespace: METRICS_NAMESPACE, MetricName: name, Dimensions: [{ Name: 'service', Value: SERVICE_NAME }] },
        Period: 3600,
        Stat: 'Sum',
      },
    }));
    const hours = new Map<number, Record<string, number>>();
    for (const result of (await this.metricData(queries, fromMs, toMs, signal)) ?? []) {
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
  async queueAges(queueNames: readonly string[], signal: AbortSignal): Promise<Map<string, number>> {
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
    for (const result of (await this.metricData(queries, toMs - 15 * 60_000, toMs, signal)) ?? []) {
      const queue = queueNames[Number(result.Id?.slice(1))];
      const latest = result.Values?.[0]; // GetMetricData answers newest first by default (TimestampDescending).
      if (queue !== undefined && latest !== undefined) ages.set(queue, latest);
    }
    return ages;
  }

  async alarmsOf(topicArn: string, signal: AbortSignal): Promise<AlarmState[]> {
    const { cw, send } = this.client();
    const alarms: AlarmState[] = [];
    let NextToken: string | undefined;
    do {
      const answer = (await send(
        new cw.DescribeAlarmsCommand({ ActionPrefix: topicArn, AlarmTypes: ['MetricAlarm', 'CompositeAlarm'], NextToken }),
        signal,
      )) as AlarmsAnswer;
      for (const alarm of [...(answer.MetricAlarms ?? []), ...(answer.CompositeAlarms ?? [])])
        alarms.push({
          name: alarm.AlarmName ?? '',
          state: alarm.StateValue ?? 'INSUFFICIENT_DATA',
          reason: alarm.StateReason ?? '',
          updated_at: alarm.StateUpdatedTimestamp?.toISOString() ?? null,
        });
      NextToken = answer.NextToken;
    } while (NextToken);
    return alarms.sort((a, b) => (a.state === b.state ? (a.name < b.name ? -1 : 1) : a.state === 'ALARM' ? -1 : 1));
  }
}
