import { Duration } from 'aws-cdk-lib';
import type { IHttpApi, IHttpStage } from 'aws-cdk-lib/aws-apigatewayv2';
import * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { Construct } from 'constructs';
import { type FunctionSpec, functions as functionSpecs } from '../manifest';
import { accountConcurrentExecutions, functionUrlMetric, HOT_ROUTES, routeMetric, serviceMetric, throttledRequests } from './alarms';
import { SERVICE_NAME } from './service-function';

/** The attribution types the aggregator counts installs under (functions/domain/attribution/decision.ts). */
const ATTRIBUTION_TYPES = ['deterministic', 'probabilistic', 'organic'];

/** The reports, from their routes in the manifest (each emits ReportLatency with its name as `report`). */
const REPORT_NAMES = Object.values(functionSpecs as Record<string, FunctionSpec>)
  .flatMap((spec) => spec.routes ?? [])
  .filter((route) => route.startsWith('GET /api/v1/reports/'))
  .map((route) => route.slice('GET /api/v1/reports/'.length));

import type { DataStores } from './data-stores';
import { entriesOf } from './naming';

export interface ServiceDashboardProps {
  readonly api: IHttpApi;
  /** The API's stage, whose hot routes have route-level metrics (HOT_ROUTES). */
  readonly stage: IHttpStage;
  /** Every function of the manifest, by manifest name. */
  readonly functions: ReadonlyMap<string, lambda.IFunction>;
  /** The hot routes CloudFront serves from a function URL (Edge.functionUrlRoutes): graphed from the URL's metrics. */
  readonly functionUrlRoutes?: ReadonlyMap<string, lambda.IFunction>;
  readonly stores: DataStores;
}

/** One page with what the alarms watch: health, the API, every function and every queue. */
export class ServiceDashboard extends Construct {
  readonly dashboard: cloudwatch.Dashboard;

