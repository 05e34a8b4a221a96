import fc from 'fast-check';
import type { HealthReport } from '../../../functions/domain/health/health';
import { rejectedMetric, rejectionsByReason } from '../../../functions/domain/health/ingestion-metrics';
import {
  type HealthSources,
  ingestionHours,
  operatorHealth,
  type PostbackAttempt,
  postbackFailures,
  type QueueDepth,
  serviceStatus,
} from '../../../functions/domain/health/operator-health';
import type { RejectionReason } from '../../../functions/domain/ingest/event-validation';

const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 10, 28, 21, 30);
const OK_PROBE: HealthReport = {
  status: 'ok',
  bindings: { relational_store: 'ok', object_store: 'ok', key_value_store: 'ok', queues: 'ok' },
};
const queue = (over: Partial<QueueDepth> = {}): QueueDepth => ({
  queue: 'aggregation',
  messages: 0,
  in_flight: 0,
  oldest_age_seconds: 0,
  alarm_after_seconds: 900,
  dead_letter_messages: 0,
  ...over,
});

/** Sources that all answer, healthy; a test replaces the one it breaks. */
function sources(over: Partial<HealthSources> = {}): HealthSources {
  return {
    environment: 'local',
    metricHours: async () => new Map(),
    queues: async () => [queue(), queue({ queue: 'postbacks', alarm_after_seconds: null })],
    postbackAttempts: async () => ({ attempts: [], truncated: false }),
    probe: async () => OK_PROBE,
    alarms: async () => null,
    ...over,
  };
}

describe('the operators health view', () => {
  it('says nothing is broken when every part reads healthy', async () => {
    const view = await operatorHealth(sources(), NOW);
    expect(view).toMatchObject({ status: 'ok', problems: [], environment: 'local', alarms: { source: 'none', alarms: [] } });
    expect(view.aggregation).toEqual({ oldest_message_age_seconds: 0, messages: 0, in_flight: 0, alarm_after_seconds: 900 });
    expect(view.dead_letter_queues).toEqual([
      { queue: 'aggregation', messages: 0 },
      { queue: 'postbacks', messages: 0 },
    ]);
  });

  it('names the failing binding of the probe and says something is broken', async () => {
    const probe = async (): Promise<HealthReport> => ({
      status: 'failing',
      bindings: { ...OK_PROBE.bindings, object_store: 'unreachable' },
    });
    const view = await operatorHealth(sources({ probe }), NOW);
    expect(view.status).toBe('broken');
    expect(view.problems).toEqual(['health probe: object_store is failing (unreachable)']);
  });

  it('answers with the part it could not read as an error, and the others read, when a store is down', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const view = await operatorHealth(sources({ postbackAttempts: () => Promise.reject(refused) }), NOW);
    expect(view.status).toBe('broken');
    expect(view.postbacks).toEqual({ error: 'unreachable' });
    expect(view.problems).toEqual(['postbacks: could not be read (unreachable)']);
    expect(view.probe).toEqual(OK_PROBE);
  });

  it('gives a part that does not answer as a timeout within its deadline', async () => {
    const started = Date.now();
    const view = await operatorHealth(sources({ queues: () => new Promise(() => undefined) }), NOW, 50);
    expect(Date.now() - started).toBeLessThan(2000);
    expect(view.aggregation).toEqual({ error: 'timeout' });
    expect(view.dead_letter_queues).toEqual({ error: 'timeout' });
    expect(view.problems).toEqual(['queues and dead-letter queues: could not be read (timeout)']);
  });

  it('counts a dead letter, a queue past its age alarm and a firing alarm as broken', async () => {
    const view = await operatorHealth(
      sources({
        queues: async () => [
          queue({ oldest_age_seconds: 901 }),
          queue({ queue: 'postbacks', dead_letter_messages: 3, alarm_after_seconds: null }),
        ],
        alarms: async () => [
          { name: 'Svc-AuditWriteFailed', state: 'ALARM', reason: 'Threshold Crossed', updated_at: null },
          { name: 'Svc-Healthy', state: 'OK', reason: '', updated_at: null },
        ],
      }),
      NOW,
    );
    expect(view.problems).toEqual([
      'aggregation lags: its oldest message is 901 s old (alarm after 900 s)',
      'dead-letter queue of postbacks holds 3 messages',
      'alarm Svc-AuditWriteFailed is firing',
    ]);
    expect(view.alarms).toMatchObject({ source: 'cloudwatch' });
  });

  it('asks for the 24 hours that end with the current one, and every reason metric', async () => {
    const asked: { names: readonly string[]; fromMs: number; toMs: number }[] = [];
    await operatorHealth(
      sources({
        metricHours: async (names, fromMs, toMs) => {
          asked.push({ names, fromMs, toMs });
          return new Map();
        },
      }),
      NOW,
    );
    expect(asked).toEqual([
      {
        names: expect.arrayContaining(['EventsAccepted', 'EventsRejected', 'EventsRejected_bad_timestamp']),
        fromMs: NOW - 23.5 * HOUR,
        toMs: NOW + 0.5 * HOUR,
      },
    ]);
  });
});

const REASONS: RejectionReason[] = ['bad_event', 'bad_timestamp', 'bad_currency'];

