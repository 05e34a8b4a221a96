import { SQSClient } from '@aws-sdk/client-sqs';
import { maxAttempts, reusable } from './reusable';

/** The SQS client (see reusable.ts for reuse and endpoints). */
export const sqsClient = reusable('AWS_ENDPOINT_URL_SQS', () => new SQSClient({ maxAttempts }));
