import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import type { Context, SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { logger, metrics } from './observability';

export type SqsBatchHandler = (event: SQSEvent, context: Context) => Promise<SQSBatchResponse>;

/**
 * The SQS edge, beside httpHandler: the same logger and metrics middleware around a handler that
 * answers with the messages to retry (the event source mapping has ReportBatchItemFailures, so
 * only those come back, and after maxReceiveCount receives SQS moves them to the DLQ). A handler
 * that throws has the whole batch retried, which exactly-once consumers can afford.
 */
export function sqsHandler(handler: SqsBatchHandler) {
  return middy<SQSEvent, SQSBatchResponse>(handler)
    .use(injectLambdaContext(logger, { resetKeys: true }))
    .use(logMetrics(metrics));
}
