import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Template } from 'aws-cdk-lib/assertions';
import { HOT_ROUTES } from '../../lib/constructs/alarms';
import { type FunctionSpec, functions, queues, schedules, type TableName } from '../../lib/manifest';
import type { AttributionServiceStack } from '../../lib/stack';
import { logicalId, serviceApp } from './synthesize';

/**
 * The stack as a deploy configuration makes it (config/<env>.json, lib/config.ts, docs/deploy.md):
 * a production file with an alarm destination, synthesized twice. Building the stack is the slow
 * part of a stack test, so this file builds it twice and asserts everything on those two.
 */
type Resource = { Type: string; Properties: Record<string, any> };
type MetricStat = { Metric: { Namespace: string; MetricName: string; Dimensions?: { Name: string; Value: unknown }[] }; Stat: string };
type AlarmProperties = Record<string, any> & { Metrics?: { Id: string; Expression?: string; MetricStat?: MetricStat }[] };

const PAGER = 'arn:aws:sns:eu-west-1:123456789012:pager';
const FX_SOURCE = 'https://rates.example.com/eurofxref-daily.xml';
const CONFIG = {
  $comment: 'A production environment as an operator fills it in.',
  kind: 'prod',
  stackName: 'AttributionStaging',
  alarms: { emails: ['oncall@example.com'], topicArn: PAGER },
  api: { rateLimit: 50, burstLimit: 120 },
  fxSourceUrl: FX_SOURCE,
  reservedConcurrency: { aggregator: 50, ingest: 300 },
  accountConcurrency: { limit: 2000, alarmPercent: 75 },
};

let dir: string;
let stack: AttributionServiceStack;
let template: Record<string, any>;
let again: Record<string, any>;
let resources: Record<string, Resource>;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'stack-config-'));
  writeFileSync(join(dir, 'prod.json'), JSON.stringify(CONFIG));
  const build = () => serviceApp({ env: 'prod', configDir: dir }).stack;
  stack = build();
  template = Template.fromStack(stack).toJSON();
  again = Template.fromStack(build()).toJSON();
  resources = template.Resources;
}, 180_000);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ofType = (type: string) => Object.entries(resources).filter(([, resource]) => resource.Type === type);
const alarms = () => ofType('AWS::CloudWatch::Alarm').map(([id, alarm]) => [id, alarm.Properties as AlarmProperties] as const);
const functionId = (name: string) => logicalId(stack.functions.get(name)!);
/** The metrics an alarm reads, alone or in its math expression. */
const metricsOf = (alarm: AlarmProperties) =>
  alarm.Metrics
    ? alarm.Metrics.flatMap((m) => (m.MetricStat ? [{ ...m.MetricStat.Metric, Stat: m.MetricStat.Stat }] : []))
    : [
        {
          Namespace: alarm.Namespace,
          MetricName: alarm.MetricName,
          Dimensions: alarm.Dimensions,
          Stat: alarm.Statistic ?? alarm.ExtendedStatistic,
        },
      ];
const reads = (alarm: AlarmProperties, metricName: string, dimension?: { Name: string; Value: unknown }) =>
  metricsOf(alarm).some(
    (metric) =>
      metric.MetricName === metricName &&
      (!dimension || JSON.stringify(metric.Dimensions ?? []).includes(JSON.stringify(dimension).slice(1, -1))),
  );
const SUSTAINED = { EvaluationPeriods: 5, DatapointsToAlarm: 3, TreatMissingData: 'notBreaching' };

