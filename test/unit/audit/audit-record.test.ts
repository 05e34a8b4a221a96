import { gunzipSync } from 'node:zlib';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { mockClient } from 'aws-sdk-client-mock';
import fc from 'fast-check';
import { AuditStore } from '../../../functions/adapters/audit-store';
import { MessageQueue } from '../../../functions/adapters/message-queue';
import { encodeAuditObject, SYNC_AUDIT_GZIP_MAX_BYTES, toJsonLines } from '../../../functions/domain/audit/encode';
import { auditKey } from '../../../functions/domain/audit/keys';
import { auditLines, installsOfLine, lineOfInstall, MAX_INSTALLS_PER_LINE } from '../../../functions/domain/audit/lines';
import { aggregationMessage } from '../../../functions/domain/audit/message';
import { auditRecord } from '../../../functions/domain/audit/record';
import type { AuditBatch, AuditLine } from '../../../functions/domain/audit/types';
import { sha256Hex } from '../../../functions/domain/common/hashing';
import { judgeEvents } from '../../../functions/domain/ingest/event-validation';
import { validEvent } from '../../integration/ingest-support';

const NOW = Date.UTC(2025, 2, 9, 23, 30);
const batch: AuditBatch = {
  companyId: 'com_1',
  appId: 'app_1',
  receivedMs: NOW,
  bodySha256: sha256Hex('body'),
  clientIp: '198.51.100.7',
  sdkVersion: 'ios/2.1.0',
};

