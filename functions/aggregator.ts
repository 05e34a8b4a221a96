import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { AdServicesAnswerStore } from './adapters/adservices-answers';
import { attributionLookups } from './adapters/attribution-lookups';
import { AuditReader } from './adapters/audit-reader';
import { ClickStore } from './adapters/click-store';
import { ConsentStore } from './adapters/consent-store';
import { FirstLaunchAnswers } from './adapters/first-launch-store';
import { DynamoInstallStore } from './adapters/install-store';
import { IpBlockStore } from './adapters/ip-block-store';
import { LinkStore } from './adapters/link-store';
import { delayMessage } from './adapters/message-queue';
import { PostbackConfigs, PostbackRecords } from './adapters/postback-store';
import { TenantStore } from './adapters/tenant-store';
import { withAnswers } from './domain/adservices/token';
import {
  type AggregationPorts,
  type AppSwitches,
  aggregateDeliveries,
  type DeliveryOutcome,
  isRetried,
} from './domain/aggregation/aggregate';
import { type EventClaim, installPk, SK } from './domain/aggregation/install-state';
import { LanePicker } from './domain/aggregation/lanes';
import { LANES } from './domain/aggregation/lease';
import { poisonIfUnreadable } from './domain/aggregation/message';
import { type LinkFacts, type ReengagementLookups, resolveOpen } from './domain/aggregation/reengagement';
import { installDecision } from './domain/attribution/first-launch';
import { AuditObjectError } from './domain/audit/decode';
import type { AggregationMessage, AuditLine } from './domain/audit/types';
import type { PostbackConfig } from './domain/partner-postbacks/config';
import { postbacksOf, type TriggerPorts } from './domain/partner-postbacks/trigger';
import { appTimeZone } from './domain/tenants/tenant';
import { clickTables } from './shared/click-tables';
import { resourceName } from './shared/config';
import { LANE_LEASE_MS, lanePorts } from './shared/lane-ports';
import { errorFields, logger, metrics } from './shared/observability';
import { sqsHandler } from './shared/sqs';
import { TtlCache } from './shared/ttl-cache';

const installs = new DynamoInstallStore(resourceName.table('installs'));
const consentStore = new ConsentStore(resourceName.table('installs'));
const clicks = new ClickStore(clickTables());
const ipBlocks = new IpBlockStore(resourceName.table('ip_blocks'));
const links = new LinkStore(resourceName.table('links'));
const tenants = new TenantStore(resourceName.table('tenants'));
const audit = new AuditReader(resourceName.bucket());
const adServicesAnswers = new AdServicesAnswerStore(resourceName.bucket());
/**
 * An app's probabilistic switch, its basis, its MAX pull and its time zone change rarely; five minutes of staleness is harmless
 * (a zone change applies to data aggregated after it, docs/reports.md).
 */
const apps = new TtlCache<AppSwitches | undefined>(5 * 60_000, 10_000);
/** A link's app, partner and campaign, for deep_link_opens: a change applies within a minute, to opens counted after it. */
const linkFacts = new TtlCache<LinkFacts | undefined>(60_000, 10_000);
const reengagementLookups: ReengagementLookups = {
  link: (linkId) => linkFacts.getOrLoad(linkId, () => links.byId(linkId)),
  // As attribution reads a click: an expired one the table still holds counts.
  click: (appId, clickId) => clicks.byId(appId, clickId, 0),
};

const lookups = attributionLookups({ clicks, ipBlocks, installs });
const firstLaunchAnswers = new FirstLaunchAnswers(installs);

const postbackConfigs = new PostbackConfigs(resourceName.table('postbacks'));
const postbackRecords = new PostbackRecords(resourceName.table('postbacks'), resourceName.queueUrl('postbacks'));
/** A configuration set with `admin postback set` applies within a minute. */
const configs = new TtlCache<readonly PostbackConfig[]>(60_000, 10_000);
const trigger: TriggerPorts = {
  configs: (appId) => configs.getOrLoad(appId, () => postbackConfigs.list(appId)),
  installOf: async (appId, installUuid, memberId) => {
    const claim = await installs.get<EventClaim>(installPk(appId, installUuid), SK.event(memberId));
    return claim?.decision && { decision: claim.decision, platform: claim.platform };
  },
  consentsOf: (appId, installUuids) => consentStore.latestOf(appId, installUuids),
};

