import { gunzipSync } from 'node:zlib';
import fc from 'fast-check';
import { backoffMs, linkOf, type RejectedEvent, Sdk, type SdkConfig, STATE_KEY, trackRefund } from '../src';
import { CREDENTIALS, World } from './world';

// The core's answers to each kind of reply, its bounds, sessions, consent and the first-launch call.
const config = (overrides: Partial<SdkConfig> = {}): SdkConfig => ({ ...CREDENTIALS, baseUrl: 'https://api.example.com', ...overrides });
const MINUTE = 60_000;

async function started(overrides: Partial<SdkConfig> = {}, world = new World()) {
  const sdk = await Sdk.start(config(overrides), world.ports());
  await world.settle();
  return { world, sdk };
}

describe('the first launch', () => {
  it('queues the install event with the install id in one write, and sends it', async () => {
    const { world, sdk } = await started();
    await world.advance(30_000);
    expect(world.stored.map((event) => event.event_name)).toEqual(['install', 'session_start']);
    expect(world.stored[0]?.install_uuid).toMatch(/^[0-9a-f-]{36}$/);
    expect(world.stored[0]?.platform).toBe('android');
    sdk.stop();
  });

  it('sends the referrer the platform read with the install and the first-launch call, and answers onAttribution, onDeepLink once', async () => {
    const world = new World();
    world.firstLaunchAnswer = {
      status: 'found',
      attribution: { partner: 'meta', match: 'deterministic' },
      deep_link: { value: 'sword_42', sub1: 'blue' },
    };
    const referrer = { install_referrer: 'utm_source=x&click_id=abc', referrer_click_ms: 1, install_begin_ms: 2 };
    const answers: unknown[] = [];
    const links: unknown[] = [];
    const callbacks = { onAttribution: (a: unknown) => answers.push(a), onDeepLink: (d: unknown) => links.push(d) };
    const sdk = await Sdk.start(config(callbacks), { ...world.ports(), installSignals: async () => referrer });
    await world.advance(30_000);
    expect(world.firstLaunchCalls).toEqual([
      {
        install_uuid: world.stored[0]?.install_uuid,
        platform: 'android',
        app_version: '1.0.0',
        sdk_version: 'attribution-sdk-core/0.1.0',
        ...referrer,
      },
    ]);
    expect(world.stored[0]?.attribution).toEqual({ referrer: referrer.install_referrer, referrer_click_ms: 1, install_begin_ms: 2 });
    expect(links).toEqual([{ value: 'sword_42', sub1: 'blue' }]);
    sdk.stop();
    // A later launch: the stored answer again, no call, and no second deep link.
    const again = await Sdk.start(config(callbacks), world.ports());
    await world.settle();
    expect(world.firstLaunchCalls).toHaveLength(1);
    expect(answers).toHaveLength(2);
    expect(links).toHaveLength(1);
    again.stop();
  });
});

describe('the advertising id and Apple Ads token', () => {
  it("sends Apple's AdServices token with the install event only, not with the first-launch call", async () => {
    const world = new World();
    const token = 'QUJD'.repeat(40);
    const sdk = await Sdk.start(config(), { ...world.ports(), installSignals: async () => ({ adservices_token: token }) });
    await world.advance(30_000);
    expect(world.stored[0]?.attribution).toEqual({ adservices_token: token });
    expect(world.stored[1]?.attribution).toBeUndefined();
    expect(world.firstLaunchCalls[0]).not.toHaveProperty('adservices_token');
    sdk.stop();
  });

  it('sends the advertising id as device_id only on events tracked once consent is given', async () => {
    const world = new World();
    const sdk = await Sdk.start(config({ requireConsent: true }), { ...world.ports(), advertisingId: () => 'idfa-1' });
    await sdk.track('before');
    await sdk.setConsent(true);
    await sdk.track('after');
    await world.advance(30_000);
    const sent = Object.fromEntries(world.stored.map((event) => [event.event_name, event.device_id]));
    expect(sent).toEqual({ install: undefined, session_start: undefined, before: undefined, after: 'idfa-1' });
    sdk.stop();
  });
});

describe('a platform the service has no installs for (a web page)', () => {
  it('sends no install event and asks no first-launch answer, but sends its sessions and events', async () => {
    const world = new World();
    const ports = world.ports();
    const sdk = await Sdk.start(config(), { ...ports, platform: { ...ports.platform, kind: 'web', platform: undefined } });
    await sdk.track('page_view');
    await world.advance(30_000);
    expect(world.stored.map((event) => event.event_name)).toEqual(['session_start', 'page_view']);
    expect(world.stored.every((event) => event.platform === undefined)).toBe(true);
    expect(world.firstLaunchCalls).toEqual([]);
    sdk.stop();
  });
});

