// The local runtime at its limit: many clients sending signed batches at once for a bounded time,
// with identical retries (some while the first copy is still in flight) and re-encoded copies
// of the same events. Afterwards every event a 200 answered `accepted` is in the rows exactly
// once, in all four families and in the events report over HTTP, and the month's cap count is
// each distinct batch's accepted events once.

import { SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { sqsClient } from '../../../functions/shared/clients';
import { resourceName } from '../../../functions/shared/config';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../../support/local-stack';
import { captureLogs, type LogCapture } from '../../support/log-capture';
import { aggregationSettled, type Batch, capCount, eventsReport, queueDepth, storedRows, Traffic } from './traffic';

const CLIENTS = 24;
const LOAD_MS = 10_000;
// The load lasts LOAD_MS, and longer on a slow or busy machine until MIN_BATCHES were sent (at
// most MAX_LOAD_MS): what the test needs is that much traffic, not that much speed.
const MIN_BATCHES = 320;
const MAX_LOAD_MS = 40_000;
// The aggregator's error lines are what tell a delivery that failed; the handlers' logger is
// made when they first load, after this.
process.env.POWERTOOLS_LOG_LEVEL = 'ERROR';

let stack: LocalStack;
let tenant: Tenant;
let logs: LogCapture;
beforeAll(async () => {
  stack = await startLocalStack({ trustProxy: true });
  tenant = await createTenant({ plan: 'paid' });
  // A delivery that failed comes back after the queue's visibility timeout: 10 s here rather
  // than 120 (and one that keeps failing reaches the DLQ within a minute), so the test sees the
  // outcome within its time; failed deliveries are asserted on separately.
  await sqsClient().send(
    new SetQueueAttributesCommand({ QueueUrl: stack.endpoints.queues.aggregation, Attributes: { VisibilityTimeout: '10' } }),
  );
  await stack.pollers.drain();
  logs = captureLogs();
});
const notes: string[] = [];
afterAll(async () => {
  await stack?.stop();
  logs?.restore();
  if (process.env.RELIABILITY_VERBOSE) process.stderr.write(`${notes.join('\n')}\n`);
});

it("counts every accepted event exactly once after a burst at the runtime's limit with retries and re-sent copies", async () => {
  const traffic = new Traffic(stack.baseUrl, tenant, { installs: 80 });
  const later: Batch[] = [];
  const began = Date.now();
  const stopAt = began + MAX_LOAD_MS;
  const loading = () => Date.now() < began + LOAD_MS || (traffic.batches.length < MIN_BATCHES && Date.now() < stopAt);
  const latencies: number[] = [];

  const client = async (n: number) => {
    const ip = `198.51.${100 + n}.7`;
    while (loading()) {
      const roll = Math.random();
      const batch = traffic.batch(1 + Math.floor(Math.random() * 8), { withRejected: Math.random() < 0.2 });
      const started = Date.now();
      if (roll < Number(process.env.SIMULTANEOUS ?? 0.1)) {
        // The same bytes twice at once: a client whose first attempt timed out on its side.
        await Promise.all([traffic.sendUntilAnswered(batch, stopAt + 30_000, ip), traffic.sendUntilAnswered(batch, stopAt + 30_000, ip)]);
      } else {
        await traffic.sendUntilAnswered(batch, stopAt + 30_000, ip);
      }
      latencies.push(Date.now() - started);
      if (roll > 0.85) later.push(batch);
      if (roll > 0.95) await traffic.sendUntilAnswered(traffic.reencoded(batch), stopAt + 30_000, ip);
      // A retry of an earlier batch whose answer was lost, sent while the load goes on.
      const retry = later.shift();
      if (retry && Math.random() < 0.5) await traffic.sendUntilAnswered(retry, stopAt + 30_000, ip);
    }
  };
  await Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n)));
  const elapsedMs = Date.now() - began;
  for (const batch of later) await traffic.sendUntilAnswered(batch, Date.now() + 30_000);

  // Every batch got a 200 in the end, and nothing else (a 503 under load alone would be a fault).
  const answers = traffic.batches.flatMap((batch) => batch.answers.map((answer) => `${answer.status} ${answer.code ?? ''}`.trim()));
  const tally: Record<string, number> = {};
  for (const answer of answers) tally[answer] = (tally[answer] ?? 0) + 1;
  expect(Object.keys(tally)).toEqual(['200']);
  expect(traffic.batches.every((batch) => batch.taken !== undefined)).toBe(true);

  const accepted = traffic.acceptedEvents();
  const distinct = new Set(accepted.map((event) => `${event.installUuid}|${event.eventId}`)).size;
  // It was load: enough batches and events to keep the one process busy the whole time, and
  // enough repeats that exactly-once was really put to the test.
  expect(traffic.batches.length).toBeGreaterThan(300);
  expect(accepted.length - distinct).toBeGreaterThan(100);
  {
    const sorted = [...latencies].sort((a, b) => a - b);
    notes.push(
      `load: ${traffic.batches.length} batches (${answers.length} requests), ${distinct} distinct accepted events in ${elapsedMs} ms: ` +
        `${Math.round((answers.length * 1000) / elapsedMs)} requests/s, p50 ${sorted[Math.floor(sorted.length / 2)]} ms, p99 ${sorted[Math.floor(sorted.length * 0.99)]} ms`,
    );
  }

  const settling = Date.now();
  await aggregationSettled(stack, 90_000);
  notes.push(`load: aggregation settled ${Date.now() - settling} ms after the load`);
  // A batch sent twice at once must not corrupt its audit object (see the next test): its messages
  // would end in the DLQ and its events be missing from every row below.
  expect(await queueDepth(stack.endpoints.dead_letter_queues.aggregation)).toBe(0);
  const expected = traffic.expectedRows();
  expect(await storedRows(tenant.app.app_id)).toEqual(expected);
  expect(await eventsReport(stack.baseUrl, tenant.serverKey)).toEqual(expected.events);
  expect(await capCount(tenant.company.company_id)).toBe(traffic.expectedCapCount());

  // No delivery failed on the way: a failed one is only counted a visibility timeout (2 minutes
  // in the manifest) later, and one judged poison raises the DLQ path's metric for nothing.
  // A corrupted object would be judged poison here ("unreadable_object ... is not gzip").
  const failures = logs
    .lines()
    .filter((line) => /"level":"ERROR"/.test(line))
    .map((line) => JSON.parse(line) as { message: string; reason?: string });
  expect(failures.map((failure) => `${failure.message} ${failure.reason ?? ''}`.trim())).toEqual([]);
}, 240_000);

// Found by this suite, fixed in local/s3-atomic-puts.ts. The audit object is named after the body,
// so copies of one batch sent at once (a client that retried while its first attempt was still in
// flight) write the same key at the same time, and each attempt's object differs (received_ms and
// the corrected times are the attempt's own). s3rver wrote objects in place, so the writes
// interleaved into a file that was not gzip: every attempt answered 200, the aggregator could never
// read the object, and its accepted events were never counted. S3 replaces an object atomically;
// the local emulator now does too.
it('keeps the audit object of a batch sent several times at once readable', async () => {
  const { AuditReader } = await import('../../../functions/adapters/audit-reader');
  const reader = new AuditReader(resourceName.bucket());
  const traffic = new Traffic(stack.baseUrl, tenant, { installs: 20 });
  const unreadable: string[] = [];
  for (let round = 0; round < 10; round++) {
    const batch = traffic.batch(300, { gzip: true });
    await Promise.all([1, 2, 3].map(() => traffic.send(batch)));
    expect(batch.answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    const key = batch.taken!.audit_key;
    await reader.lines(key).catch((error: Error) => unreadable.push(`${key}: ${error.message}`));
  }
  expect(unreadable).toEqual([]);
}, 60_000);
