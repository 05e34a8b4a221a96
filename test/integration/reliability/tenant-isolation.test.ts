// Tenant isolation across ingestion, privacy, links and reports: tenant A's keys never read or
// write tenant B's data, whichever mix of A's and B's keys, ids and signing secrets a request
// carries. Property-based over the mixes and over the report parameters.

import { randomUUID } from 'node:crypto';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { signedRequest } from '../../../client/event-client';
import { LinkStore } from '../../../functions/adapters/link-store';
import { dynamoClient } from '../../../functions/shared/clients';
import { resourceName } from '../../../functions/shared/config';
import { errorOf, httpCall } from '../../support/documented-answers';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../../support/local-stack';
import { MOBILE } from '../../unit/links/user-agents';
import { aggregationSettled, storedRows } from './traffic';

const DAY = 86_400_000;
let stack: LocalStack;
let a: Tenant;
let b: Tenant;
beforeAll(async () => {
  stack = await startLocalStack({ trustProxy: true });
  a = await createTenant({ plan: 'paid' });
  b = await createTenant({ plan: 'paid' });
});
afterAll(async () => {
  await stack?.stop();
});

const credentials = (t: Tenant) => ({ companyKey: t.company.company_key, appKey: t.app.app_key, signingSecret: t.app.signing_secret });
const post = (target: string, headers: Record<string, string>, body: Buffer) =>
  httpCall(stack.baseUrl, { method: 'POST', target, headers, body });
const report = (name: string, key: string, query = '') =>
  httpCall(stack.baseUrl, { method: 'GET', target: `/api/v1/reports/${name}${query}`, headers: { authorization: `Bearer ${key}` } });

/** An install of a tenant with a purchase, sent with its own keys (the baseline each test compares with). */
async function installOf(t: Tenant, extra: Record<string, unknown> = {}, ip = '198.51.100.44', uuid: string = randomUUID()) {
  const now = Date.now();
  const request = signedRequest(credentials(t), {
    sent_at_ms: now,
    events: [
      { event_id: 'install', event_name: 'install', install_uuid: uuid, ts_ms: now, platform: 'ios', ...extra },
      { event_id: 'buy', event_name: 'purchase', install_uuid: uuid, ts_ms: now + 1000, revenue_usd: 2.5 },
    ],
  });
  const answer = await post('/event', { ...request.headers, 'x-forwarded-for': ip }, request.body);
  expect(answer.status).toBe(200);
  return uuid;
}

type Part = 'company' | 'app' | 'secret';
const mixes = fc.record({
  company: fc.constantFrom('a', 'b'),
  app: fc.constantFrom('a', 'b'),
  secret: fc.constantFrom('a', 'b'),
}) as fc.Arbitrary<Record<Part, 'a' | 'b'>>;
const headersOf = (mix: Record<Part, 'a' | 'b'>, body: unknown) => {
  const t = (which: 'a' | 'b') => (which === 'a' ? a : b);
  const request = signedRequest(
    { companyKey: t(mix.company).company.company_key, appKey: t(mix.app).app.app_key, signingSecret: t(mix.secret).app.signing_secret },
    body,
  );
  return request;
};

describe('ingestion and privacy', () => {
  it("takes a batch or a deletion only when company key, app key and signing secret are all one tenant's", async () => {
    await fc.assert(
      fc.asyncProperty(mixes, fc.constantFrom('/event', '/privacy/delete'), async (mix, path) => {
        const body =
          path === '/event'
            ? { sent_at_ms: Date.now(), events: [{ event_id: 'x', event_name: 'session', install_uuid: randomUUID(), ts_ms: Date.now() }] }
            : { install_uuid: randomUUID() };
        const request = headersOf(mix, body);
        const answer = await post(path, request.headers, request.body);
        const own = mix.company === mix.app && mix.app === mix.secret;
        const expected = own
          ? { status: path === '/event' ? 200 : 202, error: undefined }
          : mix.company !== mix.app
            ? { status: 401, error: 'app_company_mismatch' }
            : { status: 401, error: 'bad_signature' };
        expect({ mix, status: answer.status, error: errorOf(answer) }).toEqual({ mix, ...expected });
      }),
      { numRuns: 40 },
    );
  });

  it("deletes only A's data on A's request, even for an install_uuid B has too", async () => {
    // The same install_uuid in both apps (a uuid the client chose, or one A learned of B's).
    const shared = await installOf(b);
    await installOf(a, {}, '198.51.100.45', shared);
    await aggregationSettled(stack, 30_000);
    const itemsOf = async (t: Tenant) => {
      const { Items = [] } = await dynamoClient().send(new ScanCommand({ TableName: resourceName.table('installs') }));
      return Items.filter((item) => item.pk === `${t.app.app_id}#${shared}`).length;
    };
    const before = { rows: await storedRows(b.app.app_id), items: await itemsOf(b) };
    expect(before.items).toBeGreaterThan(0);
    expect(await itemsOf(a)).toBeGreaterThan(0);

    const request = signedRequest(credentials(a), { install_uuid: shared });
    expect((await post('/privacy/delete', request.headers, request.body)).status).toBe(202);
    await stack.scheduler.run('privacy-drain');

    // A's copy is gone (the drain ran), B's install and rows are exactly as they were.
    expect(await itemsOf(a)).toBe(0);
    expect({ rows: await storedRows(b.app.app_id), items: await itemsOf(b) }).toEqual(before);
  });
});

