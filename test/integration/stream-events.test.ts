// GET /api/v1/stream/events over real HTTP against the local runtime: events sent through POST
// /event (duplicates the SDK re-sent among them), aggregated by the runtime's poller into stream
// objects, then paged: each accepted event once with its install's attribution, nothing of the
// device or its address, the key's app only, since_ms reads and polling from the last cursor; the
// refusals, and 503 while a store is down; every answer as docs/openapi.yaml documents it.

import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import type { EventClient } from '../../client/event-client';
import { LinkStore } from '../../functions/adapters/link-store';
import type { SdkEvent } from '../../functions/domain/ingest/event-validation';
import { STREAM_ERRORS } from '../../functions/domain/raw-data/stream';
import type { StreamEvent } from '../../functions/domain/raw-data/stream-objects';
import { STREAM_SETTLE_MS } from '../../functions/domain/raw-data/watermark';
import { dynamoClient } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import { problemsOf } from '../support/documented-answers';
import { eventClientFrom } from '../support/event-client';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { OpenApi } from '../support/openapi';
import { tcString } from '../support/tcf';
import { countingWrites } from '../support/write-faults';
import { MOBILE } from '../unit/links/user-agents';

const PATH = '/api/v1/stream/events';
const DEVICE_ID = 'idfa-5EC7E7-0000-4000-8000-DEVICE000001';
const DEVICE_IP = '198.51.100.77';
const OTHER_IP = '198.51.100.78';

let stack: LocalStack;
let a: Tenant;
let b: Tenant;
/** Each event of a's traffic, as sent, by event_id (once, however often it was sent). */
const sent = new Map<string, SdkEvent>();
let installEventId: string;
let earlyPurchaseId: string;
let clickLinkId: string;
/** The last moment an apply may have opened: the aggregator was drained after it. */
let drainedAt = 0;

const api = new OpenApi();
const CONSENT = { gdpr_applies: true, tcf_string: tcString([755], [1, 7]), ad_user_data: true, ad_personalization: false };

/** One request; every answer, whatever its status, is what docs/openapi.yaml says of it. */
async function get(query = '', headers: Record<string, string> = {}, method = 'GET') {
  const response = await fetch(`${stack.baseUrl}${PATH}${query}`, { method, headers });
  const text = await response.text();
  const answer = { method, path: PATH, status: response.status, headers: Object.fromEntries(response.headers), text };
  expect({ status: answer.status, problems: problemsOf(api, answer) }).toEqual({ status: answer.status, problems: [] });
  return {
    status: response.status,
    headers: response.headers,
    text,
    body: text ? (JSON.parse(text) as Record<string, unknown>) : undefined,
  };
}
const bearer = (tenant: Tenant) => ({ authorization: `Bearer ${tenant.serverKey}` });

interface Page {
  events: StreamEvent[];
  next_cursor: string;
  has_more: boolean;
}

/** A read paged to its end (has_more false): every event and the cursor to poll from. */
async function readAll(tenant: Tenant, limit: number, start = '') {
  const events: StreamEvent[] = [];
  let query = start;
  for (let pages = 1; ; pages++) {
    const response = await get(`?limit=${limit}${query}`, bearer(tenant));
    expect(response.status).toBe(200);
    const page = response.body as unknown as Page;
    expect(page.events.length).toBeLessThanOrEqual(limit);
    events.push(...page.events);
    if (!page.has_more) return { events, cursor: page.next_cursor, pages };
    query = `&cursor=${page.next_cursor}`;
  }
}

async function drain() {
  await stack.pollers.drain();
  drainedAt = Date.now();
}

/** Until the watermark is past every apply made so far. */
async function settle() {
  const wait = drainedAt + STREAM_SETTLE_MS + 300 - Date.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
}

async function send(client: EventClient, events: SdkEvent[]) {
  const result = await client.sendEvents(events);
  expect(result.results.map((r) => r.status)).toEqual(events.map(() => 'accepted'));
  for (const event of events) sent.set(event.event_id, event);
}

