import { createHash, randomBytes } from 'node:crypto';
import { access, mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { Readable } from 'node:stream';

/**
 * s3rver writes an object in place and answers before the bytes are on disk: two PUTs of one key
 * at once interleave into an object that is neither (the reliability suite caught it with three
 * copies of one batch sent together, whose audit objects differ in received_ms), and a kill right
 * after the answer can lose the object. S3 itself replaces an object atomically and acknowledges
 * it durably, so the local runtime must too: each PUT is written whole to a temporary file, which
 * is then renamed over the object (rename is atomic on one file system), before the answer.
 * PUTs of one key are also taken one at a time, so an object and its metadata always agree.
 * s3rver writes the object's metadata (`._S3rver_metadata.json`, and its `.md5`) after the object,
 * in place too: a kill -9 there left an empty metadata file, which made every listing of the bucket
 * fail ("InternalError", the health check's "error: Unknown"; issue 35, item 5). Those files are
 * written the same way, and recoverS3Store sets aside at start what an older runtime left broken.
 *
 * s3rver also ignores `If-None-Match` on a PUT, which S3 honours (a conditional write: the audit
 * store writes each object once, docs/ingestion.md). With `If-None-Match: *` the PUT stores the
 * object only if the key holds none, and otherwise answers 412 PreconditionFailed as S3 does; the
 * check is made in the key's turn, so of several such PUTs at once exactly one is stored. Any
 * other value is 501 NotImplemented, as S3 answers it on a PUT.
 */
interface FilesystemStore {
  getResourcePath(bucket: string, key: string, resource: string): string;
  putMetadata(bucket: string, key: string, metadata: unknown, md5: string | undefined): Promise<void>;
}
interface StoredObject {
  bucket: string;
  key: string;
  content: Buffer | Readable;
  metadata: unknown;
}
interface PutCondition {
  /** If-None-Match: *: store only where no object is. */
  readonly ifAbsent?: boolean;
}
/** The part of s3rver's request context its PUT controller uses here. */
interface PutContext {
  headers: Record<string, string | undefined>;
  store: FilesystemStore & { putObject(object: StoredObject): Promise<{ size: number; md5: string }> };
}
type S3ErrorClass = new (code: string, message: string, detail?: Record<string, string>) => Error;

/** s3rver's own error, which it answers as S3 would (status, XML body); loaded with the patches. */
let S3Error: S3ErrorClass;
const lanes = new Map<string, Promise<unknown>>();

async function bytesOf(content: Buffer | Readable): Promise<Buffer> {
  if (Buffer.isBuffer(content)) return content;
  const chunks: Buffer[] = [];
  for await (const chunk of content) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks);
}

const exists = (path: string): Promise<boolean> =>
  access(path).then(
    () => true,
    () => false,
  );

