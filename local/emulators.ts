import { mkdirSync } from 'node:fs';
import type { AddressInfo, Server } from 'node:net';
import { join } from 'node:path';
import dynalite from 'dynalite';
import S3rver from 's3rver';
import { startSqsEmulator } from './sqs-emulator';
import { makeS3PutsAtomic } from './s3-atomic-puts';

/**
 * DynamoDB (dynalite), S3 (s3rver) and SQS (our own, see sqs-emulator.ts) on 127.0.0.1, each
 * persisting under dataDir so tables, objects and queued messages survive a restart. Port 0 picks
 * a free port (tests); npm start asks for fixed ones only when the caller says so.
 */
export interface EmulatorPorts {
  dynamodb?: number;
  s3?: number;
  sqs?: number;
}

export interface Emulators {
  region: string;
  dynamodb: string;
  s3: string;
  sqs: string;
  /** Stops S3 only, so tests can show what the service does when its object store is down. */
  stopS3(): Promise<void>;
  startS3(): Promise<void>;
  close(): Promise<void>;
}

const host = '127.0.0.1';

export async function startEmulators(dataDir: string, ports: EmulatorPorts = {}): Promise<Emulators> {
  for (const dir of ['dynamodb', 's3', 'sqs']) mkdirSync(join(dataDir, dir), { recursive: true });

  const dynamo = dynalite({ path: join(dataDir, 'dynamodb'), createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  const dynamoPort = await listen(dynamo, ports.dynamodb ?? 0);

  makeS3PutsAtomic();
  let s3: S3rver | undefined;
  let s3Port = ports.s3 ?? 0;
  const startS3 = async () => {
    s3 = new S3rver({ address: host, port: s3Port, silent: true, directory: join(dataDir, 's3') });
    const address = (await s3.run()) as AddressInfo;
    s3Port = address.port;
  };
  const stopS3 = async () => {
    await s3?.close();
    s3 = undefined;
  };
  await startS3();

  const sqs = await startSqsEmulator({ host, port: ports.sqs ?? 0, dataDir: join(dataDir, 'sqs') });

  return {
    region: 'us-east-1',
    dynamodb: `http://${host}:${dynamoPort}`,
    s3: `http://${host}:${s3Port}`,
    sqs: sqs.url,
    stopS3,
    startS3,
    close: async () => {
      await Promise.all([stopS3(), sqs.close(), new Promise<void>((resolve) => dynamo.close(() => resolve()))]);
    },
  };
}

function listen(server: Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve((server.address() as AddressInfo).port));
  });
}
