import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { pool } from '../domain/common/pool';
import { RAW_TABLE_NAMES } from '../domain/raw-data/tables';
import { s3Client } from '../shared/clients/s3';

/**
 * One app's export files copied from the export bucket to a folder, under the same keys, for
 * DuckDB to load (functions/adapters/duckdb-sql.ts): `admin sql` on the local runtime. DuckDB
 * cannot read S3 itself here (its httpfs extension would be downloaded), and a copy keeps the
 * query off the network altogether.
 */

/** The keys of one app's Parquet files: `<table>/app_id=<id>/dt=<day>/hour=<HH>/part-*.parquet`. */
const FILE_KEY = /^[a-z_]+\/app_id=[^/]+\/dt=\d{4}-\d{2}-\d{2}\/hour=\d{2}\/part-[^/]*\.parquet$/;

/** Copies the app's files of every raw table into `dir`; answers how many. */
export async function copyAppExports(bucket: string, appId: string, dir: string): Promise<number> {
  const keys: string[] = [];
  for (const table of RAW_TABLE_NAMES) {
    let ContinuationToken: string | undefined;
    do {
      const page = await s3Client().send(
        new ListObjectsV2Command({ Bucket: bucket, Prefix: `${table}/app_id=${appId}/`, ContinuationToken }),
      );
      for (const object of page.Contents ?? []) if (object.Key && FILE_KEY.test(object.Key)) keys.push(object.Key);
      ContinuationToken = page.NextContinuationToken;
    } while (ContinuationToken);
  }
  await pool(keys, 8, async (key) => {
    const object = await s3Client().send(new GetObjectCommand({ Bucket: bucket, Key: key }));
    const bytes = await (object.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray();
    const path = join(dir, ...key.split('/'));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, bytes);
  });
  return keys.length;
}
