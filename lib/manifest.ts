/**
 * The resource manifest: every table, the audit and export buckets, every queue, every schedule
 * and every function with its routes and grants. The CDK stack and the local runtime both build from this
 * file, so the deployed service and `npm start` cannot drift apart.
 *
 * Plain data only: no aws-cdk-lib import here, because the local runtime reads it too. Handlers
 * import lib/function-constants.ts instead, which holds what they need and no text.
 */

import {
  AGGREGATOR_TIMEOUT_SECONDS,
  APPATTRIBUTION_REPORT_PATH,
  INVALID_SKAN_POSTBACKS,
  MAX_REPORT_KEY_SECRET_PREFIX,
  QUEUE_AGE_ALARM_SECONDS,
  SKADNETWORK_REPORT_PATH,
  STREAM_OBJECTS,
} from './function-constants';

export { envName, HEALTH_PROBE_KEY, MAX_REPORT_KEY_SECRET_PREFIX, originVerifyHeader, viewerHostHeader } from './function-constants';

export type AttributeType = 'S' | 'N';
export interface KeySpec {
  readonly name: string;
  readonly type: AttributeType;
}
export interface IndexSpec {
  readonly name: string;
  readonly partitionKey: KeySpec;
  readonly sortKey?: KeySpec;
}
export interface TableSpec {
  readonly purpose: string;
  readonly partitionKey: KeySpec;
  readonly sortKey?: KeySpec;
  /** Epoch-seconds attribute DynamoDB expires items on. */
  readonly ttlAttribute?: string;
  readonly indexes?: readonly IndexSpec[];
}

const S = (name: string): KeySpec => ({ name, type: 'S' });
const N = (name: string): KeySpec => ({ name, type: 'N' });

export const tables = {
  tenants: {
    purpose:
      'Companies, apps and server keys. Items are keyed by the credential the hot path holds ' +
      '(company#<company_key>, app#<app_key>, server_key#<sha256>); the id index finds them by id. ' +
      "Apps' SKAN conversion-value schemas too: skan_schema#<app_id> the active version, skan_schema#<app_id>#v<n> each one. " +
      'No signing secret: those are in signing_secrets.',
    partitionKey: S('pk'),
    indexes: [{ name: 'by_id', partitionKey: S('id') }],
  },
  signing_secrets: {
    purpose:
      "Each app's signing secret, by app_id. A table of its own so that only the functions that verify signatures " +
      '(ingest, privacy-request, sdk-skan-schema, sdk-attribution) can read one; the report functions and the aggregator read the tenants table. ' +
      'Written by the operator alone (admin CLI, console).',
    partitionKey: S('app_id'),
  },
  counters: {
    purpose: 'Atomic counters: the monthly accepted-event count per company, over 8 shards (cap#<company_id>#<yyyy-mm>[#1..#7]).',
    partitionKey: S('pk'),
  },
  links: {
    purpose: 'Tracking-link configuration, one item per link_id.',
    partitionKey: S('link_id'),
  },
  ip_blocks: {
    purpose:
      'Source IPs blocked by honeypot links, per company: the key attribute ip holds <company_id>#<address> ' +
      "(a block holds on that company's links and installs only); they expire after 7 days.",
    partitionKey: S('ip'),
    ttlAttribute: 'expires_at',
  },
  rate_limits: {
    purpose:
      'Sliding-window click counters: one item per IP block (block#<cidr>) with one counter per ' +
      'slot of the window (s<slot index>); see functions/domain/links/sliding-window.ts.',
    partitionKey: S('pk'),
    ttlAttribute: 'expires_at',
  },
  clicks: {
    purpose:
      'The click records of releases before click_log, no longer written: read (by click_id, and through the ' +
      'by_app_ip_platform and by_app_hour indexes) until the last of them expires, dropped by a later release ' +
      '(docs/adr/0008-click-counts-from-the-click-log.md, section 2 revised). app_hour = <app_id>#<YYYY-MM-DDTHH>#<shard 0-f>.',
    partitionKey: S('click_id'),
    ttlAttribute: 'expires_at',
    indexes: [
      { name: 'by_app_ip_platform', partitionKey: S('app_ip_platform'), sortKey: N('ts_ms') },
      { name: 'by_app_hour', partitionKey: S('app_hour'), sortKey: N('ts_ms') },
    ],
  },
  click_log: {
    purpose:
      'Click records, no index: pk <app_id>#<YYYY-MM-DDTHH>#<shard 0-3>, sk <iph>#<ts_ms, 15 digits>#<click_id>, ' +
      'where iph is a hash of (app, IP, platform) and the shard its first two bits; the click id encodes its key ' +
      '(functions/domain/links/click-log-key.ts). One key per hour finds the latest click of an (app, IP, platform) ' +
      "for probabilistic matching; an hour's 4 keys hold an app's clicks for the export, the click-count lane and the reports' top-up. " +
      'Clicks expire well after the lookback window.',
    partitionKey: S('pk'),
    sortKey: S('sk'),
    ttlAttribute: 'expires_at',
  },
  installs: {
    purpose:
      'Everything keyed to one install: the install record, event identities (exactly-once) and ' +
      'events waiting for their install. pk = <app_id>#<install_uuid>, so a privacy deletion is one query.',
    partitionKey: S('pk'),
    sortKey: S('sk'),
    indexes: [{ name: 'by_device', partitionKey: S('app_device'), sortKey: S('pk') }],
  },
  aggregates: {
    purpose:
      'Prebuilt daily report rows: pk = <app_id>#<report>, sk = <yyyy-mm-dd>#<group columns>. ' +
      'Reports query a day range and never scan events.',
    partitionKey: S('pk'),
    sortKey: S('sk'),
    // Only the SKAN report's invalid totals carry it: they go with the invalid records they count.
    ttlAttribute: 'expires_at',
  },
  ledger: {
    purpose:
      'Idempotency marks that expire: ingestion marks each counted batch (ingest#batch#...) so a retried ' +
      'batch counts against the cap once; the aggregator marks each audit object and step it has applied.',
    partitionKey: S('pk'),
    ttlAttribute: 'expires_at',
  },
  privacy_requests: {
    purpose:
      'Deletion receipts: request id, app, SHA-256 of the install_uuid, received time, state and what was deleted; ' +
      "the by_install index finds an install's receipts by <app_id>#<install_hash>.",
    partitionKey: S('request_id'),
    indexes: [{ name: 'by_install', partitionKey: S('app_install'), sortKey: N('received_ms') }],
  },
  skan_postbacks: {
    purpose:
      "Apple's postbacks de-duplicated on transaction-id. Items of postbacks that did not verify expire with their " +
      'records (bucket.invalidSkanPostbacks): anybody can send those.',
    partitionKey: S('transaction_id'),
    ttlAttribute: 'expires_at',
  },
  postbacks: {
    purpose:
      "Partner postbacks, one partition per app (pk = app_id): each partner's configuration (cfg#<partner>), " +
      'each postback made once per decision with its state (pb#<postback_id>) and each delivery attempt (log#<at_ms>#...); ' +
      "postbacks and attempts expire after 30 days. The by_install index finds an install's postbacks and attempts by " +
      '<app_id>#<install_hash>, for the privacy drain.',
    partitionKey: S('pk'),
    sortKey: S('sk'),
    ttlAttribute: 'expires_at',
    indexes: [{ name: 'by_install', partitionKey: S('app_install'), sortKey: S('sk') }],
  },
  fx_rates: {
    purpose:
      'Exchange rates, one item per day (pk day = YYYY-MM-DD): rates, a map of ISO 4217 code to the US dollars one unit ' +
      'is worth that day. Written by the daily fx-fetch and `admin fx set`; ingest converts revenue with them (docs/ingestion.md, "Currencies").',
    partitionKey: S('day'),
  },
  changes: {
    purpose:
      'The console change log (docs/console.md, "The change log"): one item per change a console user made, who, what, when, ' +
      'before and after, by company_id, sorted by at (<ms, 15 digits>#<random>). Written and read by the console API alone.',
    partitionKey: S('company_id'),
    sortKey: S('at'),
  },
} as const satisfies Record<string, TableSpec>;