describe('a deploy configuration', () => {
  it('synthesizes the same template twice from the same file and no flags', () => {
    expect(again).toEqual(template);
  });

  it('names the stack, and sets the stage throttle and the exchange rates source', () => {
    expect(stack.stackName).toBe('AttributionStaging');
    const [[, stage]] = ofType('AWS::ApiGatewayV2::Stage');
    expect(stage.Properties.DefaultRouteSettings).toMatchObject({ ThrottlingRateLimit: 50, ThrottlingBurstLimit: 120 });
    const fx = ofType('AWS::Lambda::Function').filter(([, fn]) => fn.Properties.Environment.Variables.FX_SOURCE_URL);
    expect(fx.map(([, fn]) => fn.Properties.Environment.Variables.FX_SOURCE_URL)).toEqual([FX_SOURCE]);
  });

  it("holds every route's own throttle to the stage's when the configuration sets the stage lower", () => {
    const [[, stage]] = ofType('AWS::ApiGatewayV2::Stage');
    const limits = Object.entries<any>(stage.Properties.RouteSettings).map(([route, s]) => [
      route,
      s.ThrottlingRateLimit,
      s.ThrottlingBurstLimit,
    ]);
    expect(limits).toContainEqual(['POST /skan-postback', 50, 120]);
    expect(limits).toContainEqual(['GET /health', 10, 20]);
    expect(limits.filter(([, rate, burst]) => rate > 50 || burst > 120)).toEqual([]);
  });
});

describe('the alarm destinations', () => {
  it('subscribe the configured address to the alarm topic', () => {
    expect(ofType('AWS::SNS::Subscription').map(([, s]) => s.Properties)).toEqual([
      { Protocol: 'email', Endpoint: 'oncall@example.com', TopicArn: { Ref: logicalId(stack.alarms.topic) } },
    ]);
  });

  it('are notified by every alarm, the configured topic included, on alarm and again on recovery', () => {
    const destinations = [{ Ref: logicalId(stack.alarms.topic) }, PAGER];
    expect(alarms().length).toBeGreaterThan(90);
    for (const [id, alarm] of alarms()) {
      expect([id, alarm.AlarmActions, alarm.OKActions]).toEqual([id, destinations, destinations]);
    }
  });
});

