import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { AuditObjectError, decodeAuditObject } from '../domain/audit/decode';
import type { AuditObjects } from '../domain/audit/ports';
import type { AuditLine } from '../domain/audit/types';
import { s3Client } from '../shared/clients/s3';

/**
 * Reads audit objects back (the aggregator, `admin rebuild`, the privacy drain). An object that is
 * missing or is not gzip JSON Lines will never become readable: AuditObjectError, which each reader
 * takes in its own way (the aggregator sends its message to the DLQ).
 */
export class AuditReader implements AuditObjects {
  constructor(private readonly bucket: string) {}

  /**
   * A read that fails, or that does not come back as gzip JSON Lines, is tried again a few times
   * before the object counts as missing or unreadable: the SDK retries requests but not a body
   * stream cut short, and the local emulator replaces an object in place (S3 does it atomically),
   * so a read during a client's retry, which puts the same object again, can see half a file.
   */
  async lines(key: string, attempts = 3): Promise<AuditLine[]> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.readOnce(key);
      } catch (error) {
        if (attempt >= attempts) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
      }
    }
  }

  private async readOnce(key: string): Promise<AuditLine[]> {
    let bytes: Uint8Array;
    try {
      const object = await s3Client().send(new GetObjectCommand({ Bucket: this.bucket, Key: key }));
      bytes = await (object.Body as { transformToByteArray(): Promise<Uint8Array> }).transformToByteArray();
    } catch (error) {
      const name = (error as Error).name;
      if (name === 'NoSuchKey' || name === 'NotFound') throw new AuditObjectError('missing_object', key);
      throw error;
    }
    return decodeAuditObject(key, bytes);
  }

  /** Every key under a prefix, in key order. */
  async keys(prefix: string): Promise<string[]> {
    const keys: string[] = [];
    let ContinuationToken: string | undefined;
    do {
      const page = await s3Client().send(new ListObjectsV2Command({ Bucket: this.bucket, Prefix: prefix, ContinuationToken }));
      for (const object of page.Contents ?? []) if (object.Key) keys.push(object.Key);
      ContinuationToken = page.NextContinuationToken;
    } while (ContinuationToken);
    return keys;
  }
}