async function clickFrom(linkId: string, ip: string): Promise<string> {
  const response = await fetch(`${stack.baseUrl}/l/${linkId}?click_id=ext-stream&sub1=creative_a`, {
    redirect: 'manual',
    headers: { 'user-agent': MOBILE.iosSafari, 'x-forwarded-for': ip },
  });
  const clickId = new URL(response.headers.get('location') ?? 'http://x/').searchParams.get('click_id');
  if (!clickId) throw new Error('the link made no click');
  return clickId;
}

beforeAll(async () => {
  stack = await startLocalStack({ trustProxy: true });
  [a, b] = [await createTenant(), await createTenant()];
  const clientA = eventClientFrom(stack.baseUrl, a, DEVICE_IP);
  const uuid1 = randomUUID();
  const uuid2 = randomUUID();
  const now = Date.now();

  // An event of uuid2 counted before any install of it: its attribution is null.
  earlyPurchaseId = `purchase-early-${randomUUID()}`;
  // It carries uuid2's consent: the aggregator keeps it, and uuid2's later lines show it (docs/raw-data.md).
  await send(clientA, [
    {
      event_id: earlyPurchaseId,
      event_name: 'purchase',
      install_uuid: uuid2,
      ts_ms: now - 5_000,
      revenue_usd: 1.25,
      platform: 'android',
      consent: CONSENT,
    },
  ]);
  await drain();

  // uuid1 installs through a tracking link, with a device id; the SDK sends it with its events.
  clickLinkId = (await new LinkStore(resourceName.table('links')).create(a.app, { partner: 'acme_ads', campaign: 'spring' })).link_id;
  const clickId = await clickFrom(clickLinkId, DEVICE_IP);
  installEventId = `install-${randomUUID()}`;
  const first: SdkEvent[] = [
    {
      event_id: installEventId,
      event_name: 'install',
      install_uuid: uuid1,
      ts_ms: Date.now() + 30_000,
      platform: 'ios',
      device_id: DEVICE_ID,
      attribution: { click_id: clickId },
    },
    {
      event_id: `session-${randomUUID()}`,
      event_name: 'session',
      install_uuid: uuid1,
      ts_ms: Date.now() + 31_000,
      platform: 'ios',
      device_id: DEVICE_ID,
    },
  ];
  await send(clientA, first);
  // The SDK did not hear the answer and sends the same batch again (new bytes), and one of its
  // events once more beside a new one.
  await clientA.sendEvents(first);
  await send(clientA, [
    first[1]!,
    {
      event_id: `purchase-${randomUUID()}`,
      event_name: 'purchase',
      install_uuid: uuid1,
      ts_ms: Date.now() + 32_000,
      revenue_usd: 4.99,
      platform: 'ios',
      device_id: DEVICE_ID,
      properties: { sku: 'gold' },
    },
  ]);
  // uuid2's install, organic, from another address; and a busy batch of uuid2 events.
  await send(eventClientFrom(stack.baseUrl, a, OTHER_IP), [
    { event_id: `install-${randomUUID()}`, event_name: 'install', install_uuid: uuid2, ts_ms: Date.now(), platform: 'android' },
    ...Array.from({ length: 12 }, (_, n) => ({
      event_id: `level-${n}-${randomUUID()}`,
      event_name: 'level_up',
      install_uuid: uuid2,
      ts_ms: Date.now() + n,
      platform: 'android' as const,
    })),
  ]);
  // Another app's traffic, which a's key never sees.
  await eventClientFrom(stack.baseUrl, b, OTHER_IP).sendEvents([
    { event_id: `b-install-${randomUUID()}`, event_name: 'install', install_uuid: randomUUID(), ts_ms: Date.now(), platform: 'ios' },
  ]);
  await drain();
  await settle();
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

describe('the event stream of aggregated traffic', () => {
  it("serves every accepted event exactly once, in pages of 3, with its install's attribution", async () => {
    const { events, pages } = await readAll(a, 3);
    expect(pages).toBeGreaterThan(3);
    expect(events.map((event) => event.event_id).sort()).toEqual([...sent.keys()].sort());
    for (const event of events) {
      const original = sent.get(event.event_id)!;
      expect(event).toMatchObject({
        event_name: original.event_name,
        install_uuid: original.install_uuid,
        ts_ms: original.ts_ms,
        revenue_usd: original.revenue_usd ?? null,
        platform: original.platform ?? null,
        properties: original.properties ?? null,
      });
      expect(Object.keys(event)).toEqual([
        'event_id',
        'event_name',
        'install_uuid',
        'ts_ms',
        'corrected_ts',
        'received_ms',
        'revenue_usd',
        'platform',
        'properties',
        'country',
        'attribution',
        'consent',
      ]);
    }
    const install = events.find((event) => event.event_id === installEventId)!;
    const attributed = {
      partner: 'acme_ads',
      campaign: 'spring',
      attribution_type: 'deterministic',
      link_id: clickLinkId,
      ext_click_id: 'ext-stream',
      sub1: 'creative_a',
      is_reinstall: false,
      install_event_id: installEventId,
      install_corrected_ts: install.corrected_ts,
    };
    for (const event of events.filter((e) => e.install_uuid === install.install_uuid)) expect(event.attribution).toMatchObject(attributed);
    // Counted before its install: no attribution yet (revenue and retention go to the first install later).
    expect(events.find((event) => event.event_id === earlyPurchaseId)!.attribution).toBeNull();
    const organic = events.filter(
      (event) => event.install_uuid === sent.get(earlyPurchaseId)!.install_uuid && event.event_id !== earlyPurchaseId,
    );
    expect(organic).toHaveLength(13);
    for (const event of organic)
      expect(event.attribution).toMatchObject({ partner: 'organic', attribution_type: 'organic', link_id: null });
    // uuid2's consent, said by its early purchase: on that line from its own object, on the later
    // ones from the installs table; uuid1 never said any.
    const early = events.find((event) => event.event_id === earlyPurchaseId)!;
    const consent = { ...CONSENT, third_party_sharing: null, measurement: null, ts_ms: early.corrected_ts, event_id: earlyPurchaseId };
    for (const event of [early, ...organic]) expect(event.consent).toEqual(consent);
    for (const event of events.filter((e) => e.install_uuid === install.install_uuid)) expect(event.consent).toBeNull();
  });

  it('gives the same events in the same order whatever the page size', async () => {
    const ids = async (limit: number) => (await readAll(a, limit)).events.map((event) => event.event_id);
    const whole = await ids(1000);
    expect(await ids(1)).toEqual(whole);
    expect(await ids(7)).toEqual(whole);
  });

  it('carries no device id and no address in any byte of its answers', async () => {
    let cursor = '';
    for (;;) {
      const response = await get(`?limit=2${cursor}`, bearer(a));
      for (const secret of [DEVICE_ID, DEVICE_IP, OTHER_IP, 'device_id', 'client_ip', '"o":', '"install":'])
        expect(response.text).not.toContain(secret);
      const page = response.body as unknown as Page;
      if (!page.has_more) break;
      cursor = `&cursor=${page.next_cursor}`;
    }
  });

  it("reads the key's app only: another key reads its own stream, a's cursor included", async () => {
    const mine = await readAll(b, 100);
    expect(mine.events).toHaveLength(1);
    expect(mine.events[0]!.event_id).toMatch(/^b-install-/);
    const first = (await get('?limit=1', bearer(a))).body as unknown as Page;
    const withForeignCursor = (await get(`?cursor=${first.next_cursor}&app_id=${a.app.app_id}`, bearer(b))).body as unknown as Page;
    for (const event of withForeignCursor.events) expect(event.event_id).toMatch(/^b-install-/);
  });

  it('starts a read at since_ms: only events received at or after it, on every page', async () => {
    const all = (await readAll(a, 1000)).events;
    const times = [...new Set(all.map((event) => event.received_ms))].sort((x, y) => x - y);
    const sinceMs = times[Math.floor(times.length / 2)]!;
    const { events } = await readAll(a, 2, `&since_ms=${sinceMs}`);
    expect(events.map((event) => event.event_id)).toEqual(
      all.filter((event) => event.received_ms >= sinceMs).map((event) => event.event_id),
    );
    expect(events.length).toBeGreaterThan(0);
    expect((await readAll(a, 5, `&since_ms=${Date.now() + 60_000}`)).events).toEqual([]);
  });

  it('finds the events accepted later after the cursor of the end of the stream, and none before', async () => {
    const { cursor } = await readAll(a, 50);
    const empty = (await get(`?cursor=${cursor}`, bearer(a))).body as unknown as Page;
    expect(empty).toEqual({ events: [], next_cursor: cursor, has_more: false });
    const later: SdkEvent = {
      event_id: `later-${randomUUID()}`,
      event_name: 'session',
      install_uuid: sent.get(installEventId)!.install_uuid,
      ts_ms: Date.now(),
    };
    await send(eventClientFrom(stack.baseUrl, a, DEVICE_IP), [later]);
    await drain();
    // Before the watermark passes the new apply, the stream does not show it yet; then it does.
    const early = (await get(`?cursor=${cursor}`, bearer(a))).body as unknown as Page;
    expect(early.events).toEqual([]);
    await settle();
    const { events } = await readAll(a, 50, `&cursor=${cursor}`);
    expect(events.map((event) => event.event_id)).toEqual([later.event_id]);
    expect(events[0]!.attribution).toMatchObject({ install_event_id: installEventId });
  }, 40_000);
});

describe('the refusals of GET /api/v1/stream/events', () => {
  const cursorOf = async () => ((await get('?limit=1', bearer(a))).body as unknown as Page).next_cursor;
  it.each([
    ['no Authorization header', '', 'none', 401, 'missing_bearer_token'],
    ['another scheme', '', 'basic', 401, 'missing_bearer_token'],
    ['an unknown key', '', 'unknown', 401, 'invalid_or_revoked_key'],
    ['a malformed key, whatever the parameters', '?limit=0&cursor=x', 'malformed', 401, 'invalid_or_revoked_key'],
    ['a limit of 0', '?limit=0', 'a', 400, 'invalid_limit'],
    ['a limit of 1001', '?limit=1001', 'a', 400, 'invalid_limit'],
    ['a fractional limit', '?limit=1.5', 'a', 400, 'invalid_limit'],
    ['a limit that is no number', '?limit=x', 'a', 400, 'invalid_limit'],
    ['a limit given twice', '?limit=5&limit=6', 'a', 400, 'invalid_limit'],
    ['a since_ms that is no integer', '?since_ms=abc', 'a', 400, 'invalid_since_until'],
    ['a since_ms with an exponent', '?since_ms=1e12', 'a', 400, 'invalid_since_until'],
    ['a since_ms after the last date JavaScript has', '?since_ms=8640000000000001', 'a', 400, 'invalid_since_until'],
    ['a cursor that is no cursor', '?cursor=bm90IGEgY3Vyc29y', 'a', 400, 'invalid_cursor'],
    ['an empty cursor', '?cursor=', 'a', 400, 'invalid_cursor'],
  ])('answers %s with its status and code', async (_name, query, auth, status, code) => {
    const headers: Record<string, Record<string, string>> = {
      none: {},
      basic: { authorization: 'Basic dXNlcjpwYXNz' },
      unknown: { authorization: `Bearer srv_${'0'.repeat(48)}` },
      malformed: { authorization: 'Bearer srv_short' },
      a: bearer(a),
    };
    const response = await get(query, headers[auth]);
    expect({ status: response.status, body: response.body }).toEqual({ status, body: { error: code } });
    expect(STREAM_ERRORS[code as keyof typeof STREAM_ERRORS]).toBe(status);
  });

  it('answers a cursor beside since_ms with invalid_cursor, and a tampered cursor too', async () => {
    const cursor = await cursorOf();
    expect((await get(`?cursor=${cursor}&since_ms=0`, bearer(a))).body).toEqual({ error: 'invalid_cursor' });
    const json = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Record<string, unknown>;
    const tampered = Buffer.from(JSON.stringify({ ...json, k: `stream/${b.app.app_id}/${String(json.k)}` })).toString('base64url');
    expect((await get(`?cursor=${tampered}`, bearer(a))).body).toEqual({ error: 'invalid_cursor' });
  });

  it.each(['POST', 'PUT', 'DELETE', 'PATCH'])('answers %s with the fallback 404 not_found (only GET is routed)', async (method) => {
    const response = await get('', bearer(a), method);
    expect({ status: response.status, body: response.body }).toEqual({ status: 404, body: { error: 'not_found' } });
  });

  it('answers OPTIONS as cors-preflight answers every path no browser may call: 403 origin_not_allowed (docs/sdk.md, "CORS")', async () => {
    const response = await get('', bearer(a), 'OPTIONS');
    expect({ status: response.status, body: response.body }).toEqual({ status: 403, body: { error: 'origin_not_allowed' } });
  });

  it('answers any query, near a valid one or not, as documented: 200, 400 or 401, never a 500 or a 503', async () => {
    const valid = await cursorOf();
    const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const cursorish = fc.oneof(
      fc.constant(valid),
      fc.nat().map((at) => valid.slice(0, at % valid.length) + valid.slice((at % valid.length) + 1)),
      fc
        .record(
          {
            v: fc.oneof(fc.constant(1), fc.integer()),
            k: fc.oneof(fc.constant('0000000000001-00-0000000001.jsonl.gz'), fc.string()),
            i: fc.oneof(fc.nat(), fc.double(), fc.string()),
            s: fc.oneof(fc.integer(), fc.constant(8.64e15 + 1)),
          },
          { requiredKeys: [] },
        )
        .map(b64),
      fc.string(),
    );
    const value = fc.oneof(fc.string(), fc.integer().map(String), fc.constantFrom('', '1', '1000', '1001', '-0', '1e3', '5,6'));
    await fc.assert(
      fc.asyncProperty(
        fc.record(
          { cursor: cursorish, limit: value, since_ms: value, app_id: fc.constant(b.app.app_id), offset: value },
          { requiredKeys: [] },
        ),
        fc.constantFrom<Record<string, string>>(bearer(a), bearer(b), {}, { authorization: 'Bearer srv_nope' }),
        async (params, headers) => {
          // get() holds the answer to docs/openapi.yaml, whatever its status.
          const response = await get(`?${new URLSearchParams(params)}`, headers);
          expect([200, 400, 401]).toContain(response.status);
        },
      ),
      { numRuns: 80 },
    );
  });

  it('answers 503 store_unavailable while the export bucket is unreachable, and pages again once it is back', async () => {
    await stack.emulators.stopS3();
    try {
      const response = await get('?limit=5', bearer(a));
      expect({ status: response.status, body: response.body }).toEqual({ status: 503, body: { error: 'store_unavailable' } });
    } finally {
      await stack.emulators.startS3();
    }
    expect((await get('?limit=5', bearer(a))).status).toBe(200);
  });

  it('answers 503 store_unavailable while the ledger cannot be read', async () => {
    // The key is in the function's cache by now: the lanes' read is what fails.
    const fault = countingWrites(dynamoClient(), 0);
    try {
      const response = await get('?limit=5', bearer(a));
      expect({ status: response.status, body: response.body }).toEqual({ status: 503, body: { error: 'store_unavailable' } });
    } finally {
      fault.stop();
    }
  });
});
