import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';

/**
 * The one place AWS clients are built. The same code talks to AWS and to the local emulators:
 * the SDK reads the standard AWS_ENDPOINT_URL_DYNAMODB / _S3 / _SQS variables itself, and
 * S3 switches to path-style addressing whenever an S3 endpoint is overridden (s3rver needs it).
 * Clients are made on first use and then reused for the life of the execution environment.
 */

let dynamo: DynamoDBDocumentClient | undefined;
let s3: S3Client | undefined;
let sqs: SQSClient | undefined;

/** Retries are few so that a failing dependency turns into a fast, documented 503. */
const maxAttempts = 3;

export function dynamoClient(): DynamoDBDocumentClient {
  dynamo ??= DynamoDBDocumentClient.from(new DynamoDBClient({ maxAttempts }), {
    marshallOptions: { removeUndefinedValues: true },
  });
  return dynamo;
}

export function s3Client(): S3Client {
  s3 ??= new S3Client({ maxAttempts, forcePathStyle: Boolean(process.env.AWS_ENDPOINT_URL_S3) });
  return s3;
}

export function sqsClient(): SQSClient {
  sqs ??= new SQSClient({ maxAttempts });
  return sqs;
}
