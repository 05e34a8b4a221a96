import {
  type AttemptRecord,
  type DeliveryPorts,
  deliverPostback,
  type HttpResult,
  retryDelaysFromEnv,
} from '../../../functions/domain/partner-postbacks/deliver';
import type { PostbackRecord } from '../../../functions/domain/partner-postbacks/trigger';

const DELAYS = [300, 3600, 21_600, 43_200];

function world(options: { answers?: (HttpResult | Error)[]; resolves?: string[][] } = {}) {
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
  const sent: { url: string; address: string }[] = [];
  const attempts: AttemptRecord[] = [];
  const answers = [...(options.answers ?? [])];
  const resolves = [...(options.resolves ?? [])];
  const ports: DeliveryPorts = {
    records: {
      get: async () => ({ ...record }),
      claim: async (_app, _id, nowMs, leaseMs) => {
        if (!['new', 'queued'].includes(record.state) || leaseUntil > nowMs) return false;
        leaseUntil = nowMs + leaseMs;
        return true;
      },
      settle: async (_app, _id, state) => {
        record.state = state;
        leaseUntil = 0;
      },
      logAttempt: async (attempt) => void attempts.push(attempt),
    },
    resolve: async () => (resolves.shift() ?? ['93.184.215.14']).map((address) => ({ address, family: 4 as const })),
    send: async ({ url, address }) => {
      sent.push({ url: url.href, address: address.address });
      const answer = answers.shift() ?? { status: 200 };
      if (answer instanceof Error) throw answer;
      return answer;
    },
  };
  let now = 1_000_000;
  const deliver = (receiveCount: number) =>
    deliverPostback(ports, { version: 1, app_id: 'app_1', postback_id: 'pb1' }, receiveCount, {
      policy: { allowLoopback: false },
      retryDelaysSeconds: DELAYS,
      nowMs: () => (now += 10),
    });
  return { record, sent, attempts, deliver, ports, hold: () => (leaseUntil = Number.MAX_SAFE_INTEGER) };
}

describe('delivering a postback', () => {
  it('calls the partner once at the checked address and records the delivery', async () => {
    const w = world({ answers: [{ status: 204 }] });
    await expect(w.deliver(1)).resolves.toEqual({ kind: 'done', outcome: 'delivered' });
    expect(w.sent).toEqual([{ url: 'https://partner.example/cb?id=pb1', address: '93.184.215.14' }]);
    expect(w.attempts).toMatchObject([{ attempt: 1, outcome: 'delivered', response_code: 204, partner: 'acme', postback_id: 'pb1' }]);
    expect(w.record.state).toBe('delivered');
  });

  it('sends nothing for a duplicate message of a delivered postback', async () => {
    const w = world();
    await w.deliver(1);
    await expect(w.deliver(1)).resolves.toEqual({ kind: 'done', outcome: 'duplicate' });
    expect(w.sent).toHaveLength(1);
  });

  it('sends nothing while another copy of the message holds the postback', async () => {
    const w = world();
    w.hold();
    await expect(w.deliver(1)).resolves.toMatchObject({ kind: 'retry', outcome: 'busy' });
    expect(w.sent).toHaveLength(0);
  });

  it.each([500, 502, 503, 429])('retries HTTP %i on the schedule and gives up after the fifth attempt', async (status) => {
    const w = world({ answers: Array.from({ length: 5 }, () => ({ status })) });
    for (let attempt = 1; attempt <= 4; attempt++) {
      await expect(w.deliver(attempt)).resolves.toEqual({ kind: 'retry', delaySeconds: DELAYS[attempt - 1], outcome: 'retry' });
    }
    await expect(w.deliver(5)).resolves.toEqual({ kind: 'dead' });
    expect(w.sent).toHaveLength(5);
    expect(w.attempts.map((a) => [a.attempt, a.outcome, a.response_code])).toEqual([
      [1, 'retry', status],
      [2, 'retry', status],
      [3, 'retry', status],
      [4, 'retry', status],
      [5, 'dead', status],
    ]);
    // Its message keeps failing until SQS moves it to the DLQ; the partner is not called again.
    await expect(w.deliver(6)).resolves.toEqual({ kind: 'dead' });
    expect(w.sent).toHaveLength(5);
  });

  it('delivers on the third attempt after two 500s, once', async () => {
    const w = world({ answers: [{ status: 500 }, { status: 500 }, { status: 200 }] });
    await w.deliver(1);
    await w.deliver(2);
    await expect(w.deliver(3)).resolves.toEqual({ kind: 'done', outcome: 'delivered' });
    await expect(w.deliver(4)).resolves.toEqual({ kind: 'done', outcome: 'duplicate' });
    expect(w.sent).toHaveLength(3);
  });

  it.each([
    [400, /HTTP 400: not retried/],
    [404, /HTTP 404: not retried/],
    [302, /redirects are not followed/],
  ])('does not retry HTTP %i, and says why', async (status, why) => {
    const w = world({ answers: [{ status }] });
    await expect(w.deliver(1)).resolves.toEqual({ kind: 'done', outcome: 'failed' });
    expect(w.attempts[0].error).toMatch(why);
    expect(w.record.state).toBe('failed');
  });

  it('retries a timeout and a refused connection', async () => {
    const timeout = Object.assign(new Error('The operation was aborted due to timeout'), { name: 'TimeoutError' });
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const w = world({ answers: [timeout, refused, { status: 200 }] });
    await expect(w.deliver(1)).resolves.toMatchObject({ kind: 'retry' });
    await expect(w.deliver(2)).resolves.toMatchObject({ kind: 'retry' });
    await expect(w.deliver(3)).resolves.toMatchObject({ kind: 'done', outcome: 'delivered' });
    expect(w.attempts.map((a) => a.error)).toEqual(['no answer within 5 s', 'ECONNREFUSED: connect ECONNREFUSED', undefined]);
  });

  it('never calls a name that resolves to a private address at send time (DNS rebinding)', async () => {
    const w = world({ resolves: [['10.0.0.7']] });
    await expect(w.deliver(1)).resolves.toEqual({ kind: 'done', outcome: 'refused' });
    expect(w.sent).toHaveLength(0);
    expect(w.attempts[0]).toMatchObject({
      outcome: 'refused',
      error: expect.stringMatching(/partner\.example resolves to 10\.0\.0\.7, a private address/),
    });
  });

  it('reads the retry schedule from POSTBACK_RETRY_DELAYS_SECONDS', () => {
    expect(retryDelaysFromEnv(undefined)).toEqual(DELAYS);
    expect(retryDelaysFromEnv('1, 1,2,2')).toEqual([1, 1, 2, 2]);
    expect(() => retryDelaysFromEnv('1,x')).toThrow(/POSTBACK_RETRY_DELAYS_SECONDS/);
    expect(() => retryDelaysFromEnv('50000')).toThrow(/43200/);
  });
});