describe('audit record', () => {
  it('is named by receive day (UTC), company, app and the SHA-256 of the raw body', () => {
    expect(auditKey(batch)).toBe(`audit/2025/03/09/com_1/app_1/${sha256Hex('body')}.jsonl.gz`);
  });

  it('has one line per entry, in order, with status, reason, times, client and SDK', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i++) deep = [deep];
    const events = [
      validEvent({ install_uuid: '0B9F8C6A-1C2D-4E5F-8A9B-0C1D2E3F4A5B', device_id: 'IDFV-123' }, NOW - 5000),
      validEvent({ platform: 'web' }, NOW),
      'not an event',
      deep,
    ];
    const { verdicts } = judgeEvents(events, NOW - 1000, NOW);
    const lines = auditLines(events, verdicts, batch);

    expect(lines).toHaveLength(4);
    const { device_id: _dropped, ...stored } = events[0] as Record<string, unknown>;
    expect(lines[0]).toEqual({
      index: 0,
      status: 'accepted',
      reason: undefined,
      received_ms: NOW,
      corrected_ts: NOW - 4000,
      client_ip: '198.51.100.7',
      sdk_version: 'ios/2.1.0',
      install_uuid: '0b9f8c6a-1c2d-4e5f-8a9b-0c1d2e3f4a5b',
      device_hash: sha256Hex('app_1:IDFV-123'),
      event: stored,
    });
    expect(lines[1]).toMatchObject({ index: 1, status: 'rejected', reason: 'bad_platform', event: events[1] });
    expect(lines[2]).toMatchObject({ index: 2, status: 'rejected', reason: 'bad_event', event: 'not an event' });
    expect(lines[3]).toMatchObject({ index: 3, status: 'rejected', reason: 'bad_event', event: null });

    const jsonl = toJsonLines(lines);
    expect(jsonl.split('\n')).toHaveLength(5);
    expect(jsonl).not.toContain('IDFV-123');
  });

  it('writes every line exactly as JSON.stringify does', () => {
    const events = [
      validEvent({ device_id: 'd-1', properties: { 'quote"d': 'line\nbreak', emoji: '🚀', n: -0.5 } }, NOW - 5000),
      validEvent({ ts_ms: 1.5 }, NOW),
      validEvent({ ts_ms: -7 }, NOW),
      validEvent({ ts_ms: 999_999_999 }, NOW),
      validEvent({ ts_ms: 1_000_000_000 }, NOW),
      validEvent({ ts_ms: 1_000_000_007 }, NOW),
      validEvent({ ts_ms: Number.MAX_SAFE_INTEGER }, NOW),
      validEvent({ install_uuid: 'NOT-A-UUID' }, NOW),
      null,
      [1, 'two'],
    ];
    const { verdicts } = judgeEvents(events, NOW - 1000, NOW);
    for (const audit of [
      batch,
      { ...batch, sdkVersion: undefined, clientIp: '2001:db8::"\\1' },
      { ...batch, sdkVersion: 'ünï/\u2028' },
      { ...batch, country: 'JP' },
    ]) {
      const lines = auditLines(events, verdicts, audit);
      expect(toJsonLines(lines)).toBe(lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    }
    const odd: AuditLine[] = [
      {
        index: 0,
        status: 'rejected',
        reason: 'bad_event',
        received_ms: 1.25,
        corrected_ts: NaN,
        client_ip: '',
        sdk_version: null,
        event: undefined,
      },
      { index: 1, status: 'accepted', received_ms: -1e21, corrected_ts: Infinity, client_ip: 'x', sdk_version: 's', event: { a: [] } },
    ];
    expect(toJsonLines(odd)).toBe(odd.map((line) => `${JSON.stringify(line)}\n`).join(''));
  });

  it('writes the lines it made from the body byte for byte as toJsonLines does, whatever the numbers, reasons and fields', async () => {
    const sentAtMs = NOW - 1000;
    const odd = [1.5, -7, -5000, -1000, 0, 999_998_999, 999_999_000, 1_000_000_007, Number.MAX_SAFE_INTEGER - 1000, 2 ** 53 + 2, 1e21].map(
      (ts_ms) => validEvent({ ts_ms }, NOW),
    );
    const broken = [
      validEvent({ deep: JSON.parse('['.repeat(40) + ']'.repeat(40)) }, NOW),
      validEvent({ event_id: 'a b' }, NOW),
      validEvent({ event_name: '' }, NOW),
      validEvent({ install_uuid: 'NOT-A-UUID' }, NOW),
      validEvent({ ts_ms: NOW + 86_400_000 }, NOW),
      validEvent({ revenue_usd: -1 }, NOW),
      validEvent({ platform: 'web' }, NOW),
      validEvent({ device_id: '' }, NOW),
      validEvent({ attribution: { click_id: 1 } }, NOW),
      validEvent({ properties: { a: {} } }, NOW),
      'junk',
      null,
    ];
    const devices = [
      validEvent({ device_id: 'd-1', install_uuid: '0B9F8C6A-1C2D-4E5F-8A9B-0C1D2E3F4A5B' }, NOW),
      validEvent({ device_id: 'd-2' }, NOW),
    ];
    const events: unknown[] = [...odd, ...broken, ...devices];
    while (events.length < 101) events.push(validEvent({ device_id: `d-${events.length % 3}` }, NOW - events.length));
    const body = Buffer.from(JSON.stringify({ events, sent_at_ms: sentAtMs }));
    const { verdicts } = judgeEvents(events, sentAtMs, NOW);
    expect(new Set(verdicts.map((verdict) => verdict.reason)).size).toBe(11);
    for (const audit of [
      batch,
      { ...batch, sdkVersion: undefined, clientIp: '2001:db8::"\\1' },
      { ...batch, sdkVersion: 'ünï/\u2028' },
      { ...batch, country: 'JP' },
    ]) {
      const record = auditRecord(events, verdicts, audit, body);
      const copied = gunzipSync(await record.encode()).toString('utf8');
      expect(copied).toBe(toJsonLines(auditLines(events, verdicts, audit)));
      expect(record.lines()).toEqual(auditLines(events, verdicts, audit));
      expect({ accepted: record.accepted, rejected: record.rejected }).toEqual({
        accepted: verdicts.filter((verdict) => verdict.status === 'accepted').length,
        rejected: verdicts.filter((verdict) => verdict.status === 'rejected').length,
      });
    }
    // Verdicts as no rule gives them (a fraction, a huge number, no corrected_ts, an odd reason) are written as toJsonLines writes them.
    const odder = verdicts.map((verdict, i) =>
      i === 0
        ? { ...verdict, corrected_ts: 1.25 }
        : i === 1
          ? { ...verdict, corrected_ts: -1e21, status: 'rejected' as const, reason: 'an "odd" reason' as never }
          : i === 2
            ? { ...verdict, corrected_ts: undefined, reason: 'bad_event' as const }
            : verdict,
    );
    expect(gunzipSync(await auditRecord(events, odder, batch, body).encode()).toString('utf8')).toBe(
      toJsonLines(auditLines(events, odder, batch)),
    );
  });

  it('writes every number of a line as JSON.stringify does, the short decimals it writes digit by digit above all', async () => {
    // Short decimals (a price, micro-dollars) of every size and count of decimals, around the
    // edges of the digit-by-digit path (1e9, six decimals, no whole part), and any double at all.
    const decimal = fc.tuple(fc.integer({ min: 0, max: 2 ** 53 - 1 }), fc.integer({ min: 0, max: 9 })).map(([c, d]) => c / 10 ** d);
    const small = fc.tuple(fc.integer({ min: 1, max: 1e8 }), fc.integer({ min: 1, max: 7 })).map(([c, d]) => c / 10 ** d);
    const edge = fc.constantFrom(
      0.1 + 0.2,
      1e9 - 1e-6,
      999_999_999.999_999,
      1e9 + 0.5,
      1e-6,
      1e-7,
      0.000_001_5,
      5e-324,
      2 ** 31 + 0.5,
      4.99,
      -4.99,
    );
    const value = fc.oneof(decimal, small, edge, fc.double({ noNaN: true }));
    const events = Array.from({ length: 8 }, (_, i) => validEvent({ event_id: `e-${i}` }, NOW));
    const body = Buffer.from(JSON.stringify({ events, sent_at_ms: NOW }));
    const { verdicts } = judgeEvents(events, NOW, NOW);
    await fc.assert(
      fc.asyncProperty(fc.array(value, { minLength: 8, maxLength: 8 }), async (values) => {
        const stamped = verdicts.map((verdict, i) => ({ ...verdict, corrected_ts: values[i] }));
        const lines = auditLines(events, stamped, batch);
        const copied = gunzipSync(await auditRecord(events, stamped, batch, body).encode()).toString('utf8');
        expect(copied).toBe(lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
      }),
      { numRuns: 400 },
    );
  });

  it('stores the lines as gzip JSONL whether the batch is compressed in line or on the thread pool', async () => {
    for (const size of [3, 1000]) {
      const events = Array.from({ length: size }, (_, i) => validEvent({ event_id: `e-${i}` }, NOW));
      const lines = auditLines(events, judgeEvents(events, NOW, NOW).verdicts, batch);
      const jsonl = toJsonLines(lines);
      expect({ size, synchronous: jsonl.length <= SYNC_AUDIT_GZIP_MAX_BYTES }).toEqual({ size, synchronous: size === 3 });
      expect(gunzipSync(await encodeAuditObject(lines)).toString('utf8')).toBe(jsonl);
      // Written from the body, past the scratch buffer and the in-line gzip too.
      const body = Buffer.from(JSON.stringify({ events, sent_at_ms: NOW }));
      const record = auditRecord(events, judgeEvents(events, NOW, NOW).verdicts, batch, body);
      expect(gunzipSync(await record.encode()).toString('utf8')).toBe(jsonl);
    }
  });

  it('never writes a device_id in the clear, whatever its type: one that is no string is kept as the hash of its JSON text', async () => {
    const idfa = '6D92078A-8246-4BA4-AE5B-76104861E7DC';
    const devices: unknown[] = [4815162342, [idfa], { idfa }, true, 'x'.repeat(200)];
    const events = devices.map((device_id, n) => validEvent({ event_id: `e-${n}`, device_id }, NOW));
    const body = Buffer.from(JSON.stringify({ events, sent_at_ms: NOW }));
    const { verdicts } = judgeEvents(events, NOW, NOW);
    expect(verdicts.map((verdict) => verdict.reason)).toEqual(devices.map(() => 'bad_device_id'));
    const hashes = devices.map((device) => sha256Hex(`app_1:${typeof device === 'string' ? device : JSON.stringify(device)}`));
    const lines = auditLines(events, verdicts, batch);
    expect(lines.map((line) => line.device_hash)).toEqual(hashes);
    for (const record of [auditRecord(events, verdicts, batch), auditRecord(events, verdicts, batch, body)]) {
      const text = gunzipSync(await record.encode()).toString('utf8');
      expect(text).toBe(toJsonLines(lines));
      for (const clear of ['"device_id"', idfa, '4815162342', 'xxxxxxxx'])
        expect({ clear, found: text.includes(clear) }).toEqual({ clear, found: false });
    }
    // null is no device id: an accepted event may send it, and it stays as sent.
    const [withNull] = auditLines(
      [validEvent({ device_id: null }, NOW)],
      judgeEvents([validEvent({ device_id: null }, NOW)], NOW, NOW).verdicts,
      batch,
    );
    expect(withNull).toMatchObject({ status: 'accepted', device_hash: undefined, event: expect.objectContaining({ device_id: null }) });
  });

  it('names the installs a line holds data of: its install_uuid, or every UUID a malformed one contains', () => {
    const gone = '0b9f8c6a-1c2d-4e5f-8a9b-0c1d2e3f4a5b';
    const other = '7d0e1f2a-3b4c-4d5e-8f60-718293a4b5c6';
    const events = [
      validEvent({ install_uuid: gone.toUpperCase() }, NOW),
      validEvent({ install_uuid: ` ${gone}` }, NOW),
      validEvent({ install_uuid: `{${gone.toUpperCase()}}` }, NOW),
      validEvent({ install_uuid: [gone] }, NOW),
      validEvent({ install_uuid: `urn:uuid:${gone},${other}` }, NOW),
      validEvent({ install_uuid: gone.replace(/-/g, '') }, NOW),
      validEvent({ install_uuid: 'NOT-A-UUID' }, NOW),
      validEvent({ install_uuid: gone, revenue_usd: -1 }, NOW),
    ];
    const lines = auditLines(events, judgeEvents(events, NOW, NOW).verdicts, batch);
    expect(lines.map(installsOfLine)).toEqual([[gone], [gone], [gone], [gone], [gone, other], [], [], [gone]]);
    expect(lines.map((line) => lineOfInstall(line, gone))).toEqual([true, true, true, true, true, false, false, true]);
    expect(lines.map((line) => lineOfInstall(line, other))).toEqual([false, false, false, false, true, false, false, false]);
    // A value packed with UUIDs indexes its first few; the drain still matches every one it holds.
    const packed = Array.from({ length: 10 }, (_, n) => `${String(n).padStart(8, '0')}-aaaa-4bbb-8ccc-dddddddddddd`);
    const [line] = auditLines(
      [validEvent({ install_uuid: packed.join(' ') }, NOW)],
      judgeEvents([validEvent({ install_uuid: packed.join(' ') }, NOW)], NOW, NOW).verdicts,
      batch,
    );
    expect(installsOfLine(line)).toEqual(packed.slice(0, MAX_INSTALLS_PER_LINE));
    expect(packed.every((uuid) => lineOfInstall(line, uuid))).toBe(true);
  });

  it("records the request's viewer country on every line, and no country field without one", () => {
    const events = [validEvent({}, NOW), 'junk'];
    const { verdicts } = judgeEvents(events, NOW - 1000, NOW);
    expect(auditLines(events, verdicts, { ...batch, country: 'DE' }).map((line) => line.country)).toEqual(['DE', 'DE']);
    expect(toJsonLines(auditLines(events, verdicts, batch))).not.toContain('"country"');
  });

  it('cuts an overlong SDK version and records a missing one as null', () => {
    const events = [validEvent({}, NOW)];
    const { verdicts } = judgeEvents(events, NOW, NOW);
    expect(auditLines(events, verdicts, { ...batch, sdkVersion: 'v'.repeat(1000) })[0].sdk_version).toHaveLength(128);
    expect(auditLines(events, verdicts, { ...batch, sdkVersion: undefined })[0].sdk_version).toBeNull();
  });
});