export const ports: AggregationPorts = {
  ...lanePorts(),
  installs,
  // The first-launch answer is evidence the decision reads, kept in the install's partition.
  decide: (facts, known) => installDecision(facts, lookups, firstLaunchAnswers, known),
  // Read when a deep_link_open's object writes its claim log item, and kept there (reengagement.ts).
  reengagementLink: ({ appId, open }) => resolveOpen(reengagementLookups, appId, open),
  // A missing or unreadable audit object never becomes readable: a poison message, for the DLQ.
  readAudit: (message) => readAudit(message).catch(poisonIfUnreadable),
  app: (appId) =>
    apps.getOrLoad(appId, async () => {
      const app = await tenants.appById(appId);
      return (
        app && {
          probabilistic: app.probabilistic,
          ...(app.probabilistic_basis === undefined ? {} : { probabilistic_basis: app.probabilistic_basis }),
          ...(app.max_pull?.on ? { max_pull: true } : {}),
          time_zone: appTimeZone(app),
          ...(app.reengagement_window_days === undefined ? {} : { reengagement_window_days: app.reengagement_window_days }),
        }
      );
    }),
  consents: async (appId, latest) => {
    await Promise.all([...latest].map(([installUuid, record]) => consentStore.keep(appId, installUuid, record)));
  },
  postbacks: async (appId, intents) => {
    const records = await postbacksOf(trigger, appId, intents, Date.now());
    if (records.length > 0) await postbackRecords.enqueue(records, Date.now());
  },
};

/**
 * An object's lines; for one adservices-enrich handed on (`enriched`), with Apple's answers joined
 * to its install lines (docs/ios.md, section 4). The answers are stored before the message is
 * sent and never change, so every delivery decides the same; missing, the object is poison.
 */
async function readAudit(message: AggregationMessage): Promise<AuditLine[]> {
  const [lines, answers] = await Promise.all([
    audit.lines(message.audit_key),
    message.enriched ? adServicesAnswers.get(message.audit_key) : undefined,
  ]);
  if (!message.enriched) return lines;
  if (answers === undefined) throw new AuditObjectError('missing_object', `${message.audit_key} (its AdServices answers)`);
  return withAnswers(lines, answers);
}

/** Each execution environment starts at a lane of its own and keeps it while it can (lanes.ts). */
const lanes = new LanePicker(Math.floor(Math.random() * LANES), Math.random);
const queueUrl = resourceName.queueUrl('aggregation');

/**
 * The aggregation queue's consumer (functions/domain/aggregation/aggregate.ts has the rules).
 * Messages that must come back (a busy lease, a store failure, a poison message) are reported
 * as batch item failures, a busy one made visible again when the lease it met ends; a poison message reaches the DLQ after maxReceiveCount and is logged
 * with its audit key every time, without holding back the rest of the batch.
 */
export async function aggregator(event: SQSEvent): Promise<SQSBatchResponse> {
  const deliveries = event.Records.map((record) => ({ id: record.messageId, body: record.body }));
  const outcomes = await aggregateDeliveries(ports, deliveries, { nowMs: Date.now, leaseMs: LANE_LEASE_MS, lanes });
  for (const outcome of outcomes) report(outcome);
  // A busy object's message comes back when the lease ends (a dead delivery's lease runs out well
  // before the visibility timeout). If the delay cannot be set, it comes back after the timeout.
  await Promise.all(
    outcomes.map((outcome, i) => {
      const receiptHandle = event.Records[i]?.receiptHandle;
      return outcome.kind === 'busy' && receiptHandle !== undefined
        ? delayMessage(queueUrl, receiptHandle, outcome.retryInSeconds).catch(() => undefined)
        : undefined;
    }),
  );
  return { batchItemFailures: outcomes.filter(isRetried).map((outcome) => ({ itemIdentifier: outcome.id })) };
}

function report(outcome: DeliveryOutcome): void {
  switch (outcome.kind) {
    case 'counted':
      metrics.addMetric('AuditObjectsAggregated', MetricUnit.Count, 1);
      metrics.addMetric('EventsAggregated', MetricUnit.Count, outcome.events);
      // One metric per type, with the type as its dimension (a single metric of its own, so the
      // dimension does not land on the invocation's other metrics).
      for (const [type, installs] of Object.entries(outcome.installs)) {
        const single = metrics.singleMetric();
        single.addDimension('attribution_type', type);
        single.addMetric('InstallsAttributed', MetricUnit.Count, installs);
      }
      return;
    case 'already_counted':
      metrics.addMetric('DuplicateDeliveries', MetricUnit.Count, 1);
      logger.info('audit object already aggregated', { audit_key: outcome.auditKey });
      return;
    case 'busy':
      metrics.addMetric('DeliveriesDeferred', MetricUnit.Count, 1);
      logger.info('audit object being aggregated by another delivery; retried when its lease ends', {
        audit_key: outcome.auditKey,
        retry_in_seconds: outcome.retryInSeconds,
      });
      return;
    case 'poison':
      metrics.addMetric('PoisonMessages', MetricUnit.Count, 1);
      logger.error('poison message: it goes to the DLQ after maxReceiveCount', {
        reason: outcome.reason,
        audit_key: outcome.auditKey,
        message_id: outcome.id,
        error: errorFields(outcome.error),
      });
      return;
    case 'failed':
      metrics.addMetric('AggregationFailed', MetricUnit.Count, 1);
      logger.error('aggregation failed; the message is retried', {
        step: outcome.step,
        audit_key: outcome.auditKey,
        error: errorFields(outcome.error),
      });
  }
}

export const handler = sqsHandler(aggregator);
