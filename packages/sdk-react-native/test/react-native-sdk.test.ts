import fc from 'fast-check';
import type { DeepLink } from '../src/deep-link';
import type { TrackingStatus } from '../src/providers';
import type { ReactNativeAttribution } from '../src/react-native-sdk';
import { fakeInstallReferrer, Phone } from './fakes';

// The core's behaviour through the React Native bindings, with the community modules replaced by
// the fakes in fakes.ts and the service by the core's in-memory one (virtual time).
/**
 * React, react-dom/server and the hooks are loaded with `require` and typed here: importing them
 * would bring @types/react into test/tsconfig.json's one program, whose stand-in DOM interfaces
 * contradict the console tests' DOM types. The hooks are type-checked with the package (tsconfig.json).
 */
interface Element {
  readonly type: unknown;
}
const { createElement } = require('react') as { createElement(type: unknown, props: unknown, ...children: unknown[]): Element };
const { renderToString } = require('react-dom/server') as { renderToString(element: Element): string };
const { useAttribution, useDeepLink } = require('../src/hooks') as {
  useAttribution(sdk?: ReactNativeAttribution): { status: string } | undefined;
  useDeepLink(sdk?: ReactNativeAttribution): DeepLink | undefined;
};

/** Renders what the hooks say. */
function Shown({ sdk }: { sdk?: ReactNativeAttribution }) {
  const answer = useAttribution(sdk);
  const link = useDeepLink(sdk);
  return createElement('p', null, `${answer?.status ?? 'none'} ${link?.source ?? 'none'} ${link?.fields.value ?? 'none'}`);
}

const LINK = 'https://go.example.com/l/AbC123?click_id=clk_1&deep_link_value=sword_42&deep_link_sub2=blue';
const MINUTE = 60_000;

describe('an app killed mid-send and relaunched', () => {
  it('stores every tracked event once, under one event id, with one install, wherever the kill falls', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ events: fc.integer({ min: 0, max: 12 }), killAfterTicks: fc.integer({ min: 0, max: 40 }) }), {
          minLength: 1,
          maxLength: 4,
        }),
        async (launches) => {
          const phone = new Phone();
          let seq = 0;
          for (const { events, killAfterTicks } of launches) {
            const app = await phone.launch({ batchSize: 5 });
            for (let i = 0; i < events; i++) await app.track('level_up', { params: { seq: seq++ } });
            void app.flush();
            for (let tick = 0; tick < killAfterTicks; tick++) await new Promise<void>((resolve) => setImmediate(resolve));
            phone.kill();
          }
          const last = await phone.launch({ batchSize: 5 });
          await phone.world.advance(10 * MINUTE);
          // The oracle: seq numbers 0..n-1 each stored once, each under exactly one event id.
          const ids = new Map<unknown, Set<string>>();
          for (const event of phone.stored('level_up'))
            ids.set(event.properties?.seq, (ids.get(event.properties?.seq) ?? new Set()).add(event.event_id));
          expect([...ids.keys()].sort((a, b) => Number(a) - Number(b))).toEqual(Array.from({ length: seq }, (_, i) => i));
          expect([...ids.values()].every((set) => set.size === 1)).toBe(true);
          expect(phone.stored('install')).toHaveLength(1);
          expect(new Set(phone.world.stored.map((event) => event.install_uuid)).size).toBe(1);
          expect(last.diagnostics().queued).toBe(0);
          last.stop();
        },
      ),
      { numRuns: 25 },
    );
  });
});