export type TableName = keyof typeof tables;

export const bucket = {
  name: 'audit',
  purpose: 'Audit store: one gzip JSONL object per event batch, SKAN postbacks as JSON.',
  /** Audit objects are read by rebuilds and privacy deletions only: cheaper storage after a month. */
  infrequentAccessAfterDays: 30,
  glacierInstantAfterDays: 90,
  noncurrentVersionsExpireAfterDays: 30,
  /** SKAN postbacks whose signature did not verify (INVALID_SKAN_POSTBACKS says why a prefix of their own). */
  invalidSkanPostbacks: INVALID_SKAN_POSTBACKS,
} as const;

/**
 * The export bucket (docs/raw-data.md, "Storage"): raw data out. The aggregator's stream objects
 * under `stream/` (what GET /api/v1/stream/events serves), and the hourly Parquet files of each
 * export table under `<table>/app_id=<app_id>/dt=<YYYY-MM-DD>/hour=<HH>/` (what the Glue tables
 * and Athena read, lib/constructs/warehouse.ts). Not versioned: every object can be made again
 * from the audit store (a replay rewrites stream objects, an export run rewrites an hour), and a
 * privacy deletion must not leave an old version behind. Athena's query results are not here:
 * they have a bucket of their own, which the warehouse makes.
 */
export const exportBucket = {
  name: 'exports',
  purpose:
    'Raw data out: stream objects (stream/<app_id>/..., gzip JSON Lines, kept 30 days) and hourly Parquet exports ' +
    '(<table>/app_id=/dt=/hour=/, kept, Infrequent Access after 30 days).',
  stream: STREAM_OBJECTS,
  /** The export tables, one prefix each (functions/domain/raw-data/tables.ts, RAW_TABLES, has their columns). */
  tables: ['events', 'installs', 'clicks', 'skan_postbacks'],
  /** Export files are kept; queries mostly read recent hours, so older files move to cheaper storage. */
  infrequentAccessAfterDays: 30,
} as const;

export type ExportTableName = (typeof exportBucket.tables)[number];

export interface QueueSpec {
  readonly purpose: string;
  readonly visibilityTimeoutSeconds: number;
  /** Receives before a message moves to the queue's dead-letter queue (same in AWS and locally). */
  readonly maxReceiveCount: number;
  readonly retentionDays: number;
  /** Alarm when the oldest message is older than this (docs/architecture.md section 10), with what it means. */
  readonly ageAlarm?: { readonly seconds: number; readonly meaning: string };
  /**
   * Function fed by the queue through an event source mapping, if any. Above 10 messages a batch
   * needs a batching window (Lambda waits up to that long to fill it; AWS requires at least 1 s).
   */
  readonly consumer?: {
    readonly function: string;
    readonly batchSize: number;
    readonly maxBatchingWindowSeconds?: number;
    /** Invocations the event source mapping runs at once, at most (AWS: 2 to 1,000; unset: as many as Lambda scales to). */
    readonly maxConcurrency?: number;
  };
}

