import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { secretsManagerClient } from '../shared/clients/secrets-manager';

/**
 * The CloudFront origin secret, read from Secrets Manager by the routed functions at their first
 * request with an origin header and kept for ORIGIN_SECRET_CACHE_MS. The stack gives them the
 * secret's ARN and secretsmanager:GetSecretValue on it, never the value: a value in a function's
 * environment is readable by anyone allowed lambda:GetFunctionConfiguration.
 *
 * Rotation (docs/secrets.md): a request may carry the current value or the previous one
 * (Secrets Manager's AWSCURRENT and AWSPREVIOUS stages), because CloudFront, which gets the value
 * at deploy time, and warm functions, which read it here, take a new value minutes apart. A
 * value put in Secrets Manager reaches every warm function within the cache time.
 */
export const ORIGIN_SECRET_CACHE_MS = 5 * 60_000;

let cached: { arn: string; values: Promise<readonly string[]>; expiresAt: number } | undefined;

/**
 * The values a request's origin header may match, current first. Concurrent first requests share
 * one read; a read that fails is not kept, so the next request tries again (and this one fails).
 */
export function originSecretValues(arn: string): Promise<readonly string[]> {
  if (cached && cached.arn === arn && cached.expiresAt > Date.now()) return cached.values;
  const values = read(arn);
  const entry = { arn, values, expiresAt: Date.now() + ORIGIN_SECRET_CACHE_MS };
  cached = entry;
  values.catch(() => {
    if (cached === entry) cached = undefined;
  });
  return values;
}

async function read(arn: string): Promise<readonly string[]> {
  const [current, previous] = await Promise.all([valueAt(arn, 'AWSCURRENT'), valueAt(arn, 'AWSPREVIOUS')]);
  if (current === undefined) throw new Error('the origin secret has no current value');
  return previous === undefined || previous === current ? [current] : [current, previous];
}

/** The value at a stage; undefined when no version has it (a secret never rotated has no AWSPREVIOUS). */
async function valueAt(arn: string, VersionStage: 'AWSCURRENT' | 'AWSPREVIOUS'): Promise<string | undefined> {
  try {
    const { SecretString } = await secretsManagerClient().send(new GetSecretValueCommand({ SecretId: arn, VersionStage }));
    return SecretString || undefined;
  } catch (error) {
    if ((error as Error).name === 'ResourceNotFoundException' && VersionStage === 'AWSPREVIOUS') return undefined;
    throw error;
  }
}
