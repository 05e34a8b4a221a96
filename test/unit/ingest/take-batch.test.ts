import { sha256Hex } from '../../../functions/domain/common/hashing';
import type { AggregationMessage, AuditBatch, AuditLine } from '../../../functions/domain/ingest/audit-record';
import type { CountedBatch } from '../../../functions/domain/ingest/cap';
import { EventApiError, type EventApiErrorCode } from '../../../functions/domain/ingest/event-api';
import { takeBatch, type BatchRequest, type BatchStep, type TakeBatchPorts } from '../../../functions/domain/ingest/take-batch';
import { validEvent } from '../../integration/ingest-support';

const NOW = Date.UTC(2025, 2, 9, 12, 0);
const raw = Buffer.from('the body as sent');

/** The ingest domain on in-memory ports: every write is recorded in order; any step can be made to fail. */
function world(options: { acceptedThisMonth?: number; failing?: BatchStep } = {}) {
  const writes: string[] = [];
  const audits: { key: string; batch: AuditBatch; lines: readonly AuditLine[] }[] = [];
  const messages: AggregationMessage[] = [];
  const counted: CountedBatch[] = [];
  const failures: { step: BatchStep; companyId: string; appId: string; error: unknown }[] = [];
  const capReads: { companyId: string; nowMs: number }[] = [];
  const fail = (step: BatchStep) => {
    if (options.failing === step) throw Object.assign(new Error(`${step} is down`), { name: 'ServiceUnavailable' });
  };
  const ports: TakeBatchPorts = {
    acceptedThisMonth: async (companyId, nowMs) => {
      capReads.push({ companyId, nowMs });
      fail('cap_read');
      return options.acceptedThisMonth ?? 0;
    },
    putAudit: async (key, batch, lines) => {
      fail('audit_write');
      writes.push('audit');
      audits.push({ key, batch, lines });
    },
    auditBucket: 'audit-bucket',
    handOff: async (message) => {
      fail('hand_off');
      writes.push('hand_off');
      messages.push(message);
    },
    countOnce: async (batch) => {
      fail('cap_count');
      writes.push('count');
      counted.push(batch);
      return true;
    },
    failed: (step, batch, error) => failures.push({ step, companyId: batch.companyId, appId: batch.appId, error }),
  };
  const take = (overrides: Partial<BatchRequest> = {}) =>
    takeBatch(ports, {
      companyId: 'com_1',
      appId: 'app_1',
      monthlyCap: 10_000,
      raw,
      body: { events: [validEvent({ event_id: 'e1' }, NOW), { event_id: 'e2' }], sent_at_ms: NOW },
      clientIp: '198.51.100.7',
      sdkVersion: 'ios/1.2.3',
      receivedMs: NOW,
      ...overrides,
    });
  return { take, writes, audits, messages, counted, failures, capReads };
}

async function refusalOf(work: Promise<unknown>): Promise<EventApiErrorCode | 'taken'> {
  try {
    await work;
    return 'taken';
  } catch (error) {
    if (error instanceof EventApiError) return error.code;
    throw error;
  }
}

describe('takeBatch', () => {
  it('writes the audit object, hands it off and only then counts the accepted events', async () => {
    const { take, writes, audits, messages, counted, failures } = world();
    const taken = await take();

    expect(writes).toEqual(['audit', 'hand_off', 'count']);
    const key = `audit/2025/03/09/com_1/app_1/${sha256Hex(raw)}.jsonl.gz`;
    expect(taken).toMatchObject({ accepted: 1, rejected: 1, auditKey: key });
    expect(taken.verdicts.map(({ event_id, status, reason }) => ({ event_id, status, reason }))).toEqual([
      { event_id: 'e1', status: 'accepted', reason: undefined },
      { event_id: 'e2', status: 'rejected', reason: 'bad_event_name' },
    ]);
    expect(audits).toHaveLength(1);
    expect(audits[0].key).toBe(key);
    expect(audits[0].batch).toEqual({
      companyId: 'com_1',
      appId: 'app_1',
      receivedMs: NOW,
      bodySha256: sha256Hex(raw),
      clientIp: '198.51.100.7',
      sdkVersion: 'ios/1.2.3',
    });
    expect(audits[0].lines.map((line) => line.status)).toEqual(['accepted', 'rejected']);
    expect(messages).toEqual([
      {
        version: 1,
        bucket: 'audit-bucket',
        audit_key: key,
        company_id: 'com_1',
        app_id: 'app_1',
        accepted: 1,
        rejected: 1,
        received_ms: NOW,
      },
    ]);
    expect(counted).toEqual([expect.objectContaining({ companyId: 'com_1', appId: 'app_1', bodySha256: sha256Hex(raw), accepted: 1, receivedMs: NOW })]);
    expect(failures).toEqual([]);
  });

  it('refuses a batch whose company has reached its cap with cap_exceeded and writes nothing', async () => {
    const { take, writes, capReads, failures } = world({ acceptedThisMonth: 10_000 });
    expect(await refusalOf(take())).toBe('cap_exceeded');
    expect(capReads).toEqual([{ companyId: 'com_1', nowMs: NOW }]);
    expect(writes).toEqual([]);
    expect(failures).toEqual([]);
  });

  it('takes a batch that starts one event under the cap whole', async () => {
    const { take, writes } = world({ acceptedThisMonth: 9_999 });
    expect(await take()).toMatchObject({ accepted: 1, rejected: 1 });
    expect(writes).toEqual(['audit', 'hand_off', 'count']);
  });

  it('does not read the count of a company without a cap', async () => {
    const { take, writes, capReads } = world({ acceptedThisMonth: 1e9 });
    await take({ monthlyCap: null });
    expect(capReads).toEqual([]);
    expect(writes).toEqual(['audit', 'hand_off', 'count']);
  });

  it('refuses a body that is not a batch before reading the cap', async () => {
    const { take, writes, capReads } = world();
    expect(await refusalOf(take({ body: { events: [] } }))).toBe('bad_batch_shape');
    expect(capReads).toEqual([]);
    expect(writes).toEqual([]);
  });

  it('hands off and counts the retry of a batch whose hand-off failed after its audit object was written', async () => {
    const options: { failing?: BatchStep } = { failing: 'hand_off' };
    const { take, writes, messages, counted } = world(options);
    expect(await refusalOf(take())).toBe('audit_write_failed');

    // The same bytes seconds later: the write of the taken key resolves (the store keeps the first
    // object), and the hand-off the first attempt never made is made now.
    options.failing = undefined;
    const retried = await take({ receivedMs: NOW + 5000 });
    expect(writes).toEqual(['audit', 'audit', 'hand_off', 'count']);
    expect(messages).toEqual([expect.objectContaining({ audit_key: retried.auditKey, accepted: 1 })]);
    expect(counted).toHaveLength(1);
  });

  it.each<[BatchStep, string[]]>([
    ['cap_read', []],
    ['audit_write', []],
    ['hand_off', ['audit']],
    ['cap_count', ['audit', 'hand_off']],
  ])('answers audit_write_failed when %s fails, counts nothing and names the step', async (step, writtenBefore) => {
    const { take, writes, counted, failures } = world({ failing: step });
    expect(await refusalOf(take())).toBe('audit_write_failed');
    expect(writes).toEqual(writtenBefore);
    expect(counted).toEqual([]);
    expect(failures).toEqual([{ step, companyId: 'com_1', appId: 'app_1', error: expect.objectContaining({ name: 'ServiceUnavailable' }) }]);
  });
});
