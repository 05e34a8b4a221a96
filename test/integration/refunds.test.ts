// Refunds through the local runtime (issue 40, item 6): an install and a purchase two days ago, then
// a refund of part of it by its transaction id, the same refund again, and a refund asking more than
// the purchase has left by its event id. The performance report nets what the refunds took back
// (never more than the purchase counted) on the refunds' own day and from the install's cohort
// revenue, while the interface's revenue report stays the purchase alone. Every answer is what
// docs/openapi.yaml says of it.

import { randomUUID } from 'node:crypto';
import { eventBatchRequest } from '../../client/event-client';
import { dayOf } from '../../functions/domain/common/days';
import { problemsOf } from '../support/documented-answers';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { OpenApi } from '../support/openapi';
import { waitFor } from '../support/wait-for';
import { credentialsOf, post } from './ingest-support';

const api = new OpenApi();
const DAY_MS = 86_400_000;
let stack: LocalStack;
let tenant: Tenant;

beforeAll(async () => {
  stack = await startLocalStack();
  tenant = await createTenant();
});

afterAll(async () => {
  await stack?.stop();
});

/** A GET of the API with the server key, its answer held to OpenAPI. */
async function answer(path: string): Promise<Record<string, unknown>> {
  const response = await fetch(`${stack.baseUrl}${path}`, { headers: { authorization: `Bearer ${tenant.serverKey}` } });
  const text = await response.text();
  const answer = {
    method: 'GET',
    path: path.split('?')[0] ?? path,
    status: response.status,
    headers: Object.fromEntries(response.headers),
    text,
  };
  expect({ status: answer.status, problems: problemsOf(api, answer) }).toEqual({ status: 200, problems: [] });
  return JSON.parse(text) as Record<string, unknown>;
}

const report = async (path: string) => (await answer(path)).rows as Record<string, unknown>[];

describe('refunds, end to end', () => {
  it('nets a purchase refunded once, twice sent and over-asked, in the performance report and leaves the revenue report alone', async () => {
    const installUuid = randomUUID();
    const installMs = Date.now() - 2 * DAY_MS;
    const refundMs = Date.now() - 60_000;
    const [installDay, refundDay] = [dayOf(installMs), dayOf(refundMs)];
    const event = (id: string, name: string, tsMs: number, extra: object = {}) => ({
      event_id: id,
      event_name: name,
      install_uuid: installUuid,
      ts_ms: tsMs,
      ...extra,
    });
    const sdk = async (events: object[]) =>
      (await post(stack.baseUrl, '/event', eventBatchRequest(credentialsOf(tenant), { events, sent_at_ms: Date.now() }))).body;

    expect(
      await sdk([
        event('i-1', 'install', installMs, { platform: 'android' }),
        event('p-1', 'purchase', installMs + 1000, { revenue_usd: 9.99, transaction_id: 'GPA.3372-4150-9088-12345' }),
      ]),
    ).toMatchObject({ accepted: 2, rejected: 0 });
    const partOf = event('r-1', 'refund', refundMs, {
      refund: { transaction_id: 'GPA.3372-4150-9088-12345', revenue: 4, currency: 'USD' },
    });
    expect(await sdk([partOf])).toMatchObject({ accepted: 1 });
    // The same refund again (a lost answer), and one asking more than the purchase has left, and one refused.
    expect(
      await sdk([
        partOf,
        event('r-2', 'refund', refundMs, { refund: { purchase_event_id: 'p-1', revenue: 8, currency: 'USD' } }),
        event('r-3', 'refund', refundMs, { refund: { purchase_event_id: 'p-1', revenue: -1, currency: 'USD' } }),
      ]),
    ).toMatchObject({
      accepted: 2,
      rejected: 1,
      results: [{ status: 'accepted' }, { status: 'accepted' }, { status: 'rejected', reason: 'bad_refund', field: 'refund.revenue' }],
    });

    // The oracle: 4 dollars, then what the 9.99 purchase has left (5.99), on the refunds' day and in the install's d7 and d30 cohort.
    const window = `since_ms=${installMs - DAY_MS}&until_ms=${Date.now() + 60_000}`;
    let rows: Record<string, unknown>[] = [];
    await waitFor(
      async () => {
        rows = await report(`/api/v1/reports/performance?${window}`);
        return rows.find((row) => row.day === refundDay)?.refunds === 2;
      },
      { timeoutMs: 30_000 },
    );
    expect(rows.find((row) => row.day === installDay)).toMatchObject({
      partner: 'organic',
      installs: 1,
      revenue_usd: 9.99,
      refunds: 0,
      refunds_usd: 0,
      cohort_revenue_d0_usd: 9.99,
      cohort_revenue_d7_usd: 0,
      cohort_revenue_d30_usd: 0,
      total_revenue_usd: 9.99,
    });
    expect(rows.find((row) => row.day === refundDay)).toMatchObject({
      partner: 'organic',
      installs: 0,
      revenue_usd: -9.99,
      recent_revenue_usd: -9.99,
      refunds: 2,
      refunds_usd: 9.99,
    });

    // The interface's revenue report is purchases: the refunded purchase stays in it.
    expect(await report(`/api/v1/reports/revenue?${window}`)).toEqual([
      { day: installDay, partner: 'organic', purchases: 1, revenue_usd: 9.99, arppu_usd: 9.99 },
    ]);
    // The stream serves each refund once with its refund as sent, and the purchase with its transaction id.
    let streamed: Record<string, unknown>[] = [];
    await waitFor(
      async () => {
        streamed = (await answer('/api/v1/stream/events?limit=1000')).events as Record<string, unknown>[];
        return streamed.some((line) => line.event_id === 'r-2');
      },
      { timeoutMs: 30_000 },
    );
    expect(streamed.find((line) => line.event_id === 'p-1')).toMatchObject({ transaction_id: 'GPA.3372-4150-9088-12345' });
    expect(
      streamed
        .filter((line) => line.event_name === 'refund')
        .map(({ event_id, revenue_usd, refund }) => ({ event_id, revenue_usd, refund })),
    ).toEqual(
      expect.arrayContaining([
        { event_id: 'r-1', revenue_usd: 4, refund: { transaction_id: 'GPA.3372-4150-9088-12345', revenue: 4, currency: 'USD' } },
        { event_id: 'r-2', revenue_usd: 8, refund: { purchase_event_id: 'p-1', revenue: 8, currency: 'USD' } },
      ]),
    );
    expect(streamed.filter((line) => line.event_name === 'refund')).toHaveLength(2);
    // The events report counts each refund once, with the dollars it asked back.
    const events = await report(`/api/v1/reports/events?${window}`);
    expect(events.find((row) => row.event_name === 'refund')).toEqual({
      day: refundDay,
      event_name: 'refund',
      events: 2,
      unique_installs: 1,
      revenue_usd: 12,
    });
  });
});
