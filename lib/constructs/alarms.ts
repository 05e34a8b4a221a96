import { ArnFormat, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as apigw from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { type FunctionSpec, functions as functionSpecs, type QueueName, type QueueSpec, queues as queueSpecs } from '../manifest';
import type { DataStores } from './data-stores';
import type { Edge } from './edge';
import { entriesOf, pascalCase } from './naming';
import { METRICS_NAMESPACE, SERVICE_NAME } from './service-function';

/** Who the alarms notify besides the stack's own topic (config/<env>.json `alarms`, lib/config.ts). */
export interface AlarmDestination {
  /** Subscribed by email (each subscription must be confirmed from the mail AWS sends). */
  readonly emails?: readonly string[];
  /**
   * An existing SNS topic, a chat or paging tool's, that every alarm notifies too. Its policy must
   * let cloudwatch.amazonaws.com publish (and its key, if encrypted, be usable by CloudWatch).
   */
  readonly topicArn?: string;
}

/**
 * How long a condition must last before an alarm fires: `datapointsToAlarm` bad periods out of
 * the last `evaluationPeriods`. No data means nothing happened, which is fine.
 */
export interface AlarmWindow {
  readonly period: Duration;
  readonly evaluationPeriods: number;
  readonly datapointsToAlarm: number;
}

/**
 * Three bad minutes out of five: a fault that lasts, where one failed request in a quiet minute
 * (100% of that minute) or a second-long spike is not. Rates and percentiles are read per minute,
 * so the alarm fires within about five minutes of a lasting fault.
 */
export const SUSTAINED: AlarmWindow = { period: Duration.minutes(1), evaluationPeriods: 5, datapointsToAlarm: 3 };

/**
 * Scheduled runs: at most a run an hour for most (the five-minute ones: 12), each retried twice by
 * Lambda (an asynchronous invocation), minutes apart; the hour that holds a run and its retries
 * is the window.
 */
export const HOURLY: AlarmWindow = { period: Duration.hours(1), evaluationPeriods: 1, datapointsToAlarm: 1 };

/** The SNS topic every alarm of the service notifies, on alarm and on recovery (OK), and the destinations given. */
export class AlarmTopic extends Construct {
  readonly topic: sns.Topic;
  private readonly actions: actions.SnsAction[];

  constructor(scope: Construct, id: string, props: AlarmDestination = {}) {
    super(scope, id);
    const stack = Stack.of(this);
    const cloudwatchService = new iam.ServicePrincipal('cloudwatch.amazonaws.com');

    // A key of its own: CloudWatch must be able to use it, which the data key should never allow.
    // The AWS managed alias/aws/sns key cannot be used, because CloudWatch alarms cannot publish through it.
    const key = new kms.Key(this, 'Key', {
      description: 'Encrypts the attribution service alarm notifications.',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    key.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'CloudWatchAlarmsPublish',
        principals: [cloudwatchService],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*'],
        resources: ['*'],
      }),
    );

    this.topic = new sns.Topic(this, 'Topic', {
      displayName: 'Attribution service alarms',
      masterKey: key,
      enforceSSL: true,
    });
    // The topic policy replaces SNS's default one, so CloudWatch is let in explicitly, and only for
    // this account's alarms (no confused deputy).
    this.topic.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'CloudWatchAlarmsPublish',
        principals: [cloudwatchService],
        actions: ['sns:Publish'],
        resources: [this.topic.topicArn],
        conditions: {
          StringEquals: { 'aws:SourceAccount': stack.account },
          ArnLike: {
            'aws:SourceArn': stack.formatArn({
              service: 'cloudwatch',
              resource: 'alarm',
              resourceName: '*',
              arnFormat: ArnFormat.COLON_RESOURCE_NAME,
            }),
          },
        },
      }),
    );
    for (const email of props.emails ?? []) this.topic.addSubscription(new subscriptions.EmailSubscription(email));
    // SNS cannot subscribe a topic to a topic: an external topic is a second action of every alarm.
    const external = props.topicArn ? [sns.Topic.fromTopicArn(this, 'External', props.topicArn)] : [];
    this.actions = [this.topic, ...external].map((topic) => new actions.SnsAction(topic));
  }

  /** A CloudWatch alarm that notifies every destination when it fires and when it recovers. */
  alarm(scope: Construct, id: string, props: cloudwatch.AlarmProps): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(scope, id, props);
    alarm.addAlarmAction(...this.actions);
    alarm.addOkAction(...this.actions);
    return alarm;
  }

  /** Fires as soon as one period of the metric is above the threshold (by default, on any occurrence at all). */
  whenAbove(scope: Construct, id: string, alarmDescription: string, metric: cloudwatch.IMetric, threshold = 0): cloudwatch.Alarm {
    return this.alarm(scope, id, {
      alarmDescription,
      metric,
      threshold,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: 1,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }

  /** Fires when the metric is above the threshold in enough periods of the window (no data: fine). */
  whenAboveFor(
    scope: Construct,
    id: string,
    alarmDescription: string,
    metric: cloudwatch.IMetric,
    threshold: number,
    window: AlarmWindow,
  ): cloudwatch.Alarm {
    return this.alarm(scope, id, {
      alarmDescription,
      metric,
      threshold,
      comparisonOperator: cloudwatch.ComparisonOperator.GREATER_THAN_THRESHOLD,
      evaluationPeriods: window.evaluationPeriods,
      datapointsToAlarm: window.datapointsToAlarm,
      treatMissingData: cloudwatch.TreatMissingData.NOT_BREACHING,
    });
  }
}

/** `100 * part / whole` per period, as a CloudWatch metric math expression; a period without `whole` has no value. */
export function percentOf(part: cloudwatch.IMetric, whole: cloudwatch.IMetric, label: string, period: Duration): cloudwatch.MathExpression {
  return new cloudwatch.MathExpression({
    expression: '100 * FILL(part, 0) / whole',
    usingMetrics: { part, whole },
    label,
    period,
  });
}

/**
 * A function's own alarms: its error rate, invocations near its timeout, and throttles. A
 * function with routes or a queue is judged per minute over SUSTAINED, a scheduled one over the
 * HOURLY window of its runs.
 */
export function functionAlarms(scope: Construct, topic: AlarmTopic, name: string, fn: lambda.Function, scheduled: boolean): void {
  const window = scheduled ? HOURLY : SUSTAINED;
  const sum = { statistic: cloudwatch.Stats.SUM, period: window.period };
  // Traffic: over 1% of a minute's invocations failing, three minutes in five. Scheduled: more
  // failed attempts than good ones in the hour, which a run failing after both of Lambda's retries
  // is (3 of 3), and a failure its retry recovered (1 of 2) is not.
  topic.whenAboveFor(
    scope,
    'ErrorRate',
    scheduled
      ? `Most invocations of the ${name} function in the hour failed: a run failed after its retries.`
      : `Over 1% of the ${name} function's invocations failed (an uncaught error or a timeout), in 3 of 5 minutes.`,
    percentOf(fn.metricErrors(sum), fn.metricInvocations(sum), `${name} error %`, window.period),
    scheduled ? 50 : 1,
    window,
  );
  // Lambda stops an invocation at its timeout (an error, and for a queue a redelivery); above 80%
  // of it, one slower dependency is enough. p99 for traffic (the slowest 1% of a minute), the
  // slowest run for a schedule.
  const timeoutMs = (fn.timeout ?? Duration.seconds(3)).toMilliseconds() * 0.8; // unset: Lambda's default, 3 s
  topic.whenAboveFor(
    scope,
    'NearTimeout',
    `Invocations of the ${name} function ran longer than 80% of its timeout (${timeoutMs} ms).`,
    fn.metricDuration({ statistic: scheduled ? cloudwatch.Stats.MAXIMUM : cloudwatch.Stats.p(99), period: window.period }),
    timeoutMs,
    window,
  );
  // Any throttle: the function's reserved concurrency or the account's limit was reached, and
  // requests were refused or messages left waiting (the account concurrency alarm says which).
  topic.whenAbove(
    scope,
    'Throttles',
    `Invocations of the ${name} function were throttled (its reserved concurrency or the account's limit reached).`,
    fn.metricThrottles({ statistic: cloudwatch.Stats.SUM, period: Duration.minutes(5) }),
  );
}

/** A metric the handlers publish through Powertools, which adds the `service` dimension itself. */
export function serviceMetric(metricName: string, props: cloudwatch.MetricOptions = {}): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: METRICS_NAMESPACE,
    metricName,
    dimensionsMap: { service: SERVICE_NAME },
    ...props,
  });
}

