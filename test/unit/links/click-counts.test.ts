import type { DimensionValues } from '../../../functions/domain/analytics/performance';
import type { ClickRecord } from '../../../functions/domain/links/click';
import { slidingWindow } from '../../../functions/domain/links/sliding-window';
import {
  clickDimensions,
  followLink,
  type LinkConfig,
  type LinkRequest,
  type TrackingLinkPorts,
} from '../../../functions/domain/links/tracking-link';
import { MemorySlotCounter } from './memory-slot-counter';
import { CRAWLERS, DESKTOP, MOBILE } from './user-agents';

// 23:30 UTC on 15 January: the 16th in Tokyo, the 15th in UTC and New York.
const NOW = Date.UTC(2025, 0, 15, 23, 30);

const link: LinkConfig = {
  link_id: 'lnk_regular1',
  app_id: 'app_1',
  company_id: 'com_1',
  partner: 'acme',
  campaign: 'spring',
  honeypot: false,
  ios_url: 'https://apps.apple.com/app/id1',
  android_url: 'https://play.google.com/store/apps/details?id=com.example',
  web_url: 'https://example.com/app',
  lookback_days: 7,
  created_ms: NOW,
};

interface Counted {
  appId: string;
  day: string;
  dims: DimensionValues;
}

function world(options: { zone?: string; zoneFails?: boolean; recordFails?: boolean; limit?: number } = {}) {
  const clicks: ClickRecord[] = [];
  const links = [link, { ...link, link_id: 'lnk_nocampaign', campaign: undefined }];
  const ports: TrackingLinkPorts = {
    links: { byId: async (id) => links.find((l) => l.link_id === id) },
    ipBlocks: { isBlocked: async (_companyId, ip) => ip === '203.0.113.9', block: async () => undefined },
    rateCounter: new MemorySlotCounter(),
    rateWindow: slidingWindow(options.limit ?? 120, 60_000),
    clicks: {
      record: async (click) => {
        if (options.recordFails) throw new Error('clicks table unavailable');
        clicks.push(click);
      },
    },
    countClicks: true,
    timeZoneOf: async () => {
      if (options.zoneFails) throw new Error('tenants table unavailable');
      return options.zone ?? 'UTC';
    },
    newClickId: () => `click_${clicks.length + 1}`,
  };
  const click = (overrides: Partial<LinkRequest> = {}) =>
    followLink(ports, {
      linkId: link.link_id,
      userAgent: MOBILE.iosSafari,
      viewer: { ip: '198.51.100.7', country: 'JP', asn: 2516 },
      query: {},
      nowMs: NOW,
      ...overrides,
    });
  // What the click-count lane counts (ADR 0008): each recorded click that carries its local day, once.
  const counted = {
    get all(): Counted[] {
      return clicks.flatMap((c) => (c.count_day === undefined ? [] : [{ appId: c.app_id, day: c.count_day, dims: clickDimensions(c) }]));
    },
  };
  return { clicks, counted, click };
}

describe('click counts in the perf rows (counted by the lane from the day each click carries)', () => {
  it("counts a recorded click once, on its local day in the app's zone, under the link's partner and campaign, the viewer's country and the platform", async () => {
    const tokyo = world({ zone: 'Asia/Tokyo' });
    const outcome = await tokyo.click();
    expect(outcome).toMatchObject({ kind: 'redirect', click: { click_id: 'click_1' } });
    expect(outcome).not.toHaveProperty('countFailure');
    expect(tokyo.counted.all).toEqual([{ appId: 'app_1', day: '2025-01-16', dims: ['acme', 'spring', 'JP', 'ios'] }]);

    const utc = world();
    await utc.click({ linkId: 'lnk_nocampaign', userAgent: MOBILE.chromeAndroid, viewer: { ip: '198.51.100.7' } });
    await utc.click({ userAgent: DESKTOP.chromeWindows });
    expect(utc.counted.all).toEqual([
      { appId: 'app_1', day: '2025-01-15', dims: ['acme', '(none)', '(none)', 'android'] },
      { appId: 'app_1', day: '2025-01-15', dims: ['acme', 'spring', 'JP', 'desktop'] },
    ]);
  });

  it('counts no click that was not recorded: a crawler, a blocked address, a rate-limited visitor, a desktop on a mobile_only link', async () => {
    // The mobile_only drop comes after the rate limit and takes one of the two admissions.
    const w = world({ limit: 2 });
    await w.click({ userAgent: CRAWLERS.googlebot });
    await w.click({ viewer: { ip: '203.0.113.9', country: 'JP' } });
    await w.click({ userAgent: DESKTOP.chromeWindows, query: { mobile_only: '1' } });
    expect(w.counted.all).toEqual([]);
    await w.click();
    expect((await w.click()).kind).toBe('rate_limited');
    expect(w.counted.all).toHaveLength(1);
    expect(w.clicks).toHaveLength(1);
  });

  it('still records the click and redirects when the zone look-up fails, and says so for the log and the metric', async () => {
    for (const failing of [{ zoneFails: true }]) {
      const w = world(failing);
      const outcome = await w.click();
      expect(outcome).toMatchObject({ kind: 'redirect', click: { click_id: 'click_1' }, countFailure: expect.any(Error) });
      expect(outcome.kind === 'redirect' && outcome.dropped).toBeFalsy();
      expect(w.clicks).toHaveLength(1);
      expect(w.counted.all).toEqual([]);
    }
  });

  it('drops the click as before when its record fails, whatever the count did', async () => {
    const w = world({ recordFails: true });
    expect(await w.click()).toMatchObject({ kind: 'redirect', dropped: 'store_unavailable' });
    expect(w.clicks).toEqual([]);
  });
});
