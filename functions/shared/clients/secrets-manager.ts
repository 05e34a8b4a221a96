import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { maxAttempts, reusable } from './reusable';

/** The Secrets Manager client (see reusable.ts); routed functions read the origin secret with it. */
export const secretsManagerClient = reusable('AWS_ENDPOINT_URL_SECRETS_MANAGER', () => new SecretsManagerClient({ maxAttempts }));
