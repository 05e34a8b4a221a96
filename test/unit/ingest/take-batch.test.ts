import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { MemoryFxRates } from '../../../functions/adapters/memory/fx-rates';
import { toJsonLines } from '../../../functions/domain/audit/encode';
import type { AggregationMessage, AuditBatch, AuditLine } from '../../../functions/domain/audit/types';
import { sha256Hex } from '../../../functions/domain/common/hashing';
import { capCounterKey } from '../../../functions/domain/ingest/cap';
import { EventApiError, type EventApiErrorCode } from '../../../functions/domain/ingest/event-api';
import type { CapStore } from '../../../functions/domain/ingest/metering';
import { type BatchRequest, type BatchStep, type TakeBatchPorts, takeBatch } from '../../../functions/domain/ingest/take-batch';
import { validEvent } from '../../integration/ingest-support';
import { MemoryCapStore } from '../../support/memory-cap-store';

const NOW = Date.UTC(2025, 2, 9, 12, 0);
const raw = Buffer.from('the body as sent');
const MONTH = capCounterKey('com_1', NOW);

/** The ports a step's failure comes from: the cap counters' calls by name, and the two stores. */
const STEP_CALLS: Record<BatchStep, string[]> = {
  cap_read: ['read'],
  fx_read: ['ratesOf'],
  cap_count: ['hold', 'join'],
  audit_write: ['putAudit'],
  hand_off: ['handOff'],
  cap_mark: ['mark', 'unhold'],
};

/**
 * The ingest domain on in-memory ports: the counters and marks in a MemoryCapStore, the audit
 * objects and messages in arrays, every write recorded in order; any step can be made to fail.
 */
