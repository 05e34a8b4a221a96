import { createHash, randomBytes } from 'node:crypto';
import { mkdir, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { Readable } from 'node:stream';

/**
 * s3rver writes an object in place and answers before the bytes are on disk: two PUTs of one key
 * at once interleave into an object that is neither (the reliability suite caught it with three
 * copies of one batch sent together, whose audit objects differ in received_ms), and a kill right
 * after the answer can lose the object. S3 itself replaces an object atomically and acknowledges
 * it durably, so the local runtime must too: each PUT is written whole to a temporary file, which
 * is then renamed over the object (rename is atomic on one file system), before the answer.
 * PUTs of one key are also taken one at a time, so an object and its metadata always agree.
 */
interface FilesystemStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: unknown, md5: string): Promise<void>;
}
interface StoredObject {
  bucket: string;
  key: string;
  content: Buffer | Readable;
  metadata: unknown;
}

const lanes = new Map<string, Promise<unknown>>();

async function bytesOf(content: Buffer | Readable): Promise<Buffer> {
  if (Buffer.isBuffer(content)) return content;
  const chunks: Buffer[] = [];
  for await (const chunk of content) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

async function putAtomically(this: FilesystemStore, object: StoredObject): Promise<{ size: number; md5: string }> {
  const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
  const content = await bytesOf(object.content);
  const md5 = createHash('md5').update(content).digest('hex');
  const write = async () => {
    await mkdir(dirname(objectPath), { recursive: true });
    // Not named like an object (they end in ._S3rver_object), so a listing never shows it.
    const temporary = `${objectPath}.${randomBytes(6).toString('hex')}.partial`;
    await writeFile(temporary, content);
    await rename(temporary, objectPath);
    await this.putMetadata(object.bucket, object.key, object.metadata, md5);
    return { size: content.length, md5 };
  };
  const previous = lanes.get(objectPath) ?? Promise.resolve();
  const mine = previous.then(write, write);
  lanes.set(objectPath, mine);
  try {
    return await mine;
  } finally {
    if (lanes.get(objectPath) === mine) lanes.delete(objectPath);
  }
}

let patched = false;
export function makeS3PutsAtomic(): void {
  if (patched) return;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const store = require('s3rver/lib/stores/filesystem') as { prototype: { putObject: unknown } };
  store.prototype.putObject = putAtomically;
  patched = true;
}
