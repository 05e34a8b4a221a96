import { createHash, randomBytes } from 'node:crypto';
import { access, mkdir, rename, writeFile } from 'node:fs/promises';
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
 *
 * s3rver also ignores `If-None-Match` on a PUT, which S3 honours (a conditional write: the audit
 * store writes each object once, docs/ingestion.md). With `If-None-Match: *` the PUT stores the
 * object only if the key holds none, and otherwise answers 412 PreconditionFailed as S3 does; the
 * check is made in the key's turn, so of several such PUTs at once exactly one is stored. Any
 * other value is 501 NotImplemented, as S3 answers it on a PUT.
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
  // require, not import: these are s3rver's internal modules, patched in place; they have no types.
  S3Error = require('s3rver/lib/models/error') as S3ErrorClass;
  const store = require('s3rver/lib/stores/filesystem') as { prototype: { putObject: unknown } };
  store.prototype.putObject = putAtomically;
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
