import fc from 'fast-check';
import type { AttributionDecision } from '../../../functions/domain/attribution/decision';
import {
  answerFirstLaunch,
  currentAttribution,
  FirstLaunchError,
  type FirstLaunchPorts,
  MAX_REFERRER_CHARS,
  parseFirstLaunch,
  parseInstallQuery,
} from '../../../functions/domain/attribution/first-launch';
import type { ClickRecord } from '../../../functions/domain/links/click';
import { APP, click, T0 } from '../aggregation/world';
import { BODY, firstLaunchWorld, IP, UUID } from './first-launch-world';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const refusal = (body: unknown) => {
  try {
    parseFirstLaunch(body);
  } catch (error) {
    if (error instanceof FirstLaunchError) return { status: error.statusCode, ...error.body() };
    throw error;
  }
  return undefined;
};

describe('the first-launch body', () => {
  it('takes the required members and the optional signals, the install_uuid lower-cased, null as absent', () => {
    expect(
      parseFirstLaunch({
        ...BODY,
        install_uuid: UUID.toUpperCase(),
        install_referrer: 'utm_source=meta&click_id=abc',
        referrer_click_ms: T0 - HOUR,
        install_begin_ms: T0 - 60_000,
        language: 'pt-BR',
        time_zone: 'America/Sao_Paulo',
        screen: '1080x2400',
        unknown: { kept: 'ignored' },
      }),
    ).toEqual({
      installUuid: UUID,
      platform: 'android',
      appVersion: '1.4.0',
      sdkVersion: 'android/0.3.0',
      installReferrer: 'utm_source=meta&click_id=abc',
      referrerClickMs: T0 - HOUR,
      installBeginMs: T0 - 60_000,
      language: 'pt-BR',
      timeZone: 'America/Sao_Paulo',
      screen: '1080x2400',
    });
    expect(parseFirstLaunch({ ...BODY, install_referrer: null, screen: null })).toEqual(parseFirstLaunch(BODY));
  });

  it.each([
    ['a body that is not an object', [BODY], { error: 'bad_attribution_request' }],
    ['no install_uuid', { ...BODY, install_uuid: undefined }, { error: 'bad_install_uuid', field: 'install_uuid' }],
    ['an install_uuid that is no UUID', { ...BODY, install_uuid: 'abc' }, { error: 'bad_install_uuid', field: 'install_uuid' }],
    ['a platform of no store', { ...BODY, platform: 'desktop' }, { error: 'bad_attribution_request', field: 'platform' }],
    ['no app_version', { ...BODY, app_version: '' }, { error: 'bad_attribution_request', field: 'app_version' }],
    [
      'an app_version of 65 characters',
      { ...BODY, app_version: '1'.repeat(65) },
      { error: 'bad_attribution_request', field: 'app_version' },
    ],
    ['an sdk_version with a space', { ...BODY, sdk_version: 'android 1' }, { error: 'bad_attribution_request', field: 'sdk_version' }],
    [
      'a referrer over the limit',
      { ...BODY, install_referrer: 'a'.repeat(MAX_REFERRER_CHARS + 1) },
      { error: 'bad_attribution_request', field: 'install_referrer' },
    ],
    ['a referrer that is not a string', { ...BODY, install_referrer: 7 }, { error: 'bad_attribution_request', field: 'install_referrer' }],
    ['a negative referrer_click_ms', { ...BODY, referrer_click_ms: -1 }, { error: 'bad_attribution_request', field: 'referrer_click_ms' }],
    [
      'an install_begin_ms in seconds with a fraction',
      { ...BODY, install_begin_ms: 1.5 },
      { error: 'bad_attribution_request', field: 'install_begin_ms' },
    ],
    ['a language with a space', { ...BODY, language: 'en US' }, { error: 'bad_attribution_request', field: 'language' }],
    ['a time_zone of 65 characters', { ...BODY, time_zone: 'A'.repeat(65) }, { error: 'bad_attribution_request', field: 'time_zone' }],
    ['a screen that is not <width>x<height>', { ...BODY, screen: '1080*2400' }, { error: 'bad_attribution_request', field: 'screen' }],
  ])('refuses %s with 400 naming the member at fault', (_name, body, expected) => {
    expect(refusal(body)).toEqual({ status: 400, ...expected });
  });

  it('names the first member at fault, in the documented order', () => {
    expect(refusal({ ...BODY, platform: 'web', screen: 'big' })).toMatchObject({ field: 'platform' });
  });

  it('refuses an install_uuid query that is missing or no UUID, and lower-cases a good one', () => {
    expect(() => parseInstallQuery(undefined)).toThrow(FirstLaunchError);
    expect(() => parseInstallQuery(`${UUID}x`)).toThrow(FirstLaunchError);
    expect(parseInstallQuery(UUID.toUpperCase())).toBe(UUID);
  });
});