describe('links that open the app', () => {
  it('a link at launch: one deep_link_open with its link and click ids, and onDeepLink with its fields', async () => {
    const phone = new Phone();
    const links: DeepLink[] = [];
    phone.linking.initialURL = LINK;
    const app = await phone.launch({ onDeepLink: (link) => links.push(link) });
    await phone.world.advance(MINUTE);
    expect(phone.stored('deep_link_open').map((event) => event.properties)).toEqual([{ link_id: 'AbC123', click_id: 'clk_1' }]);
    const direct = { source: 'direct', url: LINK, fields: { value: 'sword_42', sub2: 'blue' } };
    expect(links).toEqual([direct]);
    expect(app.deepLink.get()).toEqual(direct);
    // Launched again from the home screen: no second open.
    phone.kill();
    (await phone.launch()).stop();
    await phone.world.advance(MINUTE);
    expect(phone.stored('deep_link_open')).toHaveLength(1);
  });

  it('a link while running: one more deep_link_open and onDeepLink; a URL that is not a link of the service: neither', async () => {
    const phone = new Phone();
    const links: DeepLink[] = [];
    const app = await phone.launch({ onDeepLink: (link) => links.push(link) });
    phone.linking.open('https://go.example.com/l/Zz9?click_id=clk_2');
    phone.linking.open('myapp://oauth/callback?code=secret');
    phone.linking.open(`https://go.example.com/l/Zz9?click_id=${'x'.repeat(5_000)}`);
    await phone.world.advance(MINUTE);
    expect(phone.stored('deep_link_open').map((event) => event.properties)).toEqual([{ link_id: 'Zz9', click_id: 'clk_2' }]);
    expect(links).toEqual([{ source: 'direct', url: 'https://go.example.com/l/Zz9?click_id=clk_2', fields: {} }]);
    app.stop();
  });

  it('a deferred deep link from the first-launch answer reaches onDeepLink once, without its null fields, and the hooks', async () => {
    const phone = new Phone();
    phone.world.firstLaunchAnswer = {
      status: 'found',
      attribution: { partner: 'meta', match: 'deterministic' },
      deep_link: { value: 'product/42', sub1: null, sub2: 'red' },
    };
    const links: DeepLink[] = [];
    const app = await phone.launch({ onDeepLink: (link) => links.push(link) });
    await phone.world.advance(MINUTE);
    expect(links).toEqual([{ source: 'deferred', fields: { value: 'product/42', sub2: 'red' } }]);
    expect(renderToString(createElement(Shown, { sdk: app }))).toBe('<p>found deferred product/42</p>');
    expect(renderToString(createElement(Shown, {}))).toBe('<p>none none none</p>');
    // The next launch: the kept answer again (the hook has it), no second deep link.
    phone.kill();
    const again = await phone.launch({ onDeepLink: (link) => links.push(link) });
    expect(again.attribution.get()?.status).toBe('found');
    expect(links).toHaveLength(1);
    again.stop();
  });
});

describe('the app going to the background', () => {
  it('sends what waits at once, and starts a session when it returns after 30 minutes', async () => {
    const phone = new Phone();
    const app = await phone.launch();
    await phone.world.advance(5_000);
    await app.track('purchase', { revenue: 4.99, currency: 'EUR' });
    await phone.world.advance(1_000);
    expect(phone.stored('purchase')).toHaveLength(0); // the 30 s interval has not come
    phone.appState.set('inactive'); // iOS, on the way: nothing yet
    await phone.world.advance(100);
    expect(phone.stored('purchase')).toHaveLength(0);
    phone.appState.set('background');
    await phone.world.advance(100); // far from the 30 s interval: sent because the app went
    expect(phone.stored('purchase')).toHaveLength(1);
    await phone.world.advance(31 * MINUTE);
    phone.appState.set('active');
    await phone.world.advance(MINUTE);
    expect(phone.stored('session_start').map((event) => event.properties?.session_count)).toEqual([1, 2]);
    app.stop();
  });
});

