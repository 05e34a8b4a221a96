import fc from 'fast-check';
import { statsWindow } from '../../../functions/commands/link-commands';
import type { ClickRecord } from '../../../functions/domain/links/click';
import { CHANGEABLE, type LinkChanges, LinkConfigError, updatedLinkConfig } from '../../../functions/domain/links/link-config';
import { slidingWindow } from '../../../functions/domain/links/sliding-window';
import { followLink, type IpBlockEntry, type LinkConfig, type TrackingLinkPorts } from '../../../functions/domain/links/tracking-link';
import { parseReportQuery } from '../../../functions/domain/reports/report-query';
import { MemorySlotCounter } from './memory-slot-counter';
import { MOBILE } from './user-agents';

const NOW = Date.UTC(2025, 0, 15, 12, 0, 0);

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
  countries_allow: ['US'],
  lookback_days: 7,
  created_ms: NOW - 86_400_000,
};

describe('updatedLinkConfig', () => {
  it('changes what is given, clears what is null, and keeps the rest', () => {
    expect(updatedLinkConfig(link, { campaign: 'summer', ios_url: null, countries_allow: null, countries_block: [' de'] }, NOW)).toEqual({
      ...link,
      campaign: 'summer',
      ios_url: undefined,
      countries_allow: undefined,
      countries_block: ['DE'],
      updated_ms: NOW,
    });
  });

  it('refuses a change that leaves a link without any destination, as create does', () => {
    expect(() => updatedLinkConfig(link, { ios_url: null, android_url: null, web_url: null }, NOW)).toThrow(LinkConfigError);
    expect(() => updatedLinkConfig(link, { ios_url: null, android_url: null }, NOW)).not.toThrow();
    expect(() => updatedLinkConfig({ ...link, honeypot: true }, { ios_url: null, android_url: null, web_url: null }, NOW)).not.toThrow();
  });

  it("merges the deep link's fields: a value replaces, null clears, the rest stays; all cleared removes it", () => {
    const deepLinked = { ...link, deep_link: { value: 'summer', sub1: 'red', sub2: 'big' } };
    expect(updatedLinkConfig(deepLinked, { deep_link: { value: 'winter', sub1: null, sub10: 'x' } }, NOW).deep_link).toEqual({
      value: 'winter',
      sub2: 'big',
      sub10: 'x',
    });
    expect(updatedLinkConfig(deepLinked, { deep_link: { value: null, sub1: null, sub2: null } }, NOW)).not.toHaveProperty('deep_link');
  });

  it('refuses a deep link field out of bounds, naming its flag, whoever wrote the request', () => {
    expect(() => updatedLinkConfig(link, { deep_link: { sub3: 'x'.repeat(101) } }, NOW)).toThrow(
      new LinkConfigError('--deep-link-sub3 must be 1 to 100 characters without control characters'),
    );
    expect(() => updatedLinkConfig(link, { deep_link: { value: 'tab\there' } }, NOW)).toThrow(LinkConfigError);
  });

  it('never changes the identity, partner or honeypot, whatever is asked', () => {
    const value = fc.option(fc.oneof(fc.constant(null), fc.webUrl({ validSchemes: ['https'] })), { nil: undefined });
    const changes = fc.record({
      campaign: fc.option(fc.oneof(fc.constant(null), fc.string({ minLength: 1 })), { nil: undefined }),
      ios_url: value,
      android_url: value,
      web_url: fc.option(fc.webUrl({ validSchemes: ['https'] }), { nil: undefined }),
      countries_allow: fc.option(fc.oneof(fc.constant(null), fc.array(fc.constantFrom('US', 'DE', 'fr'))), { nil: undefined }),
      lookback_days: fc.option(fc.integer({ min: 1, max: 30 }), { nil: undefined }),
    });
    fc.assert(
      fc.property(changes, (asked: LinkChanges) => {
        const updated = updatedLinkConfig(link, asked, NOW);
        expect(updated).toMatchObject({
          link_id: link.link_id,
          app_id: link.app_id,
          partner: 'acme',
          honeypot: false,
          created_ms: link.created_ms,
        });
        for (const field of CHANGEABLE) {
          const change = asked[field];
          if (change === undefined) expect(updated[field]).toEqual(link[field]);
          else if (change === null) expect(updated[field]).toBeUndefined();
        }
      }),
    );
  });
});

