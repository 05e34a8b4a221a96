// A very small Secrets Manager for the local runtime: GetSecretValue only, the one call the
// functions make (the CloudFront origin secret, functions/adapters/origin-secret.ts). It speaks
// the AWS JSON 1.1 protocol as @aws-sdk/client-secrets-manager sends it (POST /,
// `X-Amz-Target: secretsmanager.GetSecretValue`), so the handlers reach it through the standard
// AWS_ENDPOINT_URL_SECRETS_MANAGER variable and run unchanged; the local IAM guard checks each
// call against the function's policy first, as IAM does.
//
// Secrets live in memory: the runtime makes a new origin secret at every start. Versions follow
// Secrets Manager's staging labels: put() makes the new value AWSCURRENT and the one before it
// AWSPREVIOUS, so a rotation can be tried locally.

import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SecretsManagerEmulator {
  /** Endpoint to give to the SDK (AWS_ENDPOINT_URL_SECRETS_MANAGER). */
  readonly url: string;
  /** Stores a value as the secret's current version (creating the secret); returns its ARN. */
  put(name: string, value: string): string;
  close(): Promise<void>;
}

const ACCOUNT = '000000000000';
const MAX_REQUEST_BYTES = 64 * 1024;

interface Version {
  readonly id: string;
  readonly value: string;
  readonly createdMs: number;
  stages: string[];
}

interface Secret {
  readonly name: string;
  readonly arn: string;
  readonly versions: Version[];
}

class SecretsError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function startSecretsManagerEmulator(
  options: { host?: string; port?: number; region?: string } = {},
): Promise<SecretsManagerEmulator> {
  const host = options.host ?? '127.0.0.1';
  const region = options.region ?? 'us-east-1';
  const secrets = new Map<string, Secret>();

  const find = (secretId: unknown): Secret => {
    const secret =
      typeof secretId === 'string' ? (secrets.get(secretId) ?? [...secrets.values()].find((s) => s.arn === secretId)) : undefined;
    if (!secret) throw new SecretsError('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
    return secret;
  };

  const getSecretValue = (input: Record<string, unknown>) => {
    const secret = find(input.SecretId);
    const stage = typeof input.VersionStage === 'string' ? input.VersionStage : input.VersionId === undefined ? 'AWSCURRENT' : undefined;
    const version = secret.versions.find(
      (v) => (input.VersionId === undefined || v.id === input.VersionId) && (stage === undefined || v.stages.includes(stage)),
    );
    if (!version)
      throw new SecretsError(
        'ResourceNotFoundException',
        "Secrets Manager can't find the specified secret value for staging label or version id.",
      );
    return {
      ARN: secret.arn,
      Name: secret.name,
      VersionId: version.id,
      SecretString: version.value,
      VersionStages: [...version.stages],
      CreatedDate: version.createdMs / 1000,
    };
  };

  const server = createServer((request, response) => {
    void answer(request, response, getSecretValue);
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://${host}:${port}`,
    put(name, value) {
      let secret = secrets.get(name);
      if (!secret) {
        // Real ARNs end in a dash and six random characters, so a secret made again has a new ARN.
        secret = {
          name,
          arn: `arn:aws:secretsmanager:${region}:${ACCOUNT}:secret:${name}-${randomBytes(3).toString('hex')}`,
          versions: [],
        };
        secrets.set(name, secret);
      }
      for (const version of secret.versions) {
        version.stages = version.stages.includes('AWSCURRENT')
          ? ['AWSPREVIOUS']
          : version.stages.filter((stage) => stage !== 'AWSPREVIOUS');
      }
      secret.versions.push({ id: randomUUID(), value, createdMs: Date.now(), stages: ['AWSCURRENT'] });
      return secret.arn;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

async function answer(
  request: IncomingMessage,
  response: ServerResponse,
  getSecretValue: (input: Record<string, unknown>) => object,
): Promise<void> {
  const reply = (status: number, body: object, headers: Record<string, string> = {}) => {
    response.writeHead(status, { 'content-type': 'application/x-amz-json-1.1', 'x-amzn-requestid': randomUUID(), ...headers });
    response.end(JSON.stringify(body));
  };
  try {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of request) {
      size += (chunk as Buffer).length;
      if (size > MAX_REQUEST_BYTES) throw new SecretsError('InvalidRequestException', 'The request is too large.');
      chunks.push(chunk as Buffer);
    }
    const target = String(request.headers['x-amz-target'] ?? '');
    if (request.method !== 'POST' || target !== 'secretsmanager.GetSecretValue') {
      throw new SecretsError(
        'InvalidRequestException',
        `This Secrets Manager emulator answers GetSecretValue only, not ${target || request.method}.`,
      );
    }
    const input = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
    reply(200, getSecretValue(input));
  } catch (error) {
    const code = error instanceof SecretsError ? error.code : 'InternalServiceError';
    const message = error instanceof Error ? error.message : String(error);
    reply(code === 'InternalServiceError' ? 500 : 400, { __type: code, message }, { 'x-amzn-errortype': code });
  }
}
