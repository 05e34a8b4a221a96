import { PutObjectCommand, type PutObjectCommandInput } from '@aws-sdk/client-s3';
import { AUDIT_CONTENT_TYPE, auditMetadata } from '../domain/audit/encode';
import type { AuditWrite, AuditWriter } from '../domain/audit/ports';
import { type AuditRecord, recordOfLines } from '../domain/audit/record';
import type { AuditBatch, AuditLine } from '../domain/audit/types';
import { s3Client } from '../shared/clients/s3';

/** S3 answers 409 to a conditional write while another write of the key is in flight; it asks for a retry. */
const CONFLICT_ATTEMPTS = 3;
const CONFLICT_WAIT_MS = 50;

/** Audit objects in the bucket: the bytes, content type and metadata of functions/domain/audit/encode.ts. */
export class AuditStore implements AuditWriter {
  constructor(readonly bucket: string) {}

  /**
   * Writes a batch's audit object once (If-None-Match: *). A retry of the same bytes the same day
   * finds its key taken: the first attempt's object stays, with the received_ms its corrected
   * times were computed from and that the live rows were counted from, so `admin rebuild` agrees
   * with them (an overwrite moved every corrected time by the retry's delay).
   */
  async putBatch(key: string, batch: AuditBatch, record: AuditRecord): Promise<AuditWrite> {
    const input = await this.objectInput(key, batch, record);
    for (let attempt = 1; ; attempt++) {
      try {
        await s3Client().send(new PutObjectCommand({ ...input, IfNoneMatch: '*' }));
        return 'stored';
      } catch (error) {
        const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode;
        if (status === 412) return 'already_stored';
        if (status !== 409 || attempt >= CONFLICT_ATTEMPTS) throw error;
        await new Promise((resolve) => setTimeout(resolve, CONFLICT_WAIT_MS * attempt));
      }
    }
  }

  /** Replaces an audit object whatever is stored: the privacy drain's rewrite without an install's lines. */
  async replace(key: string, batch: AuditBatch, lines: readonly AuditLine[]): Promise<void> {
    await s3Client().send(new PutObjectCommand(await this.objectInput(key, batch, recordOfLines(lines))));
  }

  private async objectInput(key: string, batch: AuditBatch, record: AuditRecord): Promise<PutObjectCommandInput> {
    return {
      Bucket: this.bucket,
      Key: key,
      Body: await record.encode(),
      ContentType: AUDIT_CONTENT_TYPE,
      Metadata: auditMetadata(batch, record),
    };
  }
}
