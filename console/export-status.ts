import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { type _Object, GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { parquetMetadataAsync } from 'hyparquet';
import { ExportCheckpointStore } from '../functions/adapters/export-store';
import { appByKey } from '../functions/commands/apps';
import { type Target, TargetError } from '../functions/commands/command';
import { exportFileKey } from '../functions/domain/raw-data/export-layout';
import { RAW_TABLE_NAMES, type RawTableName } from '../functions/domain/raw-data/tables';
import { s3Client } from '../functions/shared/clients/s3';
import { resourceName } from '../functions/shared/config';
import { envName, outputKey } from '../lib/manifest';

/**
 * The Raw data page's "Last export per table" (docs/console.md): what the warehouse export
 * (functions/domain/raw-data/export.ts) has left in the export bucket for one app, read from the
 * bucket itself: the app's checkpoint (when the export last ran for it and how far the stream
 * was final), and per table the files under `<table>/app_id=<id>/` with the newest one's
 * partition and row count (from its Parquet footer: one ranged GET, not the file).
 *
 * Reads only, with the operator's access, locally or with --stack, as the admin CLI would.
 */

export interface ExportedFile {
  readonly key: string;
  readonly dt: string;
  readonly hour: string;
  /** When S3 last wrote it (LastModified, whole seconds). */
  readonly written_ms: number;
  readonly rows: number;
  readonly bytes: number;
}

export interface TableExportStatus {
  readonly table: RawTableName;
  /** Files (one per partition with rows). */
  readonly files: number;
  readonly bytes: number;
  /** The file written last; null before the first export with rows. */
  readonly newest: ExportedFile | null;
}

export interface ExportStatus {
  readonly app_id: string;
  /** The app's export checkpoint: the start of its last scheduled or `export run` run, and how far the stream was final then. */
  readonly last_run: { readonly started_ms: number; readonly final_up_to_ms: number } | null;
  readonly tables: readonly TableExportStatus[];
}

/** A partition's file key, as exportFileKey writes it. */
const FILE_KEY = /^[a-z_]+\/app_id=[^/]+\/dt=(\d{4}-\d{2}-\d{2})\/hour=(\d{2})\/part-[^/]*\.parquet$/;

/** A Parquet footer of an hour's file is a few KiB (one row group): this much from the end is read first. */
const FOOTER_BYTES = 64 * 1024;

/**
 * The export bucket's name: the local runtime's from endpoints.json (the target look-up put it in
 * the environment), a stack's from its output ExportBucketName, looked up once per stack as
 * admin/athena-target.ts does for the warehouse.
 */
export function exportBucketOf(target: Target): Promise<string> {
  const stack = target.stack;
  if (!stack || process.env[envName.exportBucket()]) return Promise.resolve(resourceName.exportBucket());
  let bucket = stackBuckets.get(stack);
  if (!bucket) {
    bucket = stackExportBucket(stack);
    stackBuckets.set(stack, bucket);
    // A failed look-up is not kept: the next request asks again.
    bucket.catch(() => stackBuckets.delete(stack));
  }
  return bucket;
}

const stackBuckets = new Map<string, Promise<string>>();

async function stackExportBucket(stack: string): Promise<string> {
  const { Stacks } = await new CloudFormationClient({}).send(new DescribeStacksCommand({ StackName: stack }));
  const bucket = Stacks?.[0]?.Outputs?.find((output) => output.OutputKey === outputKey.exportBucket())?.OutputValue;
  if (!bucket)
    throw new TargetError(
      `stack ${stack} has no output ${outputKey.exportBucket()}: deploy this version (it adds the export bucket) and try again`,
    );
  return bucket;
}

export async function exportStatus(appKey: string, bucket: string): Promise<ExportStatus> {
  const app = await appByKey(appKey);
  const [checkpoint, tables] = await Promise.all([
    new ExportCheckpointStore(bucket).get(app.app_id),
    Promise.all(RAW_TABLE_NAMES.map((table) => tableStatus(bucket, table, app.app_id))),
  ]);
  return {
    app_id: app.app_id,
    last_run: checkpoint ? { started_ms: checkpoint.records_ms, final_up_to_ms: checkpoint.watermark_ms } : null,
    tables,
  };
}

async function tableStatus(bucket: string, table: RawTableName, appId: string): Promise<TableExportStatus> {
  // The app's folder of the table: exportFileKey's key up to the partition of the day.
  const prefix = exportFileKey(table, appId, '2000-01-01T00').split('dt=')[0] ?? '';
  const files: _Object[] = [];
  let ContinuationToken: string | undefined;
  do {
    const page = await s3Client().send(new ListObjectsV2Command({ Bucket: bucket, Prefix: prefix, ContinuationToken }));
    for (const object of page.Contents ?? []) if (object.Key && FILE_KEY.test(object.Key)) files.push(object);
    ContinuationToken = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (ContinuationToken);

  // Written last; in the same second (LastModified's resolution), the later hour.
  const newest = files.reduce<_Object | undefined>((best, file) => {
    if (!best) return file;
    const [a, b] = [file.LastModified?.getTime() ?? 0, best.LastModified?.getTime() ?? 0];
    return a > b || (a === b && (file.Key ?? '') > (best.Key ?? '')) ? file : best;
  }, undefined);
  return {
    table,
    files: files.length,
    bytes: files.reduce((sum, file) => sum + (file.Size ?? 0), 0),
    newest: newest ? await describe(bucket, newest) : null,
  };
}

async function describe(bucket: string, file: _Object): Promise<ExportedFile> {
  const key = file.Key ?? '';
  const [, dt = '', hour = ''] = FILE_KEY.exec(key) ?? [];
  const bytes = file.Size ?? 0;
  const metadata = await parquetMetadataAsync(
    {
      byteLength: bytes,
      slice: async (start, end = bytes) => {
        const object = await s3Client().send(new GetObjectCommand({ Bucket: bucket, Key: key, Range: `bytes=${start}-${end - 1}` }));
        const body = await (object.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray();
        return body.buffer.slice(body.byteOffset, body.byteOffset + body.byteLength) as ArrayBuffer;
      },
    },
    { initialFetchSize: FOOTER_BYTES },
  );
  return { key, dt, hour, written_ms: file.LastModified?.getTime() ?? 0, rows: Number(metadata.num_rows), bytes };
}