export interface ServiceAlarmsProps {
  readonly topic: AlarmTopic;
  readonly edge: Edge;
  readonly stores: DataStores;
  /** Concurrent executions in the account and region above which to alarm; no alarm when unset. */
  readonly accountConcurrency?: number;
}

/**
 * The routes that carry the service's volume, each with the p99 latency above which it alarms:
 * every SDK's events, and the ad clicks a person waits on. A request of either is a few DynamoDB
 * calls (and one S3 put for events), some tens of milliseconds warm; a cold start adds a few
 * hundred. So a p99 over these for minutes is something slow in the path, not a cold start.
 */
export const HOT_ROUTES: Readonly<Record<string, { readonly p99Ms: number }>> = {
  'POST /event': { p99Ms: 2000 },
  'GET /l/{link_id}': { p99Ms: 1000 },
};

/**
 * Alarms on the service as a whole (each function's are functionAlarms): health check failing,
 * the API's 5xx rate, the hot routes' latency and throttling, any dead letter, queue age, audit
 * write failures, DynamoDB throttles per table and the account's concurrency.
 */
export class ServiceAlarms extends Construct {
  constructor(scope: Construct, id: string, props: ServiceAlarmsProps) {
    super(scope, id);
    const { topic, edge, stores } = props;
    const fiveMinutes = Duration.minutes(5);
    const perMinute = { statistic: cloudwatch.Stats.SUM, period: SUSTAINED.period };

    // The check runs every 5 minutes; 2 bad periods out of 3 tolerate one period the schedule
    // happened to miss, while a check that stops running at all still fires (missing = breaching).
    topic.alarm(this, 'HealthCheckFailing', {
      alarmDescription: 'The scheduled health check reports a failing binding, or has stopped reporting.',
      metric: serviceMetric('Healthy', { statistic: cloudwatch.Stats.MINIMUM, period: fiveMinutes }),
      threshold: 1,
      comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
      evaluationPeriods: 3,
      datapointsToAlarm: 2,
      treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    });

    // A handler answers every bad input with a 4xx: a 5xx is a fault. 1% of a minute's requests,
    // three minutes in five, as for each function's error rate.
    topic.whenAboveFor(
      this,
      'ApiServerErrors',
      'Over 1% of the HTTP API requests were answered 5xx, in 3 of 5 minutes.',
      percentOf(edge.api.metricServerError(perMinute), edge.api.metricCount(perMinute), '5xx %', SUSTAINED.period),
      1,
      SUSTAINED,
    );
    topic.whenAbove(
      this,
      'AuditWriteFailed',
      'Accepted events could not be written to the audit store (clients were told to retry).',
      serviceMetric('AuditWriteFailed', { statistic: cloudwatch.Stats.SUM, period: fiveMinutes }),
    );

    // A postback retry is a new delayed message (docs/postbacks.md); when it cannot be sent, the
    // attempt is reported failed and comes back, so a few are harmless, but a queue refusing sends
    // for 5 minutes means retries are being made late.
    topic.whenAbove(
      this,
      'PostbackRequeueFailing',
      "A partner postback's next attempt could not be queued (SendMessage to the postbacks queue failed).",
      serviceMetric('PostbackRequeueFailures', { statistic: cloudwatch.Stats.SUM, period: fiveMinutes }),
    );

    this.hotRouteAlarms(topic, edge);

    for (const [name, deadLetterQueue] of entriesOf(stores.deadLetterQueues)) {
      topic.whenAbove(
        this,
        `${pascalCase(name)}DeadLetters`,
        `Messages of the ${name} queue were given up on and sit in its dead-letter queue.`,
        deadLetterQueue.metricApproximateNumberOfMessagesVisible({ statistic: cloudwatch.Stats.MAXIMUM, period: fiveMinutes }),
      );
    }

    for (const [name, spec] of entriesOf<QueueName, QueueSpec>(queueSpecs)) {
      const limit = spec.ageAlarm;
      if (!limit) continue;
      topic.whenAbove(
        this,
        `${pascalCase(name)}QueueAge`,
        limit.meaning,
        stores.queues[name].metricApproximateAgeOfOldestMessage({ statistic: cloudwatch.Stats.MAXIMUM, period: fiveMinutes }),
        limit.seconds,
      );
    }

    // On-demand tables throttle a partition past its limits (a hot key) or traffic past twice its
    // previous peak. The SDK retries a throttled call (three attempts), so a throttle now and then
    // costs nothing; throttling in 3 minutes of 5 reaches callers as errors and queue retries.
    for (const [name, table] of entriesOf(stores.tables)) {
      const throttles = (metricName: string) =>
        new cloudwatch.Metric({ namespace: 'AWS/DynamoDB', metricName, dimensionsMap: { TableName: table.tableName }, ...perMinute });
      topic.whenAboveFor(
        this,
        `${pascalCase(name)}TableThrottles`,
        `Reads or writes of the ${name} table were throttled, in 3 of 5 minutes.`,
        new cloudwatch.MathExpression({
          expression: 'FILL(reads, 0) + FILL(writes, 0)',
          usingMetrics: { reads: throttles('ReadThrottleEvents'), writes: throttles('WriteThrottleEvents') },
          label: `${name} throttle events`,
          period: SUSTAINED.period,
        }),
        0,
        SUSTAINED,
      );
    }

    // Every function of the account and region draws on one concurrency limit; past it, Lambda
    // throttles them all (reserved concurrency excepted). The threshold leaves room to act
    // (config/<env>.json accountConcurrency: its share of the limit, 80% by default).
    if (props.accountConcurrency !== undefined) {
      topic.whenAboveFor(
        this,
        'AccountConcurrency',
        `Lambda ran more than ${props.accountConcurrency} executions at once in this account and region, in 3 of 5 minutes.`,
        accountConcurrentExecutions({ period: SUSTAINED.period }),
        props.accountConcurrency,
        SUSTAINED,
      );
    }
  }

