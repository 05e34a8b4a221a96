import { MemoryFxRates } from '../../../functions/adapters/memory/fx-rates';
import type { AdServicesAnswer, AdServicesAnswers } from '../../../functions/domain/adservices/answers';
import { type EnrichPorts, enrich } from '../../../functions/domain/adservices/enrich';
import type { AggregationMessage, AuditLine } from '../../../functions/domain/audit/types';
import { judgeEvents } from '../../../functions/domain/ingest/event-validation';
import { type TakeBatchPorts, takeBatch } from '../../../functions/domain/ingest/take-batch';
import { validEvent } from '../../integration/ingest-support';

const NOW = Date.UTC(2025, 2, 9, 12, 0);
const install = (token?: unknown, extra: object = {}) =>
  validEvent(
    {
      event_name: 'install',
      revenue_usd: undefined,
      ...(token === undefined ? {} : { attribution: { adservices_token: token } }),
      ...extra,
    },
    NOW,
  );

/** takeBatch on in-memory ports: which queue got the hand-off of a batch. */
async function handOffOf(events: readonly object[]): Promise<{ queue: 'aggregation' | 'enrichment'; message: AggregationMessage }> {
  const sent: { queue: 'aggregation' | 'enrichment'; message: AggregationMessage }[] = [];
  const ports: TakeBatchPorts = {
    caps: { read: async () => ({ total: 0 }) } as unknown as TakeBatchPorts['caps'],
    audit: { putBatch: async () => undefined, bucket: 'audit-bucket' },
    aggregation: { send: async (message) => void sent.push({ queue: 'aggregation', message }) },
    enrichment: { send: async (message) => void sent.push({ queue: 'enrichment', message }) },
    rates: new MemoryFxRates(),
    failed: (_step, _batch, error) => {
      throw error;
    },
  };
  const body = { sent_at_ms: NOW, events };
  await takeBatch(ports, {
    companyId: 'com_1',
    appId: 'app_1',
    monthlyCap: null,
    raw: Buffer.from(JSON.stringify(body)),
    body,
    clientIp: '198.51.100.7',
    receivedMs: NOW,
  });
  expect(sent).toHaveLength(1);
  return sent[0] as (typeof sent)[number];
}

describe('the AdServices token at ingestion', () => {
  it.each([
    ['standard base64', 'dG9rZW4+Lw=='],
    ['URL-safe base64', 'dG9rZW4-_w'],
    ['4,096 characters', 'a'.repeat(4096)],
  ])('accepts a token of %s on an install', (_what, token) => {
    expect(judgeEvents([install(token)], NOW, NOW).verdicts[0]).toMatchObject({ status: 'accepted' });
  });

  it.each([
    ['empty', ''],
    ['over 4,096 characters', 'a'.repeat(4097)],
    ['with a space', 'dG9r ZW4='],
    ['with a character outside base64', 'tök'],
    ['a number', 12345],
  ])('rejects a token that is %s: bad_attribution naming attribution.adservices_token', (_what, token) => {
    expect(judgeEvents([install(token)], NOW, NOW).verdicts[0]).toMatchObject({
      status: 'rejected',
      reason: 'bad_attribution',
      field: 'attribution.adservices_token',
    });
  });

  it('hands a batch whose accepted install carries a token to the enrichment queue, and every other batch to aggregation', async () => {
    expect((await handOffOf([install('dG9rZW4='), validEvent({}, NOW)])).queue).toBe('enrichment');
    expect((await handOffOf([install(), validEvent({}, NOW)])).queue).toBe('aggregation');
    // The install with a token is rejected (its ts_ms out of range): nothing to ask Apple.
    expect((await handOffOf([install('dG9rZW4=', { ts_ms: -1 }), install()])).queue).toBe('aggregation');
    // The message is the one aggregation would have had: enrichment forwards it unchanged.
    const { message } = await handOffOf([install('dG9rZW4=')]);
    expect(message).toMatchObject({ version: 1, accepted: 1, rejected: 0, meter: true });
    expect(message).not.toHaveProperty('enriched');
  });
});

const line = (index: number, event: object, status: 'accepted' | 'rejected' = 'accepted'): AuditLine => ({
  index,
  status,
  received_ms: NOW,
  corrected_ts: NOW,
  client_ip: '198.51.100.7',
  sdk_version: null,
  install_uuid: '00000000-0000-4000-8000-000000000001',
  event,
});

