import { GetSecretValueCommand } from '@aws-sdk/client-secrets-manager';
import { installPk, SK } from '../domain/aggregation/install-state';
import { MAX_REPORT_KEY_SECRET, MaxPullError } from '../domain/ingest/max-pull';
import { secretsManagerClient } from '../shared/clients/secrets-manager';
import type { DynamoInstallStore } from './install-store';

/** MAX answers the report request in seconds; a day's CSV of up to 32 MiB within a minute. */
const REQUEST_TIMEOUT_MS = 60_000;

/**
 * An app's MAX report key, read from Secrets Manager by name when its pull runs and never kept
 * beyond it (never in DynamoDB, the environment or a log). The role may read only the secrets of
 * MAX_REPORT_KEY_SECRET_PREFIX: a name outside it is refused before any call.
 */
export async function readReportKey(secretName: string): Promise<string> {
  if (!MAX_REPORT_KEY_SECRET.test(secretName)) throw new MaxPullError('secret_unreadable', 'a name outside the report keys’ prefix');
  try {
    const { SecretString } = await secretsManagerClient().send(new GetSecretValueCommand({ SecretId: secretName }));
    if (!SecretString) throw new Error('the secret has no string value');
    return SecretString.trim();
  } catch (error) {
    throw new MaxPullError('secret_unreadable', `${secretName}: ${(error as Error).name}`);
  }
}

/**
 * A GET's body as text, at most `maxBytes` (read as it streams, so a larger answer is stopped at
 * the cap, not held whole): report_refused for a status other than 2xx or no answer,
 * report_too_large past the cap. The URL is never logged: the report request's holds the key.
 */
export async function download(url: string, maxBytes: number): Promise<string> {
  let response: Response;
  try {
    response = await fetch(url, { signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS), redirect: 'follow' });
  } catch (error) {
    throw new MaxPullError('report_refused', `no answer (${(error as Error).name})`);
  }
  if (!response.ok || !response.body) {
    await response.body?.cancel();
    throw new MaxPullError('report_refused', `status ${response.status}`);
  }
  const declared = Number(response.headers.get('content-length'));
  if (declared > maxBytes) {
    await response.body.cancel();
    throw new MaxPullError('report_too_large', `${declared} bytes declared, at most ${maxBytes}`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new MaxPullError('report_too_large', `more than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Whether the app has counted the install: its head item (functions/domain/aggregation/install-state.ts) exists. */
export async function knownInstall(installs: DynamoInstallStore, appId: string, installUuid: string): Promise<boolean> {
  return (await installs.get(installPk(appId, installUuid), SK.head)) !== undefined;
}