describe('audit store and hand-off', () => {
  const s3 = mockClient(S3Client);
  const sqs = mockClient(SQSClient);
  beforeEach(() => {
    s3.reset();
    sqs.reset();
  });

  it('writes the lines as one gzip JSONL object with its metadata', async () => {
    s3.on(PutObjectCommand).resolves({});
    const store = new AuditStore('audit-bucket');
    const events = [validEvent({}, NOW), validEvent({}, NOW), 'junk'];
    await store.putBatch('audit/key.jsonl.gz', batch, auditRecord(events, judgeEvents(events, NOW, NOW).verdicts, batch));

    const input = s3.commandCalls(PutObjectCommand)[0].args[0].input;
    expect(input).toMatchObject({
      Bucket: 'audit-bucket',
      Key: 'audit/key.jsonl.gz',
      ContentType: 'application/gzip',
      Metadata: {
        format: 'jsonl',
        'record-version': '1',
        'company-id': 'com_1',
        'app-id': 'app_1',
        'received-ms': String(NOW),
        accepted: '2',
        rejected: '1',
      },
    });
    const text = gunzipSync(input.Body as Buffer).toString('utf8');
    expect(
      text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line).event),
    ).toEqual(events);
  });

  it('sends the hand-off as one JSON message naming the audit object', async () => {
    sqs.on(SendMessageCommand).resolves({ MessageId: 'm-1' });
    const queue = new MessageQueue('https://sqs.local/aggregation');
    await queue.send(aggregationMessage('audit-bucket', 'audit/k.jsonl.gz', batch, { accepted: 97, rejected: 3 }));
    expect(JSON.parse(sqs.commandCalls(SendMessageCommand)[0].args[0].input.MessageBody!)).toEqual({
      version: 1,
      bucket: 'audit-bucket',
      audit_key: 'audit/k.jsonl.gz',
      company_id: 'com_1',
      app_id: 'app_1',
      accepted: 97,
      rejected: 3,
      received_ms: NOW,
    });
  });
});
