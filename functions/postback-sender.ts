import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { delayMessage } from './adapters/message-queue';
import { resolveHost, sendPostback } from './adapters/postback-http';
import { PostbackRecords } from './adapters/postback-store';
import {
  type DeliveryPorts,
  type DeliveryResult,
  deliverPostback,
  parsePostbackMessage,
  retryDelaysFromEnv,
} from './domain/partner-postbacks/deliver';
import { policyFromEnv } from './domain/partner-postbacks/destination';
import { resourceName } from './shared/config';
import { errorFields, logger, metrics } from './shared/observability';
import { sqsHandler } from './shared/sqs';

const queueUrl = resourceName.queueUrl('postbacks');
const ports: DeliveryPorts = { records: new PostbackRecords(resourceName.table('postbacks')), resolve: resolveHost, send: sendPostback };
// Read once at cold start: a bad value fails loudly here, not on the first postback.
const options = {
  policy: policyFromEnv(),
  retryDelaysSeconds: retryDelaysFromEnv(process.env.POSTBACK_RETRY_DELAYS_SECONDS),
  nowMs: Date.now,
};

/**
 * The postback queue's consumer (functions/domain/partner-postbacks/deliver.ts has the rules). Each
 * message is one attempt; the batch's postbacks go out side by side. A retry leaves its message
 * invisible for its delay and reports it as a batch item failure; the last failed attempt makes
 * it visible at once, so SQS moves it to the DLQ on its next receive.
 */
export async function postbackSender(event: SQSEvent): Promise<SQSBatchResponse> {
  const results = await Promise.all(event.Records.map((record) => attempt(record)));
  return { batchItemFailures: event.Records.filter((_, i) => !results[i]).map((record) => ({ itemIdentifier: record.messageId })) };
}

/** True when the message is finished with. */
async function attempt(record: SQSRecord): Promise<boolean> {
  let result: DeliveryResult;
  try {
    const message = parsePostbackMessage(record.body);
    result = await deliverPostback(ports, message, Number(record.attributes.ApproximateReceiveCount) || 1, options);
  } catch (error) {
    // A store failure or an unreadable message: it comes back after the visibility timeout.
    metrics.addMetric('PostbackErrors', MetricUnit.Count, 1);
    logger.error('postback attempt failed before it could be recorded; retried', {
      message_id: record.messageId,
      error: errorFields(error),
    });
    return false;
  }
  switch (result.kind) {
    case 'done':
      if (result.outcome) {
        // One metric with the outcome as its dimension (delivered, failed, refused, duplicate...).
        const single = metrics.singleMetric();
        single.addDimension('outcome', result.outcome);
        single.addMetric('PostbacksSettled', MetricUnit.Count, 1);
      }
      return true;
    case 'retry':
      metrics.addMetric(result.outcome === 'busy' ? 'PostbacksBusy' : 'PostbacksRetried', MetricUnit.Count, 1);
      // If the delay cannot be set, the message still comes back, after the queue's visibility timeout.
      await delayMessage(queueUrl, record.receiptHandle, result.delaySeconds).catch(() => undefined);
      return false;
    case 'dead':
      metrics.addMetric('PostbacksDead', MetricUnit.Count, 1);
      logger.error('postback failed its last attempt; its message goes to the DLQ', { message_id: record.messageId });
      await delayMessage(queueUrl, record.receiptHandle, 0).catch(() => undefined);
      return false;
  }
}

export const handler = sqsHandler(postbackSender);