describe('events tracked elsewhere', () => {
  it('queues them with the id and time they got there, once each, in one write', async () => {
    const { world, sdk } = await started();
    const tracked = [
      { event_id: 'c0f0b3c2-0000-4000-8000-000000000001', ts_ms: world.now - 5_000, name: 'page_view', options: { params: { tab: 2 } } },
      {
        event_id: 'c0f0b3c2-0000-4000-8000-000000000002',
        ts_ms: world.now - 4_000,
        name: 'purchase',
        options: { revenue: 3, currency: 'EUR' },
      },
    ];
    await sdk.adopt(tracked);
    // Adopted again (a tab that died between the merge and clearing its outbox): not queued twice.
    await sdk.adopt(tracked);
    expect(sdk.diagnostics().queued).toBe(4);
    await world.advance(30_000);
    const adopted = world.stored.filter((event) => event.event_id.startsWith('c0f0b3c2'));
    expect(adopted).toEqual([
      expect.objectContaining({
        event_id: tracked[0]?.event_id,
        event_name: 'page_view',
        ts_ms: tracked[0]?.ts_ms,
        properties: { tab: 2 },
      }),
      expect.objectContaining({
        event_id: tracked[1]?.event_id,
        event_name: 'purchase',
        ts_ms: tracked[1]?.ts_ms,
        revenue: 3,
        currency: 'EUR',
      }),
    ]);
    expect(adopted.every((event) => event.install_uuid === world.stored[0]?.install_uuid)).toBe(true);
    sdk.stop();
  });
});

describe('money events', () => {
  it("sends a purchase's transaction id when the service would take it, and the purchase without it otherwise", async () => {
    // Printable ASCII around its ends, the bounds around 128, and anything else (spaces, controls, emoji).
    const printable = fc.string({ unit: fc.constantFrom('!', '~', 'G', '.', ' ', '\u007f', '\t', 'é'), maxLength: 8 });
    const ids = fc.oneof(
      printable,
      fc.integer({ min: 126, max: 130 }).map((n) => 'A'.repeat(n)),
      fc.string({ unit: 'binary', maxLength: 20 }),
    );
    // The oracle, as docs/ingestion.md words the rule: 1 to 128 characters, each from ! (0x21) to ~ (0x7E).
    const takes = (id: string) =>
      id.length >= 1 && id.length <= 128 && [...id].every((c) => c.charCodeAt(0) >= 0x21 && c.charCodeAt(0) <= 0x7e);
    await fc.assert(
      fc.asyncProperty(ids, async (id) => {
        const { world, sdk } = await started();
        await sdk.track('purchase', { revenue: 1.5, transactionId: id });
        await world.advance(30_000);
        const purchase = world.stored.find((event) => event.event_name === 'purchase') as Record<string, unknown> | undefined;
        sdk.stop();
        expect(purchase?.revenue_usd).toBe(1.5);
        expect(purchase?.transaction_id).toBe(takes(id) ? id : undefined);
      }),
      { numRuns: 60 },
    );
  });

  it('sends a refund and an ad impression with their members as the interface names them, none left undefined', async () => {
    const { world, sdk } = await started();
    const purchase = await sdk.track('purchase', { revenue: 4.99, currency: 'EUR' });
    await trackRefund(sdk, { purchaseEventId: purchase, transactionId: undefined, revenue: 2.5, currency: 'EUR' });
    await sdk.trackAdRevenue({
      source: 'admob',
      network: 'AdMob',
      format: 'banner',
      adUnit: 'ca-app-pub-1',
      revenue: 0.0004,
      currency: 'USD',
      precision: 'estimated',
      impressionId: 'resp-1',
    });
    await world.advance(30_000);
    const sent = (name: string) => world.stored.find((event) => event.event_name === name) as Record<string, unknown> | undefined;
    expect(sent('refund')?.refund).toEqual({ purchase_event_id: purchase, revenue: 2.5, currency: 'EUR' });
    expect(sent('ad_revenue')?.ad_revenue).toEqual({
      source: 'admob',
      network: 'AdMob',
      format: 'banner',
      ad_unit: 'ca-app-pub-1',
      revenue: 0.0004,
      currency: 'USD',
      precision: 'estimated',
      impression_id: 'resp-1',
    });
    sdk.stop();
  });
});

