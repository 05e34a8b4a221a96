import type { ClickRecord } from '../../../functions/domain/links/click';
import { CLICK_KEPT_AFTER_CLAIM_S, cap, FIELD_CAPS } from '../../../functions/domain/links/click';
import { slidingWindow } from '../../../functions/domain/links/sliding-window';
import {
  followLink,
  HONEYPOT_BLOCK_DAYS,
  type IpBlockEntry,
  type LinkConfig,
  type LinkRequest,
  type TrackingLinkPorts,
} from '../../../functions/domain/links/tracking-link';
import { MemorySlotCounter } from './memory-slot-counter';
import { CRAWLERS, DESKTOP, MOBILE } from './user-agents';

const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);

const baseLink: LinkConfig = {
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

/** Blocks are the company's own: keyed by company and address, as the store keys them. */
const blockKey = (companyId: string, ip: string) => `${companyId}#${ip}`;

function world(links: LinkConfig[], limit = 120) {
  const blocks = new Map<string, IpBlockEntry>();
  const clicks: ClickRecord[] = [];
  const lookups: string[] = [];
  let next = 0;
  const ports: TrackingLinkPorts = {
    links: {
      byId: async (id) => {
        lookups.push(id);
        return links.find((l) => l.link_id === id);
      },
    },
    ipBlocks: {
      isBlocked: async (companyId, ip, nowMs) => (blocks.get(blockKey(companyId, ip))?.expires_at ?? 0) * 1000 > nowMs,
      block: async (entry) => void blocks.set(blockKey(entry.company_id, entry.ip), entry),
    },
    rateCounter: new MemorySlotCounter(),
    rateWindow: slidingWindow(limit, 60_000),
    clicks: { record: async (click) => void clicks.push(click) },
    newClickId: () => `click_${++next}`,
  };
  const click = (overrides: Partial<LinkRequest> = {}) =>
    followLink(ports, {
      linkId: baseLink.link_id,
      userAgent: MOBILE.iosSafari,
      viewer: { ip: '198.51.100.7', country: 'US', asn: 7922 },
      query: {},
      nowMs: NOW,
      ...overrides,
    });
  return { ports, blocks, clicks, lookups, click };
}

describe('followLink', () => {
  it('answers an unknown link, and does not even look up an id that cannot be one', async () => {
    const { click, lookups } = world([baseLink]);
    expect(await click({ linkId: 'nope' })).toEqual({ kind: 'unknown_link' });
    expect(await click({ linkId: '../../evil.com' })).toEqual({ kind: 'unknown_link' });
    expect(await click({ linkId: '' })).toEqual({ kind: 'unknown_link' });
    expect(lookups).toEqual(['nope']);
  });

  it('records a click with every pass-through field and redirects with its id', async () => {
    const { click, clicks } = world([baseLink]);
    const outcome = await click({
      userAgent: MOBILE.chromeAndroid,
      viewer: { ip: '2001:DB8:1:2::7', country: 'DE', asn: 3320 },
      query: { click_id: 'partner-123', sub1: 'a', sub2: 'b', sub3: 'c', sub4: 'd', sub5: 'e', mobile_only: '1' },
    });
    expect(clicks).toEqual([
      {
        click_id: 'click_1',
        link_id: 'lnk_regular1',
        lookback_days: 7,
        app_id: 'app_1',
        company_id: 'com_1',
        partner: 'acme',
        campaign: 'spring',
        ext_click_id: 'partner-123',
        sub1: 'a',
        sub2: 'b',
        sub3: 'c',
        sub4: 'd',
        sub5: 'e',
        ip: '2001:db8:1:2::7',
        ip_block: '2001:db8:1::/48',
        user_agent: MOBILE.chromeAndroid,
        platform: 'android',
        country: 'DE',
        asn: 3320,
        ts_ms: NOW,
        app_ip_platform: 'app_1#2001:db8:1:2::7#android',
        expires_at: NOW / 1000 + 7 * 86_400 + CLICK_KEPT_AFTER_CLAIM_S,
      },
    ]);
    expect(outcome).toMatchObject({ kind: 'redirect', click: clicks[0] });
    expect(outcome.kind === 'redirect' && outcome.location).toContain('referrer=click_id%3Dclick_1%26link_id%3Dlnk_regular1');
  });

  it('cuts over-long request values instead of refusing the click', async () => {
    const { click, clicks } = world([baseLink]);
    await click({ userAgent: `${MOBILE.iosSafari}${'x'.repeat(5000)}`, query: { click_id: 'c'.repeat(1000), sub3: '😀'.repeat(200) } });
    expect(clicks[0].ext_click_id).toHaveLength(FIELD_CAPS.ext_click_id);
    expect(clicks[0].user_agent).toHaveLength(FIELD_CAPS.user_agent);
    expect(clicks[0].sub3!.length).toBeLessThanOrEqual(FIELD_CAPS.sub);
    expect(clicks[0].sub3).toBe('😀'.repeat(FIELD_CAPS.sub / 2));
    expect(cap('😀😀', 3)).toBe('😀');
    expect(cap('', 3)).toBeUndefined();
  });

  it('drops a crawler with the bare redirect and no click', async () => {
    const { click, clicks } = world([baseLink]);
    expect(await click({ userAgent: CRAWLERS.googlebot })).toEqual({
      kind: 'redirect',
      location: 'https://play.google.com/store/apps/details?id=com.example',
      dropped: 'bot_user_agent',
    });
    expect(clicks).toEqual([]);
  });

  it('answers a HEAD as the GET would be, with no click, no rate slot and no honeypot block', async () => {
    const honeypot = { ...baseLink, link_id: 'lnk_honeypot', honeypot: true };
    const { click, clicks, blocks } = world([baseLink, honeypot], 1);
    for (let n = 0; n < 3; n += 1) {
      expect(await click({ method: 'HEAD' })).toEqual({ kind: 'redirect', location: expect.any(String), dropped: 'head_request' });
    }
    expect(await click({ method: 'HEAD', linkId: honeypot.link_id })).toEqual({ kind: 'unknown_link' });
    expect(await click({ method: 'HEAD', linkId: 'lnk_missing1' })).toEqual({ kind: 'unknown_link' });
    expect([clicks, blocks.size]).toEqual([[], 0]);
    // The limit of 1 is still whole for the GET: the HEADs took no slot.
    expect(await click({ method: 'GET' })).toMatchObject({ kind: 'redirect', click: { click_id: 'click_1' } });
  });

  it('answers a honeypot 404 and blocks the address of a visitor that passed the edge filter', async () => {
    const honeypot = { ...baseLink, link_id: 'lnk_honeypot', honeypot: true };
    const { click, blocks, clicks } = world([baseLink, honeypot]);
    expect(await click({ linkId: honeypot.link_id, viewer: { ip: '::ffff:203.0.113.9' } })).toEqual({
      kind: 'unknown_link',
      honeypotHit: true,
    });
    expect(blocks.get(blockKey('com_1', '203.0.113.9'))).toEqual({
      ip: '203.0.113.9',
      ip_block: '203.0.113.0/24',
      link_id: 'lnk_honeypot',
      app_id: 'app_1',
      company_id: 'com_1',
      blocked_ms: NOW,
      expires_at: NOW / 1000 + HONEYPOT_BLOCK_DAYS * 86_400,
    });
    expect(await click({ viewer: { ip: '203.0.113.9' } })).toMatchObject({ kind: 'redirect', dropped: 'blocked_ip' });
    expect(await click({ viewer: { ip: '203.0.113.9' }, nowMs: NOW + HONEYPOT_BLOCK_DAYS * 86_400_000 })).toMatchObject({
      kind: 'redirect',
      click: {},
    });
    expect(clicks).toHaveLength(1);
  });

  it("blocks the address on the links of the honeypot's company only, so another tenant's links still record its clicks", async () => {
    const honeypot = { ...baseLink, link_id: 'lnk_honeypot', honeypot: true };
    const sameCompany = { ...baseLink, link_id: 'lnk_sibling1', app_id: 'app_2' };
    const otherTenant = { ...baseLink, link_id: 'lnk_othercom', app_id: 'app_9', company_id: 'com_9' };
    const { click, clicks } = world([baseLink, honeypot, sameCompany, otherTenant]);
    const viewer = { ip: '100.64.0.1' };
    expect(await click({ linkId: honeypot.link_id, viewer })).toEqual({ kind: 'unknown_link', honeypotHit: true });
    expect(await click({ linkId: baseLink.link_id, viewer })).toMatchObject({ kind: 'redirect', dropped: 'blocked_ip' });
    expect(await click({ linkId: sameCompany.link_id, viewer })).toMatchObject({ kind: 'redirect', dropped: 'blocked_ip' });
    expect(await click({ linkId: otherTenant.link_id, viewer })).toMatchObject({
      kind: 'redirect',
      click: { company_id: 'com_9', ip: '100.64.0.1' },
    });
    expect(clicks.map((c) => c.link_id)).toEqual(['lnk_othercom']);
  });

  it('answers a honeypot 404 without blocking a visitor the edge filter dropped', async () => {
    const honeypot = { ...baseLink, link_id: 'lnk_honeypot', honeypot: true, countries_allow: ['US'] };
    const { click, blocks } = world([honeypot]);
    expect(await click({ linkId: honeypot.link_id, userAgent: CRAWLERS.bingbot })).toEqual({ kind: 'unknown_link' });
    expect(await click({ linkId: honeypot.link_id, viewer: { ip: '198.51.100.7', asn: 16509 } })).toEqual({ kind: 'unknown_link' });
    expect(await click({ linkId: honeypot.link_id, viewer: { ip: '198.51.100.7', country: 'FR' } })).toEqual({ kind: 'unknown_link' });
    expect(blocks.size).toBe(0);
  });

  it('rate-limits after the filters, so dropped requests use none of the allowance', async () => {
    const { click, clicks } = world([baseLink], 2);
    for (let i = 0; i < 5; i++) await click({ userAgent: CRAWLERS.curl });
    expect(await click()).toMatchObject({ kind: 'redirect', click: {} });
    expect(await click({ viewer: { ip: '198.51.100.200' } })).toMatchObject({ kind: 'redirect', click: {} });
    const limited = await click({ viewer: { ip: '198.51.100.201' } });
    expect(limited).toMatchObject({ kind: 'rate_limited' });
    expect(await click({ viewer: { ip: '198.51.101.1' } })).toMatchObject({ kind: 'redirect', click: {} });
    expect(clicks).toHaveLength(3);
  });

  it('drops a desktop visitor of a mobile_only link after the rate limit and records one without it', async () => {
    const { click, clicks } = world([baseLink], 1);
    expect(await click({ userAgent: DESKTOP.firefoxWindows, query: { mobile_only: '1' } })).toEqual({
      kind: 'redirect',
      location: 'https://example.com/app',
      dropped: 'desktop_on_mobile_only',
    });
    expect(await click({ userAgent: DESKTOP.firefoxWindows })).toMatchObject({ kind: 'rate_limited' });
    expect(await click({ userAgent: DESKTOP.firefoxWindows, viewer: { ip: '192.0.2.1' } })).toMatchObject({
      kind: 'redirect',
      location: 'https://example.com/app?click_id=click_1&link_id=lnk_regular1',
    });
    expect(clicks.map((c) => c.platform)).toEqual(['desktop']);
  });

  it('answers a link with no usable destination like a missing one', async () => {
    const broken = { ...baseLink, ios_url: undefined, android_url: undefined, web_url: 'ftp://example.com' };
    const { click, clicks } = world([broken]);
    expect(await click()).toEqual({ kind: 'unknown_link' });
    expect(clicks).toEqual([]);
  });

  describe('when a store fails after the link is known', () => {
    const down = async () => {
      throw new Error('ProvisionedThroughputExceededException');
    };

    it.each([
      ['the IP block look-up', (p: TrackingLinkPorts) => (p.ipBlocks.isBlocked = down)],
      ['the rate window', (p: TrackingLinkPorts) => (p.rateCounter = { increment: down, tidy: down })],
      ['the click write', (p: TrackingLinkPorts) => (p.clicks.record = down)],
    ])('still sends the visitor to the store without a click when %s fails', async (_what, breakIt) => {
      const { ports, click, clicks } = world([baseLink]);
      breakIt(ports);
      const outcome = await click();
      expect(outcome).toMatchObject({ kind: 'redirect', location: 'https://apps.apple.com/app/id1', dropped: 'store_unavailable' });
      expect(outcome.kind === 'redirect' && outcome.failure).toBeInstanceOf(Error);
      expect(clicks).toEqual([]);
    });

    it('answers a honeypot 404 even when the block cannot be written', async () => {
      const trap = { ...baseLink, link_id: 'lnk_trap0001', honeypot: true };
      const { ports, click } = world([trap]);
      ports.ipBlocks.block = down;
      expect(await click({ linkId: trap.link_id })).toMatchObject({ kind: 'unknown_link', honeypotHit: true, failure: expect.any(Error) });
    });
  });

  it('asks the visitor to retry, touching nothing else, when the link look-up itself fails', async () => {
    const { ports, click, clicks } = world([baseLink]);
    ports.links.byId = async () => {
      throw new Error('ProvisionedThroughputExceededException');
    };
    expect(await click()).toEqual({ kind: 'link_unavailable', failure: expect.any(Error) });
    expect(clicks).toEqual([]);
  });
});

describe('followLink with deep link data (docs/deep-links.md)', () => {
  const deepLinked: LinkConfig = { ...baseLink, deep_link: { value: 'summer_sale', sub1: 'red', sub2: 'big' } };

  it("stores the link's deep link on the click, each field overridden by the click URL's parameter", async () => {
    const { click, clicks } = world([deepLinked]);
    const outcome = await click({ query: { deep_link_value: 'winter_sale', deep_link_sub3: 'new', deep_link_sub2: 'x'.repeat(101) } });
    expect(outcome.kind).toBe('redirect');
    expect(clicks.map((c) => c.deep_link)).toEqual([{ value: 'winter_sale', sub1: 'red', sub2: 'big', sub3: 'new' }]);
  });

  it('stores no deep_link when neither the link nor the click URL has one', async () => {
    const { click, clicks } = world([baseLink]);
    await click();
    expect(clicks).toHaveLength(1);
    expect(clicks[0]).not.toHaveProperty('deep_link');
  });

  it('records nothing for a click the edge filter, a honeypot or the rate limit stops, deep link or not', async () => {
    const filtered = world([deepLinked]);
    expect(await filtered.click({ userAgent: CRAWLERS.googlebot, query: { deep_link_value: 'x' } })).toMatchObject({
      kind: 'redirect',
      dropped: expect.any(String),
    });
    expect(filtered.clicks).toEqual([]);

    const trap = world([{ ...deepLinked, honeypot: true }]);
    expect(await trap.click({ query: { deep_link_value: 'x' } })).toMatchObject({ kind: 'unknown_link' });
    expect(trap.clicks).toEqual([]);

    const limited = world([deepLinked], 1);
    await limited.click();
    expect(await limited.click({ query: { deep_link_value: 'x' } })).toMatchObject({ kind: 'rate_limited' });
    expect(limited.clicks.map((c) => c.deep_link?.value)).toEqual(['summer_sale']);
  });

  it('never puts the deep link into the redirect', async () => {
    const { click } = world([deepLinked]);
    const outcome = await click({ userAgent: DESKTOP.chromeWindows, query: { deep_link_value: '"><script>' } });
    expect(outcome.kind === 'redirect' && outcome.location).toBe('https://example.com/app?click_id=click_1&link_id=lnk_regular1');
  });
});