function world(options: { preset?: number; failing?: BatchStep } = {}) {
  const caps = new MemoryCapStore();
  if (options.preset !== undefined) caps.preset(MONTH, options.preset);
  const writes: string[] = [];
  const audits: { key: string; batch: AuditBatch; lines: readonly AuditLine[] }[] = [];
  const messages: AggregationMessage[] = [];
  const failures: { step: BatchStep; companyId: string; appId: string; error: unknown }[] = [];
  const rates = new MemoryFxRates({ '2025-03-09': { EUR: 1.08 } });
  const fail = (call: string) => {
    if (options.failing !== undefined && STEP_CALLS[options.failing].includes(call)) {
      throw Object.assign(new Error(`${options.failing} is down`), { name: 'ServiceUnavailable' });
    }
  };
  const counted = new Proxy(caps, {
    get: (target, name: keyof CapStore) =>
      typeof target[name] === 'function'
        ? async (...args: unknown[]) => {
            fail(name);
            const before = target.writes.length;
            const result = await (target[name] as (...a: unknown[]) => Promise<unknown>).apply(target, args);
            writes.push(...target.writes.slice(before));
            return result;
          }
        : target[name],
  }) as CapStore;
  const ports: TakeBatchPorts = {
    caps: counted,
    audit: {
      putBatch: async (key, batch, record) => {
        fail('putAudit');
        writes.push('audit');
        const lines = record.lines();
        // The object's bytes are the lines the record holds, written from the body.
        expect(gunzipSync(await record.encode()).toString('utf8')).toBe(toJsonLines(lines));
        audits.push({ key, batch, lines });
      },
      bucket: 'audit-bucket',
    },
    aggregation: {
      send: async (message) => {
        fail('handOff');
        writes.push('hand_off');
        messages.push(message);
      },
    },
    // No batch of these tests carries an AdServices token (test/unit/adservices has those).
    enrichment: { send: () => Promise.reject(new Error('no batch here carries an AdServices token')) },
    rates: {
      ratesOf: async (days) => {
        fail('ratesOf');
        writes.push('fx_read');
        return rates.ratesOf(days);
      },
    },
    failed: (step, batch, error) => failures.push({ step, companyId: batch.companyId, appId: batch.appId, error }),
  };
  const take = (overrides: Partial<BatchRequest> = {}) => {
    const request: BatchRequest = {
      companyId: 'com_1',
      appId: 'app_1',
      monthlyCap: 10_000,
      raw,
      body: { events: [validEvent({ event_id: 'e1' }, NOW), { event_id: 'e2' }], sent_at_ms: NOW },
      clientIp: '198.51.100.7',
      sdkVersion: 'ios/1.2.3',
      receivedMs: NOW,
      ...overrides,
    };
    // The body's text as the handler hands it over, so the audit object is written from it.
    const text = JSON.stringify(request.body);
    return takeBatch(ports, text === undefined ? request : { jsonText: Buffer.from(text), ...request });
  };
  return { take, caps, writes, audits, messages, failures, options };
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

const eventsOf = (accepted: number, rejected = 0) => ({
  events: [
    ...Array.from({ length: accepted }, () => validEvent({}, NOW)),
    ...Array.from({ length: rejected }, (_, i) => ({ event_id: `bad-${i}` })),
  ],
  sent_at_ms: NOW,
});

describe('takeBatch', () => {
  it('counts the accepted events, writes the audit object, hands it off and then settles the count with its mark', async () => {
    const { take, caps, writes, audits, messages, failures } = world();
    const taken = await take();

    expect(writes).toEqual(['hold', 'audit', 'hand_off', 'mark', 'unhold']);
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
    expect(caps.total()).toBe(1);
    expect(caps.holdsLeft()).toBe(0);
    expect(caps.marks.get(`ingest#batch#app_1#${sha256Hex(raw)}`)).toEqual(expect.any(String));
    expect(failures).toEqual([]);
  });

  it('refuses a batch whose company has reached its cap with cap_exceeded and writes nothing', async () => {
    const { take, writes, failures, caps } = world({ preset: 10_000 });
    expect(await refusalOf(take())).toBe('cap_exceeded');
    expect(writes).toEqual([]);
    expect(caps.total()).toBe(10_000);
    expect(failures).toEqual([]);
  });

  it('takes a batch that starts one event under the cap whole', async () => {
    const { take, writes, caps } = world({ preset: 9_999 });
    expect(await take({ body: eventsOf(3) })).toMatchObject({ accepted: 3, rejected: 0 });
    expect(writes).toEqual(['hold', 'audit', 'hand_off', 'mark', 'unhold']);
    expect(caps.total()).toBe(10_002);
  });

  it('leaves the count of a company without a cap to the aggregator: no read, no write, and the message says so', async () => {
    const { take, writes, caps, messages } = world({ preset: 1e9 });
    await take({ monthlyCap: null });
    expect(writes).toEqual(['audit', 'hand_off']);
    expect(caps.total()).toBe(1e9);
    expect(messages).toEqual([expect.objectContaining({ accepted: 1, meter: true })]);
  });

  it('takes a batch without accepted events without counting or marking it', async () => {
    const { take, writes } = world();
    expect(await take({ body: eventsOf(0, 2) })).toMatchObject({ accepted: 0, rejected: 2 });
    expect(writes).toEqual(['audit', 'hand_off']);
  });

  it('refuses a body that is not a batch before reading the cap', async () => {
    const { take, writes } = world({ failing: 'cap_read' });
    expect(await refusalOf(take({ body: { events: [] } }))).toBe('bad_batch_shape');
    expect(writes).toEqual([]);
  });

  it('hands off and counts the retry of a batch whose hand-off failed after its audit object was written', async () => {
    const { take, writes, messages, caps, options } = world({ failing: 'hand_off' });
    expect(await refusalOf(take())).toBe('audit_write_failed');
    expect(caps.total()).toBe(0);

    // The same bytes seconds later: the write of the taken key resolves (the store keeps the first
    // object), and the hand-off the first attempt never made is made now.
    options.failing = undefined;
    const retried = await take({ receivedMs: NOW + 5000 });
    expect(writes).toEqual(['hold', 'audit', 'leave', 'release', 'hold', 'audit', 'hand_off', 'mark', 'unhold']);
    expect(messages).toEqual([expect.objectContaining({ audit_key: retried.auditKey, accepted: 1 })]);
    expect(caps.total()).toBe(1);
  });

  it.each<[BatchStep, string[]]>([
    ['cap_read', []],
    ['cap_count', []],
    ['audit_write', ['hold', 'leave', 'release']],
    ['hand_off', ['hold', 'audit', 'leave', 'release']],
  ])('answers audit_write_failed when %s fails, counts nothing and names the step', async (step, written) => {
    const { take, writes, caps, failures } = world({ failing: step });
    expect(await refusalOf(take())).toBe('audit_write_failed');
    expect(writes).toEqual(written);
    expect(caps.total()).toBe(0);
    expect(caps.holdsLeft()).toBe(0);
    expect(failures).toEqual([
      { step, companyId: 'com_1', appId: 'app_1', error: expect.objectContaining({ name: 'ServiceUnavailable' }) },
    ]);
  });

  it('reads no exchange rate for a batch without a currency', async () => {
    const { take, writes } = world();
    await take();
    expect(writes).not.toContain('fx_read');
  });

  it('converts revenue in a currency before counting, and rejects one with no rate without refusing the batch', async () => {
    const { take, writes, audits, caps } = world();
    const priced = (id: string, currency: string) => validEvent({ event_id: id, revenue_usd: undefined, revenue: 10, currency }, NOW);
    const taken = await take({ body: { events: [priced('e1', 'EUR'), priced('e2', 'GBP')], sent_at_ms: NOW } });
    expect(writes.slice(0, 2)).toEqual(['fx_read', 'hold']);
    expect(taken.verdicts.map(({ status, reason }) => [status, reason])).toEqual([
      ['accepted', undefined],
      ['rejected', 'bad_currency'],
    ]);
    expect(caps.total()).toBe(1);
    expect(audits[0]?.lines[0]).toMatchObject({
      event: { revenue: 10, currency: 'EUR', revenue_usd: 10.8 },
      fx: { rate_day: '2025-03-09' },
    });
  });

  it('answers audit_write_failed when the rates cannot be read, counting and storing nothing', async () => {
    const { take, writes, failures } = world({ failing: 'fx_read' });
    const priced = validEvent({ event_id: 'e1', revenue_usd: undefined, revenue: 10, currency: 'EUR' }, NOW);
    expect(await refusalOf(take({ body: { events: [priced], sent_at_ms: NOW } }))).toBe('audit_write_failed');
    expect(writes).toEqual([]);
    expect(failures.map((failure) => failure.step)).toEqual(['fx_read']);
  });

  it('takes the count back when the write that made it answers with an error, so a retry in new bytes counts once', async () => {
    const { take, caps, failures } = world();
    const hold = caps.hold.bind(caps);
    caps.hold = async (...args) => {
      await hold(...args);
      throw Object.assign(new Error('the answer was lost'), { name: 'TimeoutError' });
    };
    expect(await refusalOf(take())).toBe('audit_write_failed');
    expect(failures.map((failure) => failure.step)).toEqual(['cap_count']);
    expect([caps.total(), caps.holdsLeft()]).toEqual([0, 0]);
  });

  it('takes a batch whose mark cannot be written, names cap_mark, and leaves the hold for a retry to settle once', async () => {
    const { take, writes, caps, failures, options } = world({ failing: 'cap_mark' });
    expect(await take()).toMatchObject({ accepted: 1 });
    expect(writes).toEqual(['hold', 'audit', 'hand_off']);
    expect(failures.map((failure) => failure.step)).toEqual(['cap_mark']);
    expect([caps.total(), caps.holdsLeft()]).toEqual([1, 1]);

    options.failing = undefined;
    expect(await take()).toMatchObject({ accepted: 1 });
    expect(writes.slice(3)).toEqual(['join', 'audit', 'hand_off', 'mark', 'unhold']);
    expect([caps.total(), caps.holdsLeft()]).toEqual([1, 0]);
  });

  it('counts a batch retried after its 200 was lost once', async () => {
    const { take, caps } = world();
    await take();
    expect(await take({ receivedMs: NOW + 60_000 })).toMatchObject({ accepted: 1 });
    expect([caps.total(), caps.holdsLeft()]).toEqual([1, 0]);
  });
});

describe('the cap under concurrency', () => {
  it('takes one of 30 concurrent 1,000-event batches under a cap of 5 and refuses the others, storing nothing for them', async () => {
    const { take, caps, audits } = world();
    const body = eventsOf(1_000);
    const answers = await Promise.all(
      Array.from({ length: 30 }, (_, i) => refusalOf(take({ monthlyCap: 5, raw: Buffer.from(`batch ${i}`), body }))),
    );
    expect(answers.filter((answer) => answer === 'taken')).toHaveLength(1);
    expect(answers.filter((answer) => answer === 'cap_exceeded')).toHaveLength(29);
    expect(caps.total()).toBe(1_000);
    expect(audits).toHaveLength(1);
  });
});

/** What an attempt that was killed sees from the call it died at and every call after it. */
class Killed extends Error {
  override name = 'Killed';
}

interface Attempt {
  /** The call (of the counters, the audit store or the queue, counted from 0) the attempt dies at; none lives. */
  dieAt?: number;
  /** Whether the call it dies at was made (the write applied, its answer lost) or not. */
  applied: boolean;
  /** A store that answers this attempt with an error (it goes on to give its count back). */
  storeFails?: 'putAudit' | 'handOff';
}

/**
 * One attempt's ports onto the shared stores: each call waits its turn from the scheduler (so
 * attempts interleave call by call in every order), and the attempt dies where its plan says.
 */
type Turn = <T>(call: () => Promise<T>) => Promise<T>;

interface Shared {
  caps: MemoryCapStore;
  audits: Set<string>;
  handedOff: Set<string>;
  /** Accepted events of the objects handed off for the aggregator to meter (a company without a cap), by audit key. */
  byAggregator: Map<string, number>;
}
const newShared = (): Shared => ({ caps: new MemoryCapStore(), audits: new Set(), handedOff: new Set(), byAggregator: new Map() });
/** The month's count once the aggregator has counted each handed-off object it meters, once. */
const meteredOf = (shared: Shared) => shared.caps.total() + [...shared.byAggregator.values()].reduce((sum, n) => sum + n, 0);

function attemptPorts(shared: Shared, plan: Attempt, turn: Turn): TakeBatchPorts & { died(): boolean; stored(): boolean } {
  let calls = 0;
  let dead = false;
  const names = new Set<string>();
  const call = async <T>(name: string, work: () => Promise<T>): Promise<T> =>
    turn(async () => {
      if (dead) throw new Killed();
      names.add(name);
      const index = calls++;
      if (index === plan.dieAt) {
        dead = true;
        if (plan.applied) await work();
        throw new Killed();
      }
      if (plan.storeFails === name) throw Object.assign(new Error(`${name} is down`), { name: 'ServiceUnavailable' });
      return work();
    });
  const { caps } = shared;
  return {
    caps: {
      read: (keys) => call('read', () => caps.read(keys)),
      hold: (...args) => call('hold', () => caps.hold(...args)),
      join: (...args) => call('join', () => caps.join(...args)),
      leave: (...args) => call('leave', () => caps.leave(...args)),
      release: (...args) => call('release', () => caps.release(...args)),
      mark: (...args) => call('mark', () => caps.mark(...args)),
      unhold: (...args) => call('unhold', () => caps.unhold(...args)),
    },
    audit: { putBatch: (key) => call('putAudit', async () => void shared.audits.add(key)), bucket: 'audit-bucket' },
    aggregation: {
      send: (message) =>
        call('handOff', async () => {
          shared.handedOff.add(message.audit_key);
          if (message.meter) shared.byAggregator.set(message.audit_key, message.accepted);
        }),
    },
    enrichment: { send: () => Promise.reject(new Error('no batch here carries an AdServices token')) },
    rates: new MemoryFxRates(),
    failed: () => undefined,
    died: () => dead,
    stored: () => names.has('putAudit') || names.has('handOff'),
  };
}

describe('metering after a crash', () => {
  const now: Turn = (work) => work();
  const request = (monthlyCap: number | null): BatchRequest => ({
    companyId: 'com_1',
    appId: 'app_1',
    monthlyCap,
    raw,
    body: eventsOf(3, 1),
    clientIp: '198.51.100.7',
    receivedMs: NOW,
  });

  it.each([
    ['a capped company', 10_000],
    ['a company without a cap', null],
  ])(
    'meters the batch of %s once when its first attempt is killed at any call, before or after the call took effect, and the same bytes are sent again',
    async (_name, monthlyCap) => {
      // Calls of a first attempt that lives: read, hold, putAudit, handOff, mark, unhold; without a
      // cap only putAudit and handOff (the aggregator counts the object).
      const calls = monthlyCap === null ? 2 : 6;
      for (let dieAt = 0; dieAt < calls; dieAt++) {
        for (const applied of [false, true]) {
          const shared = newShared();
          const first = attemptPorts(shared, { dieAt, applied }, now);
          await refusalOf(takeBatch(first, request(monthlyCap)));
          expect(first.died()).toBe(true);

          expect(await takeBatch(attemptPorts(shared, { applied: false }, now), request(monthlyCap))).toMatchObject({ accepted: 3 });
          expect({
            dieAt,
            applied,
            metered: meteredOf(shared),
            holds: shared.caps.holdsLeft(),
            handedOff: shared.handedOff.size,
          }).toEqual({ dieAt, applied, metered: 3, holds: 0, handedOff: 1 });
        }
      }
    },
  );
});

describe('metering, property', () => {
  const attempt: fc.Arbitrary<Attempt> = fc.record({
    dieAt: fc.option(fc.nat(8), { nil: undefined, freq: 3 }),
    applied: fc.boolean(),
    storeFails: fc.option(fc.constantFrom<'putAudit' | 'handOff'>('putAudit', 'handOff'), { nil: undefined, freq: 4 }),
  });
  const scenario = fc.record({
    monthlyCap: fc.option(fc.integer({ min: 1, max: 40 }), { nil: null, freq: 4 }),
    batches: fc.array(
      fc
        .record({
          accepted: fc.integer({ min: 0, max: 12 }),
          rejected: fc.integer({ min: 0, max: 2 }),
          // Copies of the same bytes sent at once: a client whose first attempt timed out on its side.
          copies: fc.array(attempt, { minLength: 1, maxLength: 3 }),
          // Sent again once everything is answered: the client lost its 200.
          lostAnswer: fc.boolean(),
        })
        .filter((batch) => batch.accepted + batch.rejected > 0),
      { minLength: 1, maxLength: 6 },
    ),
  });

  it('meters exactly the batches handed off, once, and keeps a capped count under the cap plus one batch, whatever dies where', async () => {
    await fc.assert(
      fc.asyncProperty(fc.scheduler(), scenario, async (s, { monthlyCap, batches }) => {
        const shared = newShared();
        const requests = batches.map((batch, i) => ({
          companyId: 'com_1',
          appId: 'app_1',
          monthlyCap,
          raw: Buffer.from(`batch ${i}`),
          body: eventsOf(batch.accepted, batch.rejected),
          clientIp: '198.51.100.7',
          receivedMs: NOW,
        }));
        const turn: Turn = (work) => s.schedule(Promise.resolve()).then(work);
        const healthy: Turn = (work) => work();
        const answered = new Set<number>();
        let refusedAfterStoring = 0;
        const send = async (i: number, ports: ReturnType<typeof attemptPorts>): Promise<'answered' | 'unanswered'> => {
          const outcome = await refusalOf(takeBatch(ports, requests[i]!));
          // A killed process answers nothing, whatever it was about to say.
          if (ports.died()) return 'unanswered';
          if (outcome === 'taken') answered.add(i);
          if (outcome === 'cap_exceeded' && ports.stored()) refusedAfterStoring++;
          return outcome === 'taken' || outcome === 'cap_exceeded' ? 'answered' : 'unanswered';
        };

        // Every copy of every batch at once, in an order the scheduler picks, each dying where its plan says.
        const first = batches.flatMap((batch, i) =>
          batch.copies.map((plan) => send(i, attemptPorts(shared, plan, turn)).then((result) => ({ i, result }))),
        );
        const results = await s.waitFor(Promise.all(first));

        // Then every copy that got no answer (it died, or got 503) is sent again until it does, and
        // batches whose 200 was lost once more; nothing fails any more.
        const untilAnswered = async (i: number) => {
          for (let tries = 0; tries < 5; tries++)
            if ((await send(i, attemptPorts(shared, { applied: false }, healthy))) === 'answered') return;
        };
        for (const { i, result } of results) if (result === 'unanswered') await untilAnswered(i);
        for (const [i, batch] of batches.entries()) if (batch.lostAnswer) await untilAnswered(i);

        const keyOf = (i: number) => `audit/2025/03/09/com_1/app_1/${sha256Hex(requests[i]!.raw)}.jsonl.gz`;
        const handedOff = batches.reduce((sum, batch, i) => sum + (shared.handedOff.has(keyOf(i)) ? batch.accepted : 0), 0);
        // Exactly the events the aggregator will count (each handed-off object once), and no hold left unsettled.
        expect(shared.caps.holdsLeft()).toBe(0);
        expect(meteredOf(shared)).toBe(handedOff);
        // Every batch answered 200 was handed off; no attempt answered cap_exceeded wrote or sent anything.
        for (const i of answered) expect(shared.handedOff.has(keyOf(i))).toBe(true);
        expect(refusedAfterStoring).toBe(0);
        // The bound: a capped count stops under the cap plus the largest batch.
        if (monthlyCap !== null)
          expect(shared.caps.total()).toBeLessThan(monthlyCap + Math.max(1, ...batches.map((batch) => batch.accepted)));
      }),
      { numRuns: 300 },
    );
  });
});