describe('purchases and their refunds', () => {
  it('sends a purchase with its transaction id and a refund naming it, as the interface names their members', async () => {
    const phone = new Phone();
    const app = await phone.launch();
    const purchase = await app.track('purchase', { revenue: 4.99, currency: 'EUR', transactionId: 'GPA.3372-4150-9088-12345' });
    const refund = await app.trackRefund({ transactionId: 'GPA.3372-4150-9088-12345', revenue: 4.99, currency: 'EUR' });
    await phone.world.advance(MINUTE);
    expect(phone.stored('purchase')).toMatchObject([{ event_id: purchase, transaction_id: 'GPA.3372-4150-9088-12345' }]);
    expect(phone.stored('refund')).toMatchObject([
      { event_id: refund, refund: { transaction_id: 'GPA.3372-4150-9088-12345', revenue: 4.99, currency: 'EUR' } },
    ]);
    app.stop();
  });
});

describe('ad revenue', () => {
  it('tracks an impression as an ad_revenue event carrying it as sent', async () => {
    const phone = new Phone();
    const app = await phone.launch();
    const impression = {
      source: 'applovin_max',
      network: 'AppLovin',
      format: 'rewarded',
      placement: 'level_end',
      revenue: 0.0123,
      currency: 'USD',
      precision: 'exact',
      impressionId: 'imp-1',
    } as const;
    const id = await app.trackAdRevenue(impression);
    await phone.world.advance(MINUTE);
    expect(phone.stored('ad_revenue')).toMatchObject([
      {
        event_id: id,
        ad_revenue: {
          source: 'applovin_max',
          network: 'AppLovin',
          format: 'rewarded',
          revenue: 0.0123,
          currency: 'USD',
          impression_id: 'imp-1',
        },
      },
    ]);
    app.stop();
  });
});

describe('the Play install referrer', () => {
  it('reaches the first-launch call and the install event, in ms', async () => {
    const phone = new Phone();
    const referrer = 'utm_source=meta&click_id=Xk3v9QeL0aB1c2D3e4F5gA';
    const app = await phone.launch(
      {},
      {
        installReferrer: fakeInstallReferrer({
          installReferrer: referrer,
          referrerClickTimestampSeconds: 1_799_999_000,
          installBeginTimestampSeconds: 1_799_999_100,
        }),
      },
    );
    await phone.world.advance(MINUTE);
    expect(phone.world.firstLaunchCalls).toEqual([
      expect.objectContaining({
        platform: 'android',
        install_referrer: referrer,
        referrer_click_ms: 1_799_999_000_000,
        install_begin_ms: 1_799_999_100_000,
      }),
    ]);
    expect(phone.stored('install')[0]?.attribution).toEqual({
      referrer,
      referrer_click_ms: 1_799_999_000_000,
      install_begin_ms: 1_799_999_100_000,
    });
    app.stop();
  });

  it('a module that fails, never answers, or gives a referrer the service would refuse holds nothing up and sends none', async () => {
    for (const module of [
      fakeInstallReferrer({ message: 'SERVICE_UNAVAILABLE' }),
      fakeInstallReferrer('never'),
      fakeInstallReferrer({ installReferrer: 'x'.repeat(2_049), referrerClickTimestampSeconds: 0, installBeginTimestampSeconds: 0 }),
    ]) {
      const phone = new Phone();
      const app = await phone.launch({ providerTimeoutMs: 3_000 }, { installReferrer: module });
      await phone.world.advance(MINUTE);
      expect(phone.stored('install')).toHaveLength(1);
      expect(phone.stored('install')[0]?.attribution).toBeUndefined();
      expect(phone.world.firstLaunchCalls[0]).not.toHaveProperty('install_referrer');
      app.stop();
    }
  });
});