describe('answers', () => {
  it('drops rejected events from the queue and reports each with its reason and field', async () => {
    const rejected: RejectedEvent[] = [];
    const { world, sdk } = await started({ onEventRejected: (r) => rejected.push(r) });
    await world.advance(30_000);
    const id = await sdk.track('purchase', { revenue: 9.99, currency: 'EUR' });
    world.eventAnswers.push({
      status: 200,
      body: { accepted: 0, rejected: 1, results: [{ event_id: id, status: 'rejected', reason: 'bad_currency', field: 'currency' }] },
    });
    await world.advance(30_000);
    expect(rejected).toEqual([{ event_id: id, event_name: 'purchase', reason: 'bad_currency', field: 'currency' }]);
    expect(sdk.diagnostics().queued).toBe(0);
    sdk.stop();
  });

  it('stops sending at a 401 and keeps the queue', async () => {
    const errors: string[] = [];
    const { world, sdk } = await started({ onError: (code) => errors.push(code) });
    world.eventAnswers.push({ status: 401, body: { error: 'unknown_app_key' } });
    await world.advance(30_000);
    await sdk.track('level_up');
    await world.advance(10 * MINUTE);
    expect(errors).toEqual(['unauthorized']);
    expect(sdk.diagnostics()).toMatchObject({ paused: true, queued: 3 });
    expect(world.stored).toEqual([]);
    sdk.stop();
  });

  it('drops a batch refused whole (400) after three refusals, reports it, and goes on with the next', async () => {
    const errors: string[] = [];
    const { world, sdk } = await started({ onError: (code) => errors.push(code), batchSize: 2 });
    for (let i = 0; i < 3; i++) world.eventAnswers.push({ status: 400, body: { error: 'bad_batch_shape' } });
    await sdk.track('level_up');
    await world.advance(30 * MINUTE);
    expect(errors).toEqual(['bad_answer', 'bad_answer', 'batch_dropped']);
    expect(world.stored.map((event) => event.event_name)).toEqual(['level_up']);
    expect(sdk.diagnostics()).toMatchObject({ queued: 0, dropped: 2 });
    sdk.stop();
  });

  it('waits at least what Retry-After asks after a 429, then sends', async () => {
    const world = new World();
    // At start the first-launch call goes first, then the install's batch, which is throttled.
    world.modes.push('ok', 'throttled');
    const { sdk } = await started({}, world);
    expect(world.stored).toEqual([]);
    await world.advance(6_000);
    expect(world.stored).toEqual([]);
    await world.advance(1_000);
    expect(world.stored).toHaveLength(2);
    sdk.stop();
  });

  it('gzips a batch from 10 events and signs the bytes as sent', async () => {
    const { world, sdk } = await started();
    const bodies: Uint8Array[] = [];
    const ports = world.ports();
    const network = ports.network;
    const spy = await Sdk.start(config({ batchSize: 10 }), {
      ...ports,
      network: (request) => {
        if (request.url.endsWith('/event') && request.headers['content-encoding'] === 'gzip') bodies.push(request.body ?? new Uint8Array());
        return network(request);
      },
    });
    sdk.stop();
    for (let i = 0; i < 10; i++) await spy.track('level_up');
    await world.advance(1_000);
    expect(bodies).toHaveLength(1);
    expect(JSON.parse(gunzipSync(bodies[0] ?? new Uint8Array()).toString()).events).toHaveLength(10);
    expect(world.badSignatures).toBe(0);
    spy.stop();
  });
});

