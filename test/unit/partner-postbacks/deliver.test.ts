import fc from 'fast-check';
import {
  type AttemptRecord,
  type DeliveryPorts,
  deliverPostback,
  type HttpResult,
  MAX_HOP_SECONDS,
  parsePostbackMessage,
  RequeueFailed,
  retryDelaysFromEnv,
} from '../../../functions/domain/partner-postbacks/deliver';
import type { PostbackMessage, PostbackRecord } from '../../../functions/domain/partner-postbacks/trigger';

const DELAYS = [300, 3600, 21_600, 43_200];
const FIRST: PostbackMessage = { version: 1, app_id: 'app_1', postback_id: 'pb1' };

function world(options: { answers?: (HttpResult | Error)[]; resolves?: string[][]; queueDown?: () => boolean } = {}) {
  const record: PostbackRecord = {
    app_id: 'app_1',
    postback_id: 'pb1',
    partner: 'acme',
    kind: 'install',
    event_name: 'install',
    url: 'https://partner.example/cb?id=pb1',
    method: 'GET',
    created_ms: 0,
    state: 'queued',
  };
  let leaseUntil = 0;
  let made: number | undefined;
  let reads = 0;
  const sent: { url: string; address: string }[] = [];
  const attempts: AttemptRecord[] = [];
  const queued: { message: PostbackMessage; delaySeconds: number }[] = [];
  const answers = [...(options.answers ?? [])];
  const resolves = [...(options.resolves ?? [])];
  const ports: DeliveryPorts = {
    records: {
      get: async () => {
        reads++;
        return { ...record, ...(made === undefined ? {} : { attempts: made }) };
      },
      claim: async (_app, _id, nowMs, leaseMs, attempt) => {
        if (!['new', 'queued'].includes(record.state) || leaseUntil > nowMs || (made ?? 0) >= attempt) return false;
        leaseUntil = nowMs + leaseMs;
        return true;
      },
      settle: async (_app, _id, state, attemptsMade) => {
        record.state = state;
        made = attemptsMade;
        leaseUntil = 0;
      },
      logAttempt: async (attempt) => void attempts.push(attempt),
    },
    queue: {
      send: async (message, delaySeconds) => {
        if (options.queueDown?.()) throw Object.assign(new Error('SQS is down'), { name: 'InternalError' });
        queued.push({ message, delaySeconds });
      },
    },
    resolve: async () => (resolves.shift() ?? ['93.184.215.14']).map((address) => ({ address, family: 4 as const })),
    send: async ({ url, address }) => {
      sent.push({ url: url.href, address: address.address });
      const answer = answers.shift() ?? { status: 200 };
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
  const clock = { now: 1_000_000 };
  const deliver = (message: PostbackMessage = FIRST) =>
    deliverPostback(ports, message, { policy: { allowLoopback: false }, retryDelaysSeconds: DELAYS, nowMs: () => clock.now });
  /** The message last sent to the queue, received once its time has come. */
  const next = () => {
    const last = queued.at(-1);
    if (!last) throw new Error('nothing queued');
    clock.now = Math.max(clock.now, last.message.not_before_ms ?? clock.now);
    return last.message;
  };
  return {
    record,
    sent,
    attempts,
    queued,
    deliver,
    next,
    clock,
    ports,
    reads: () => reads,
    hold: () => (leaseUntil = Number.MAX_SAFE_INTEGER),
  };
}

describe('delivering a postback', () => {
  it('calls the partner once at the checked address and records the delivery', async () => {
    const w = world({ answers: [{ status: 204 }] });
    await expect(w.deliver()).resolves.toEqual({ kind: 'done', outcome: 'delivered' });
    expect(w.sent).toEqual([{ url: 'https://partner.example/cb?id=pb1', address: '93.184.215.14' }]);
    expect(w.attempts).toMatchObject([{ attempt: 1, outcome: 'delivered', response_code: 204, partner: 'acme', postback_id: 'pb1' }]);
    expect(w.record.state).toBe('delivered');
  });

  it('sends nothing for a duplicate message of a delivered postback', async () => {
    const w = world();
    await w.deliver();
    await expect(w.deliver()).resolves.toEqual({ kind: 'done', outcome: 'duplicate' });
    expect(w.sent).toHaveLength(1);
  });

  it('sends nothing while another copy of the message holds the postback, and sends the message on to come back after the lease', async () => {
    const w = world();
    w.hold();
    await expect(w.deliver()).resolves.toEqual({ kind: 'requeued', reason: 'busy', attempt: 1, delaySeconds: 60 });
    expect(w.sent).toHaveLength(0);
    expect(w.queued).toEqual([{ message: FIRST, delaySeconds: 60 }]);
  });

  it.each([500, 502, 503, 429])('retries HTTP %i on the schedule and gives up after the fifth attempt', async (status) => {
    const w = world({ answers: Array.from({ length: 5 }, () => ({ status })) });
    let message = FIRST;
    for (let attempt = 1; attempt <= 4; attempt++) {
      const madeAt = w.clock.now;
      await expect(w.deliver(message)).resolves.toEqual({
        kind: 'requeued',
        reason: 'retry',
        attempt: attempt + 1,
        delaySeconds: Math.min(MAX_HOP_SECONDS, DELAYS[attempt - 1]),
      });
      expect(w.queued.at(-1)?.message).toEqual({ ...FIRST, attempt: attempt + 1, not_before_ms: madeAt + DELAYS[attempt - 1] * 1000 });
      message = w.next();
    }
    await expect(w.deliver(message)).resolves.toEqual({ kind: 'dead' });
    expect(w.sent).toHaveLength(5);
    expect(w.attempts.map((a) => [a.attempt, a.outcome, a.response_code])).toEqual([
      [1, 'retry', status],
      [2, 'retry', status],
      [3, 'retry', status],
      [4, 'retry', status],
      [5, 'dead', status],
    ]);
    // Its message keeps failing until SQS moves it to the DLQ; the partner is not called again.
    await expect(w.deliver(message)).resolves.toEqual({ kind: 'dead' });
    expect(w.sent).toHaveLength(5);
  });

  it('delivers on the third attempt after two 500s, once, and a copy of any message sends nothing', async () => {
    const w = world({ answers: [{ status: 500 }, { status: 500 }, { status: 200 }] });
    await w.deliver();
    const second = w.next();
    await w.deliver(second);
    const third = w.next();
    await expect(w.deliver(third)).resolves.toEqual({ kind: 'done', outcome: 'delivered' });
    for (const copy of [FIRST, second, third]) await expect(w.deliver(copy)).resolves.toEqual({ kind: 'done', outcome: 'duplicate' });
    expect(w.sent).toHaveLength(3);
  });

  it('makes each attempt once when copies of a retry arrive: a copy of an attempt already made sends nothing', async () => {
    const w = world({ answers: [{ status: 503 }, { status: 503 }] });
    await w.deliver();
    const second = w.next();
    await w.deliver(second);
    await expect(w.deliver(second)).resolves.toEqual({ kind: 'done', outcome: 'duplicate' });
    await expect(w.deliver(FIRST)).resolves.toEqual({ kind: 'done', outcome: 'duplicate' });
    expect(w.attempts.map((a) => a.attempt)).toEqual([1, 2]);
    expect(w.record.state).toBe('queued');
  });

  it('sends an early message on for one hop of at most 15 minutes, without reading the postback or calling anyone', async () => {
    const w = world();
    const later = { ...FIRST, attempt: 5, not_before_ms: w.clock.now + 12 * 3_600_000 };
    await expect(w.deliver(later)).resolves.toEqual({ kind: 'requeued', reason: 'waiting', attempt: 5, delaySeconds: 900 });
    w.clock.now = later.not_before_ms - 1500;
    await expect(w.deliver(later)).resolves.toEqual({ kind: 'requeued', reason: 'waiting', attempt: 5, delaySeconds: 2 });
    expect(w.queued).toEqual([
      { message: later, delaySeconds: 900 },
      { message: later, delaySeconds: 2 },
    ]);
    expect([w.reads(), w.sent.length]).toEqual([0, 0]);
  });

  it('leaves the attempt unrecorded when its retry cannot be sent, so the message that comes back makes it again', async () => {
    let down = true;
    const w = world({ answers: [{ status: 500 }, { status: 500 }], queueDown: () => down });
    const failure = await w.deliver().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RequeueFailed);
    expect(failure).toMatchObject({ reason: 'retry', cause: { message: 'SQS is down' } });
    expect(w.queued).toHaveLength(0);

    // The received message comes back once its visibility timeout (and the attempt's lease) is over.
    down = false;
    w.clock.now += 61_000;
    await expect(w.deliver()).resolves.toMatchObject({ kind: 'requeued', reason: 'retry', attempt: 2 });
    expect(w.attempts.map((a) => [a.attempt, a.outcome])).toEqual([
      [1, 'retry'],
      [1, 'retry'],
    ]);
  });

  it('reports a hop that cannot be sent as RequeueFailed, so its message comes back', async () => {
    const w = world({ queueDown: () => true });
    const later = { ...FIRST, attempt: 2, not_before_ms: w.clock.now + 300_000 };
    await expect(w.deliver(later)).rejects.toMatchObject({ name: 'RequeueFailed', reason: 'waiting' });
  });

  it.each([
    [400, /HTTP 400: not retried/],
    [404, /HTTP 404: not retried/],
    [302, /redirects are not followed/],
  ])('does not retry HTTP %i, and says why', async (status, why) => {
    const w = world({ answers: [{ status }] });
    await expect(w.deliver()).resolves.toEqual({ kind: 'done', outcome: 'failed' });
    expect(w.attempts[0].error).toMatch(why);
    expect(w.record.state).toBe('failed');
  });

  it('retries a timeout and a refused connection', async () => {
    const timeout = Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' });
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const w = world({ answers: [timeout, refused, { status: 200 }] });
    await expect(w.deliver()).resolves.toMatchObject({ kind: 'requeued', reason: 'retry' });
    await expect(w.deliver(w.next())).resolves.toMatchObject({ kind: 'requeued', reason: 'retry' });
    await expect(w.deliver(w.next())).resolves.toMatchObject({ kind: 'done', outcome: 'delivered' });
    expect(w.attempts.map((a) => a.error)).toEqual(['no answer within 5 s', 'ECONNREFUSED: connect ECONNREFUSED', undefined]);
  });

  it('never calls a name that resolves to a private address at send time (DNS rebinding)', async () => {
    const w = world({ resolves: [['10.0.0.7']] });
    await expect(w.deliver()).resolves.toEqual({ kind: 'done', outcome: 'refused' });
    expect(w.sent).toHaveLength(0);
    expect(w.attempts[0]).toMatchObject({
      outcome: 'refused',
      error: expect.stringMatching(/partner\.example resolves to 10\.0\.0\.7, a private address/),
    });
  });

  it('makes attempts 1, 2, ... in order, each once unless its retry could not be sent, whatever copies, early receives and send failures SQS brings', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom(503, 200), { minLength: 1, maxLength: 6 }),
        fc.array(fc.record({ pick: fc.nat(), copy: fc.boolean(), early: fc.boolean(), down: fc.boolean() }), { maxLength: 60 }),
        async (statuses, steps) => {
          let down = false;
          const w = world({ answers: statuses.map((status) => ({ status })), queueDown: () => down });
          // The queue: messages not yet acknowledged. A copy stays after its receive (at-least-once).
          const bag: PostbackMessage[] = [FIRST];
          let retryFailures = 0;
          const receive = async (step: { pick: number; copy: boolean; early: boolean; down: boolean }) => {
            const index = step.pick % bag.length;
            const message = bag[index] as PostbackMessage;
            if (!step.copy) bag.splice(index, 1);
            w.clock.now += 61_000; // the visibility timeout, and any lease, ran out
            if (!step.early) w.clock.now = Math.max(w.clock.now, message.not_before_ms ?? 0);
            down = step.down;
            const queuedBefore = w.queued.length;
            try {
              await w.deliver(message);
              bag.push(...w.queued.slice(queuedBefore).map((q) => q.message));
            } catch (error) {
              if (!(error instanceof RequeueFailed)) throw error;
              if (error.reason === 'retry') retryFailures++;
              if (!step.copy) bag.push(message); // not acknowledged: it comes back
            }
          };
          for (const step of steps) if (bag.length > 0) await receive(step);
          // Then SQS behaves: no copies, nothing early, every send accepted, until the queue is empty.
          for (let guard = 0; bag.length > 0 && guard < 500; guard++) await receive({ pick: 0, copy: false, early: false, down: false });
          expect(bag).toHaveLength(0);

          // The oracle: the partner's answers in call order decide everything.
          const made = w.attempts.map((a) => a.attempt);
          const distinct = [...new Set(made)];
          expect(distinct).toEqual(distinct.map((_, i) => i + 1));
          expect(made).toEqual([...made].sort((a, b) => a - b));
          expect(made.length).toBeLessThanOrEqual(distinct.length + retryFailures);
          const answered = w.sent.map((_, call) => statuses[call] ?? 200); // the world answers 200 once the list runs out
          const delivered = answered.indexOf(200);
          if (delivered >= 0) {
            expect(delivered).toBe(w.sent.length - 1);
            expect(w.record.state).toBe('delivered');
          } else {
            expect([distinct.length, w.record.state]).toEqual([5, 'dead']);
          }
        },
      ),
      { numRuns: 150 },
    );
  });

  it('refuses a message whose attempt or time is not a bounded whole number', () => {
    const message = (extra: object) => JSON.stringify({ ...FIRST, ...extra });
    expect(parsePostbackMessage(message({ attempt: 3, not_before_ms: 1_800_000_000_000 }))).toMatchObject({ attempt: 3 });
    for (const bad of [
      { attempt: 0 },
      { attempt: 1.5 },
      { attempt: '2' },
      { attempt: 101 },
      { not_before_ms: 'soon' },
      { not_before_ms: 1e300 },
    ]) {
      expect(() => parsePostbackMessage(message(bad))).toThrow(/bad postback message/);
    }
  });

  it('reads the retry schedule from POSTBACK_RETRY_DELAYS_SECONDS', () => {
    expect(retryDelaysFromEnv(undefined)).toEqual(DELAYS);
    expect(retryDelaysFromEnv('1, 1,2,2')).toEqual([1, 1, 2, 2]);
    expect(() => retryDelaysFromEnv('1,x')).toThrow(/POSTBACK_RETRY_DELAYS_SECONDS/);
    expect(() => retryDelaysFromEnv('50000')).toThrow(/43200/);
  });
});
