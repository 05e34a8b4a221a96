import { Annotations, Aspects, CfnOutput, Duration, Stack, type StackProps } from 'aws-cdk-lib';
import type * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import { SqsEventSource } from 'aws-cdk-lib/aws-lambda-event-sources';
import type { Construct } from 'constructs';
import { athenaNamedQueries } from '../functions/domain/raw-data/report-sql';
import { ServiceFunctionsOnly } from './aspects/service-functions-only';
import { type AlarmDestination, AlarmTopic, ServiceAlarms } from './constructs/alarms';
import { ConsoleSite } from './constructs/console-site';
import { ServiceDashboard } from './constructs/dashboard';
import { DataStores } from './constructs/data-stores';
import { type ApiThrottle, type CustomDomain, Edge, type PriceClass } from './constructs/edge';
import { Endpoint } from './constructs/endpoint';
import { ManifestFunction } from './constructs/manifest-function';
import { entriesOf, pascalCase } from './constructs/naming';
import type { ServiceFunction } from './constructs/service-function';
import { Warehouse } from './constructs/warehouse';
import {
  type FunctionSpec,
  functions as functionSpecs,
  outputKey,
  type QueueName,
  type QueueSpec,
  queues as queueSpecs,
  type ScheduleSpec,
  schedules as scheduleSpecs,
} from './manifest';

export interface AttributionServiceStackProps extends StackProps {
  /** Who the alarms notify besides the stack's own topic: emails subscribed to it, an existing topic (config/<env>.json `alarms`). */
  readonly alarmDestination?: AlarmDestination;
  /** Concurrent executions in the account and region above which an alarm fires (ServiceAlarms); none when unset. */
  readonly accountConcurrencyAlarm?: number;
  /**
   * Concurrency reserved for the aggregator and ingest: a burst of link or API traffic cannot take
   * it from them, and it is their ceiling. Unset, they share the account's unreserved pool.
   */
  readonly reservedConcurrency?: { readonly aggregator?: number; readonly ingest?: number };
  /** API Gateway stage throttling; defaults in lib/constructs/edge.ts (DEFAULT_THROTTLE). */
  readonly apiThrottle?: Partial<ApiThrottle>;
  /** The origin secret version CloudFront sends (EdgeProps.originSecretVersion); the current one if unset. */
  readonly originSecretVersion?: string;
  /**
   * Internet addresses that replace the manifest's (FunctionSpec.internet) in every function that
   * has the variable: `FX_SOURCE_URL`, the exchange rates' source (the ECB's by default).
   */
  readonly internet?: Readonly<Record<string, string>>;
  /** The tracking links' branded name; the public base URL (BaseUrl) when set (docs/domains.md). */
  readonly linkDomain?: CustomDomain;
  /** The API's own name, for SDKs and server-side callers (docs/domains.md). */
  readonly apiDomain?: CustomDomain;
  /** A CloudFront-scope WAF web ACL to attach to the distribution (docs/domains.md). */
  readonly webAclArn?: string;
  /** CloudFront's price class; unset, every edge location. */
  readonly priceClass?: PriceClass;
  /** DynamoDB deletion protection on the data tables; default true (docs/operations.md). */
  readonly deletionProtection?: boolean;
  /** The custom domains' certificate when another stack made it (EdgeProps.certificate, lib/certificate-stack.ts). */
  readonly certificate?: acm.ICertificate;
}

/**
 * The whole service, built by walking lib/manifest.ts: a table, queue, schedule or function added
 * there appears here with its grants, environment, routes, triggers, alarms and outputs.
 */
export class AttributionServiceStack extends Stack {
  readonly stores: DataStores;
  readonly edge: Edge;
  readonly alarms: AlarmTopic;
  /** The Glue tables and Athena workgroup over the export bucket (docs/raw-data.md). */
  readonly warehouse: Warehouse;
  /** Every function of the manifest, by manifest name. */
  readonly functions: ReadonlyMap<string, ServiceFunction>;
  /** The deployed console: its files, sign-in and API (ADR 0007). */
  readonly console: ConsoleSite;

