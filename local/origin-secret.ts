import { randomBytes } from 'node:crypto';
import type { SecretsManagerEmulator } from './secrets-manager-emulator';

/**
 * The local run's CloudFront origin secret. The runtime plays CloudFront (local/http-server.ts
 * adds the header) and Secrets Manager (local/secrets-manager-emulator.ts, from which the routed
 * handlers read it, as in AWS); a new value is made at every start.
 */
export const LOCAL_ORIGIN_SECRET_NAME = 'origin-verify';

/**
 * The variable that holds the value in the local run's own process: the operator's side, for the
 * tests and tools that call a handler directly and must send the header CloudFront would. No
 * function sees it (local/function-context.ts): functions get the secret's ARN.
 */
export const LOCAL_ORIGIN_SECRET_VARIABLE = 'ORIGIN_VERIFY_SECRET';

/** Makes a new origin secret in the local Secrets Manager; returns its value and ARN. */
export function newLocalOriginSecret(secretsManager: SecretsManagerEmulator): { value: string; arn: string } {
  const value = randomBytes(16).toString('hex');
  const arn = secretsManager.put(LOCAL_ORIGIN_SECRET_NAME, value);
  process.env[LOCAL_ORIGIN_SECRET_VARIABLE] = value;
  return { value, arn };
}
