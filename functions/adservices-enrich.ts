import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { AdServicesAnswerStore } from './adapters/adservices-answers';
import { adServicesApi } from './adapters/adservices-api';
import { AuditReader } from './adapters/audit-reader';
import { MessageQueue } from './adapters/message-queue';
import type { AdServicesAnswer } from './domain/adservices/answers';
import { type EnrichPorts, enrich } from './domain/adservices/enrich';
import { APPLE_RETRIES, exchangeToken, sleep } from './domain/adservices/exchange';
import { auditKeyOf, PoisonMessageError, parseMessage, poisonIfUnreadable } from './domain/aggregation/message';
import type { AggregationMessage } from './domain/audit/types';
import { resourceName } from './shared/config';
import { errorFields, logger, metrics } from './shared/observability';
import { sqsHandler } from './shared/sqs';

/**
 * Apple's attribution API: the stack sets https://api-adservices.apple.com/api/v1/ (lib/manifest.ts).
 * Locally it is '' unless the run gives its stub (local/adservices-stub.ts, which `npm start`
 * runs): with none, every token is decided `unavailable` without a request.
 */
const apiUrl = process.env.ADSERVICES_API_URL ?? '';
const api = adServicesApi(apiUrl);
const audit = new AuditReader(resourceName.bucket());

export const ports: EnrichPorts = {
  lines: (auditKey) => audit.lines(auditKey).catch(poisonIfUnreadable),
  answers: new AdServicesAnswerStore(resourceName.bucket()),
  exchange: (token): Promise<AdServicesAnswer> =>
    apiUrl === '' ? Promise.resolve({ outcome: 'unavailable' }) : exchangeToken(api, token, { ...APPLE_RETRIES, sleep }),
  aggregation: new MessageQueue<AggregationMessage>(resourceName.queueUrl('aggregation')),
};

/**
 * The enrichment queue's consumer (functions/domain/adservices/enrich.ts has the rules): each
 * message's tokens exchanged with Apple, the answers stored beside its audit object, the message
 * sent on to aggregation. Messages go side by side; one that fails comes back (a batch item
 * failure), and poison reaches the DLQ after maxReceiveCount. Log lines name the audit key and
 * counts only: never a token, an answer or an Apple id.
 */
export async function adservicesEnrich(event: SQSEvent): Promise<SQSBatchResponse> {
  const done = await Promise.all(event.Records.map((record) => enrichOne(record)));
  return { batchItemFailures: event.Records.filter((_, i) => !done[i]).map((record) => ({ itemIdentifier: record.messageId })) };
}

async function enrichOne(record: SQSRecord): Promise<boolean> {
  try {
    const enriched = await enrich(ports, parseMessage(record.body));
    metrics.addMetric('AdServicesTokensExchanged', MetricUnit.Count, enriched.exchanged);
    for (const [outcome, count] of Object.entries(enriched.outcomes)) {
      if (count === 0 || enriched.exchanged === 0) continue;
      const single = metrics.singleMetric();
      single.addDimension('outcome', outcome);
      single.addMetric('AdServicesAnswers', MetricUnit.Count, count);
    }
    return true;
  } catch (error) {
    const poison = error instanceof PoisonMessageError;
    metrics.addMetric(poison ? 'PoisonMessages' : 'EnrichmentFailed', MetricUnit.Count, 1);
    logger.error(poison ? 'poison message: it goes to the DLQ after maxReceiveCount' : 'enrichment failed; the message is retried', {
      audit_key: auditKeyOf(record.body),
      message_id: record.messageId,
      ...(poison ? { reason: error.reason } : { error: errorFields(error) }),
    });
    return false;
  }
}

export const handler = sqsHandler(adservicesEnrich);