  /**
   * p99 latency and throttling (API Gateway's own 429s) of each hot route. Route-level metrics are
   * API Gateway's detailed metrics, each route's six billed as custom metrics, so they are turned
   * on for these routes alone (enableRouteMetrics). API Gateway publishes no 429 count: a metric
   * filter on the stage's access log counts requests answered 429 that never reached the
   * integration (integrationLatency "-"), so a handler's own 429 (cap_exceeded, rate_limited) is
   * a documented answer and not counted.
   */
  private hotRouteAlarms(topic: AlarmTopic, edge: Edge): void {
    const apiRoutes = Object.keys(HOT_ROUTES).filter((route) => !edge.functionUrlRoutes.has(route));
    enableRouteMetrics(edge, apiRoutes);
    const accessLog = edge.node.findChild('ApiAccessLog');
    if (!(accessLog instanceof logs.LogGroup)) throw new Error('the Edge construct has no ApiAccessLog log group');
    new logs.MetricFilter(this, 'ThrottledRequestsFilter', {
      logGroup: accessLog,
      filterPattern: logs.FilterPattern.all(
        logs.FilterPattern.stringValue('$.status', '=', '429'),
        logs.FilterPattern.stringValue('$.integrationLatency', '=', '-'),
      ),
      metricNamespace: METRICS_NAMESPACE,
      metricName: THROTTLED_REQUESTS,
      metricValue: '1',
      dimensions: { route: '$.routeKey' },
    });
    const period = SUSTAINED.period;
    for (const [route, { p99Ms }] of Object.entries(HOT_ROUTES)) {
      const id = route
        .split(/[^A-Za-z0-9]+/)
        .filter(Boolean)
        .map((word) => word.charAt(0).toUpperCase() + word.slice(1).toLowerCase())
        .join('');
      const fromUrl = edge.functionUrlRoutes.get(route);
      if (fromUrl) {
        this.functionUrlAlarms(topic, route, id, fromUrl, p99Ms);
        continue;
      }
      topic.whenAboveFor(
        this,
        `${id}Latency`,
        `${route} answered its slowest 1% of requests in over ${p99Ms} ms, in 3 of 5 minutes.`,
        routeMetric(edge.stage, route, 'Latency', { statistic: cloudwatch.Stats.p(99), period }),
        p99Ms,
        SUSTAINED,
      );
      // Past its throttle's burst, a route answers 429 and the client retries later (the SDK) or
      // loses the click (a person): more than 1% of its requests for minutes is traffic to make room for.
      topic.whenAboveFor(
        this,
        `${id}Throttled`,
        `API Gateway throttled over 1% of ${route} requests (429), in 3 of 5 minutes: raise its limit or find the flood.`,
        percentOf(
          throttledRequests(route, { statistic: cloudwatch.Stats.SUM, period }),
          routeMetric(edge.stage, route, 'Count', { statistic: cloudwatch.Stats.SUM, period }),
          `${route} throttled %`,
          period,
        ),
        1,
        SUSTAINED,
      );
    }
  }

