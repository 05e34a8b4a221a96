import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';

/**
 * The one place AWS clients are built. The same code talks to AWS and to the local emulators:
 * the SDK reads the standard AWS_ENDPOINT_URL_DYNAMODB / _S3 / _SQS variables itself, and
 * S3 switches to path-style addressing whenever an S3 endpoint is overridden (s3rver needs it).
 * Clients are made on first use and reused; one is rebuilt only if its endpoint variable changed
 * (a local runtime restarted in the same process, as tests do). In Lambda that never happens.
 * Adapters call these functions at each use rather than keeping a client of their own, so they
 * always talk to the current endpoint; unit tests mock them with aws-sdk-client-mock.
 */

/** Retries are few so that a failing dependency turns into a fast, documented 503. */
const maxAttempts = 3;

function reusable<T extends { destroy(): void }>(endpointVariable: string, build: () => T): () => T {
  let client: T | undefined;
  let builtFor: string | undefined;
  return () => {
    const endpoint = process.env[endpointVariable];
    if (!client || builtFor !== endpoint) {
      client?.destroy();
      client = build();
      builtFor = endpoint;
    }
    return client;
  };
}

export const dynamoClient = reusable('AWS_ENDPOINT_URL_DYNAMODB', () =>
  DynamoDBDocumentClient.from(new DynamoDBClient({ maxAttempts }), { marshallOptions: { removeUndefinedValues: true } }),
);

export const s3Client = reusable(
  'AWS_ENDPOINT_URL_S3',
  () => new S3Client({ maxAttempts, forcePathStyle: Boolean(process.env.AWS_ENDPOINT_URL_S3) }),
);

export const sqsClient = reusable('AWS_ENDPOINT_URL_SQS', () => new SQSClient({ maxAttempts }));
