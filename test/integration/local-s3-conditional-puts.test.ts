// The local S3 (s3rver with the patches of local/s3-atomic-puts.ts) answers a conditional PutObject
// as S3 does: `If-None-Match: *` writes only a key that does not exist yet, and of several such
// PUTs of one key at once exactly one is stored. The audit store relies on it (an audit object is
// written once).

import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';
import { localCredentials } from '../../local/provision';
import { makeS3PutsAtomic } from '../../local/s3-atomic-puts';

const BUCKET = 'conditional-puts';
let directory: string;
let server: S3rver;
let s3: S3Client;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'attribution-s3-'));
  makeS3PutsAtomic();
  server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory });
  const { port } = (await server.run()) as AddressInfo;
  s3 = new S3Client({
    region: 'us-east-1',
    endpoint: `http://127.0.0.1:${port}`,
    forcePathStyle: true,
    credentials: localCredentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 1,
  });
  await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
});

afterAll(async () => {
  s3?.destroy();
  await server?.close();
  rmSync(directory, { recursive: true, force: true });
});

const put = (key: string, body: string, conditional: boolean) =>
  s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body, ...(conditional ? { IfNoneMatch: '*' } : {}) }));

async function stored(key: string): Promise<string> {
  const object = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: key }));
  return object.Body!.transformToString();
}

/** The status and S3 error code of a refused request. */
async function refusal(request: Promise<unknown>): Promise<{ status?: number; code: string } | 'stored'> {
  try {
    await request;
    return 'stored';
  } catch (error) {
    const { name, $metadata } = error as { name: string; $metadata?: { httpStatusCode?: number } };
    return { status: $metadata?.httpStatusCode, code: name };
  }
}

describe('the local S3 on a conditional PUT', () => {
  it('stores a new key under If-None-Match: * and refuses to overwrite it with 412 PreconditionFailed', async () => {
    await put('audit/once.jsonl.gz', 'first', true);
    expect(await refusal(put('audit/once.jsonl.gz', 'second', true))).toEqual({ status: 412, code: 'PreconditionFailed' });
    expect(await stored('audit/once.jsonl.gz')).toBe('first');
  });

  it('still overwrites on a PUT without the condition', async () => {
    await put('audit/plain.jsonl.gz', 'first', false);
    await put('audit/plain.jsonl.gz', 'second', false);
    expect(await stored('audit/plain.jsonl.gz')).toBe('second');
    expect(await refusal(put('audit/plain.jsonl.gz', 'third', true))).toEqual({ status: 412, code: 'PreconditionFailed' });
  });

  it('stores exactly one of several conditional PUTs of one key sent at once, and keeps that one', async () => {
    const bodies = Array.from({ length: 8 }, (_, n) => `attempt ${n} `.repeat(10_000));
    const outcomes = await Promise.all(bodies.map((body) => refusal(put('audit/raced.jsonl.gz', body, true))));

    const winners = outcomes.flatMap((outcome, n) => (outcome === 'stored' ? [n] : []));
    expect(winners).toHaveLength(1);
    expect(outcomes.filter((outcome) => outcome !== 'stored')).toEqual(
      Array.from({ length: 7 }, () => ({ status: 412, code: 'PreconditionFailed' })),
    );
    expect(await stored('audit/raced.jsonl.gz')).toBe(bodies[winners[0]]);
  });
});