describe('bounds, sessions, consent', () => {
  it('keeps at most maxEvents, dropping the oldest and counting them', async () => {
    const { world, sdk } = await started({ bounds: { maxEvents: 10 } });
    world.modes.push(...Array(50).fill('network_down'));
    for (let i = 0; i < 25; i++) await sdk.track('level_up', { params: { n: i } });
    expect(sdk.diagnostics()).toMatchObject({ queued: 10, dropped: 17 });
    const kept = JSON.parse(world.disk.get(STATE_KEY) ?? '{}').queue.map((event: { properties: { n: number } }) => event.properties.n);
    expect(kept).toEqual([15, 16, 17, 18, 19, 20, 21, 22, 23, 24]);
    sdk.stop();
  });

  it('starts a session after 30 minutes in the background, not before', async () => {
    const { world, sdk } = await started();
    await sdk.onBackground();
    await world.advance(29 * MINUTE);
    await sdk.onForeground();
    expect(sdk.diagnostics().sessionCount).toBe(1);
    await sdk.onBackground();
    await world.advance(31 * MINUTE);
    await sdk.onForeground();
    await world.advance(30_000);
    expect(sdk.diagnostics().sessionCount).toBe(2);
    expect(world.stored.filter((event) => event.event_name === 'session_start').map((event) => event.properties?.session_count)).toEqual([
      1, 2,
    ]);
    sdk.stop();
  });

  it('with requireConsent sends nothing until granted; refused, drops what waits; optOut stops for good', async () => {
    const { world, sdk } = await started({ requireConsent: true });
    await sdk.track('level_up');
    await world.advance(5 * MINUTE);
    expect([world.requests, sdk.diagnostics().queued]).toEqual([0, 3]);
    await sdk.setConsent(true);
    await world.advance(30_000);
    expect(world.stored).toHaveLength(3);
    await sdk.optOut();
    expect(await sdk.track('level_up')).toBeUndefined();
    await world.advance(5 * MINUTE);
    expect(world.stored).toHaveLength(3);
    sdk.stop();

    const refused = await started({ requireConsent: true });
    await refused.sdk.setConsent(false);
    expect(await refused.sdk.track('level_up')).toBeUndefined();
    expect(refused.sdk.diagnostics().queued).toBe(0);
    refused.sdk.stop();
  });

  it("setConsent's details ride on the waiting install event and the next event tracked, once per change, and survive a restart", async () => {
    const { world, sdk } = await started({ requireConsent: true });
    const details = {
      gdpr_applies: true,
      tcf_string: 'CPzHq4APzHq4AAKAsAENDQCgAAAAAAAAAAAAAAAAAAAA',
      ad_user_data: false,
      measurement: true,
    };
    await sdk.setConsent(true, details);
    await sdk.track('level_up');
    await sdk.track('level_up');
    await world.advance(30_000);
    expect(world.stored.map((event) => [event.event_name, event.consent])).toEqual([
      ['install', details],
      ['session_start', undefined],
      ['level_up', details],
      ['level_up', undefined],
    ]);
    // The same details again change nothing; new ones ride on the next event, after a restart too.
    await sdk.setConsent(true, { ...details });
    await sdk.track('same');
    const withdrawn = { ...details, measurement: false };
    await sdk.setConsent(true, withdrawn);
    sdk.stop();
    world.crash();
    const again = await Sdk.start(config({ requireConsent: true }), world.ports());
    await again.track('after_restart');
    await world.advance(30_000);
    expect(world.stored.slice(4).map((event) => [event.event_name, event.consent])).toEqual([
      ['same', undefined],
      ['after_restart', withdrawn],
    ]);
    again.stop();
  });

  it('setConsent(true) without details sends no consent object, as before', async () => {
    const { world, sdk } = await started({ requireConsent: true });
    await sdk.setConsent(true);
    await sdk.track('level_up');
    await world.advance(30_000);
    expect(world.stored.map((event) => event.event_name)).toEqual(['install', 'session_start', 'level_up']);
    expect(world.stored.every((event) => !('consent' in event))).toBe(true);
    sdk.stop();
  });

  it('forgetMe asks the service to delete the install until it answers 202, and stops measuring', async () => {
    const { world, sdk } = await started();
    world.modes.push('unavailable', 'network_down');
    const forgotten = sdk.forgetMe();
    await world.advance(10 * MINUTE);
    await forgotten;
    expect(world.requests).toBeGreaterThanOrEqual(3);
    expect(await sdk.track('level_up')).toBeUndefined();
    sdk.stop();
  });
});

describe('helpers', () => {
  it('backs off with full jitter under a cap, and at least what Retry-After asks', () => {
    const policy = { baseMs: 1_000, maxMs: 60_000 };
    expect([backoffMs(1, 0.999, policy), backoffMs(3, 0.5, policy), backoffMs(40, 0.999, policy)]).toEqual([999, 2_000, 59_940]);
    expect(backoffMs(1, 0, policy, '30')).toBe(30_000);
    expect(backoffMs(1, 0, policy, 'Wed, 21 Oct 2015 07:28:00 GMT')).toBe(0);
  });

  it('reads the link id and click id of a link URL', () => {
    expect(linkOf('https://go.example.com/l/AbC_123?click_id=xyz.1&sub1=a')).toEqual({ linkId: 'AbC_123', clickId: 'xyz.1' });
    expect(linkOf('myapp://open?click_id=%3Cscript%3E')).toEqual({});
    expect(linkOf('not a url')).toEqual({});
  });
});
