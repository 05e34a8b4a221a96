/**
 * What the handlers take from the manifest at run time: the variables that name resources, the
 * origin header, the health probe key, and the few settings the stack and the code share. Plain
 * values, no description or purpose. Handlers import these from here and never lib/manifest.ts:
 * esbuild keeps the manifest's tables whole in any bundle that imports it (their key specs are
 * calls), so every purpose and description would be in every function, and a change to the
 * manifest's text would change every bundle and redeploy every function.
 * test/stack/bundled-functions.test.ts checks that no bundle holds any of the manifest's text.
 * lib/manifest.ts builds from these and re-exports them, so each is written once.
 */

/** Environment variable through which a handler learns a resource's physical name or URL. */
export const envName = {
  table: (name: string) => `TABLE_${name.toUpperCase()}`,
  bucket: () => 'AUDIT_BUCKET',
  exportBucket: () => 'EXPORT_BUCKET',
  queue: (name: string) => `QUEUE_${name.toUpperCase()}_URL`,
  /** A queue's dead-letter queue (the health view's grant, FunctionSpec.healthView). */
  deadLetterQueue: (name: string) => `DEAD_LETTER_QUEUE_${name.toUpperCase()}_URL`,
  /** The SNS topic every alarm notifies (FunctionSpec.healthView): the health view finds the stack's alarms by it. */
  alarmTopicArn: () => 'ALARM_TOPIC_ARN',
  /**
   * The ARN of the secret CloudFront adds as x-origin-verify; routed handlers read its value from
   * Secrets Manager (functions/adapters/origin-secret.ts) and trust viewer headers only with it.
   */
  originVerifySecretArn: () => 'ORIGIN_VERIFY_SECRET_ARN',
};

/** The origin header CloudFront (or the local edge) sets to that secret on every request it forwards. */
export const originVerifyHeader = 'x-origin-verify';

/**
 * The viewer's Host as the edge passes it on (lib/constructs/edge.ts: a CloudFront Function on the
 * `/.well-known/*` behaviour, overwriting any value a client sent; local/http-server.ts locally).
 * CloudFront does not forward Host itself, which API Gateway would refuse; the well-known files are
 * answered by it (docs/deep-links.md).
 */
export const viewerHostHeader = 'x-viewer-host';

/** The CloudFront path pattern of the behaviour that passes the viewer's Host on. */
export const WELL_KNOWN_PATHS = '/.well-known/*';

/**
 * Where Apple posts the app developer's copy of SKAdNetwork and AdAttributionKit postbacks on the
 * domain of the app's NSAdvertisingAttributionReportEndpoint (Apple adds a trailing slash, which
 * API Gateway routes as the path without it); handled as POST /skan-postback.
 */
export const SKADNETWORK_REPORT_PATH = '/.well-known/skadnetwork/report-attribution';
export const APPATTRIBUTION_REPORT_PATH = '/.well-known/appattribution/report-attribution';
/** The CloudFront path patterns that take them: more specific than WELL_KNOWN_PATHS, so they come first. */
export const REPORT_ATTRIBUTION_PATHS = ['/.well-known/skadnetwork/*', '/.well-known/appattribution/*'] as const;

/** The key the health probes read, in every table they probe; no item has it. */
export const HEALTH_PROBE_KEY = 'health#probe';

/**
 * SKAN postbacks whose signature did not verify: POST /skan-postback is public, so how many
 * arrive is the sender's choice. They are kept small (functions/domain/skan/postback-record.ts)
 * and under their own prefix, which a lifecycle rule empties after this many days; their
 * skan_postbacks items expire at the same time.
 */
export const INVALID_SKAN_POSTBACKS = { prefix: 'audit/skan/invalid/', expireAfterDays: 30 } as const;

/** The export bucket's stream objects: read within minutes by the stream endpoint and the export; a month lets a reader catch up. */
export const STREAM_OBJECTS = { prefix: 'stream/', expireAfterDays: 30 } as const;

/**
 * Each queue's age alarm, in seconds of its oldest message (lib/manifest.ts `ageAlarm` takes its
 * threshold from here), and null for a queue without one: the health view shows them beside the
 * ages (functions/adapters/health-sources.ts), in a bundle that must not hold the manifest's text.
 */
export const QUEUE_AGE_ALARM_SECONDS = { aggregation: 15 * 60, enrichment: 15 * 60, privacy: 36 * 60 * 60, postbacks: null } as const;

/** The aggregator's timeout: under the aggregation queue's visibility timeout; its lane lease is this plus 15 s. */
export const AGGREGATOR_TIMEOUT_SECONDS = 60;

/**
 * The names of the Secrets Manager secrets that hold AppLovin MAX report keys start with this
 * (docs/ad-revenue.md, "The daily MAX pull"): max-revenue-pull may read those secrets and no other.
 */
export const MAX_REPORT_KEY_SECRET_PREFIX = 'attribution/max-report-key/';
