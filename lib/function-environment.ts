import { envName, type FunctionSpec, type QueueName, queues, readsOriginSecret, type TableName } from './manifest';

/**
 * The environment the stack gives each function, as plain data: the constants every function
 * gets, and one variable per resource its manifest grants name (TABLE_<NAME>, AUDIT_BUCKET,
 * EXPORT_BUCKET, QUEUE_<NAME>_URL; the health view's DEAD_LETTER_QUEUE_<NAME>_URL and ALARM_TOPIC_ARN) plus the origin secret's ARN for routed functions and the authorizer (never a secret's value). The CDK function construct sets
 * exactly these, and the local runtime gives each handler exactly these too
 * (local/function-context.ts), so a handler that reads a variable its grants do not name fails
 * at `npm start` as it would at cold start in Lambda. test/stack/function-environment.test.ts
 * holds the synthesized template to this list.
 */

/** Powertools reads these; alarms on the service's own metrics use the same values. */
export const SERVICE_NAME = 'attribution';
export const METRICS_NAMESPACE = 'AttributionService';

export const BASE_ENVIRONMENT = {
  NODE_OPTIONS: '--enable-source-maps',
  POWERTOOLS_SERVICE_NAME: SERVICE_NAME,
  POWERTOOLS_METRICS_NAMESPACE: METRICS_NAMESPACE,
  POWERTOOLS_LOG_LEVEL: 'INFO',
} as const;

/** Where a variable's value comes from: a constant, or a resource's physical name, URL or ARN. */
export type EnvironmentSource =
  | { readonly kind: 'constant'; readonly value: string }
  | { readonly kind: 'table'; readonly table: TableName }
  | { readonly kind: 'bucket' }
  | { readonly kind: 'export-bucket' }
  | { readonly kind: 'queue'; readonly queue: QueueName }
  /** A queue's dead-letter queue URL (FunctionSpec.healthView). */
  | { readonly kind: 'dead-letter-queue'; readonly queue: QueueName }
  /** The SNS topic every alarm notifies (FunctionSpec.healthView); locally none (''), the runtime has no alarms. */
  | { readonly kind: 'alarm-topic' }
  | { readonly kind: 'origin-secret-arn' }
  /** An address on the internet (FunctionSpec.internet): `value` in AWS, none locally. */
  | { readonly kind: 'internet'; readonly value: string }
  /** The console's sign-in (FunctionSpec.consoleUsers): the user pool's issuer, app client or id, or the service's base URL. */
  | { readonly kind: 'console'; readonly value: keyof ConsoleSignIn };

/** What the console API is told of its sign-in: in AWS the Cognito pool's, locally the stand-in's (local/sign-in-stand-in.ts). */
export interface ConsoleSignIn {
  readonly issuer: string;
  readonly clientId: string;
  readonly userPoolId: string;
  readonly baseUrl: string;
}

/** The variable each of ConsoleSignIn's values is in. */
export const CONSOLE_VARIABLES: Readonly<Record<keyof ConsoleSignIn, string>> = {
  issuer: 'CONSOLE_ISSUER',
  clientId: 'CONSOLE_CLIENT_ID',
  userPoolId: 'CONSOLE_USER_POOL_ID',
  baseUrl: 'PUBLIC_BASE_URL',
};

export function environmentOf(spec: FunctionSpec): Record<string, EnvironmentSource> {
  const environment: Record<string, EnvironmentSource> = {};
  for (const [name, value] of Object.entries(BASE_ENVIRONMENT)) environment[name] = { kind: 'constant', value };
  if (readsOriginSecret(spec)) environment[envName.originVerifySecretArn()] = { kind: 'origin-secret-arn' };
  for (const table of Object.keys(spec.tables ?? {}) as TableName[]) environment[envName.table(table)] = { kind: 'table', table };
  if (spec.bucket) environment[envName.bucket()] = { kind: 'bucket' };
  if (spec.exports) environment[envName.exportBucket()] = { kind: 'export-bucket' };
  for (const queue of Object.keys(spec.queues ?? {}) as QueueName[]) environment[envName.queue(queue)] = { kind: 'queue', queue };
  for (const [name, value] of Object.entries(spec.internet ?? {})) environment[name] = { kind: 'internet', value };
  if (spec.healthView) {
    for (const queue of Object.keys(queues) as QueueName[])
      environment[envName.deadLetterQueue(queue)] = { kind: 'dead-letter-queue', queue };
    environment[envName.alarmTopicArn()] = { kind: 'alarm-topic' };
  }
  if (spec.consoleUsers) {
    for (const [value, name] of Object.entries(CONSOLE_VARIABLES))
      environment[name] = { kind: 'console', value: value as keyof ConsoleSignIn };
  }
  return environment;
}
