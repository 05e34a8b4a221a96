import { envName } from '../../lib/function-constants';
import type { QueueName, TableName } from '../../lib/manifest';

/**
 * Configuration is read from the environment once, at cold start, and a missing value fails
 * the cold start loudly instead of the first request quietly.
 */
export function requireEnv(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    throw new Error(`missing required environment variable ${name}`);
  }
  return value;
}

export const resourceName = {
  table: (name: TableName): string => requireEnv(envName.table(name)),
  bucket: (): string => requireEnv(envName.bucket()),
  /** The export bucket: the event stream's objects and the Parquet exports (docs/raw-data.md). */
  exportBucket: (): string => requireEnv(envName.exportBucket()),
  queueUrl: (name: QueueName): string => requireEnv(envName.queue(name)),
};

/** Seconds-granularity integer from the environment, with a default when unset. */
export function intEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value)) throw new Error(`${name} must be an integer, got ${raw}`);
  return value;
}