describe('the first-launch answer', () => {
  const androidClick = (overrides: Partial<ClickRecord> & { click_id: string }) =>
    click({
      ts_ms: T0 - HOUR,
      platform: 'android',
      partner: 'meta',
      campaign: 'spring',
      sub1: 'creative_a',
      lookback_days: 7,
      ...overrides,
    });

  it("is found, deterministic, when the Play referrer names a click of the app, with the click's deep link", async () => {
    const w = firstLaunchWorld();
    w.clicks.set('c1', androidClick({ click_id: 'c1', deep_link: { value: 'product/42', sub2: 'blue' } }));
    expect(await w.ask({ installReferrer: 'utm_source=meta&click_id=c1' })).toEqual({
      status: 'found',
      attribution: {
        partner: 'meta',
        campaign: 'spring',
        link_id: 'link-1',
        click_id: 'c1',
        sub1: 'creative_a',
        sub2: null,
        sub3: null,
        sub4: null,
        sub5: null,
        match: 'deterministic',
        click_ms: T0 - HOUR,
      },
      deep_link: {
        value: 'product/42',
        sub1: null,
        sub2: 'blue',
        sub3: null,
        sub4: null,
        sub5: null,
        sub6: null,
        sub7: null,
        sub8: null,
        sub9: null,
        sub10: null,
      },
    });
  });

  it('reads a referrer still URL-encoded, and answers a deep link of null for a click without one', async () => {
    const w = firstLaunchWorld();
    w.clicks.set('c1', androidClick({ click_id: 'c1' }));
    const answer = await w.ask({ installReferrer: encodeURIComponent('utm_source=meta&click_id=c1') });
    expect(answer).toMatchObject({ status: 'found', attribution: { click_id: 'c1' }, deep_link: null });
  });

  it.each([
    ['an unknown click', 'nope', 'click_unknown_or_expired'],
    ["another app's click", 'other', 'click_other_app'],
    ['a click after the first launch', 'later', 'click_after_install'],
    ["a click older than its link's lookback", 'old', 'click_outside_lookback'],
  ])('is not_found when the referrer names %s, with the reason', async (_name, clickId, reason) => {
    const w = firstLaunchWorld();
    w.clicks.set('other', androidClick({ click_id: 'other', app_id: 'app_other' }));
    w.clicks.set('later', androidClick({ click_id: 'later', ts_ms: T0 + 1000 }));
    w.clicks.set('old', androidClick({ click_id: 'old', ts_ms: T0 - 8 * DAY, lookback_days: 7 }));
    expect(await w.ask({ installReferrer: `click_id=${clickId}` })).toEqual({
      status: 'not_found',
      reason,
      attribution: null,
      deep_link: null,
    });
  });

  it('matches by address and platform only when the app switched probabilistic matching on', async () => {
    const clicks = (w: ReturnType<typeof firstLaunchWorld>) =>
      w.clicks.set('p1', click({ click_id: 'p1', ts_ms: T0 - HOUR, platform: 'ios', ip: IP, partner: 'tiktok' }));
    const off = firstLaunchWorld({ probabilistic: false });
    clicks(off);
    expect(await off.ask({ platform: 'ios' })).toMatchObject({ status: 'not_found', reason: 'no_click_named' });

    const on = firstLaunchWorld({ probabilistic: true });
    clicks(on);
    expect(await on.ask({ platform: 'ios' }, { ip: '203.0.113.9' })).toMatchObject({ status: 'not_found', reason: 'no_click_in_window' });
    const again = firstLaunchWorld({ probabilistic: true });
    clicks(again);
    expect(await again.ask({ platform: 'ios' })).toMatchObject({
      status: 'found',
      attribution: { partner: 'tiktok', click_id: 'p1', match: 'probabilistic' },
    });
  });

  it('gives every later call of the install the first answer, whatever it carries then', async () => {
    const w = firstLaunchWorld({ probabilistic: true });
    const first = await w.ask({ platform: 'ios' });
    expect(first).toMatchObject({ status: 'not_found', reason: 'no_click_in_window' });
    w.clicks.set('c1', androidClick({ click_id: 'c1', platform: 'ios', ip: IP }));
    expect(await w.ask({ platform: 'ios', installReferrer: 'click_id=c1' }, { atMs: T0 + 60_000 })).toEqual(first);
    expect(await w.installs.get(`${APP}#${UUID}`, 'first_launch')).toMatchObject({ answered_ms: T0, answer: first });
  });

  it('names the click the aggregator would take for an install at that moment, and the click a written-apart oracle names', async () => {
    const ips = ['198.51.100.7', '203.0.113.9'];
    const clickArb = fc.record({
      ago: fc.integer({ min: -2 * HOUR, max: 9 * DAY }),
      ip: fc.constantFrom(...ips),
      platform: fc.constantFrom<'ios' | 'android'>('ios', 'android'),
      ownApp: fc.boolean(),
      lookbackDays: fc.integer({ min: 1, max: 7 }),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(clickArb, { maxLength: 5 }),
        fc.oneof(fc.constant(undefined), fc.constant('unknown'), fc.nat({ max: 4 })),
        fc.boolean(),
        fc.boolean(),
        fc.constantFrom<'ios' | 'android'>('ios', 'android'),
        fc.constantFrom(...ips),
        async (clicks, named, encoded, probabilistic, platform, ip) => {
          const w = firstLaunchWorld({ probabilistic });
          const records = clicks.map((c, i) =>
            click({
              click_id: `c${i}`,
              ts_ms: T0 - c.ago,
              ip: c.ip,
              platform: c.platform,
              app_id: c.ownApp ? APP : 'app_other',
              partner: `partner${i}`,
              lookback_days: c.lookbackDays,
            }),
          );
          for (const record of records) w.clicks.set(record.click_id, record);
          const namedId = named === undefined ? undefined : named === 'unknown' ? 'unknown' : `c${named}`;
          const plain = namedId === undefined ? undefined : `utm_source=x&click_id=${namedId}`;
          const referrer = plain !== undefined && encoded ? encodeURIComponent(plain) : plain;

          // The oracle, from the rules in docs/aggregation.md: the named click of the app within its
          // lookback; else, switched on, the latest of the app, address and platform in 24 hours.
          const namedClick = records.find(
            (c) => c.click_id === namedId && c.app_id === APP && c.ts_ms <= T0 && c.ts_ms >= T0 - (c.lookback_days ?? 7) * DAY,
          );
          const nearby = records
            .filter((c) => c.app_id === APP && c.ip === ip && c.platform === platform && c.ts_ms <= T0 && c.ts_ms >= T0 - DAY)
            .sort((a, b) => b.ts_ms - a.ts_ms)[0];
          const expected = namedClick ?? (probabilistic ? nearby : undefined);

          const answer = await w.ask({ platform, ...(referrer === undefined ? {} : { installReferrer: referrer }) }, { ip });
          expect(answer.attribution?.click_id ?? null).toBe(expected?.click_id ?? null);
          expect(answer.status).toBe(expected ? 'found' : 'not_found');

          // The aggregator, given the same install at the same moment, counts the same click.
          const install = { event_id: 'i-1', event_name: 'install', install_uuid: UUID, ts_ms: T0, platform };
          await w.deliver([w.upload([referrer === undefined ? install : { ...install, attribution: { referrer } }], { ip })]);
          const decision = (await w.installs.get<{ decision: AttributionDecision }>(`${APP}#${UUID}`, 'e#i-1'))?.decision;
          expect(decision?.click_id ?? null).toBe(answer.attribution?.click_id ?? null);
          if (answer.attribution) expect(decision?.attribution_type).toBe(answer.attribution.match);
        },
      ),
      { numRuns: 150 },
    );
  });
});