export const queues = {
  aggregation: {
    purpose: 'Hand-off from ingestion to the aggregator: one message per audit object.',
    // 6x the aggregator's 60 s timeout (AWS's advice for an event source mapping: room for Lambda
    // to retry a throttled batch before its messages come back and count a receive towards the
    // DLQ). The lane lease (timeout plus 15 s) still runs out long before; a delivery waiting for a
    // busy lane sets its own, shorter visibility (docs/aggregation.md).
    visibilityTimeoutSeconds: 360,
    maxReceiveCount: 5,
    // A week, under the DLQ's 14 days: a dead-lettered message keeps its first enqueue time.
    retentionDays: 7,
    ageAlarm: {
      seconds: QUEUE_AGE_ALARM_SECONDS.aggregation,
      meaning: 'Aggregation lags more than 15 minutes behind ingestion: reports are going stale.',
    },
    // Big batches are what keeps an app's report rows cool: the aggregator writes each row once
    // per invocation, whatever the number of audit objects behind it (docs/aggregation.md). Each
    // invocation holds one of the ledger's 64 lanes while it writes rows (functions/domain/
    // aggregation/lease.ts, LANES): at most 48 at once leaves lanes free for replays.
    consumer: { function: 'aggregator', batchSize: 100, maxBatchingWindowSeconds: 1, maxConcurrency: 48 },
  },
  enrichment: {
    purpose:
      "Hand-off of audit objects whose installs carry Apple AdServices tokens: adservices-enrich stores Apple's answers " +
      'beside the object, then sends the message on to aggregation (docs/ios.md, section 4).',
    // 6x adservices-enrich's 120 s timeout (a token may wait out Apple's retries: 3 x 5 s), as
    // AWS advises for an event source mapping: a throttled batch is retried before it comes back.
    visibilityTimeoutSeconds: 720,
    maxReceiveCount: 5,
    retentionDays: 7,
    ageAlarm: {
      seconds: QUEUE_AGE_ALARM_SECONDS.enrichment,
      meaning: "Apple Ads installs have waited more than 15 minutes for Apple's answers: their attribution and reports are going stale.",
    },
    consumer: { function: 'adservices-enrich', batchSize: 10 },
  },
  privacy: {
    purpose: 'Right-to-be-forgotten requests, drained nightly by privacy-drain.',
    // privacy-drain's timeout, not 6x: no event source mapping reads this queue (the drain receives
    // itself, so no Lambda retry of a throttled batch holds messages), and a request the drain holds
    // must not come round again in the same run, which the timeout alone guarantees.
    visibilityTimeoutSeconds: 900,
    maxReceiveCount: 5,
    // A week, under the DLQ's 14 days; a request with rows left is sent again (a new message).
    retentionDays: 7,
    ageAlarm: {
      seconds: QUEUE_AGE_ALARM_SECONDS.privacy,
      meaning: 'A privacy request has waited more than 36 hours: the nightly drain is failing or not keeping up.',
    },
  },
  postbacks: {
    purpose:
      'Partner postbacks to deliver: one message per attempt. A failed attempt sends the next as a new message that waits ' +
      'out the retry schedule (5 min, 1 h, 6 h, 12 h) in delays of at most 15 min; after the fifth attempt it moves to the DLQ.',
    // 6x postback-sender's 30 s timeout (AWS's advice for an event source mapping). It only
    // matters when an attempt dies: a retry is a new delayed message and the received one is
    // acknowledged, so no message waits out a retry in flight (docs/postbacks.md).
    visibilityTimeoutSeconds: 180,
    maxReceiveCount: 5,
    retentionDays: 4,
    // No age alarm: a retry's wait is hops of at most 15 minutes, each a new message (docs/postbacks.md);
    // the DLQ alarm says a postback gave up.
    consumer: { function: 'postback-sender', batchSize: 10 },
  },
} as const satisfies Record<string, QueueSpec>;

export type QueueName = keyof typeof queues;

/** Every N minutes, every hour at a minute (UTC), or a daily time in UTC. */
export type ScheduleSpec =
  | { readonly kind: 'rate'; readonly minutes: number; readonly function: string; readonly purpose: string }
  | { readonly kind: 'hourly'; readonly minuteUtc: number; readonly function: string; readonly purpose: string }
  | { readonly kind: 'daily'; readonly hourUtc: number; readonly minuteUtc: number; readonly function: string; readonly purpose: string };

export const schedules = {
  'privacy-drain': {
    kind: 'daily',
    hourUtc: 3,
    // Half an hour after the hourly export starts (:07, at most 15 minutes), and done (at most 15
    // minutes) before the next: a scheduled export never reads a stream object the drain is erasing.
    minuteUtc: 37,
    function: 'privacy-drain',
    purpose: 'Drains the privacy queue nightly (docs/privacy.md), off the hour most schedules use and between two exports.',
  },
  'health-check': {
    kind: 'rate',
    minutes: 5,
    function: 'health-check',
    purpose: 'Checks every binding and publishes a metric the health alarm watches.',
  },
  export: {
    kind: 'hourly',
    minuteUtc: 7,
    function: 'export',
    purpose: 'Writes the Parquet files of the hours that changed since the last run (docs/raw-data.md), off the hour.',
  },
  'performance-pages': {
    kind: 'rate',
    minutes: 5,
    function: 'performance-pages',
    purpose:
      'Builds the performance report\'s pages (day, partner, week) of each day changed since its page was built (docs/analytics.md, "Reading").',
  },
  'lane-sweep': {
    kind: 'rate',
    minutes: 1,
    function: 'lane-sweep',
    purpose:
      'Replays the aggregation lanes a dead invocation left open, so an event stream is held back at most the lease plus a minute (docs/raw-data.md, "Latency"), and counts the clicks logged since the last run (docs/analytics.md).',
  },
  'fx-fetch': {
    kind: 'daily',
    // The ECB publishes its reference rates at about 16:00 CET (15:00 UTC in winter, 14:00 in summer).
    hourUtc: 16,
    minuteUtc: 30,
    function: 'fx-fetch',
    purpose: 'Stores the day\'s exchange rates from the configured source (docs/ingestion.md, "Currencies").',
  },
  'max-revenue-pull': {
    kind: 'daily',
    // MAX has a UTC day's user-level report 8 hours after the day ends; an hour and a half more for its delays.
    hourUtc: 9,
    minuteUtc: 47,
    function: 'max-revenue-pull',
    purpose: "Pulls yesterday's AppLovin MAX user-level ad revenue report of each app whose pull is on (docs/ad-revenue.md).",
  },
} as const satisfies Record<string, ScheduleSpec>;

/**
 * What a function may do with a table, the audit bucket or the export bucket. Writing is putting and updating;
 * deleting is a level of its own ('_delete'), given only to the functions that delete something,
 * so a bug or a stolen role elsewhere cannot erase installs, clicks or audit objects.
 *
 * 'probe' is the health checks' level, which reads nothing: on a table, GetItem of the one key
 * HEALTH_PROBE_KEY (an IAM condition on the leading key, so not a tenant item nor a counter); on
 * the bucket, HeadBucket (s3:ListBucket on the bucket, no object). GET /health is public: a fault
 * in it must not open tenants' signing data or audit objects to whoever calls it.
 *
 * 'read_key_use' (TableAccess, the tenants table only) is 'read' and one narrow write: a server
 * key's last use, on its server_key# item, under IAM conditions (below).
 */
export type Access = 'probe' | 'read' | 'write' | 'readwrite' | 'write_delete' | 'readwrite_delete';

/**
 * The tenants table has one level more, 'read_key_use', for the functions that check server keys
 * (the reports, the stream, the cost upload): everything 'read' gives, and UpdateItem of a server
 * key's last use alone. IAM conditions keep that one write to the items keyed SERVER_KEY_PREFIX
 * (dynamodb:LeadingKeys) and to the attributes KEY_USE_ATTRIBUTES (dynamodb:Attributes: the key,
 * and the attributes its update sets and its condition reads), with no ReturnValues that would
 * read other attributes (lib/permissions.ts, KEY_USE_CONDITION). A fault or a stolen role in one
 * of those public functions can thus neither make a server key, revoke one, nor change an app: at
 * worst it stamps a key's last use, or makes an item that holds nothing but a key and a last use.
 */