/** The enrichment use case on in-memory ports: an S3-like answers store (first write stands), a scripted Apple. */
function enrichWorld(lines: readonly AuditLine[], answer: (token: string) => AdServicesAnswer) {
  const stored = new Map<string, AdServicesAnswers>();
  const asked: string[] = [];
  const forwarded: AggregationMessage[] = [];
  const ports: EnrichPorts = {
    lines: async () => lines,
    answers: {
      get: async (key) => stored.get(key),
      putOnce: async (key, answers) => {
        if (!stored.has(key)) stored.set(key, answers);
        return stored.get(key) as AdServicesAnswers;
      },
    },
    exchange: async (token) => {
      asked.push(token);
      return answer(token);
    },
    aggregation: { send: async (message) => void forwarded.push(message) },
  };
  return { ports, stored, asked, forwarded };
}

const MESSAGE: AggregationMessage = {
  version: 1,
  bucket: 'audit-bucket',
  audit_key: 'audit/2025/03/09/com_1/app_1/abc.jsonl.gz',
  company_id: 'com_1',
  app_id: 'app_1',
  accepted: 3,
  rejected: 1,
  received_ms: NOW,
};

describe('enriching an audit object', () => {
  const lines = [
    line(0, install('tokA')),
    line(1, install('tokB')),
    line(2, validEvent({ attribution: { adservices_token: 'notAnInstall' } }, NOW)),
    line(3, install('tokRejected'), 'rejected'),
    line(4, install()),
  ];

  it("asks Apple about each accepted install's token, stores the answers by line, then hands the message on, enriched", async () => {
    const w = enrichWorld(lines, (token) => (token === 'tokA' ? { outcome: 'not_attributed' } : { outcome: 'bad_token' }));
    await expect(enrich(w.ports, MESSAGE)).resolves.toMatchObject({
      exchanged: 2,
      outcomes: { attributed: 0, not_attributed: 1, bad_token: 1, unavailable: 0 },
    });
    expect(w.asked.sort()).toEqual(['tokA', 'tokB']);
    expect(w.stored.get(MESSAGE.audit_key)).toEqual({
      version: 1,
      answers: [
        { index: 0, outcome: 'not_attributed' },
        { index: 1, outcome: 'bad_token' },
      ],
    });
    expect(JSON.stringify(w.stored.get(MESSAGE.audit_key))).not.toMatch(/tokA|tokB/);
    expect(w.forwarded).toEqual([{ ...MESSAGE, enriched: true }]);
  });

  it('calls Apple no more on a redelivery: the stored answers stand, and the message goes on again', async () => {
    let calls = 0;
    const w = enrichWorld(lines, () => ({ outcome: calls++ === 0 ? 'unavailable' : 'not_attributed' }));
    await enrich(w.ports, MESSAGE);
    const first = w.stored.get(MESSAGE.audit_key);
    await expect(enrich(w.ports, MESSAGE)).resolves.toMatchObject({ exchanged: 0 });
    expect(w.asked).toHaveLength(2);
    expect(w.stored.get(MESSAGE.audit_key)).toBe(first);
    expect(w.forwarded).toEqual([
      { ...MESSAGE, enriched: true },
      { ...MESSAGE, enriched: true },
    ]);
  });

  it('keeps the first answers when two deliveries asked Apple at once', async () => {
    const w = enrichWorld([line(0, install('tokA'))], () => ({ outcome: 'not_attributed' }));
    const racing = { ...w.ports, answers: { ...w.ports.answers, get: async () => undefined } };
    w.stored.set(MESSAGE.audit_key, { version: 1, answers: [{ index: 0, outcome: 'bad_token' }] });
    await expect(enrich(racing, MESSAGE)).resolves.toMatchObject({ outcomes: { bad_token: 1, not_attributed: 0 } });
  });

  it('sends nothing on when Apple cannot be asked or the answers cannot be stored: the message is retried', async () => {
    const w = enrichWorld([line(0, install('tokA'))], () => {
      throw new Error('store down');
    });
    await expect(enrich(w.ports, MESSAGE)).rejects.toThrow('store down');
    expect(w.forwarded).toEqual([]);
  });
});
