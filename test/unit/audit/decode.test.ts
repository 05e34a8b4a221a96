import { gzipSync } from 'node:zlib';
import { AuditObjectError, decodeAuditObject, MAX_AUDIT_JSON_BYTES } from '../../../functions/domain/audit/decode';
import { encodeAuditObject } from '../../../functions/domain/audit/encode';
import { auditDayPrefix, auditKey, batchOfKey } from '../../../functions/domain/audit/keys';
import { auditLines } from '../../../functions/domain/audit/lines';
import { auditRecord } from '../../../functions/domain/audit/record';
import type { AuditBatch } from '../../../functions/domain/audit/types';
import { judgeEvents } from '../../../functions/domain/ingest/event-validation';
import { validEvent } from '../../integration/ingest-support';

const NOW = Date.UTC(2025, 2, 9, 23, 30);
const batch: AuditBatch = { companyId: 'com_1', appId: 'app_1', receivedMs: NOW, bodySha256: 'ab'.repeat(32), clientIp: '198.51.100.7' };
const KEY = auditKey(batch);

describe('audit decoder', () => {
  it('reads back the lines the encoder wrote, from the body or not', async () => {
    const events = [validEvent({ device_id: 'idfv-1' }, NOW), { event_id: 'bad' }];
    const { verdicts } = judgeEvents(events, NOW, NOW);
    const body = Buffer.from(JSON.stringify({ events }));
    const lines = auditLines(events, verdicts, batch);
    const expected = JSON.parse(JSON.stringify(lines));
    await expect(decodeAuditObject(KEY, await encodeAuditObject(lines))).resolves.toEqual(expected);
    await expect(decodeAuditObject(KEY, await auditRecord(events, verdicts, batch, body).encode())).resolves.toEqual(expected);
  });

  it('takes an object that is not gzip, or not JSON Lines, as unreadable, with its own error', async () => {
    const notGzip = decodeAuditObject(KEY, Buffer.from('{"index":0}\n'));
    await expect(notGzip).rejects.toBeInstanceOf(AuditObjectError);
    await expect(notGzip).rejects.toMatchObject({
      reason: 'unreadable_object',
      message: `unreadable_object: ${KEY} is not gzip within ${MAX_AUDIT_JSON_BYTES} bytes`,
    });
    await expect(decodeAuditObject(KEY, gzipSync('{"index":0}\nnot json\n'))).rejects.toMatchObject({
      reason: 'unreadable_object',
      detail: `${KEY} is not JSON Lines`,
    });
  });
});

describe('audit keys', () => {
  it('names the prefix of an app-day and the batch a key names', () => {
    expect(KEY.startsWith(auditDayPrefix('2025-03-09', 'com_1', 'app_1'))).toBe(true);
    expect(batchOfKey(KEY)).toEqual({ companyId: 'com_1', appId: 'app_1', bodySha256: 'ab'.repeat(32) });
    expect(batchOfKey('audit/2025/03/09')).toBeUndefined();
  });
});
