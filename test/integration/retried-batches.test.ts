// Event times survive a retry, end to end through the local runtime: an audit object is written
// once (a retry of the same bytes leaves the first attempt's received_ms and corrected times, so
// `admin rebuild` agrees with the live rows), and the typed client stamps sent_at_ms at each
// attempt (a batch that waited hours for a connection keeps its events' times).

import { randomUUID } from 'node:crypto';
import { runAdmin } from '../../bin/admin';
import { type EventBatchResult, EventClient, eventBatchRequest, type SdkEvent } from '../../client/event-client';
import { AuditReader } from '../../functions/adapters/audit-reader';
import { MessageQueue } from '../../functions/adapters/message-queue';
import { DAY_MS } from '../../functions/domain/common/days';
import { resourceName } from '../../functions/shared/config';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { sleep } from '../support/wait-for';
import { credentialsOf, post } from './ingest-support';

const HOUR = 3_600_000;

let stack: LocalStack;
let tenant: Tenant;

beforeAll(async () => {
  stack = await startLocalStack();
  tenant = await createTenant({ plan: 'paid' });
});

afterAll(async () => {
  await stack?.stop();
});

const rebuild = (owner: Tenant) =>
  runAdmin(['rebuild', '--app-key', owner.app.app_key]) as Promise<{ objects: number; events: number; differences: unknown[] }>;
const storedLines = (auditKey: string) => new AuditReader(resourceName.bucket()).lines(auditKey);

describe('a batch retried with the same bytes', () => {
  it('keeps the first attempt audit object, answers the retry as the first, and leaves admin rebuild agreeing with the live rows', async () => {
    // The install's corrected time is 3 s before a UTC midnight: a retry 6 s later that rewrote the
    // object would move it to the next day in the audit store, and only there.
    const midnight = Math.floor(Date.now() / DAY_MS) * DAY_MS;
    const installUuid = randomUUID();
    const events: SdkEvent[] = [
      { event_id: 'install', event_name: 'install', install_uuid: installUuid, ts_ms: midnight - DAY_MS - 3000, platform: 'ios' },
      { event_id: 'session', event_name: 'session', install_uuid: installUuid, ts_ms: midnight - 3000 },
    ];
    const sentAtMs = Date.now();
    const request = eventBatchRequest(credentialsOf(tenant), { events, sent_at_ms: sentAtMs });

    const first = await post(stack.baseUrl, '/event', request);
    const answeredMs = Date.now();
    expect(first).toMatchObject({ status: 200, body: { accepted: 2, rejected: 0 } });
    const auditKey = (first.body as EventBatchResult).audit_key;
    const before = await storedLines(auditKey);
    expect(before[0]!.received_ms).toBeLessThanOrEqual(answeredMs);
    expect(before.map((line) => line.corrected_ts! < midnight - (line.index === 0 ? DAY_MS : 0))).toEqual([true, true]);
    await stack.pollers.drain();

    // The client never saw the first answer and sends the very same bytes again, seconds later (a
    // fixed wait: the retry's receive time must be past the midnight, which only time passing gives).
    await sleep(6000);
    const retry = await post(stack.baseUrl, '/event', request);
    expect(retry).toEqual(first);
    await stack.pollers.drain();

    expect(await storedLines(auditKey)).toEqual(before);

    expect(await rebuild(tenant)).toMatchObject({ objects: 1, events: 2, differences: [] });
  }, 60_000);

  it('hands off the object on the retry when the first attempt stopped between the audit write and the queue', async () => {
    const other = await createTenant({ plan: 'paid' });
    const installUuid = randomUUID();
    const request = eventBatchRequest(credentialsOf(other), {
      events: [{ event_id: 'install', event_name: 'install', install_uuid: installUuid, ts_ms: Date.now() - 60_000, platform: 'ios' }],
      sent_at_ms: Date.now(),
    });
    const queue = jest
      .spyOn(MessageQueue.prototype, 'send')
      .mockRejectedValueOnce(Object.assign(new Error('queue is down'), { name: 'ServiceUnavailable' }));
    try {
      expect(await post(stack.baseUrl, '/event', request)).toEqual({ status: 503, body: { error: 'audit_write_failed' } });
    } finally {
      queue.mockRestore();
    }
    const retry = await post(stack.baseUrl, '/event', request);
    expect(retry).toMatchObject({ status: 200, body: { accepted: 1 } });
    await stack.pollers.drain();

    expect(await rebuild(other)).toMatchObject({ objects: 1, events: 1, differences: [] });
    const installs = (await runAdmin(['install', 'show', '--app-key', other.app.app_key, '--install-uuid', installUuid])) as {
      installs: unknown[];
    };
    expect(installs.installs).toHaveLength(1);
  }, 60_000);
});

describe('the typed client after hours offline', () => {
  it('stamps sent_at_ms when the batch finally goes out, so its events keep their times', async () => {
    const sixHoursAgo = Date.now() - 6 * HOUR;
    const installUuid = randomUUID();
    const events: SdkEvent[] = [
      { event_id: 'install', event_name: 'install', install_uuid: installUuid, ts_ms: sixHoursAgo, platform: 'android' },
      { event_id: 'purchase', event_name: 'purchase', install_uuid: installUuid, ts_ms: sixHoursAgo + 60_000, revenue_usd: 1.99 },
    ];

    // The app hands the batch to the client six hours ago, on a device with no connection: the
    // device's clock reads six hours ago until the first attempt has failed (only the client runs
    // in between: the attempt fails before any request leaves), and the backoff ends when the
    // device is online again, now.
    const realNow = Date.now.bind(Date);
    const clock = jest.spyOn(Date, 'now').mockImplementation(() => realNow() - 6 * HOUR);
    let online = false;
    const client = new EventClient({
      ...credentialsOf(tenant),
      baseUrl: stack.baseUrl,
      fetch: (input, init) => {
        clock.mockRestore();
        return online ? fetch(input, init) : Promise.reject(new TypeError('fetch failed'));
      },
      sleep: async () => {
        online = true;
      },
    });

    const result = await client.sendEvents(events);
    expect(result).toMatchObject({ accepted: 2, rejected: 0 });
    const lines = await storedLines(result.audit_key);
    // corrected_ts = ts_ms + (received_ms - sent_at_ms): what is left of the skew is the request's own trip.
    for (const [n, line] of lines.entries()) {
      expect(Math.abs(line.corrected_ts! - events[n]!.ts_ms)).toBeLessThan(5000);
    }
  });
});