  /**
   * A hot route CloudFront serves from a function URL (Edge.serveFromFunctionUrl) has no API
   * Gateway metrics, and its 5xx are not the API's: the URL's own metrics, which Lambda publishes
   * free, stand in for both (the latency the URL measured, and its 5xx rate, which counts a
   * handler's 500, a timeout and a throttled invocation). The function's own alarms
   * (functionAlarms: error rate, near timeout, throttles) watch it besides.
   */
  private functionUrlAlarms(topic: AlarmTopic, route: string, id: string, fn: lambda.IFunction, p99Ms: number): void {
    const period = SUSTAINED.period;
    topic.whenAboveFor(
      this,
      `${id}Latency`,
      `${route} (its function URL) answered its slowest 1% of requests in over ${p99Ms} ms, in 3 of 5 minutes.`,
      functionUrlMetric(fn, 'UrlRequestLatency', { statistic: cloudwatch.Stats.p(99), period }),
      p99Ms,
      SUSTAINED,
    );
    topic.whenAboveFor(
      this,
      `${id}ServerErrors`,
      `Over 1% of ${route} requests were answered 5xx by its function URL (errors, timeouts, throttles), in 3 of 5 minutes.`,
      percentOf(
        functionUrlMetric(fn, 'Url5xxCount', { statistic: cloudwatch.Stats.SUM, period }),
        functionUrlMetric(fn, 'UrlRequestCount', { statistic: cloudwatch.Stats.SUM, period }),
        `${route} 5xx %`,
        period,
      ),
      1,
      SUSTAINED,
    );
  }
}

