import { GetObjectCommand } from '@aws-sdk/client-s3';
import type { ExportFileObjects } from '../domain/privacy/raw-data';
import { s3Client } from '../shared/clients/s3';
import { ExportFileStore } from './export-store';

/**
 * The export's Parquet files as the privacy drain rewrites them (functions/domain/privacy/raw-data.ts):
 * read whole, then put or deleted with the export's own store. The export bucket is not versioned,
 * so a rewritten file leaves no older version holding the install's rows.
 */
export class ExportFileEraser extends ExportFileStore implements ExportFileObjects {
  constructor(private readonly exportBucket: string) {
    super(exportBucket);
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    try {
      const object = await s3Client().send(new GetObjectCommand({ Bucket: this.exportBucket, Key: key }));
      return await (object.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray();
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'NoSuchKey' || name === 'NotFound') return undefined;
      throw error;
    }
  }
}
