import { S3Client } from '@aws-sdk/client-s3';
import { maxAttempts, reusable } from './reusable';

/** The S3 client (see reusable.ts); path-style whenever the endpoint is overridden, as s3rver needs. */
export const s3Client = reusable(
  'AWS_ENDPOINT_URL_S3',
  () => new S3Client({ maxAttempts, forcePathStyle: Boolean(process.env.AWS_ENDPOINT_URL_S3) }),
);