/** One of the metrics Lambda publishes for a function's URL (UrlRequestCount, Url5xxCount, UrlRequestLatency, ...). */
export function functionUrlMetric(fn: lambda.IFunction, metricName: string, options: cloudwatch.MetricOptions): cloudwatch.Metric {
  return new cloudwatch.Metric({ namespace: 'AWS/Lambda', metricName, dimensionsMap: { FunctionName: fn.functionName }, ...options });
}

/** The metric the access log filter publishes: requests API Gateway refused with 429, by route key. */
export const THROTTLED_REQUESTS = 'ThrottledRequests';

/** The most executions running at once in the account and region, every function's. */
export function accountConcurrentExecutions(options: cloudwatch.MetricOptions): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: 'AWS/Lambda',
    metricName: 'ConcurrentExecutions',
    statistic: cloudwatch.Stats.MAXIMUM,
    ...options,
  });
}

/** Requests of a route API Gateway refused with 429 (the access log's metric filter, ServiceAlarms). */
export function throttledRequests(route: string, options: cloudwatch.MetricOptions): cloudwatch.Metric {
  return new cloudwatch.Metric({ namespace: METRICS_NAMESPACE, metricName: THROTTLED_REQUESTS, dimensionsMap: { route }, ...options });
}

/** One of API Gateway's route-level metrics of a route (only published for the routes enableRouteMetrics names). */
export function routeMetric(
  stage: apigw.IHttpStage,
  route: string,
  metricName: string,
  options: cloudwatch.MetricOptions,
): cloudwatch.Metric {
  return new cloudwatch.Metric({
    namespace: 'AWS/ApiGateway',
    metricName,
    dimensionsMap: { ApiId: stage.api.apiId, Stage: stage.stageName, Route: route },
    ...options,
  });
}

/**
 * Turns on API Gateway's route-level (detailed) metrics for these routes only. A route with its
 * own throttle has its own RouteSettings (Edge.throttleRoute), which replace the stage's
 * DefaultRouteSettings whole, so the flag goes there; a route without one (POST /event) takes it
 * from DefaultRouteSettings, which only such routes read. Overrides, so that the edge construct
 * keeps its settings and this adds one flag beside them.
 */
export function enableRouteMetrics(edge: Edge, routes: readonly string[]): void {
  const owners = Object.values(functionSpecs as Record<string, FunctionSpec>);
  const stage = edge.stage.node.defaultChild as apigw.CfnStage;
  for (const route of routes) {
    const owner = owners.find((spec) => spec.routes?.includes(route));
    if (!owner) throw new Error(`hot route ${route} is not a route of the manifest`);
    if (owner.throttle) stage.addPropertyOverride(`RouteSettings.${route}.DetailedMetricsEnabled`, true);
    else stage.addPropertyOverride('DefaultRouteSettings.DetailedMetricsEnabled', true);
  }
}