export type TableAccess = Access | 'read_key_use';

/** How the tenants table's server-key items are keyed: server_key#<sha256 of the key> (functions/adapters/tenant-store.ts). */
export const SERVER_KEY_PREFIX = 'server_key#';
/** The attributes a key's last-use update names (TenantStore.recordServerKeyUse): the table's key and last_used_ms. */
export const KEY_USE_ATTRIBUTES: readonly string[] = [tables.tenants.partitionKey.name, 'last_used_ms'];

export const readsWith = (access: TableAccess): boolean =>
  access === 'read' || access === 'readwrite' || access === 'readwrite_delete' || access === 'read_key_use';
export const writesWith = (access: TableAccess): boolean => access !== 'read' && access !== 'probe' && access !== 'read_key_use';
export const deletesWith = (access: TableAccess): boolean => access === 'write_delete' || access === 'readwrite_delete';
export interface FunctionSpec {
  readonly entry: string;
  readonly description: string;
  /** HTTP API route keys, exactly as API Gateway writes them ("GET /l/{link_id}", "$default"). */
  readonly routes?: readonly string[];
  /** 'read_key_use' on the tenants table alone (TableAccess). */
  readonly tables?: { readonly [T in TableName]?: T extends 'tenants' ? TableAccess : Access };
  /** The audit bucket (`bucket`). */
  readonly bucket?: Access;
  /** The export bucket (`exportBucket`): stream objects and Parquet export files. */
  readonly exports?: Access;
  /**
   * 'send' to produce, 'consume' to receive and delete, 'requeue' to consume and send back (a
   * consumer that puts unfinished work at the end of its queue), 'read' for attributes only.
   */
  readonly queues?: Partial<Record<QueueName, 'send' | 'consume' | 'requeue' | 'read'>>;
  readonly timeoutSeconds?: number;
  readonly memoryMb?: number;
  /**
   * API Gateway's throttle on each of its routes, a token bucket of its own, so that a flood on
   * one route (most of them public) cannot take the share of another, POST /event above all.
   * Without it a route has the stage's default (lib/constructs/edge.ts, DEFAULT_THROTTLE), and no
   * route's own exceeds the stage's. docs/route-limits.md lists them all.
   */
  readonly throttle?: RouteThrottle;
  /** A route's own throttle where it is not `throttle`, by route key (docs/route-limits.md). */
  readonly routeThrottles?: Readonly<Record<string, RouteThrottle>>;
  /**
   * CloudFront reaches the function through its Lambda function URL (auth AWS_IAM, signed by the
   * distribution's Origin Access Control), on a cache behavior per route, instead of through the
   * HTTP API: API Gateway has none of its routes, so no `throttle` either (issue 41: the click
   * without API Gateway's $1.00 per million; docs/tracking-links.md says what bounds it instead).
   * Its routes are GET routes whose only parameter is the last segment (functionUrlPathPattern);
   * the URL's event has no path parameters, so the handler reads it from the raw path
   * (functions/domain/links/link-path.ts).
   */
  readonly functionUrl?: boolean;
  /**
   * Variables naming an address on the internet, with the value the stack sets. The local runtime
   * never reaches the internet: it sets each to '' (none), or to the run's own (a test's stub on
   * 127.0.0.1, RuntimeOptions.internet).
   */
  readonly internet?: Readonly<Record<string, string>>;
  /**
   * Secrets Manager secrets the function reads by name, those whose names start with this prefix
   * alone (secretsmanager:GetSecretValue on `secret:<prefix>*`): tenants' keys to a partner's API,
   * which an operator stores and an app's settings name.
   */
  readonly secretPrefix?: string;
  /**
   * The HTTP API's origin authorizer (functions/origin-authorizer.ts): every route is authorized by
   * it, on the x-origin-verify header, before its own function runs. It reads the origin secret.
   */
  readonly authorizer?: {
    /** How long API Gateway keeps its answer for one header value (the stack's and the local runtime's cache). */
    readonly cacheSeconds: number;
  };
  /**
   * The console's user pool (lib/constructs/console-site.ts; locally the sign-in stand-in): the
   * variables naming its issuer, app client and pool, the service's base URL, and 'admin' the
   * administrator calls on its users (`user invite|remove|list`).
   */
  readonly consoleUsers?: 'admin';
  /**
   * The operators' health view (`health`, functions/adapters/health-sources.ts): each dead-letter
   * queue's depth (sqs:GetQueueAttributes on the DLQs, DEAD_LETTER_QUEUE_<NAME>_URL), the alarm
   * topic's ARN (ALARM_TOPIC_ARN) and CloudWatch's DescribeAlarms and GetMetricData, which take no
   * resource narrower than `*` (lib/permissions.ts, CLOUDWATCH_READ_ACTIONS). The queues
   * themselves and the tables it reads are the function's `queues` and `tables` grants.
   */
  readonly healthView?: true;
}

/** Functions that read the CloudFront origin secret: every routed one, and the authorizer. */
export function readsOriginSecret(spec: FunctionSpec): boolean {
  return Boolean(spec.routes?.length) || spec.authorizer !== undefined;
}

/**
 * A `functionUrl` route's CloudFront path pattern (lib/constructs/edge.ts, and the local edge's):
 * "GET /l/{link_id}" is "/l/*". Only GET routes whose one parameter is the last segment: a
 * pattern cannot say more, and the handler reads the parameter from the path itself.
 */
export function functionUrlPathPattern(route: string): string {
  const match = /^GET (\/(?:[A-Za-z0-9._-]+\/)+)\{[a-z_]+\}$/.exec(route);
  if (!match?.[1]) throw new Error(`route "${route}" cannot be served from a function URL: only "GET /<literal path>/{<parameter>}" can`);
  return `${match[1]}*`;
}

/** Requests per second a route takes steadily, and in a burst; over it API Gateway answers 429. */
export interface RouteThrottle {
  readonly rateLimit: number;
  readonly burstLimit: number;
}

/**
 * The health probes read every queue's depth (functions/adapters/health-probes.ts), so the health
 * functions (and the console API, for the health view) are granted every queue: typed by QueueName, a queue added to the manifest does not
 * compile until it is probed too (a probe without its grant and variable failed every cold start).
 */