function world(links: LinkConfig[]) {
  const blocks: IpBlockEntry[] = [];
  const clicks: ClickRecord[] = [];
  const ports: TrackingLinkPorts = {
    links: { byId: async (id) => links.find((l) => l.link_id === id) },
    ipBlocks: { isBlocked: async () => false, block: async (entry) => void blocks.push(entry) },
    rateCounter: new MemorySlotCounter(),
    rateWindow: slidingWindow(120, 60_000),
    clicks: { record: async (click) => void clicks.push(click) },
    countClicks: true,
    newClickId: () => 'click_1',
  };
  const follow = (linkId: string) =>
    followLink(ports, { linkId, userAgent: MOBILE.iosSafari, viewer: { ip: '198.51.100.7', country: 'US' }, query: {}, nowMs: NOW });
  // The clicks the click-count lane counts (ADR 0008): those recorded with their local day, by link.
  const counted = {
    get all() {
      return clicks.filter((c) => c.count_day !== undefined).map((c) => c.link_id);
    },
  };
  return { blocks, clicks, counted, follow };
}

describe('a disabled link', () => {
  it('answers as an unknown link: no click, no count', async () => {
    const { clicks, counted, follow } = world([{ ...link, disabled: true }]);
    expect(await follow(link.link_id)).toEqual({ kind: 'unknown_link' });
    expect(clicks).toEqual([]);
    expect(counted.all).toEqual([]);
  });

  it('blocks no address when it is a honeypot', async () => {
    const { blocks, follow } = world([{ ...link, link_id: 'lnk_trap', honeypot: true, disabled: true }]);
    expect(await follow('lnk_trap')).toEqual({ kind: 'unknown_link' });
    expect(blocks).toEqual([]);
  });

  it('redirects and counts again once enabled (disabled false, or a link made before the attribute)', async () => {
    for (const enabled of [{ ...link, disabled: false }, link]) {
      const { clicks, counted, follow } = world([enabled]);
      expect(await follow(link.link_id)).toMatchObject({ kind: 'redirect' });
      expect(clicks).toHaveLength(1);
      expect(counted.all).toEqual([link.link_id]);
    }
  });
});

describe('link stats window', () => {
  it('refuses exactly what the Reporting API refuses, with its code and the flag at fault', () => {
    const bound = fc.oneof(
      fc.integer({ min: 0, max: 2_000_000_000_000 }).map(String),
      fc.constantFrom('', 'abc', '1e12', '9'.repeat(17), '-5', ' 100'),
    );
    fc.assert(
      fc.property(bound, bound, (since, until) => {
        let expected: string | undefined;
        try {
          parseReportQuery({ since_ms: since.trim(), until_ms: until.trim() }, 0);
        } catch (error) {
          expected = (error as { code: string }).code;
        }
        let refused: { message: string; flag?: string } | undefined;
        try {
          expect(statsWindow(since, until)).toEqual({ sinceMs: Number(since), untilMs: Number(until) });
        } catch (error) {
          refused = error as { message: string; flag?: string };
        }
        expect(refused?.message.match(/\((\w+)\)$/)?.[1]).toBe(expected);
        if (refused) expect(refused.message.startsWith(`--${refused.flag} `)).toBe(true);
      }),
    );
  });

  it('allows exactly 365 days and refuses a millisecond more', () => {
    const year = 365 * 86_400_000;
    expect(statsWindow('0', String(year))).toEqual({ sinceMs: 0, untilMs: year });
    expect(() => statsWindow('0', String(year + 1))).toThrow('--until-ms must be at most 365 days after --since-ms (window_too_large)');
  });
});