describe('the current attribution (GET)', () => {
  const install = (extra: object = {}) => ({
    event_id: 'i-1',
    event_name: 'install',
    install_uuid: UUID,
    ts_ms: T0,
    platform: 'android',
    ...extra,
  });

  it('is not_found, unknown_install, for an install nothing is known of', async () => {
    const w = firstLaunchWorld();
    expect(await currentAttribution(w.launchPorts, APP, UUID)).toEqual({
      status: 'not_found',
      reason: 'unknown_install',
      attribution: null,
      deep_link: null,
    });
  });

  it('is the first answer until the aggregator counts the install, then its decision', async () => {
    const w = firstLaunchWorld();
    w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 - HOUR, platform: 'android', partner: 'meta', deep_link: { value: 'home' } }));
    w.clicks.set('c2', click({ click_id: 'c2', ts_ms: T0 - 60_000, platform: 'android', partner: 'tiktok', deep_link: { value: 'sale' } }));
    const first = await w.ask({ installReferrer: 'click_id=c1' });
    expect(await currentAttribution(w.launchPorts, APP, UUID)).toEqual(first);

    // The install event names another click (a stronger signal of the SDK's own): the reports count
    // that one, and so does the answer, with that click's deep link.
    await w.deliver([w.upload([install({ attribution: { click_id: 'c2' } })])]);
    const current = await currentAttribution(w.launchPorts, APP, UUID);
    expect(current).toMatchObject({
      status: 'found',
      attribution: { partner: 'tiktok', click_id: 'c2', match: 'deterministic', click_ms: T0 - 60_000 },
      deep_link: { value: 'sale' },
    });
  });

  it("keeps the first answer's deep link when the counted click is the same and has expired since", async () => {
    const w = firstLaunchWorld();
    w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 - HOUR, platform: 'android', deep_link: { value: 'home' } }));
    await w.ask({ installReferrer: 'click_id=c1' });
    await w.deliver([w.upload([install({ attribution: { referrer: 'click_id=c1' } })])]);
    w.clicks.delete('c1');
    expect(await currentAttribution(w.launchPorts, APP, UUID)).toMatchObject({ status: 'found', deep_link: { value: 'home' } });
  });

  it('is not_found, organic, once the aggregator counted the install organic', async () => {
    const w = firstLaunchWorld();
    await w.deliver([w.upload([install()])]);
    expect(await currentAttribution(w.launchPorts, APP, UUID)).toEqual({
      status: 'not_found',
      reason: 'organic',
      attribution: null,
      deep_link: null,
    });
  });

  it("lets a failing store's error through, for the handler to answer 503 store_unavailable", async () => {
    const down: FirstLaunchPorts = {
      clicks: { clickById: async () => undefined, latestClick: async () => undefined },
      answers: {
        first: async () => Promise.reject(new Error('store unavailable')),
        keep: async () => Promise.reject(new Error('store unavailable')),
        counted: async () => Promise.reject(new Error('store unavailable')),
      },
    };
    await expect(currentAttribution(down, APP, UUID)).rejects.toThrow('store unavailable');
    const call = { appId: APP, probabilistic: false, clientIp: IP, receivedMs: T0, request: parseFirstLaunch(BODY) };
    await expect(answerFirstLaunch(down, call)).rejects.toThrow('store unavailable');
  });
});
