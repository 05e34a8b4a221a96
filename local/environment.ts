import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { envName } from '../lib/manifest';
import { localCredentials } from './provision';

/**
 * DATA_DIR/endpoints.json: where a running local stack can be reached, for the admin CLI, the AWS
 * CLI and tests. Written by the runtime at start and removed on a clean shutdown.
 */
export interface EndpointsFile {
  region: string;
  /** The fixed credentials every local emulator accepts (s3rver checks them; the others ignore them). */
  credentials: { access_key_id: string; secret_access_key: string };
  dynamodb: string;
  s3: string;
  sqs: string;
  tables: Record<string, string>;
  bucket: string;
  /** The export bucket (manifest `exportBucket`, EXPORT_BUCKET). */
  export_bucket: string;
  queues: Record<string, string>;
  dead_letter_queues: Record<string, string>;
  base_url: string;
  control: string;
  pid: number;
  /**
   * The runtime was started with POSTBACK_ALLOW_LOOPBACK=1: postbacks may go to http://127.0.0.1,
   * so `admin postback set` accepts such a template (docs/postbacks.md). Local only.
   */
  postback_allow_loopback: boolean;
}

export const dataDirFromEnv = () => process.env.DATA_DIR || '.data';
export const endpointsPath = (dataDir: string) => join(dataDir, 'endpoints.json');

export function readEndpoints(dataDir: string): EndpointsFile | undefined {
  const file = endpointsPath(dataDir);
  return existsSync(file) ? (JSON.parse(readFileSync(file, 'utf8')) as EndpointsFile) : undefined;
}

/**
 * Points the AWS SDK and every handler at the emulators: the SDK's standard AWS_ENDPOINT_URL_*
 * variables, s3rver's fixed credentials (so the SDK never looks for real ones), s3rver's checksum needs,
 * and the resource names the function construct would set in AWS.
 */
export function applyLocalEnvironment(
  endpoints: Pick<EndpointsFile, 'region' | 'dynamodb' | 's3' | 'sqs' | 'tables' | 'bucket' | 'export_bucket' | 'queues'>,
): void {
  const env: Record<string, string> = {
    AWS_REGION: endpoints.region,
    AWS_ACCESS_KEY_ID: localCredentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: localCredentials.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: endpoints.dynamodb,
    AWS_ENDPOINT_URL_S3: endpoints.s3,
    AWS_ENDPOINT_URL_SQS: endpoints.sqs,
    AWS_REQUEST_CHECKSUM_CALCULATION: 'WHEN_REQUIRED',
    AWS_RESPONSE_CHECKSUM_VALIDATION: 'WHEN_REQUIRED',
    [envName.bucket()]: endpoints.bucket,
    [envName.exportBucket()]: endpoints.export_bucket,
    AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true',
  };
  for (const [name, physical] of Object.entries(endpoints.tables)) env[envName.table(name)] = physical;
  for (const [name, url] of Object.entries(endpoints.queues)) env[envName.queue(name)] = url;
  delete process.env.AWS_PROFILE;
  Object.assign(process.env, env);
}
