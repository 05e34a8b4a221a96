import { MetricUnit } from '@aws-lambda-powertools/metrics';
import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { delayMessage, MessageQueue } from './adapters/message-queue';
import { resolveHost, sendPostback } from './adapters/postback-http';
import { PostbackRecords } from './adapters/postback-store';
import {
  type DeliveryOptions,
  type DeliveryPorts,
  type DeliveryResult,
  deliverPostback,
  parsePostbackMessage,
  RequeueFailed,
  retryDelaysFromEnv,
} from './domain/partner-postbacks/deliver';
import { policyFromEnv } from './domain/partner-postbacks/destination';
import type { PostbackMessage } from './domain/partner-postbacks/trigger';
import { resourceName } from './shared/config';
import { errorFields, logger, metrics } from './shared/observability';
import { sqsHandler } from './shared/sqs';

/** What the sender works with; the handler below has the real ones, tests their own clock. */
export interface SenderDependencies {
  readonly ports: DeliveryPorts;
  readonly options: DeliveryOptions;
  /** Makes a dead postback's message visible at once, so SQS moves it to the DLQ on its next receive. */
  readonly release: (receiptHandle: string) => Promise<void>;
}

/**
 * The postback queue's consumer (functions/domain/partner-postbacks/deliver.ts has the rules). Each
 * message is one attempt, or one hop of a retry's wait; the batch's postbacks go out side by side.
 * A retry or a hop is a new, delayed message, so the received one is acknowledged; a message whose
 * next one could not be sent is a batch item failure and comes back. The last failed attempt
 * makes its message visible at once, and SQS moves it to the DLQ on its next receive.
 */
export function postbackSender(dependencies: SenderDependencies): (event: SQSEvent) => Promise<SQSBatchResponse> {
  return async (event) => {
    const results = await Promise.all(event.Records.map((record) => attempt(dependencies, record)));
    return { batchItemFailures: event.Records.filter((_, i) => !results[i]).map((record) => ({ itemIdentifier: record.messageId })) };
  };
}

/** True when the message is finished with. */
async function attempt({ ports, options, release }: SenderDependencies, record: SQSRecord): Promise<boolean> {
  let result: DeliveryResult;
  try {
    result = await deliverPostback(ports, parsePostbackMessage(record.body), options);
  } catch (error) {
    if (error instanceof RequeueFailed) {
      metrics.addMetric('PostbackRequeueFailures', MetricUnit.Count, 1);
      logger.error("postback's next message could not be sent; its message comes back after the visibility timeout", {
        message_id: record.messageId,
        reason: error.reason,
        error: errorFields(error.cause),
      });
      return false;
    }
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
    case 'requeued': {
      const metric = { retry: 'PostbacksRetried', busy: 'PostbacksBusy', waiting: 'PostbackHops' } as const;
      metrics.addMetric(metric[result.reason], MetricUnit.Count, 1);
      return true;
    }
    case 'dead':
      metrics.addMetric('PostbacksDead', MetricUnit.Count, 1);
      logger.error('postback failed its last attempt; its message goes to the DLQ', { message_id: record.messageId });
      try {
        await release(record.receiptHandle);
      } catch (error) {
        // Not lost: the message still fails, and reaches the DLQ after the visibility timeouts.
        metrics.addMetric('PostbackReleaseFailures', MetricUnit.Count, 1);
        logger.error("dead postback's message could not be made visible; it reaches the DLQ later", {
          message_id: record.messageId,
          error: errorFields(error),
        });
      }
      return false;
  }
}

// Read once at cold start: a bad value fails loudly here, not on the first postback.
const queueUrl = resourceName.queueUrl('postbacks');
export const handler = sqsHandler(
  postbackSender({
    ports: {
      records: new PostbackRecords(resourceName.table('postbacks')),
      queue: new MessageQueue<PostbackMessage>(queueUrl),
      resolve: resolveHost,
      send: sendPostback,
    },
    options: {
      policy: policyFromEnv(),
      retryDelaysSeconds: retryDelaysFromEnv(process.env.POSTBACK_RETRY_DELAYS_SECONDS),
      nowMs: Date.now,
    },
    release: (receiptHandle) => delayMessage(queueUrl, receiptHandle, 0),
  }),
);
