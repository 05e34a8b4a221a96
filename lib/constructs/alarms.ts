import { ArnFormat, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type { IHttpApi } from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as actions from 'aws-cdk-lib/aws-cloudwatch-actions';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as sns from 'aws-cdk-lib/aws-sns';
import * as subscriptions from 'aws-cdk-lib/aws-sns-subscriptions';
import { Construct } from 'constructs';
import { type QueueName, type QueueSpec, queues as queueSpecs } from '../manifest';
import type { DataStores } from './data-stores';
import { entriesOf, pascalCase } from './naming';
import { METRICS_NAMESPACE, SERVICE_NAME } from './service-function';

export interface AlarmTopicProps {
  /** Subscribed by email when set (the subscription must be confirmed from the mail). */
  readonly email?: string;
}

/** The SNS topic every alarm of the service notifies. */
export class AlarmTopic extends Construct {
  readonly topic: sns.Topic;
  private readonly action: actions.SnsAction;

  constructor(scope: Construct, id: string, props: AlarmTopicProps = {}) {
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
    if (props.email) this.topic.addSubscription(new subscriptions.EmailSubscription(props.email));
    this.action = new actions.SnsAction(this.topic);
  }

  /** A CloudWatch alarm that notifies the topic when it fires. */
  alarm(scope: Construct, id: string, props: cloudwatch.AlarmProps): cloudwatch.Alarm {
    const alarm = new cloudwatch.Alarm(scope, id, props);
    alarm.addAlarmAction(this.action);
    return alarm;
  }

  /**
   * The common shape: fire as soon as one period of the metric is above the threshold (by
   * default, on any occurrence at all); no data means nothing happened, which is fine.
   */
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
  readonly api: IHttpApi;
  readonly stores: DataStores;
}

/**
 * Alarms on the service as a whole (function errors and throttles are with each function):
 * health check failing, 5xx from the API, any dead letter, queue age, audit write failures.
 */
export class ServiceAlarms extends Construct {
  constructor(scope: Construct, id: string, props: ServiceAlarmsProps) {
    super(scope, id);
    const { topic, api, stores } = props;
    const fiveMinutes = Duration.minutes(5);

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

    topic.whenAbove(
      this,
      'ApiServerErrors',
      'The HTTP API answered 5xx on some route.',
      api.metricServerError({ statistic: cloudwatch.Stats.SUM, period: fiveMinutes }),
    );
    topic.whenAbove(
      this,
      'AuditWriteFailed',
      'Accepted events could not be written to the audit store (clients were told to retry).',
      serviceMetric('AuditWriteFailed', { statistic: cloudwatch.Stats.SUM, period: fiveMinutes }),
    );

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
  }
}
