import { CloudWatchClient } from '@aws-sdk/client-cloudwatch';
import { maxAttempts } from './reusable';

/**
 * The CloudWatch client, for the health view's reads in AWS (functions/adapters/health-sources.ts).
 * Not one of reusable.ts's: no local emulator plays CloudWatch (the local runtime's health view
 * reads the runtime's own metrics), so there is no endpoint to follow and no local IAM check.
 */
let client: CloudWatchClient | undefined;

export const cloudWatchClient = (): CloudWatchClient => {
  client ??= new CloudWatchClient({ maxAttempts });
  return client;
};
