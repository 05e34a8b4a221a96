import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { maxAttempts, reusable } from './reusable';

/** The DynamoDB document client (see reusable.ts for reuse and endpoints). */
export const dynamoClient = reusable('AWS_ENDPOINT_URL_DYNAMODB', () =>
  DynamoDBDocumentClient.from(new DynamoDBClient({ maxAttempts }), { marshallOptions: { removeUndefinedValues: true } }),
);
