import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { mockClient } from 'aws-sdk-client-mock';
import { AuditStore } from '../../../functions/adapters/audit-store';
import { auditLines } from '../../../functions/domain/audit/lines';
import { auditRecord } from '../../../functions/domain/audit/record';
import type { AuditBatch } from '../../../functions/domain/audit/types';
import { judgeEvents } from '../../../functions/domain/ingest/event-validation';
import { validEvent } from '../../integration/ingest-support';

const NOW = Date.UTC(2025, 2, 9, 23, 30);
const batch: AuditBatch = { companyId: 'com_1', appId: 'app_1', receivedMs: NOW, bodySha256: 'ab'.repeat(32), clientIp: '198.51.100.7' };
const events = [validEvent({}, NOW)];
const { verdicts } = judgeEvents(events, NOW, NOW);
const lines = auditLines(events, verdicts, batch);
const record = auditRecord(events, verdicts, batch, Buffer.from(JSON.stringify({ events, sent_at_ms: NOW })));
const KEY = 'audit/2025/03/09/com_1/app_1/abab.jsonl.gz';

/** An error as the SDK throws it for an S3 error answer. */
const s3Error = (name: string, status: number) => Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });

describe('AuditStore', () => {
  const s3 = mockClient(S3Client);
  beforeEach(() => s3.reset());

  it('writes an audit object only where none is stored (If-None-Match: *)', async () => {
    s3.on(PutObjectCommand).resolves({});
    await expect(new AuditStore('audit-bucket').putBatch(KEY, batch, record)).resolves.toBe('stored');
    expect(s3.commandCalls(PutObjectCommand)[0].args[0].input).toMatchObject({ Bucket: 'audit-bucket', Key: KEY, IfNoneMatch: '*' });
  });

  it('takes 412 PreconditionFailed as the object a first attempt stored, which stays', async () => {
    s3.on(PutObjectCommand).rejects(s3Error('PreconditionFailed', 412));
    await expect(new AuditStore('audit-bucket').putBatch(KEY, batch, record)).resolves.toBe('already_stored');
    expect(s3.commandCalls(PutObjectCommand)).toHaveLength(1);
  });

  it('tries again after 409 ConditionalRequestConflict (a write of the key was in flight) and takes the answer that follows', async () => {
    s3.on(PutObjectCommand).rejectsOnce(s3Error('ConditionalRequestConflict', 409)).rejectsOnce(s3Error('PreconditionFailed', 412));
    await expect(new AuditStore('audit-bucket').putBatch(KEY, batch, record)).resolves.toBe('already_stored');

    s3.reset();
    s3.on(PutObjectCommand).rejectsOnce(s3Error('ConditionalRequestConflict', 409)).resolves({});
    await expect(new AuditStore('audit-bucket').putBatch(KEY, batch, record)).resolves.toBe('stored');
    expect(s3.commandCalls(PutObjectCommand)).toHaveLength(2);
  });

  it('gives up on a key that stays in conflict, and passes any other failure on', async () => {
    s3.on(PutObjectCommand).rejects(s3Error('ConditionalRequestConflict', 409));
    await expect(new AuditStore('audit-bucket').putBatch(KEY, batch, record)).rejects.toMatchObject({ name: 'ConditionalRequestConflict' });

    s3.reset();
    s3.on(PutObjectCommand).rejects(s3Error('ServiceUnavailable', 503));
    await expect(new AuditStore('audit-bucket').putBatch(KEY, batch, record)).rejects.toMatchObject({ name: 'ServiceUnavailable' });
  });

  it('replaces an object unconditionally when the privacy drain rewrites it', async () => {
    s3.on(PutObjectCommand).resolves({});
    await new AuditStore('audit-bucket').replace(KEY, batch, lines);
    expect(s3.commandCalls(PutObjectCommand)[0].args[0].input.IfNoneMatch).toBeUndefined();
  });
});
