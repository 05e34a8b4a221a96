import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { decodeStreamLines, encodeStreamLines, type StreamLine, type StreamObjects } from '../domain/raw-data/stream-objects';
import { s3Client } from '../shared/clients/s3';

/**
 * The event stream's objects in the export bucket (functions/domain/raw-data/stream-objects.ts):
 * written by the aggregator, rewritten by a replay of its apply or by the privacy drain.
 */
export class StreamStore implements StreamObjects {
  constructor(private readonly bucket: string) {}

  async get(key: string): Promise<StreamLine[] | undefined> {
    try {
      const object = await s3Client().send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      const bytes = await (object.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray();
      return decodeStreamLines(bytes);
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'NoSuchKey' || name === 'NotFound') return undefined;
      throw error;
    }
  }

  async put(key: string, lines: readonly StreamLine[]): Promise<void> {
    await s3Client().send(
      new PutObjectCommand({ Bucket: this.bucket, Key: key, Body: encodeStreamLines(lines), ContentType: 'application/gzip' }),
    );
  }

  async delete(key: string): Promise<void> {
    await s3Client().send(new DeleteObjectCommand({ Bucket: this.bucket, Key: key }));
  }
}