const probeEveryQueue = { aggregation: 'read', enrichment: 'read', privacy: 'read', postbacks: 'read' } as const satisfies Record<
  QueueName,
  'read'
>;

export const functions = {
  health: {
    entry: 'functions/health.ts',
    description: 'GET /health: live read-only check of every binding.',
    routes: ['GET /health'],
    tables: { tenants: 'probe', counters: 'probe' },
    bucket: 'probe',
    queues: probeEveryQueue,
    // Monitors poll it every minute or so; each call reads every store.
    throttle: { rateLimit: 10, burstLimit: 20 },
  },
  'health-check': {
    entry: 'functions/health-check.ts',
    description: 'Scheduled health check that publishes the Healthy metric.',
    tables: { tenants: 'probe', counters: 'probe' },
    bucket: 'probe',
    queues: probeEveryQueue,
  },
  'origin-authorizer': {
    entry: 'functions/origin-authorizer.ts',
    description: 'HTTP API authorizer: refuses a request whose x-origin-verify is not the origin secret before any route runs.',
    // As long as a function keeps the secret's values (ORIGIN_SECRET_CACHE_MS), so a rotation done
    // as docs/secrets.md says (put the value, wait five minutes, deploy CloudFront) is never refused.
    authorizer: { cacheSeconds: 300 },
    // Compares one header with two cached values: the smallest function there is.
    memoryMb: 128,
    timeoutSeconds: 5,
  },
  fallback: {
    entry: 'functions/fallback.ts',
    description: 'Unknown reports (404), non-GET report methods (405) and unknown paths (404).',
    routes: ['ANY /api/v1/reports/{proxy+}', '$default'],
    // Only ever answers 404 or 405: nobody has a reason to call it often.
    throttle: { rateLimit: 10, burstLimit: 20 },
  },
  ingest: {
    entry: 'functions/ingest.ts',
    description: 'POST /event: authenticate, validate, audit and hand off a batch of events.',
    routes: ['POST /event'],
    // ledger: the per-batch marks that make a retried batch count once against the cap; a mark is
    // deleted again when the count after it fails, so the retry counts. signing_secrets: the
    // app's secret, to verify the signature.
    tables: { tenants: 'read', signing_secrets: 'read', counters: 'readwrite', ledger: 'write_delete', fx_rates: 'read' },
    bucket: 'write',
    // enrichment: a batch whose installs carry Apple AdServices tokens goes there instead (docs/ios.md).
    queues: { aggregation: 'send', enrichment: 'send' },
  },
  'adservices-enrich': {
    entry: 'functions/adservices-enrich.ts',
    description:
      "Enrichment queue consumer: exchanges Apple AdServices tokens with Apple's attribution API, stores the answers beside the audit object, hands it on to aggregation.",
    // bucket: the audit object read, its answers object (<audit key>.adservices.json) written once
    // and read back by a redelivery, which then calls Apple no more.
    bucket: 'readwrite',
    queues: { enrichment: 'consume', aggregation: 'send' },
    // ADSERVICES_API_URL: Apple's attribution API. Locally the stub npm start runs (local/adservices-stub.ts).
    internet: { ADSERVICES_API_URL: 'https://api-adservices.apple.com/api/v1/' },
    // Each token at most 4 requests of 5 s and 3 waits of 5 s, side by side; under the queue's 180 s.
    timeoutSeconds: 120,
    memoryMb: 256,
  },
  'fx-fetch': {
    entry: 'functions/fx-fetch.ts',
    description: "Daily: fetches the day's reference exchange rates (the ECB's by default) and stores them as US dollars per unit.",
    tables: { fx_rates: 'write' },
    // FX_SOURCE_URL: where the rates come from. Locally none: the runtime never reaches the internet.
    internet: { FX_SOURCE_URL: 'https://www.ecb.europa.eu/stats/eurofxref/eurofxref-daily.xml' },
    timeoutSeconds: 30,
    memoryMb: 256,
  },
  'privacy-request': {
    entry: 'functions/privacy-request.ts',
    description: 'POST /privacy/delete: authenticate, store a receipt and queue the deletion.',
    routes: ['POST /privacy/delete'],
    // One request per deleted install, authenticated; rare.
    throttle: { rateLimit: 20, burstLimit: 40 },
    // privacy_requests: the receipt, deleted again when the request cannot be queued.
    // signing_secrets: the app's secret, to verify the signature.
    tables: { tenants: 'read', signing_secrets: 'read', privacy_requests: 'write_delete' },
    queues: { privacy: 'send' },
  },
  'sdk-skan-schema': {
    entry: 'functions/sdk-skan-schema.ts',
    description: "GET /sdk/v1/skan-schema: authenticate like the event API, answer the app's active conversion-value schema (ETag, 304).",
    routes: ['GET /sdk/v1/skan-schema'],
    // Devices fetch it at launch and keep it five minutes (Cache-Control), revalidating with an ETag.
    throttle: { rateLimit: 100, burstLimit: 200 },
    // tenants: the keys and the schema items (skan_schema#<app_id>); signing_secrets: the app's
    // secret, to verify the signature over the empty body.
    tables: { tenants: 'read', signing_secrets: 'read' },
  },
  'cors-preflight': {
    entry: 'functions/cors-preflight.ts',
    description: 'OPTIONS on any path: the CORS preflight of a browser calling the SDK routes from an origin an app lists (docs/sdk.md).',
    // One route for every path, so the preflights share one bucket (and the account's quota) instead of one per SDK route.
    routes: ['OPTIONS /{proxy+}'],
    // Browsers keep an answer two hours (Access-Control-Max-Age) per page origin and URL: far fewer than the calls they precede.
    throttle: { rateLimit: 100, burstLimit: 200 },
    // tenants: the web_origin#<origin> index items, read only.
    tables: { tenants: 'read' },
    // Reads one item and answers a few headers.
    memoryMb: 128,
    timeoutSeconds: 5,
  },
  'sdk-attribution': {
    entry: 'functions/sdk-attribution.ts',
    description:
      'POST and GET /sdk/v1/attribution: authenticate like the event API, answer an install where it came from and its deep link (docs/deep-links.md).',
    routes: ['POST /sdk/v1/attribution', 'GET /sdk/v1/attribution'],
    // One call per install at first launch, and a few reads after: the SKAN schema's share.
    throttle: { rateLimit: 100, burstLimit: 200 },
    // signing_secrets: the app's secret, to verify the signature; click_log and clicks: the click a referrer
    // names and the latest of an address (read only); installs: the first answer, one conditional
    // put under the install's partition, and the aggregator's head and decision, read.
    tables: { tenants: 'read', signing_secrets: 'read', clicks: 'read', click_log: 'read', installs: 'readwrite' },
  },
  'privacy-drain': {
    entry: 'functions/privacy-drain.ts',
    description: 'Nightly: deletes everything keyed to each requested install, 25 requests a batch, 1,000 rows per table per request.',
    // The only function that deletes installs, clicks and audit objects: the install's rows, the
    // clicks it matched, and the audit objects holding its lines (rewritten without them, or
    // deleted with every older version). postbacks: the install's postbacks and attempts, read by
    // the by_install index and deleted (no level reads and deletes without writing).
    // privacy_requests: the receipt's state, updated.
    // exports: the install's lines in stream objects and rows in export files, rewritten without
    // them or deleted; ledger: the lanes' watermark, so that it rewrites only final stream objects.
    tables: {
      installs: 'readwrite_delete',
      clicks: 'readwrite_delete',
      click_log: 'readwrite_delete',
      postbacks: 'readwrite_delete',
      privacy_requests: 'readwrite',
      ledger: 'read',
    },
    bucket: 'readwrite_delete',
    exports: 'readwrite_delete',
    // requeue: a request with rows left goes to the back of the queue for the next run.
    queues: { privacy: 'requeue' },
    // The queue's visibility timeout is 900 s: a request the drain holds does not come round again in the run.
    timeoutSeconds: 900,
    memoryMb: 1024,
  },
  aggregator: {
    entry: 'functions/aggregator.ts',
    description: 'Aggregation queue consumer: attributes installs and adds each accepted event, exactly once, to the report rows.',
    // click_log, clicks, ip_blocks, tenants: attribution reads; links: the link a deep_link_open names
    // (re-engagement, docs/deep-links.md); installs: claims and install records;
    // ledger: a mark per audit object and the lanes; aggregates: the report rows; counters: the
    // monthly count of companies without a cap.
    tables: {
      installs: 'readwrite',
      aggregates: 'readwrite',
      ledger: 'readwrite',
      counters: 'readwrite',
      clicks: 'read',
      click_log: 'read',
      links: 'read',
      ip_blocks: 'read',
      tenants: 'read',
      postbacks: 'readwrite',
    },
    bucket: 'read',
    // exports: the stream objects of each apply, written before its marks and read back to be
    // rewritten when the apply is replayed, or deleted when it included none of their objects
    // (docs/raw-data.md).
    exports: 'readwrite_delete',
    queues: { aggregation: 'consume', postbacks: 'send' },
    // Under the queue's 120 s visibility timeout; the aggregator's lane lease is this plus 15 s.
    timeoutSeconds: AGGREGATOR_TIMEOUT_SECONDS,
    memoryMb: 1024,
  },
  'lane-sweep': {
    entry: 'functions/lane-sweep.ts',
    description:
      'Every minute: replays and closes each aggregation lane whose open apply no live invocation holds, and counts the clicks logged since the last run.',
    // What a replay writes, as the aggregator's: ledger: the lanes and marks (a mark of the apply
    // missing is voided); aggregates: the report rows and day pages; counters: the monthly count of
    // companies without a cap. exports: the apply's stream objects narrowed to the objects it
    // included, deleted when it included none. The click-count lane (docs/adr/0008-click-counts-
    // from-the-click-log.md): tenants, the apps; click_log (and clicks, by_app_hour, until it is dropped), read only;
    // aggregates, the counter items, stamps and its state; ledger, its lease. No install or queue.
    tables: { ledger: 'readwrite', aggregates: 'readwrite', counters: 'readwrite', clicks: 'read', click_log: 'read', tenants: 'read' },
    exports: 'readwrite_delete',
    // As the aggregator's, so the lane lease it takes (the timeout plus 15 s) outlives it too.
    timeoutSeconds: AGGREGATOR_TIMEOUT_SECONDS,
    memoryMb: 512,
  },
  'report-attribution': {
    entry: 'functions/report-attribution.ts',
    description: "GET /api/v1/reports/attribution: the app's attribution rows of a window, a page at a time.",
    routes: ['GET /api/v1/reports/attribution'],
    // Server-to-server dashboards and exports, a page at a time.
    throttle: { rateLimit: 50, burstLimit: 100 },
    // The key look-up (tenants: written only for the key's last use, once an hour) and the prebuilt rows, read only.
    tables: { tenants: 'read_key_use', aggregates: 'read' },
  },
  'report-revenue': {
    entry: 'functions/report-revenue.ts',
    description: "GET /api/v1/reports/revenue: the app's revenue rows of a window, a page at a time.",
    routes: ['GET /api/v1/reports/revenue'],
    // Server-to-server dashboards and exports, a page at a time.
    throttle: { rateLimit: 50, burstLimit: 100 },
    // The key look-up (tenants: written only for the key's last use, once an hour) and the prebuilt rows, read only.
    tables: { tenants: 'read_key_use', aggregates: 'read' },
  },
  'report-cohorts': {
    entry: 'functions/report-cohorts.ts',
    description: "GET /api/v1/reports/cohorts: the app's cohorts rows of a window, a page at a time.",
    routes: ['GET /api/v1/reports/cohorts'],
    // Server-to-server dashboards and exports, a page at a time.
    throttle: { rateLimit: 50, burstLimit: 100 },
    // The key look-up (tenants: written only for the key's last use, once an hour) and the prebuilt rows, read only.
    tables: { tenants: 'read_key_use', aggregates: 'read' },
  },
  'report-events': {
    entry: 'functions/report-events.ts',
    description: "GET /api/v1/reports/events: the app's events rows of a window, a page at a time.",
    routes: ['GET /api/v1/reports/events'],
    // Server-to-server dashboards and exports, a page at a time.
    throttle: { rateLimit: 50, burstLimit: 100 },
    // The key look-up (tenants: written only for the key's last use, once an hour) and the prebuilt rows, read only.
    tables: { tenants: 'read_key_use', aggregates: 'read' },
  },
  'report-performance': {
    entry: 'functions/report-performance.ts',
    description: "GET /api/v1/reports/performance: the app's performance rows of a window, grouped and filtered, a page at a time.",
    routes: ['GET /api/v1/reports/performance'],
    // Server-to-server dashboards and exports, a page at a time, as the four reports.
    throttle: { rateLimit: 50, burstLimit: 100 },
    // The key look-up (and the app's time zone; tenants written only for the key's last use, once
    // an hour) and the performance rows, read only; click_log and clicks: the clicks the lane sweep
    // has not counted yet (ADR 0008), added to the rows of the last two hours.
    tables: { tenants: 'read_key_use', aggregates: 'read', clicks: 'read', click_log: 'read' },
  },
  'report-skan': {
    entry: 'functions/report-skan.ts',
    description:
      "GET /api/v1/reports/skan: the app's SKAN postbacks of a window by day, partner and postback dimensions, a page at a time.",
    routes: ['GET /api/v1/reports/skan'],
    // Server-to-server dashboards and exports, a page at a time, as the four reports.
    throttle: { rateLimit: 50, burstLimit: 100 },
    // tenants: the key look-up (and the app's time zone), the key's last use written once an hour;
    // aggregates: the day summaries and items read, a summary rebuilt from its items written back (conditionally).
    tables: { tenants: 'read_key_use', aggregates: 'readwrite' },
  },
  'performance-pages': {
    entry: 'functions/performance-pages.ts',
    description: "Every 5 minutes: builds the performance report's day pages of the days whose rows or cost changed.",
    // tenants: the apps; aggregates: the day's rows and cost read, its page and stamp written;
    // click_log and clicks: the clicks the lane sweep has not counted yet (ADR 0008), in the page.
    tables: { tenants: 'read', aggregates: 'readwrite', clicks: 'read', click_log: 'read' },
    timeoutSeconds: 300,
    memoryMb: 1024,
  },
  'stream-events': {
    entry: 'functions/stream-events.ts',
    description:
      "GET /api/v1/stream/events: the app's counted events in order, from the stream objects below the watermark, a page at a time.",
    routes: ['GET /api/v1/stream/events'],
    // Server-to-server consumers of the raw stream, a page at a time, like the reports.
    throttle: { rateLimit: 50, burstLimit: 100 },
    // tenants: the key look-up (and the key's last use, written once an hour); ledger: the lanes'
    // watermark; exports: the stream objects, read only.
    tables: { tenants: 'read_key_use', ledger: 'read' },
    exports: 'read',
  },
  'cost-upload': {
    entry: 'functions/cost-upload.ts',
    description:
      "POST /api/v1/cost: a server key's ad spend rows, converted to dollars and merged into the app's cost days (a row sent again replaces it).",
    routes: ['POST /api/v1/cost'],
    // Tenants' servers or a daily job, a few requests of up to 1,000 rows a day: the reports' budget is plenty.
    throttle: { rateLimit: 20, burstLimit: 40 },
    // tenants: the key look-up (and the key's last use, written once an hour); aggregates: the cost
    // days read and replaced, their partner sums and the days' perf_stamp written; fx_rates: the
    // rates of rows in other currencies.
    tables: { tenants: 'read_key_use', aggregates: 'readwrite', fx_rates: 'read' },
  },
  'ad-revenue-upload': {
    entry: 'functions/ad-revenue-upload.ts',
    description:
      "POST /api/v1/ad-revenue: a server key's ad impressions from a mediation platform, each taken as an ad_revenue event of its install (docs/ad-revenue.md).",
    routes: ['POST /api/v1/ad-revenue'],
    // A mediation platform's callbacks relayed by the tenant's server in batches of up to 1,000
    // impressions, or a day's export: 20,000 impressions a second is plenty, and the routes' bursts
    // must stay within API Gateway's account quota together (docs/route-limits.md).
    throttle: { rateLimit: 20, burstLimit: 40 },
    // What POST /event's takes, less the signing secrets: tenants, the key look-up (and the key's
    // last use, written once an hour) and the company's cap; counters and ledger: the cap's count
    // and marks; fx_rates: impressions in other currencies; the audit bucket and the aggregation queue.
    tables: { tenants: 'read_key_use', counters: 'readwrite', ledger: 'write_delete', fx_rates: 'read' },
    bucket: 'write',
    queues: { aggregation: 'send' },
  },
  'max-revenue-pull': {
    entry: 'functions/max-revenue-pull.ts',
    description:
      "Daily: pulls each app's AppLovin MAX user-level ad revenue report of yesterday and takes its rows as impressions of their installs (docs/ad-revenue.md).",
    // What POST /api/v1/ad-revenue takes (the same impressions, the same cap and hand-off), less the
    // key look-up: tenants, the apps and their companies, read; installs: whether a row's install
    // is counted (its head item), read; the report keys, by name, under their prefix alone.
    tables: { tenants: 'read', installs: 'read', counters: 'readwrite', ledger: 'write_delete', fx_rates: 'read' },
    bucket: 'write',
    queues: { aggregation: 'send' },
    secretPrefix: MAX_REPORT_KEY_SECRET_PREFIX,
    // MAX_REPORT_URL: MAX's API. Locally none, or a test's stand-in (local/max-report-stub.ts).
    internet: { MAX_REPORT_URL: 'https://r.applovin.com/max/userAdRevenueReport' },
    // A day's CSV of up to 32 MiB per app, read whole, and up to 100 batches of 1,000 impressions each.
    timeoutSeconds: 900,
    memoryMb: 1024,
  },
  export: {
    entry: 'functions/export.ts',
    description: 'Hourly: writes each changed hour of events, installs, clicks and SKAN postbacks as Parquet files in the export bucket.',
    // tenants: the apps; ledger: the watermark; click_log and clicks (by_app_hour): an app's clicks of an hour;
    // skan_postbacks and the audit bucket: the SKAN records; exports: stream objects read, export
    // files written and replaced (an hour left with no rows loses its file).
    tables: { tenants: 'read', ledger: 'read', clicks: 'read', click_log: 'read', skan_postbacks: 'read' },
    bucket: 'read',
    exports: 'readwrite_delete',
    timeoutSeconds: 900,
    memoryMb: 2048,
  },
  'link-redirect': {
    entry: 'functions/link-redirect.ts',
    description: 'GET /l/{link_id}: filter, rate-limit, record the click and redirect to the store.',
    routes: ['GET /l/{link_id}'],
    // Public ad clicks, the busiest route after POST /event: CloudFront calls the function URL, which
    // costs no API Gateway request (issue 41). Rate limited per IP block in the handler.
    functionUrl: true,
    // click_log: the click record (one item, no index; no grant on the old clicks table); tenants:
    // the app's time zone, for the click's local day; no aggregates: the lane sweep counts the
    // click from the click log (docs/adr/0008-click-counts-from-the-click-log.md).
    tables: { links: 'read', ip_blocks: 'readwrite', rate_limits: 'readwrite', click_log: 'write', tenants: 'read' },
  },
  'well-known': {
    entry: 'functions/well-known.ts',
    description:
      "GET /.well-known/apple-app-site-association and /.well-known/assetlinks.json: the link domain's apps, by the viewer's host.",
    routes: ['GET /.well-known/apple-app-site-association', 'GET /.well-known/assetlinks.json'],
    // Apple's CDN (which keeps the file and asks again within hours) and Android's verifier at each
    // app install or update: a few requests a minute per domain.
    throttle: { rateLimit: 20, burstLimit: 40 },
    // tenants: the domain's item (link_domain#<domain>), read only.
    tables: { tenants: 'read' },
  },
  'postback-sender': {
    entry: 'functions/postback-sender.ts',
    description:
      "Postback queue consumer: calls partners' postback URLs (checked against SSRF at each send), retries with backoff, logs every attempt.",
    tables: { postbacks: 'readwrite' },
    // requeue: a retry, or one hop of its wait, is a new delayed message (docs/postbacks.md, "Delivery").
    queues: { postbacks: 'requeue' },
    // Ten postbacks a batch side by side, each at most 5 s.
    timeoutSeconds: 30,
    memoryMb: 256,
  },
  'skan-postback': {
    entry: 'functions/skan-postback.ts',
    description:
      "POST /skan-postback and Apple's well-known report-attribution paths: verify SKAdNetwork and AdAttributionKit postbacks and file each once in the audit store.",
    // The well-known paths are where Apple sends the app developer's copy of each postback when
    // the app names the service in NSAdvertisingAttributionReportEndpoint (docs/skan-postbacks.md).
    // Apple posts them with a trailing slash, which API Gateway routes as the path without it.
    routes: ['POST /skan-postback', `POST ${SKADNETWORK_REPORT_PATH}`, `POST ${APPATTRIBUTION_REPORT_PATH}`],
    // Public. Apple's devices send a few postbacks per install, each at a random time a day or
    // more after it: 100/s is 8.6 million a day. Over it the device retries, as after any non-200.
    throttle: { rateLimit: 100, burstLimit: 200 },
    // The developer's copies, one per postback of the app's own installs: 10/s is 864,000 a day
    // on each path, and what the account's burst quota has left (docs/route-limits.md).
    routeThrottles: {
      [`POST ${SKADNETWORK_REPORT_PATH}`]: { rateLimit: 10, burstLimit: 20 },
      [`POST ${APPATTRIBUTION_REPORT_PATH}`]: { rateLimit: 10, burstLimit: 20 },
    },
    // skan_postbacks: the conditional claim on each transaction-id, read back when it is taken;
    // tenants: the app an App Store id names and its active SKAN schema; aggregates: the SKAN
    // report's item per counted postback and its day's counters (puts and ADDs only).
    tables: { skan_postbacks: 'readwrite', tenants: 'read', aggregates: 'write' },
    bucket: 'write',
  },
  'console-api': {
    entry: 'functions/console-api.ts',
    description:
      "The deployed console's API (docs/console.md): runs the admin command registry for a signed-in member, role and company checked on every command.",
    // No route on the service's API: its own HTTP API with a JWT authorizer on the console's user
    // pool calls it (lib/constructs/console-site.ts, ADR 0007). Its grants are what the console's
    // commands (functions/commands/registry.ts) touch: an admin's apps and keys write the tenants
    // table and read signing secrets (ADR 0007, "Grants"); `export run`, `sql` and `rebuild` are the CLI's, so no
    // exports or IP blocks grant. `health` (operators and admins) reads every queue's and DLQ's
    // depth, CloudWatch and the alarms (healthView), the apps (tenants) and postback attempts
    // (postbacks), and calls GET /health at PUBLIC_BASE_URL.
    queues: probeEveryQueue,
    healthView: true,
    tables: {
      tenants: 'readwrite_delete',
      signing_secrets: 'readwrite',
      links: 'readwrite',
      installs: 'read',
      clicks: 'read',
      click_log: 'read',
      aggregates: 'readwrite',
      ledger: 'read',
      postbacks: 'readwrite_delete',
      fx_rates: 'readwrite',
      skan_postbacks: 'read',
      changes: 'readwrite',
      // An admin's `privacy show`: an install's deletion receipts.
      privacy_requests: 'read',
    },
    bucket: 'read',
    consoleUsers: 'admin',
    timeoutSeconds: 29,
    memoryMb: 1024,
  },
} as const satisfies Record<string, FunctionSpec>;

