import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { dayOf } from '../domain/common/days';
import { pool } from '../domain/common/pool';
import type { ExportApp, ExportCheckpoint, ExportCheckpoints, ExportFiles, ExportPorts, ExportPostbacks } from '../domain/raw-data/export';
import { checkpointKey } from '../domain/raw-data/export-layout';
import { type PostbackRecord, postbackObjectKey } from '../domain/skan/postback-record';
import { s3Client } from '../shared/clients/s3';
import { ClickStore, type ClickTables } from './click-store';
import { StreamReader } from './stream-reader';
import { StreamStore } from './stream-store';
import { TenantStore } from './tenant-store';

/** The export's ports over the export bucket, the audit bucket and the click tables (the scheduled function's and `admin export run`'s). */
export function exportPorts(names: {
  readonly exportBucket: string;
  readonly auditBucket: string;
  readonly clickTables: ClickTables;
}): ExportPorts {
  return {
    stream: { listing: new StreamReader(names.exportBucket), objects: new StreamStore(names.exportBucket) },
    clicks: new ClickStore(names.clickTables),
    postbacks: new ExportPostbackReader(names.auditBucket),
    files: new ExportFileStore(names.exportBucket),
    checkpoints: new ExportCheckpointStore(names.exportBucket),
  };
}

/**
 * The warehouse export's storage (functions/domain/raw-data/export.ts): the Parquet files and the
 * per-app checkpoints in the export bucket, the SKAN records of the audit bucket by receive
 * time, and the apps of the tenants table.
 */

/** Export files, in the export bucket. */
export class ExportFileStore implements ExportFiles {
  constructor(private readonly bucket: string) {}

  async put(key: string, body: Uint8Array): Promise<void> {
    await s3Client().send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: body, ContentType: 'application/vnd.apache.parquet' }),
    );
  }

  /** S3 answers a DELETE of a missing key with success, and DELETE requests are free. */
  async delete(key: string): Promise<void> {
    await s3Client().send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }
}

/** Each app's checkpoint, a small JSON object in the export bucket (`_export/<app_id>.json`). */
export class ExportCheckpointStore implements ExportCheckpoints {
  constructor(private readonly bucket: string) {}

  async get(appId: string): Promise<ExportCheckpoint | undefined> {
    const text = await getText(this.bucket, checkpointKey(appId));
    if (text === undefined) return undefined;
    const stored = JSON.parse(text) as Partial<ExportCheckpoint>;
    return {
      stream_after: typeof stored.stream_after === 'string' ? stored.stream_after : '',
      watermark_ms: Number(stored.watermark_ms ?? 0),
      records_ms: Number(stored.records_ms ?? 0),
    };
  }

  async put(appId: string, checkpoint: ExportCheckpoint): Promise<void> {
    await s3Client().send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: checkpointKey(appId),
        Body: JSON.stringify(checkpoint),
        ContentType: 'application/json',
      }),
    );
  }
}

/**
 * A record is written right after it is received, so an object last modified well before the
 * range began holds a postback received before it: not read.
 */
const MODIFIED_MARGIN_MS = 5 * 60_000;

/**
 * SKAN postback records (functions/domain/skan/postback-record.ts) by receive time: the day
 * folders of the range, verified and invalid, and the day before its first (a delivery that
 * takes over a lapsed claim keeps the object key of the first, named by its day), objects
 * modified since the range began, read and kept when received in it.
 */
export class ExportPostbackReader implements ExportPostbacks {
  constructor(private readonly bucket: string) {}

  async receivedBetween(fromMs: number, toMs: number): Promise<PostbackRecord[]> {
    const prefixes: string[] = [];
    for (let day = Date.parse(dayOf(fromMs)) - 86_400_000; day < toMs; day += 86_400_000) {
      for (const verified of [true, false])
        prefixes.push(postbackObjectKey({ transaction_id: '', received_ms: day, verified }).slice(0, -'.json'.length));
    }
    const keys: string[] = [];
    for (const prefix of prefixes) {
      let token: string | undefined;
      do {
        const page = await s3Client().send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken: token }));
        for (const object of page.Contents ?? []) {
          if (object.Key && (object.LastModified?.getTime() ?? Number.POSITIVE_INFINITY) >= fromMs - MODIFIED_MARGIN_MS)
            keys.push(object.Key);
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    }
    const records: PostbackRecord[] = [];
    await pool(keys, 16, async (key) => {
      const text = await getText(this.bucket, key);
      if (text === undefined) return;
      const record = JSON.parse(text) as PostbackRecord;
      if (record.received_ms >= fromMs && record.received_ms < toMs) records.push(record);
    });
    return records;
  }
}

/** Every app of the tenants table, oldest first (TenantStore.listApps: the table holds a few items per customer). */
export async function exportApps(tenantsTable: string): Promise<ExportApp[]> {
  const apps = (await new TenantStore(tenantsTable).listApps()).map(({ app_id, created_ms }) => ({ app_id, created_ms }));
  return apps.sort((a, b) => a.created_ms - b.created_ms || a.app_id.localeCompare(b.app_id));
}

async function getText(bucket: string, key: string): Promise<string | undefined> {
  try {
    const object = await s3Client().send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    return await (object.Body as { transformToString(): Promise<string> }).transformToString();
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'NoSuchKey' || name === 'NotFound') return undefined;
    throw error;
  }
}
