import { envName, originVerifyHeader } from '../../lib/manifest';

/** The origin secret unit tests give the handlers (set by test/support/env.ts; the local runtime sets its own). */
export const TEST_ORIGIN_SECRET = 'origin-secret-for-tests';

/**
 * The header CloudFront adds to every request, with the secret the handlers in this process were
 * given, for tests that call a handler directly. Read when called: a local stack started by the
 * test replaces the secret with its own.
 */
export function fromCloudFront(): Record<string, string> {
  return { [originVerifyHeader]: process.env[envName.originVerifySecret()] ?? '' };
}
