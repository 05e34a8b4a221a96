/**
 * How every AWS client of the service is built: one module per client (dynamo.ts, s3.ts,
 * sqs.ts, secrets-manager.ts), each imported only by the adapters that use that client, so a
 * function loads only the SDK clients it calls (link-redirect, say, never loads S3 or SQS:
 * `npm run bench` checks its bundle). They stay the one place clients are made, and the same
 * code talks to AWS and to the local emulators: the SDK reads the standard
 * AWS_ENDPOINT_URL_DYNAMODB / _S3 / _SQS / _SECRETS_MANAGER variables itself, and S3 switches to
 * path-style addressing whenever an S3 endpoint is overridden (s3rver needs it).
 *
 * Clients are made on first use and reused; one is rebuilt only if its endpoint variable changed
 * (a local runtime restarted in the same process, as tests do). In Lambda that never happens.
 * Adapters call these functions at each use rather than keeping a client of their own, so they
 * always talk to the current endpoint; unit tests mock them with aws-sdk-client-mock.
 */

/** Retries are few so that a failing dependency turns into a fast, documented 503. */
export const maxAttempts = 3;

export type ClientService = 'dynamodb' | 's3' | 'sqs' | 'secretsmanager';

/**
 * Something done to every client when it is built. The local runtime adds its IAM check this way
 * (local/iam-guard.ts); in Lambda no hook is ever added, and IAM itself does the checking.
 */
export type ClientHook = (client: object, service: ClientService) => void;
const hooks: ClientHook[] = [];
const live = new Map<object, ClientService>();

/** Adds a hook to the clients built from now on and to those alive now. */
export function addClientHook(hook: ClientHook): void {
  hooks.push(hook);
  for (const [client, service] of live) hook(client, service);
}

/** AWS_ENDPOINT_URL_SECRETS_MANAGER: secretsmanager, as IAM names the service. */
const serviceOf = (endpointVariable: string) =>
  endpointVariable
    .replace(/^AWS_ENDPOINT_URL_/, '')
    .replace(/_/g, '')
    .toLowerCase() as ClientService;

export function reusable<T extends { destroy(): void }>(endpointVariable: string, build: () => T): () => T {
  const service = serviceOf(endpointVariable);
  let client: T | undefined;
  let builtFor: string | undefined;
  return () => {
    const endpoint = process.env[endpointVariable];
    if (!client || builtFor !== endpoint) {
      if (client) {
        live.delete(client);
        client.destroy();
      }
      client = build();
      builtFor = endpoint;
      for (const hook of hooks) hook(client, service);
      live.set(client, service);
    }
    return client;
  };
}
