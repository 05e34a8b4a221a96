/**
 * Every client at once, for tests, the bench and tools. Function code imports the one module
 * it needs (./dynamo, ./s3, ./sqs, ./secrets-manager), never this one: importing it loads every SDK client.
 */
export { dynamoClient } from './dynamo';
export { s3Client } from './s3';
export { secretsManagerClient } from './secrets-manager';
export { sqsClient } from './sqs';
