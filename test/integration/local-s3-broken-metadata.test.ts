// A kill -9 inside a PUT to the local S3 can leave the object's metadata file (s3rver's
// `._S3rver_metadata.json`, written after the object) empty or cut short (issue 35, item 5). S3
// never shows such a state: the restarted emulators must serve, list and overwrite the object, and
// say in a log line what they set aside.

import { mkdtempSync, readdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { type Emulators, startEmulators } from '../../local/emulators';
import { localCredentials } from '../../local/provision';

const BUCKET = 'broken-metadata';
let dataDir: string;
let emulators: Emulators | undefined;

afterEach(async () => {
  await emulators?.close();
  emulators = undefined;
  rmSync(dataDir, { recursive: true, force: true });
});

const client = (endpoint: string) =>
  new S3Client({
    region: 'us-east-1',
    endpoint,
    forcePathStyle: true,
    credentials: localCredentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    maxAttempts: 1,
  });

/** Stores `key` in a fresh data directory, then stops the emulators as a kill would leave them. */
async function storedThenStopped(key: string): Promise<string> {
  dataDir = mkdtempSync(join(tmpdir(), 'attribution-s3-metadata-'));
  emulators = await startEmulators(dataDir);
  const s3 = client(emulators.s3);
  try {
    await s3.send(new CreateBucketCommand({ Bucket: BUCKET }));
    await s3.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: 'first', ContentType: 'application/gzip' }));
  } finally {
    s3.destroy();
  }
  await emulators.close();
  emulators = undefined;
  return join(dataDir, 's3', BUCKET, ...key.split('/').slice(0, -1), `${key.split('/').at(-1)}._S3rver_metadata.json`);
}

describe.each([
  ['empty', (path: string) => truncateSync(path, 0)],
  ['cut short', (path: string) => writeFileSync(path, '{\n  "content-type": "appl')],
])('the local S3 restarted over a metadata file left %s by a kill', (_, breakIt) => {
  it('starts healthy, serves, lists and overwrites the object, and logs what it set aside', async () => {
    const metadata = await storedThenStopped('audit/app/once.jsonl.gz');
    breakIt(metadata);

    const warnings = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      emulators = await startEmulators(dataDir);
      const s3 = client(emulators.s3);
      try {
        const listed = await s3.send(new ListObjectsV2Command({ Bucket: BUCKET, Prefix: 'audit/' }));
        expect(listed.Contents?.map((object) => object.Key)).toEqual(['audit/app/once.jsonl.gz']);
        const read = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'audit/app/once.jsonl.gz' }));
        expect(await read.Body!.transformToString()).toBe('first');

        await s3.send(
          new PutObjectCommand({ Bucket: BUCKET, Key: 'audit/app/once.jsonl.gz', Body: 'second', ContentType: 'application/gzip' }),
        );
        const reread = await s3.send(new GetObjectCommand({ Bucket: BUCKET, Key: 'audit/app/once.jsonl.gz' }));
        expect(reread.ContentType).toBe('application/gzip');
        expect(await reread.Body!.transformToString()).toBe('second');
      } finally {
        s3.destroy();
      }
      expect(warnings.mock.calls.map((call) => String(call[0]))).toEqual([
        expect.stringContaining('audit/app/once.jsonl.gz._S3rver_metadata.json'),
      ]);
      // Set aside, not deleted: whoever looks into what the kill did can still read it.
      expect(readdirSync(join(dataDir, 's3', BUCKET, 'audit', 'app')).filter((name) => name.includes('.broken'))).toHaveLength(1);
    } finally {
      warnings.mockRestore();
    }
  });
});