  constructor(scope: Construct, id: string, props: ServiceDashboardProps) {
    super(scope, id);
    const { api, stage, functions, stores } = props;
    const hotRoutes = Object.keys(HOT_ROUTES);
    const urlRoutes = props.functionUrlRoutes ?? new Map<string, lambda.IFunction>();
    const hotLatency = (route: string) => {
      const options = { statistic: cloudwatch.Stats.p(99), period, label: route };
      const fn = urlRoutes.get(route);
      return fn ? functionUrlMetric(fn, 'UrlRequestLatency', options) : routeMetric(stage, route, 'Latency', options);
    };
    const period = Duration.minutes(5);
    const perFunction = (metric: (fn: lambda.IFunction) => cloudwatch.Metric) =>
      [...functions].map(([name, fn]) => metric(fn).with({ label: name, period }));
    const queues = entriesOf(stores.queues);
    const deadLetterQueues = entriesOf(stores.deadLetterQueues);

    this.dashboard = new cloudwatch.Dashboard(this, 'Dashboard', {
      defaultInterval: Duration.hours(24),
      widgets: [
        [
          new cloudwatch.GraphWidget({
            title: 'Health check (1 = every binding ok)',
            left: [serviceMetric('Healthy', { statistic: cloudwatch.Stats.MINIMUM, period })],
            leftYAxis: { min: 0, max: 1 },
          }),
          new cloudwatch.GraphWidget({
            title: 'API requests and errors',
            left: [
              api.metricCount({ period, label: 'requests' }),
              api.metricClientError({ period, label: '4xx' }),
              api.metricServerError({ period, label: '5xx' }),
            ],
          }),
          new cloudwatch.GraphWidget({
            title: 'API latency',
            left: [
              api.metricLatency({ period, statistic: cloudwatch.Stats.p(50) }),
              api.metricLatency({ period, statistic: cloudwatch.Stats.p(99) }),
            ],
          }),
          new cloudwatch.GraphWidget({
            title: 'Audit write failures',
            left: [serviceMetric('AuditWriteFailed', { statistic: cloudwatch.Stats.SUM, period })],
          }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Hot routes: latency p99 (ms)',
            left: hotRoutes.map(hotLatency),
          }),
          new cloudwatch.GraphWidget({
            title: 'Hot routes: throttled by API Gateway (429)',
            left: hotRoutes
              .filter((route) => !urlRoutes.has(route))
              .map((route) => throttledRequests(route, { statistic: cloudwatch.Stats.SUM, period, label: route })),
          }),
          new cloudwatch.GraphWidget({
            title: 'Account concurrent executions',
            left: [accountConcurrentExecutions({ period, label: 'all functions of the account' })],
          }),
        ],
        [
          new cloudwatch.GraphWidget({ title: 'Function errors', left: perFunction((fn) => fn.metricErrors()) }),
          new cloudwatch.GraphWidget({ title: 'Function throttles', left: perFunction((fn) => fn.metricThrottles()) }),
          new cloudwatch.GraphWidget({
            title: 'Function duration p99',
            left: perFunction((fn) => fn.metricDuration({ statistic: cloudwatch.Stats.p(99) })),
          }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Queued messages',
            left: queues.map(([name, queue]) => queue.metricApproximateNumberOfMessagesVisible({ label: name, period })),
          }),
          new cloudwatch.GraphWidget({
            title: 'Age of oldest message (s)',
            left: queues.map(([name, queue]) =>
              queue.metricApproximateAgeOfOldestMessage({ label: name, period, statistic: cloudwatch.Stats.MAXIMUM }),
            ),
          }),
          new cloudwatch.GraphWidget({
            title: 'Dead letters',
            left: deadLetterQueues.map(([name, queue]) =>
              queue.metricApproximateNumberOfMessagesVisible({ label: name, period, statistic: cloudwatch.Stats.MAXIMUM }),
            ),
          }),
        ],
        [
          new cloudwatch.GraphWidget({
            title: 'Aggregation lag (s): oldest message waiting',
            left: [
              stores.queues.aggregation.metricApproximateAgeOfOldestMessage({
                label: 'aggregation',
                period,
                statistic: cloudwatch.Stats.MAXIMUM,
              }),
            ],
          }),
          new cloudwatch.GraphWidget({
            title: 'Aggregation: events counted',
            left: [serviceMetric('EventsAggregated', { statistic: cloudwatch.Stats.SUM, period, label: 'events' })],
          }),
          new cloudwatch.GraphWidget({
            title: 'Installs by attribution type',
            stacked: true,
            left: ATTRIBUTION_TYPES.map((type) =>
              serviceMetric('InstallsAttributed', {
                statistic: cloudwatch.Stats.SUM,
                period,
                label: type,
                dimensionsMap: { service: SERVICE_NAME, attribution_type: type },
              }),
            ),
          }),
          new cloudwatch.GraphWidget({
            title: 'Aggregation: deliveries sent back',
            left: ['PoisonMessages', 'AggregationFailed', 'DeliveriesDeferred'].map((name) =>
              serviceMetric(name, { statistic: cloudwatch.Stats.SUM, period, label: name }),
            ),
          }),
          new cloudwatch.GraphWidget({
            title: 'Privacy requests drained',
            left: ['PrivacyRequestsDrained', 'PrivacyRequestsCarried', 'PrivacyDrainFailed'].map((name) =>
              serviceMetric(name, { statistic: cloudwatch.Stats.SUM, period, label: name }),
            ),
          }),
          new cloudwatch.GraphWidget({
            title: 'SKAN postbacks by verification result',
            stacked: true,
            left: (
              [
                ['SkanPostbackVerified', 'verified'],
                ['SkanPostbackInvalid', 'invalid signature'],
                ['SkanPostbackDuplicate', 'duplicate'],
                ['SkanPostbackRefused', 'refused (400/413)'],
              ] satisfies [name: string, label: string][]
            ).map(([name, label]) => serviceMetric(name, { statistic: cloudwatch.Stats.SUM, period, label })),
          }),
          new cloudwatch.GraphWidget({
            title: 'Partner postbacks by outcome',
            stacked: true,
            left: [
              ...['delivered', 'failed', 'refused'].map((outcome) =>
                serviceMetric('PostbacksSettled', {
                  statistic: cloudwatch.Stats.SUM,
                  period,
                  label: outcome,
                  dimensionsMap: { service: SERVICE_NAME, outcome },
                }),
              ),
              serviceMetric('PostbacksRetried', { statistic: cloudwatch.Stats.SUM, period, label: 'retried' }),
              serviceMetric('PostbacksDead', { statistic: cloudwatch.Stats.SUM, period, label: 'gave up (DLQ)' }),
            ],
          }),
          new cloudwatch.GraphWidget({
            title: 'Report latency p95 (ms)',
            left: REPORT_NAMES.map((report) =>
              serviceMetric('ReportLatency', {
                statistic: cloudwatch.Stats.p(95),
                period,
                label: report,
                dimensionsMap: { service: SERVICE_NAME, report },
              }),
            ),
          }),
        ],
      ],
    });
  }
}