  constructor(scope: Construct, id: string, props: AttributionServiceStackProps = {}) {
    super(scope, id, {
      description: 'Attribution service: event ingestion, tracking links, attribution and reports.',
      ...props,
    });
    Aspects.of(this).add(new ServiceFunctionsOnly());

    this.stores = new DataStores(this, 'Data', { deletionProtection: props.deletionProtection });
    this.warehouse = new Warehouse(this, 'Warehouse', {
      exportBucket: this.stores.exportBucket,
      key: this.stores.key,
      accessLogs: this.stores.accessLogs,
      // The four reports as Athena SQL (functions/domain/raw-data/report-sql.ts), saved in the workgroup.
      namedQueries: athenaNamedQueries(),
    });
    this.alarms = new AlarmTopic(this, 'Alarms', props.alarmDestination);
    this.edge = new Edge(this, 'Edge', {
      accessLogs: this.stores.accessLogs,
      throttle: props.apiThrottle,
      originSecretVersion: props.originSecretVersion,
      linkDomain: props.linkDomain,
      apiDomain: props.apiDomain,
      webAclArn: props.webAclArn,
      priceClass: props.priceClass,
      certificate: props.certificate,
    });

    assertRoutesUnique(functionSpecs);
    const handlers = new Map<string, ServiceFunction>();
    // The authorizer first: every route is made with it (Edge.authorizeWith).
    const specs = entriesOf<string, FunctionSpec>(functionSpecs).sort(([, a], [, b]) => Number(!a.authorizer) - Number(!b.authorizer));
    for (const [name, spec] of specs) {
      const common = { name, spec: withInternet(spec, props.internet), stores: this.stores, alarms: this.alarms };
      const component = spec.routes?.length
        ? new Endpoint(this, pascalCase(name), { ...common, edge: this.edge })
        : new ManifestFunction(this, pascalCase(name), common);
      if (spec.authorizer) {
        component.function.bindOriginSecret(this.edge.originSecret);
        this.edge.authorizeWith(component.function, spec.authorizer.cacheSeconds);
      }
      handlers.set(name, component.function);
    }
    this.functions = handlers;
    this.console = this.consoleSite();
    this.reserveConcurrency(props.reservedConcurrency ?? {});

    this.connectQueueConsumers();
    this.connectSchedules();

    new ServiceAlarms(this, 'ServiceAlarms', {
      topic: this.alarms,
      edge: this.edge,
      stores: this.stores,
      accountConcurrency: props.accountConcurrencyAlarm,
    });
    new ServiceDashboard(this, 'Dashboard', {
      api: this.edge.api,
      stage: this.edge.stage,
      functions: handlers,
      functionUrlRoutes: this.edge.functionUrlRoutes,
      stores: this.stores,
    });
    this.addOutputs();
  }

  /** The deployed console around the manifest's console-api function (lib/constructs/console-site.ts). */
  private consoleSite(): ConsoleSite {
    const api = this.functions.get('console-api');
    if (!api) throw new Error('the manifest has no console-api function, which the deployed console runs');
    const site = new ConsoleSite(this, 'Console', { api, accessLogs: this.stores.accessLogs, baseUrl: this.edge.baseUrl });
    new CfnOutput(this, outputKey.consoleUrl(), { value: site.url, description: 'The deployed console (docs/console.md)' });
    new CfnOutput(this, outputKey.consoleUserPool(), {
      value: site.userPool.userPoolId,
      description: "The console's Cognito user pool: `admin --stack NAME user invite` adds users to it",
    });
    // What `npm run console:publish` (console/publish.ts) puts in the bucket and writes into the page.
    new CfnOutput(this, outputKey.consoleBucket(), { value: site.bucket.bucketName, description: "The console's files" });
    new CfnOutput(this, outputKey.consoleClientId(), {
      value: site.client.userPoolClientId,
      description: "The console page's Cognito app client",
    });
    new CfnOutput(this, outputKey.consoleIssuer(), { value: site.issuer, description: "The console user pool's issuer (OIDC authority)" });
    return site;
  }

  /**
   * Reserved concurrency (docs/deploy.md): Lambda refuses a reservation that leaves the account
   * fewer than 100 unreserved, and throttles an event source mapping whose maxConcurrency is above
   * its function's reservation; lib/config.ts checks both before this runs.
   */
  private reserveConcurrency(reserved: NonNullable<AttributionServiceStackProps['reservedConcurrency']>): void {
    for (const [name, executions] of Object.entries(reserved)) {
      if (executions === undefined) continue;
      const fn = this.functions.get(name);
      if (!fn) throw new Error(`reservedConcurrency names ${name}, which is not a function of the manifest`);
      (fn.node.defaultChild as lambda.CfnFunction).reservedConcurrentExecutions = executions;
    }
  }

  /**
   * Each queue with a consumer feeds it through an event source mapping. Failed messages of a
   * batch are reported one by one, so one bad message is retried (and dead-lettered) alone.
   */
  private connectQueueConsumers(): void {
    for (const [name, spec] of entriesOf<QueueName, QueueSpec>(queueSpecs)) {
      if (!spec.consumer) continue;
      const queue = this.stores.queues[name];
      const consumer = this.functions.get(spec.consumer.function);
      if (!consumer) {
        // Functions are added to the manifest one by one; until the consumer exists, messages wait.
        Annotations.of(queue).addInfo(`queue ${name} names consumer ${spec.consumer.function}, which is not in the manifest yet`);
        continue;
      }
      const timeout = consumer.timeout?.toSeconds() ?? 0;
      if (timeout > spec.visibilityTimeoutSeconds) {
        throw new Error(
          `queue ${name}: visibility timeout ${spec.visibilityTimeoutSeconds}s is shorter than the ${timeout}s timeout ` +
            `of its consumer ${spec.consumer.function}; a message would be delivered again while still being processed`,
        );
      }
      const window = spec.consumer.maxBatchingWindowSeconds;
      consumer.addEventSource(
        new SqsEventSource(queue, {
          batchSize: spec.consumer.batchSize,
          maxBatchingWindow: window === undefined ? undefined : Duration.seconds(window),
          maxConcurrency: spec.consumer.maxConcurrency,
          reportBatchItemFailures: true,
        }),
      );
    }
  }