async function putAtomically(
  this: FilesystemStore,
  object: StoredObject,
  condition: PutCondition = {},
): Promise<{ size: number; md5: string }> {
  const objectPath = this.getResourcePath(object.bucket, object.key, 'object');
  const content = await bytesOf(object.content);
  const md5 = createHash('md5').update(content).digest('hex');
  const write = async () => {
    if (condition.ifAbsent && (await exists(objectPath))) {
      throw new S3Error('PreconditionFailed', 'At least one of the pre-conditions you specified did not hold', {
        Condition: 'If-None-Match',
      });
    }
    await mkdir(dirname(objectPath), { recursive: true });
    await replaceFile(objectPath, content);
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

/**
 * Writes `path` whole or not at all: the bytes go to a temporary file, renamed over it (atomic on
 * one file system). The temporary name ends in `.partial`, not like an object (`._S3rver_object`),
 * so a listing never shows it.
 */
async function replaceFile(path: string, content: Buffer | string): Promise<void> {
  const temporary = `${path}.${randomBytes(6).toString('hex')}.partial`;
  await writeFile(temporary, content);
  await rename(temporary, path);
}

/** The metadata fields s3rver keeps (its S3Object.ALLOWED_METADATA); loaded with the patches. */
let allowedMetadata: readonly string[];

/**
 * s3rver's putMetadata (the same files, holding the same fields) with each file replaced whole.
 * A kill between the object's rename and these leaves an overwritten object with its previous
 * metadata and etag (whole files, but not the new ones): the audit store writes each key once
 * (If-None-Match), so there is no previous metadata, and a missing `.md5` s3rver recomputes.
 */
async function putMetadataAtomically(
  this: FilesystemStore,
  bucket: string,
  key: string,
  metadata: unknown,
  md5: string | undefined,
): Promise<void> {
  const fields = Object.entries((metadata ?? {}) as Record<string, unknown>).filter(
    ([name, value]) => value !== undefined && (allowedMetadata.includes(name) || name.startsWith('x-amz-meta-')),
  );
  if (md5) await replaceFile(this.getResourcePath(bucket, key, 'object.md5'), md5);
  await replaceFile(this.getResourcePath(bucket, key, 'metadata.json'), JSON.stringify(Object.fromEntries(fields), null, 2));
}

const METADATA = '._S3rver_metadata.json';
const MD5 = '._S3rver_object.md5';

/**
 * Sets aside what a runtime killed inside a PUT left broken under `directory` (s3rver's), before
 * s3rver opens it, with one log line each: a metadata file that is empty or not a JSON object is
 * renamed `<name>.broken-<ms>` (the object then reads with S3's default metadata, and the next PUT
 * writes new); an `.md5` that is not one is removed (s3rver computes it again from the object); a
 * temporary `.partial` is removed. A runtime with these patches leaves none of them; older data
 * directories may hold them.
 */
export async function recoverS3Store(directory: string, log: (line: string) => void = console.warn): Promise<void> {
  for await (const path of filesUnder(directory)) {
    if (path.endsWith('.partial')) {
      await rm(path, { force: true });
      log(`local S3: removed ${path}, a write a kill cut short`);
    } else if (path.endsWith(METADATA) && !isJsonObject(await readFile(path, 'utf8'))) {
      const aside = `${path}.broken-${Date.now()}`;
      await rename(path, aside);
      log(`local S3: set aside the broken metadata file ${path} as ${aside}; the object keeps its bytes, with default metadata`);
    } else if (path.endsWith(MD5) && !/^[0-9a-f]{32}$/.test(await readFile(path, 'utf8'))) {
      await rm(path, { force: true });
      log(`local S3: removed the broken checksum file ${path}; it is computed again from the object`);
    }
  }
}

function isJsonObject(text: string): boolean {
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === 'object' && value !== null && !Array.isArray(value);
  } catch {
    return false;
  }
}

async function* filesUnder(directory: string): AsyncGenerator<string> {
  const entries = await readdir(directory, { withFileTypes: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === 'ENOENT') return [];
    throw error;
  });
  for (const entry of entries) {
    const path = join(directory, entry.name);
    if (entry.isDirectory()) yield* filesUnder(path);
    else if (entry.isFile()) yield path;
  }
}

let patched = false;
export function makeS3PutsAtomic(): void {
  if (patched) return;
  // require, not import: these are s3rver's internal modules, patched in place; they have no types.
  S3Error = require('s3rver/lib/models/error') as S3ErrorClass;
  allowedMetadata = (require('s3rver/lib/models/object') as { ALLOWED_METADATA: readonly string[] }).ALLOWED_METADATA;
  const store = require('s3rver/lib/stores/filesystem') as { prototype: { putObject: unknown; putMetadata: unknown } };
  store.prototype.putObject = putAtomically;
  store.prototype.putMetadata = putMetadataAtomically;
  // The PUT controller hands the store only the object; the condition is a header of the request,
  // so a conditional PUT gets a store of its own for the request, whose putObject carries it.
  const controller = require('s3rver/lib/controllers/object') as { putObject: (ctx: PutContext) => Promise<void> };
  const putObject = controller.putObject;
  controller.putObject = (ctx) => {
    const condition = ctx.headers['if-none-match'];
    if (condition === undefined) return putObject(ctx);
    if (condition !== '*')
      throw new S3Error('NotImplemented', 'A header you provided implies functionality that is not implemented', {
        Header: 'If-None-Match',
      });
    const shared = ctx.store;
    ctx.store = Object.assign(Object.create(shared) as PutContext['store'], {
      putObject: (object: StoredObject) => putAtomically.call(shared, object, { ifAbsent: true }),
    });
    return putObject(ctx);
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
  patched = true;
}
