// Issue 35, rules to decide: a valid Google Play install referrer naming a click of the app beats
// an unknown or stale `click_id` in the install event (docs/aggregation.md, Attribution), as
// AppsFlyer and Adjust users expect; the refused click_id is still recorded, and says why.

import { type AttributionLookups, decideAttribution, type InstallFacts } from '../../../functions/domain/attribution/decision';
import type { ClickRecord } from '../../../functions/domain/links/click';

const APP = 'app_0123456789abcdef0123';
const T0 = Date.UTC(2026, 5, 1, 12);
const HOUR = 3_600_000;
const DAY = 24 * HOUR;

const clickOf = (clickId: string, tsMs: number, partner: string): ClickRecord => ({
  click_id: clickId,
  link_id: 'link-1',
  app_id: APP,
  company_id: 'com_0123456789abcdef0123',
  partner,
  ip: '198.51.100.7',
  ip_block: '198.51.100.0/24',
  user_agent: 'ua',
  platform: 'android',
  app_ip_platform: '',
  ts_ms: tsMs,
  expires_at: Math.floor(tsMs / 1000) + 7 * 86_400,
});

const clicks = new Map([
  ['c-referrer', clickOf('c-referrer', T0 - HOUR, 'tiktok')],
  ['c-stale', clickOf('c-stale', T0 - 9 * DAY, 'meta')],
]);
const lookups: AttributionLookups = {
  clickById: async (_appId, clickId) => clicks.get(clickId),
  latestClick: async () => undefined,
  honeypotBlocked: async () => false,
  deviceSeenElsewhere: async () => false,
};
const facts = (attribution: InstallFacts['attribution']): InstallFacts => ({
  appId: APP,
  companyId: 'com_0123456789abcdef0123',
  probabilistic: false,
  installUuid: '00000000-0000-4000-8000-000000000001',
  eventId: 'i-1',
  tsMs: T0,
  skewMs: 0,
  platform: 'android',
  clientIp: '198.51.100.7',
  attribution,
  seenInstallUuid: false,
});

describe('an install naming a click_id and a Play install referrer', () => {
  it.each([
    ['unknown', 'c-missing', 'unknown_or_expired'],
    ['outside its lookback', 'c-stale', 'outside_lookback'],
  ])('is attributed by the referrer when the click_id is %s, and records the refused click_id', async (_, clickId, reason) => {
    const decision = await decideAttribution(facts({ click_id: clickId, referrer: 'utm_source=tiktok&click_id=c-referrer' }), lookups);
    expect(decision).toMatchObject({
      partner: 'tiktok',
      attribution_type: 'deterministic',
      rule: 'referrer_click_id',
      click_id: 'c-referrer',
      refused_click: { click_id: clickId, reason },
    });
  });

  it('keeps the click_id when it is valid, whatever the referrer names', async () => {
    clicks.set('c-valid', clickOf('c-valid', T0 - 2 * HOUR, 'google'));
    const decision = await decideAttribution(facts({ click_id: 'c-valid', referrer: 'click_id=c-referrer' }), lookups);
    expect(decision).toMatchObject({ partner: 'google', rule: 'click_id', click_id: 'c-valid' });
    expect(decision.refused_click).toBeUndefined();
  });

  it('is organic, naming the click_id refused, when neither names a click it could have', async () => {
    const decision = await decideAttribution(facts({ click_id: 'c-missing', referrer: 'click_id=c-stale' }), lookups);
    expect(decision).toMatchObject({ partner: 'organic', refused_click: { click_id: 'c-missing', reason: 'unknown_or_expired' } });
  });
});