describe('the alarms', () => {
  const functionEntries = Object.entries(functions) as [string, FunctionSpec][];
  const scheduled = new Set<string>(Object.values(schedules).map((schedule) => schedule.function));
  const ownAlarms = (name: string, metricName: string) =>
    alarms().filter(([, alarm]) => reads(alarm, metricName, { Name: 'FunctionName', Value: { Ref: functionId(name) } }));

  it("fire on each function's error rate, not on one error: 1% in 3 of 5 minutes, or most attempts of a scheduled run's hour", () => {
    for (const [name, spec] of functionEntries) {
      const found = ownAlarms(name, 'Errors');
      expect([name, found.length]).toEqual([name, 1]);
      const [[, alarm]] = found;
      expect(reads(alarm, 'Invocations')).toBe(true);
      expect(alarm.Metrics?.find((m) => m.Expression)?.Expression).toBe('100 * FILL(part, 0) / whole');
      const consumer = Object.values(queues).some((queue) => 'consumer' in queue && queue.consumer.function === name);
      const isScheduled = scheduled.has(name);
      // A scheduled function has nothing else feeding it (the authorizer has neither, and is per request).
      if (isScheduled) expect([name, Boolean(spec.routes?.length) || consumer]).toEqual([name, false]);
      expect([name, alarm]).toEqual([
        name,
        expect.objectContaining(
          isScheduled
            ? { Threshold: 50, EvaluationPeriods: 1, DatapointsToAlarm: 1, ComparisonOperator: 'GreaterThanThreshold' }
            : { Threshold: 1, ...SUSTAINED, ComparisonOperator: 'GreaterThanThreshold' },
        ),
      ]);
      expect(alarm.Metrics?.filter((m) => m.MetricStat).map((m) => (m.MetricStat as unknown as { Period: number }).Period)).toEqual(
        isScheduled ? [3600, 3600] : [60, 60],
      );
    }
  });

  it("fire when a function's invocations run past 80% of its timeout, and on its throttles", () => {
    for (const [name] of functionEntries) {
      const timeoutMs = resources[functionId(name)]!.Properties.Timeout * 1000;
      expect(ownAlarms(name, 'Duration').map(([, alarm]) => alarm.Threshold)).toEqual([timeoutMs * 0.8]);
      expect(ownAlarms(name, 'Throttles').map(([, alarm]) => alarm.Threshold)).toEqual([0]);
    }
  });

  it('fire on the p99 latency and the 429s of the hot routes, read from route metrics enabled for those routes alone', () => {
    const [[, stage]] = ofType('AWS::ApiGatewayV2::Stage');
    const apiId = { Ref: logicalId(stack.edge.api) };
    expect(Object.keys(HOT_ROUTES).sort()).toEqual(['GET /l/{link_id}', 'POST /event']);
    const apiHotRoutes = Object.entries(HOT_ROUTES).filter(([route]) => !stack.edge.functionUrlRoutes.has(route));
    expect(apiHotRoutes.map(([route]) => route)).toEqual(['POST /event']);
    for (const [route, { p99Ms }] of apiHotRoutes) {
      const latency = alarms().filter(([, alarm]) => reads(alarm, 'Latency', { Name: 'Route', Value: route }));
      expect(latency.map(([, alarm]) => [alarm.ExtendedStatistic, alarm.Threshold, alarm.EvaluationPeriods])).toEqual([['p99', p99Ms, 5]]);
      expect(latency[0]![1].Dimensions).toEqual([
        { Name: 'ApiId', Value: apiId },
        { Name: 'Route', Value: route },
        { Name: 'Stage', Value: '$default' },
      ]);
      const throttled = alarms().filter(([, alarm]) => reads(alarm, 'ThrottledRequests', { Name: 'route', Value: route }));
      expect(throttled.map(([, alarm]) => [reads(alarm, 'Count', { Name: 'Route', Value: route }), alarm.Threshold])).toEqual([[true, 1]]);
    }
    // POST /event has the stage's settings, the only hot route API Gateway still serves.
    expect(stage.Properties.DefaultRouteSettings.DetailedMetricsEnabled).toBe(true);
    const detailed = Object.entries<any>(stage.Properties.RouteSettings).filter(([, s]) => s.DetailedMetricsEnabled);
    expect(detailed).toEqual([]);
    const [[, filter]] = ofType('AWS::Logs::MetricFilter');
    expect(filter.Properties).toMatchObject({
      FilterPattern: '{ ($.status = "429") && ($.integrationLatency = "-") }',
      LogGroupName: { Ref: expect.stringMatching(/^EdgeApiAccessLog/) },
      MetricTransformations: [{ MetricName: 'ThrottledRequests', MetricValue: '1', Dimensions: [{ Key: 'route', Value: '$.routeKey' }] }],
    });
  });

  it("fire on the redirect's p99 latency and 5xx rate from its function URL's metrics, as API Gateway no longer serves it (issue 41)", () => {
    const redirect = { Name: 'FunctionName', Value: { Ref: functionId('link-redirect') } };
    const latency = alarms().filter(([, alarm]) => reads(alarm, 'UrlRequestLatency', redirect));
    expect(
      latency.map(([, alarm]) => [alarm.ExtendedStatistic, alarm.Threshold, alarm.EvaluationPeriods, alarm.DatapointsToAlarm]),
    ).toEqual([['p99', HOT_ROUTES['GET /l/{link_id}']!.p99Ms, 5, 3]]);
    const errors = alarms().filter(([, alarm]) => reads(alarm, 'Url5xxCount', redirect));
    expect(errors.map(([, alarm]) => [reads(alarm, 'UrlRequestCount', redirect), alarm.Threshold, alarm.EvaluationPeriods])).toEqual([
      [true, 1, 5],
    ]);
    expect(errors[0]![1].Metrics?.find((m) => m.Expression)?.Expression).toBe('100 * FILL(part, 0) / whole');
  });

  it("put the hot routes' latency and 429s and the account's concurrency on the dashboard", () => {
    const [[, dashboard]] = ofType('AWS::CloudWatch::Dashboard');
    const body = JSON.stringify(dashboard.Properties.DashboardBody);
    for (const title of ['Hot routes: latency p99 (ms)', 'Hot routes: throttled by API Gateway (429)', 'Account concurrent executions'])
      expect(body).toContain(title);
    for (const route of Object.keys(HOT_ROUTES)) {
      // A function URL's route is graphed from the URL's latency, by its function; the others from API Gateway's, by route.
      if (stack.edge.functionUrlRoutes.has(route)) expect(body).toMatch(/UrlRequestLatency\\",\\"FunctionName\\"/);
      else expect(body).toContain(`\\"Route\\",\\"${route}\\"`);
    }
    expect(body).not.toContain('\\"Route\\",\\"GET /l/{link_id}\\"');
    expect(body).toContain('ConcurrentExecutions');
  });

  it('fire on the 5xx rate of the API, not on one 5xx', () => {
    const found = alarms().filter(([, alarm]) => reads(alarm, '5xx'));
    expect(found.map(([, alarm]) => [reads(alarm, 'Count'), alarm.Threshold, alarm.EvaluationPeriods, alarm.DatapointsToAlarm])).toEqual([
      [true, 1, 5, 3],
    ]);
  });

  it('fire when reads or writes of any table are throttled in 3 of 5 minutes', () => {
    for (const [name, table] of Object.entries(stack.stores.tables) as [TableName, (typeof stack.stores.tables)[TableName]][]) {
      const dimension = { Name: 'TableName', Value: { Ref: logicalId(table) } };
      const found = alarms().filter(([, alarm]) => reads(alarm, 'WriteThrottleEvents', dimension));
      expect([name, found.length]).toEqual([name, 1]);
      expect(reads(found[0]![1], 'ReadThrottleEvents', dimension)).toBe(true);
      expect(found[0]![1]).toMatchObject({ Threshold: 0, ...SUSTAINED });
    }
  });

  it("fire when the account's concurrent executions pass the configured share of its limit", () => {
    const found = alarms().filter(([, alarm]) => reads(alarm, 'ConcurrentExecutions'));
    expect(found.map(([, alarm]) => [alarm.Namespace, alarm.Dimensions, alarm.Statistic, alarm.Threshold])).toEqual([
      ['AWS/Lambda', undefined, 'Maximum', 1500],
    ]);
  });
});

describe('reserved concurrency', () => {
  it('is what the configuration gives the aggregator and ingest, at least the aggregation mapping maximum, and nothing else', () => {
    const reserved = ofType('AWS::Lambda::Function')
      .filter(([, fn]) => fn.Properties.ReservedConcurrentExecutions !== undefined)
      .map(([id, fn]) => [id, fn.Properties.ReservedConcurrentExecutions]);
    expect(reserved.sort()).toEqual(
      [
        [functionId('aggregator'), 50],
        [functionId('ingest'), 300],
      ].sort(),
    );
    const [[, mapping]] = ofType('AWS::Lambda::EventSourceMapping').filter(
      ([, m]) => JSON.stringify(m.Properties.FunctionName) === JSON.stringify({ Ref: functionId('aggregator') }),
    );
    expect(mapping!.Properties.ScalingConfig.MaximumConcurrency).toBeLessThanOrEqual(50);
  });
});

describe('the app', () => {
  it('refuses -c env=prod while config/prod.json names no alarm destination, before building anything', () => {
    expect(() => serviceApp({ env: 'prod' })).toThrow(
      /config\/prod\.json is not a valid deploy configuration[\s\S]*alarms: a prod environment needs an alarm destination/,
    );
  });

  it('refuses the context values the configuration replaced, saying which setting took each one over', () => {
    const moved = {
      alarmEmail: 'alarms.emails',
      apiRateLimit: 'api.rateLimit',
      apiBurstLimit: 'api.burstLimit',
      fxSourceUrl: 'fxSourceUrl',
      stackName: 'stackName',
    };
    for (const [name, setting] of Object.entries(moved)) {
      expect(() => serviceApp({ [name]: 'x' })).toThrow(`context ${name} is no longer read: set ${setting} in config/<env>.json`);
    }
  });
});