export type FunctionName = keyof typeof functions;

/** Manifest names ("ip_blocks", "health-check") as construct ids and output keys ("IpBlocks", "HealthCheck"). */
export function pascalCase(name: string): string {
  return name.replace(/(^|[_-])([a-z0-9])/g, (_match, _separator, c: string) => c.toUpperCase());
}

/** CloudFormation output keys of the deployed stack; `admin --stack` reads physical names from them. */
export const outputKey = {
  table: (name: string) => `Table${pascalCase(name)}`,
  bucket: () => 'AuditBucketName',
  exportBucket: () => 'ExportBucketName',
  queue: (name: string) => `Queue${pascalCase(name)}Url`,
  baseUrl: () => 'BaseUrl',
  /** The SNS topic every alarm notifies: `admin health --stack` finds the stack's alarms by it. */
  alarmTopicArn: () => 'AlarmTopicArn',
  /** The warehouse (lib/constructs/warehouse.ts): Glue database, Athena workgroup and its results bucket. */
  warehouseDatabase: () => 'WarehouseDatabaseName',
  athenaWorkGroup: () => 'AthenaWorkGroupName',
  athenaResultsBucket: () => 'AthenaResultsBucketName',
  /** The deployed console (lib/constructs/console-site.ts): its URL and its user pool. */
  consoleUrl: () => 'ConsoleUrl',
  consoleUserPool: () => 'ConsoleUserPoolId',
  consoleBucket: () => 'ConsoleBucketName',
  consoleClientId: () => 'ConsoleClientId',
  consoleIssuer: () => 'ConsoleIssuer',
};