describe('the service status every member sees', () => {
  const broken: Partial<HealthSources> = {
    queues: async () => [
      queue({ oldest_age_seconds: 901 }),
      queue({ queue: 'postbacks', dead_letter_messages: 2, alarm_after_seconds: null }),
    ],
    probe: async () => ({ status: 'failing', bindings: { ...OK_PROBE.bindings, queues: 'unreachable' } }),
    alarms: async () => [{ name: 'Svc-AuditWriteFailed', state: 'ALARM', reason: '', updated_at: null }],
  };

  it.each([
    ['healthy', {}],
    ['broken', broken],
    ['with a part unreadable', { alarms: () => Promise.reject(new Error('AccessDenied')) }],
  ])('gives the view verdict and problems when %s, without reading the metrics or any postback attempt', async (_case, over) => {
    const read: string[] = [];
    const counted: Partial<HealthSources> = {
      metricHours: async () => {
        read.push('metrics');
        return new Map();
      },
      postbackAttempts: async () => {
        read.push('postbacks');
        return { attempts: [], truncated: false };
      },
    };
    const view = await operatorHealth(sources({ ...over, ...counted }), NOW);
    read.length = 0;
    expect(await serviceStatus(sources({ ...over, ...counted }), NOW)).toEqual({
      status: view.status,
      problems: view.problems,
      checked_at: view.checked_at,
    });
    expect(read).toEqual([]);
  });
});

describe('ingestion per hour', () => {
  it('puts each hour sum in its hour, zeros elsewhere, reasons with none left out', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            hour: fc.integer({ min: 0, max: 23 }),
            accepted: fc.nat(1000),
            rejected: fc.dictionary(fc.constantFrom(...REASONS), fc.nat(50)),
          }),
          {
            maxLength: 30,
          },
        ),
        (recorded) => {
          const fromMs = NOW - (NOW % HOUR) - 23 * HOUR;
          // The oracle: a plain array of 24 hours, each recorded entry added where it belongs.
          const expected = Array.from({ length: 24 }, () => ({ accepted: 0, rejected: 0, byReason: {} as Record<string, number> }));
          const sums = new Map<number, Record<string, number>>();
          for (const { hour, accepted, rejected } of recorded) {
            const rejectedTotal = Object.values(rejected).reduce((a, b) => a + b, 0);
            const sum = sums.get(fromMs + hour * HOUR) ?? {};
            sum.EventsAccepted = (sum.EventsAccepted ?? 0) + accepted;
            sum.EventsRejected = (sum.EventsRejected ?? 0) + rejectedTotal;
            for (const [reason, n] of Object.entries(rejected)) {
              sum[rejectedMetric(reason as RejectionReason)] = (sum[rejectedMetric(reason as RejectionReason)] ?? 0) + n;
              if (n > 0) expected[hour]!.byReason[reason] = (expected[hour]!.byReason[reason] ?? 0) + n;
            }
            sums.set(fromMs + hour * HOUR, sum);
            expected[hour]!.accepted += accepted;
            expected[hour]!.rejected += rejectedTotal;
          }
          const hours = ingestionHours(sums, fromMs, fromMs + 24 * HOUR);
          expect(hours.map((h) => h.hour)).toEqual(
            Array.from({ length: 24 }, (_, i) => new Date(fromMs + i * HOUR).toISOString().slice(0, 13) + ':00Z'),
          );
          expect(hours.map(({ accepted, rejected, rejected_by_reason }) => ({ accepted, rejected, byReason: rejected_by_reason }))).toEqual(
            expected,
          );
        },
      ),
    );
  });

  it('counts a batch verdicts rejected per reason', () => {
    const verdicts = [
      { status: 'accepted' },
      { status: 'rejected', reason: 'bad_timestamp' as const },
      { status: 'rejected', reason: 'bad_event' as const },
      { status: 'rejected', reason: 'bad_timestamp' as const },
    ];
    expect([...rejectionsByReason(verdicts)]).toEqual([
      ['bad_timestamp', 2],
      ['bad_event', 1],
    ]);
  });
});

describe('postback failures by partner', () => {
  const OUTCOMES = ['delivered', 'retry', 'failed', 'refused', 'dead', 'withheld'];
  it('counts every attempt but the withheld ones, and every one not delivered as failed', () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ partner: fc.constantFrom('meta', 'google', 'tiktok'), outcome: fc.constantFrom(...OUTCOMES) }), {
          maxLength: 60,
        }),
        (attempts: PostbackAttempt[]) => {
          const rows = postbackFailures(attempts);
          for (const partner of ['meta', 'google', 'tiktok']) {
            const counted = attempts.filter((a) => a.partner === partner && a.outcome !== 'withheld');
            const failed = counted.filter((a) => a.outcome !== 'delivered').length;
            const row = rows.find((r) => r.partner === partner);
            if (counted.length === 0) expect(row).toBeUndefined();
            else {
              expect(row).toEqual({ partner, attempts: counted.length, failed, failure_rate: expect.any(Number) });
              expect(Math.abs((row?.failure_rate ?? -1) - failed / counted.length)).toBeLessThanOrEqual(0.0005);
            }
          }
          expect(rows.map((r) => r.attempts)).toEqual(rows.map((r) => r.attempts).sort((a, b) => b - a));
        },
      ),
    );
  });
});
