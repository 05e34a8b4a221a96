import { PutObjectCommand } from '@aws-sdk/client-s3';
import { s3Client } from '../shared/clients/s3';
import { encodeAuditObject, type AuditBatch, type AuditLine } from '../domain/ingest/audit-record';

/**
 * Audit objects in the bucket: gzip JSONL, one line per event. The object is typed as the gzip
 * file it is (no Content-Encoding), so anything that downloads it gets the .jsonl.gz bytes and
 * not a transparently inflated copy under a .gz name.
 */
export class AuditStore {
  constructor(
    readonly bucket: string,
  ) {}

  async putBatch(key: string, batch: AuditBatch, lines: readonly AuditLine[]): Promise<void> {
    const body = await encodeAuditObject(lines);
    const accepted = lines.filter((line) => line.status === 'accepted').length;
    await s3Client().send(
      new PutObjectCommand({
        Bucket: this.bucket,
        Key: key,
        Body: body,
        ContentType: 'application/gzip',
        Metadata: {
          format: 'jsonl',
          'record-version': '1',
          'company-id': batch.companyId,
          'app-id': batch.appId,
          'received-ms': String(batch.receivedMs),
          accepted: String(accepted),
          rejected: String(lines.length - accepted),
        },
      }),
    );
  }
}
