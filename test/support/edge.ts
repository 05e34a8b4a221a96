import { originVerifyHeader } from '../../lib/manifest';
import { LOCAL_ORIGIN_SECRET_VARIABLE } from '../../local/origin-secret';

/** The origin secret unit tests give the handlers (test/support/origin-secret.ts serves it; the local runtime makes its own). */
export const TEST_ORIGIN_SECRET = 'origin-secret-for-tests';
/** Its ARN, which test/support/env.ts gives the handlers as the stack would. */
export const TEST_ORIGIN_SECRET_ARN = 'arn:aws:secretsmanager:us-east-1:000000000000:secret:origin-verify-a1b2c3';

/**
 * The header CloudFront adds to every request, with the secret the handlers in this process are
 * served, for tests that call a handler directly. Read when called: a local stack started by the
 * test replaces the secret with its own.
 */
export function fromCloudFront(): Record<string, string> {
  return { [originVerifyHeader]: process.env[LOCAL_ORIGIN_SECRET_VARIABLE] ?? '' };
}