describe('tracking links', () => {
  it("never attributes B's install to A's link, even when B's install names the click A's link made", async () => {
    const link = await new LinkStore(resourceName.table('links')).create(a.app, { partner: 'a_partner' });
    const response = await fetch(`${stack.baseUrl}/l/${link.link_id}`, {
      redirect: 'manual',
      headers: { 'user-agent': MOBILE.iosSafari, 'x-forwarded-for': '198.51.100.61' },
    });
    const clickId = new URL(response.headers.get('location')!).searchParams.get('click_id')!;
    expect(clickId).toBeTruthy();
    await installOf(b, { attribution: { click_id: clickId } }, '198.51.100.61');
    await installOf(a, { attribution: { click_id: clickId } }, '198.51.100.61');
    await aggregationSettled(stack, 30_000);
    const partners = async (t: Tenant) =>
      Object.keys((await storedRows(t.app.app_id)).attribution).map((key) => key.split('|').slice(1).join('|'));
    expect(await partners(b)).not.toContain('a_partner|deterministic');
    expect(await partners(b)).toContain('organic|organic');
    // The same click does attribute A's own install: the test would see a leak.
    expect(await partners(a)).toContain('a_partner|deterministic');
  });
});

describe('reports', () => {
  it("never return a row of B's with A's server key, whatever the report and parameters", async () => {
    // B's rows are told apart in every family: a partner, a day and an event name only B has.
    const now = Date.now();
    const link = await new LinkStore(resourceName.table('links')).create(b.app, { partner: 'only_b_partner' });
    const response = await fetch(`${stack.baseUrl}/l/${link.link_id}`, {
      redirect: 'manual',
      headers: { 'user-agent': MOBILE.iosSafari, 'x-forwarded-for': '198.51.100.62' },
    });
    const clickId = new URL(response.headers.get('location')!).searchParams.get('click_id')!;
    await installOf(b, { attribution: { click_id: clickId } }, '198.51.100.62');
    const onlyBDay = new Date(now - 10 * DAY).toISOString().slice(0, 10);
    const backdated = Date.parse(`${onlyBDay}T12:00:00Z`);
    const uuid = randomUUID();
    for (const [t, events] of [
      [a, [{ event_id: 'only_a', event_name: 'only_a', install_uuid: randomUUID(), ts_ms: now - 1000 }]],
      [
        b,
        [
          { event_id: 'only_b', event_name: 'only_b', install_uuid: uuid, ts_ms: now - 1000 },
          { event_id: 'old', event_name: 'install', install_uuid: uuid, ts_ms: backdated, platform: 'android' },
          { event_id: 'old-buy', event_name: 'purchase', install_uuid: uuid, ts_ms: backdated + 60_000, revenue_usd: 9 },
        ],
      ],
    ] as const) {
      const request = signedRequest(credentials(t), { sent_at_ms: now, events });
      expect((await post('/event', request.headers, request.body)).status).toBe(200);
    }
    await aggregationSettled(stack, 30_000);
    const leaks = (text: string) => ['only_b', onlyBDay, b.app.app_id].filter((marker) => text.includes(marker));
    // B's own key sees every marker, so their absence from A's answers means something.
    const bSees = await Promise.all(
      ['attribution', 'revenue', 'cohorts', 'events'].map(async (name) =>
        leaks((await report(name, b.serverKey, `?since_ms=${now - 20 * DAY}`)).text),
      ),
    );
    expect(bSees).toEqual([['only_b', onlyBDay], ['only_b', onlyBDay], [onlyBDay], ['only_b', onlyBDay]]);

    const param = fc.oneof(
      fc.integer({ min: now - 400 * DAY, max: now + DAY }).map(String),
      fc.constantFrom('0', '1', '1000', String(now - 20 * DAY), b.app.app_id, b.app.app_key, b.serverKey),
    );
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom('attribution', 'revenue', 'cohorts', 'events'),
        fc.dictionary(fc.constantFrom('since_ms', 'until_ms', 'limit', 'offset', 'app_id', 'app_key', 'company_id', 'server_key'), param, {
          maxKeys: 4,
        }),
        async (name, params) => {
          const query = Object.keys(params).length ? `?${new URLSearchParams(params)}` : '';
          const answer = await report(name, a.serverKey, query);
          expect([200, 400]).toContain(answer.status);
          expect({ name, query, leaks: leaks(answer.text) }).toEqual({ name, query, leaks: [] });
        },
      ),
      { numRuns: 80 },
    );
  });
});