describe('the advertising id', () => {
  const tracking = (status: () => TrackingStatus, id = 'AEBE52E7-03EE-455A-B3C4-E57283966239') => ({
    status: async () => status(),
    advertisingId: async () => id,
  });
  const idsSent = (phone: Phone) => Object.fromEntries(phone.world.stored.map((event) => [event.event_name, event.device_id]));

  it('is never sent while consent is required and not given, and sent once it is', async () => {
    const phone = new Phone();
    const app = await phone.launch({ requireConsent: true, providers: { tracking: tracking(() => 'authorized') } });
    await app.track('before_consent');
    await app.setConsent(true);
    await app.track('after_consent');
    await phone.world.advance(MINUTE);
    expect(idsSent(phone)).toEqual({
      install: undefined,
      session_start: undefined,
      before_consent: undefined,
      after_consent: 'AEBE52E7-03EE-455A-B3C4-E57283966239',
    });
    app.stop();
  });

  it("sends setConsent's details as consent on the waiting install event and the next event tracked", async () => {
    const phone = new Phone();
    const app = await phone.launch({ requireConsent: true });
    const details = { gdpr_applies: false, third_party_sharing: true, measurement: true };
    await app.setConsent(true, details);
    await app.track('after_consent');
    await phone.world.advance(MINUTE);
    expect(Object.fromEntries(phone.world.stored.map((event) => [event.event_name, event.consent]))).toEqual({
      install: details,
      session_start: undefined,
      after_consent: details,
    });
    app.stop();
  });

  it('is never sent when tracking is not authorized, or the id reads as zeros; a revoked authorization stops it', async () => {
    let status: TrackingStatus = 'denied';
    const phone = new Phone();
    const app = await phone.launch({ providers: { tracking: tracking(() => status) } });
    await app.track('denied');
    status = 'authorized';
    await app.refreshTracking();
    await app.track('authorized');
    status = 'restricted';
    phone.appState.set('background');
    phone.appState.set('active'); // back from Settings: read again
    await phone.world.settle();
    await app.track('revoked');
    await phone.world.advance(MINUTE);
    expect(idsSent(phone)).toMatchObject({ denied: undefined, authorized: 'AEBE52E7-03EE-455A-B3C4-E57283966239', revoked: undefined });
    app.stop();
    const zeros = new Phone();
    const zeroed = await zeros.launch({ providers: { tracking: tracking(() => 'authorized', '00000000-0000-0000-0000-000000000000') } });
    await zeroed.track('zeros');
    await zeros.world.advance(MINUTE);
    expect(zeros.world.stored.every((event) => event.device_id === undefined)).toBe(true);
    zeroed.stop();
  });
});

describe('iOS providers', () => {
  it("sends Apple's AdServices token with the install event; a token the service would refuse is left out", async () => {
    const token = 'QUJD'.repeat(50);
    for (const [given, sent] of [
      [token, { adservices_token: token }],
      ['not base64!', undefined],
    ] as const) {
      const phone = new Phone();
      const app = await phone.launch({ providers: { adServicesToken: async () => given } }, { os: 'ios' });
      await phone.world.advance(MINUTE);
      expect(phone.stored('install')[0]?.attribution).toEqual(sent);
      expect(phone.stored('install')[0]?.platform).toBe('ios');
      app.stop();
    }
  });

  it('passes a conversion value Apple takes to the provider, and refuses one it would not with bad_conversion_value', async () => {
    const updates: unknown[] = [];
    const phone = new Phone();
    const app = await phone.launch({ providers: { updateConversionValue: async (update) => void updates.push(update) } }, { os: 'ios' });
    await expect(app.updateConversionValue({ fineValue: 42, coarseValue: 'high', lockWindow: false })).resolves.toBe(true);
    await expect(app.updateConversionValue({ fineValue: 64 })).rejects.toThrow(/^bad_conversion_value: fineValue/);
    await expect(app.updateConversionValue({ fineValue: 1.5 })).rejects.toThrow(/bad_conversion_value/);
    await expect(app.updateConversionValue({ fineValue: 1, coarseValue: 'huge' as 'high' })).rejects.toThrow(/coarseValue/);
    expect(updates).toEqual([{ fineValue: 42, coarseValue: 'high', lockWindow: false }]);
    app.stop();
    const android = new Phone();
    const other = await android.launch({ providers: { updateConversionValue: async (update) => void updates.push(update) } });
    await expect(other.updateConversionValue({ fineValue: 1 })).resolves.toBe(false);
    expect(updates).toHaveLength(1);
    other.stop();
  });
});