  private connectSchedules(): void {
    for (const [name, spec] of entriesOf<string, ScheduleSpec>(scheduleSpecs)) {
      const target = this.functions.get(spec.function);
      if (!target) {
        Annotations.of(this).addInfo(`schedule ${name} names function ${spec.function}, which is not in the manifest yet`);
        continue;
      }
      new events.Rule(this, `${pascalCase(name)}Schedule`, {
        description: spec.purpose,
        schedule: scheduleOf(spec),
        targets: [new targets.LambdaFunction(target, { retryAttempts: 2 })],
      });
    }
  }

  /** Output keys come from the manifest: `admin --stack` finds physical names by them. */
  private addOutputs(): void {
    for (const [name, table] of entriesOf(this.stores.tables)) {
      new CfnOutput(this, outputKey.table(name), { value: table.tableName, description: `Table ${name}` });
    }
    new CfnOutput(this, outputKey.bucket(), { value: this.stores.bucket.bucketName, description: 'Audit bucket' });
    new CfnOutput(this, outputKey.exportBucket(), {
      value: this.stores.exportBucket.bucketName,
      description: 'Export bucket: stream objects and hourly Parquet exports (docs/raw-data.md)',
    });
    new CfnOutput(this, outputKey.warehouseDatabase(), {
      value: this.warehouse.database.databaseName,
      description: 'Glue database of the raw-data tables (events, installs, clicks, skan_postbacks)',
    });
    new CfnOutput(this, outputKey.athenaWorkGroup(), {
      value: this.warehouse.workGroup.ref,
      description: 'Athena workgroup to query the raw-data tables with (enforced results location and scan cutoff)',
    });
    new CfnOutput(this, outputKey.athenaResultsBucket(), {
      value: this.warehouse.resultsBucket.bucketName,
      description: "Bucket of the Athena workgroup's query results (kept 7 days)",
    });
    for (const [name, queue] of entriesOf(this.stores.queues)) {
      new CfnOutput(this, outputKey.queue(name), { value: queue.queueUrl, description: `Queue ${name}` });
    }
    new CfnOutput(this, outputKey.baseUrl(), {
      value: this.edge.baseUrl,
      description: 'Public base URL: the link domain when set, else the CloudFront domain; admin prints links on it',
    });
    new CfnOutput(this, outputKey.alarmTopicArn(), { value: this.alarms.topic.topicArn, description: 'SNS topic every alarm notifies' });
    new CfnOutput(this, 'OriginSecretArn', {
      value: this.edge.originSecret.secretArn,
      description:
        'Secrets Manager secret CloudFront sends as x-origin-verify (its ARN, not its value); docs/secrets.md says how to rotate it',
    });
  }
}

/** EventBridge's schedule for a manifest schedule; cron times are UTC. */
function scheduleOf(spec: ScheduleSpec): events.Schedule {
  switch (spec.kind) {
    case 'rate':
      return events.Schedule.rate(Duration.minutes(spec.minutes));
    case 'hourly':
      return events.Schedule.cron({ minute: String(spec.minuteUtc) });
    case 'daily':
      return events.Schedule.cron({ hour: String(spec.hourUtc), minute: String(spec.minuteUtc) });
  }
}

/** Two functions claiming one route would only fail at deploy time; fail at synth instead. */
function assertRoutesUnique(specs: Record<string, FunctionSpec>): void {
  const owners = new Map<string, string>();
  for (const [name, spec] of Object.entries(specs)) {
    for (const route of spec.routes ?? []) {
      const owner = owners.get(route);
      if (owner) throw new Error(`route "${route}" is claimed by both ${owner} and ${name}`);
      owners.set(route, name);
    }
  }
}

/** The function's spec with the deployment's internet addresses in place of the manifest's, for the variables it has. */
function withInternet(spec: FunctionSpec, internet: Readonly<Record<string, string>> = {}): FunctionSpec {
  if (!spec.internet) return spec;
  const addresses = Object.fromEntries(Object.entries(spec.internet).map(([name, value]) => [name, internet[name] ?? value]));
  return { ...spec, internet: addresses };
}
