import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import { GetObjectCommand, ListObjectsV2Command } from '@aws-sdk/client-s3';
import { PoisonMessageError } from '../domain/aggregation/aggregate';
import type { AuditLine } from '../domain/ingest/audit-record';
import { s3Client } from '../shared/clients/s3';

const gunzipAsync = promisify(gunzip);

/** Audit objects hold at most 8 MiB of JSON (the decompressed batch limit) plus their line envelopes. */
const MAX_AUDIT_JSON_BYTES = 32 * 1024 * 1024;

/**
 * Reads audit objects back (the aggregator, `admin rebuild`). An object that is missing or is not
 * gzip JSON Lines will never become readable: PoisonMessageError, so its message goes to the DLQ.
 */
export class AuditReader {
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
      if (name === 'NoSuchKey' || name === 'NotFound') throw new PoisonMessageError('missing_object', key);
      throw error;
    }
    let text: string;
    try {
      text = (await gunzipAsync(bytes, { maxOutputLength: MAX_AUDIT_JSON_BYTES })).toString('utf8');
    } catch {
      throw new PoisonMessageError('unreadable_object', `${key} is not gzip within ${MAX_AUDIT_JSON_BYTES} bytes`);
    }
    try {
      return text
        .split('\n')
        .filter((line) => line.length > 0)
        .map((line) => JSON.parse(line) as AuditLine);
    } catch {
      throw new PoisonMessageError('unreadable_object', `${key} is not JSON Lines`);
    }
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
