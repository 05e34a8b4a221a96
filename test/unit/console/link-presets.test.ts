import fc from 'fast-check';
import {
  conversionRate,
  copyPreset,
  duplicateWarning,
  findDuplicate,
  LINK_PRESETS,
  type LinkPreset,
  type ListedLink,
  PRESET_PARAMS,
  presetFor,
  presetTryFlags,
  statsByLink,
} from '../../../console/ui/link-presets';
import { CLICK_PARAMS, partnerUrl } from '../../../functions/domain/links/partner-url';

const BASE = 'https://track.example.com';

/** What `link try` does with the preset's flags (functions/commands/link-commands.ts): partnerUrl over click_id and sub1..sub5. */
function urlOfTry(linkId: string, preset: LinkPreset): string {
  const flags = presetTryFlags(preset);
  const query = Object.fromEntries(Object.entries(flags).map(([flag, value]) => [flag === 'click-id' ? 'click_id' : flag, value]));
  return partnerUrl(BASE, linkId, query);
}

/** The macro syntaxes the presets use: {name}, {{object.field}} and TikTok's __NAME__. */
const MACRO_SYNTAX = /^(\{[A-Za-z_][\w.]*\}|\{\{[A-Za-z_][\w.]*\}\}|__[A-Z][A-Z_]*[A-Z]__)$/;

describe('link presets', () => {
  it("fill only the redirect's click parameters", () => {
    for (const param of PRESET_PARAMS) expect(CLICK_PARAMS as readonly string[]).toContain(param);
  });

  it('name each network once, by a lower-case partner id the service accepts', () => {
    const ids = LINK_PRESETS.map((p) => p.partner);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^[a-z][a-z0-9_]{0,99}$/);
    // The simulator's partners (sim/traffic.ts PARTNERS) all have one, so the seeded console shows them.
    for (const id of ['meta', 'google_ads', 'tiktok', 'applovin', 'snapchat']) expect(presetFor(id)).toBeDefined();
    // Apple Ads keeps the name the attribution gives its installs (functions/domain/adservices/answers.ts).
    expect(presetFor('apple_search_ads')?.clickUrl).toBe(false);
  });

  it.each(LINK_PRESETS.map((p) => [p.partner, p] as const))(
    '%s: fills only click parameters, each with one macro and its meaning',
    (_id, preset) => {
      for (const [param, macro] of Object.entries(preset.params)) {
        expect(PRESET_PARAMS as readonly string[]).toContain(param);
        expect(macro).toMatch(MACRO_SYNTAX);
        expect(macro.length).toBeLessThanOrEqual(256); // link try's limit on a click parameter
        expect(preset.meaning[param as keyof typeof preset.meaning]).toBeTruthy();
      }
      if (!preset.clickUrl) expect(Object.keys(preset.params)).toHaveLength(0);
      if (preset.params.click_id === undefined) expect(preset.note).toBeTruthy();
    },
  );

  it.each(LINK_PRESETS.filter((p) => p.clickUrl).map((p) => [p.partner, p] as const))(
    '%s: the URL keeps every macro literal, in the order click_id, sub1..sub5',
    (_id, preset) => {
      const url = urlOfTry('Lk_1', preset);
      const expected = PRESET_PARAMS.filter((param) => preset.params[param] !== undefined).map(
        (param) => `${param}=${preset.params[param]}`,
      );
      expect(url).toBe(`${BASE}/l/Lk_1${expected.length ? `?${expected.join('&')}` : ''}`);
      // Nothing of a macro is percent-encoded, and the URL still parses to the macro as each value.
      expect(url).not.toMatch(/%7B|%7D|%5F/i);
      const parsed = new URL(url);
      for (const param of PRESET_PARAMS) expect(parsed.searchParams.get(param) ?? undefined).toBe(preset.params[param]);
    },
  );

  it("copies a listed link with its partner's preset, and plainly for a partner without one or without a click URL", () => {
    const tiktok = copyPreset('tiktok');
    expect(tiktok && urlOfTry('abc', tiktok)).toBe(
      `${BASE}/l/abc?click_id=__CALLBACK_PARAM__&sub1=__CAMPAIGN_ID__&sub2=__AID__&sub3=__CID__&sub4=__PLACEMENT__&sub5=__CAMPAIGN_NAME__`,
    );
    const google = copyPreset('google_ads');
    expect(google && urlOfTry('g', google)).toContain('?click_id={gclid}&sub1={campaignid}');
    const meta = copyPreset('meta');
    expect(meta && urlOfTry('m', meta)).toBe(
      `${BASE}/l/m?sub1={{campaign.id}}&sub2={{adset.id}}&sub3={{ad.id}}&sub4={{site_source_name}}&sub5={{placement}}`,
    );
    expect(copyPreset('some_dsp')).toBeUndefined();
    expect(copyPreset('apple_search_ads')).toBeUndefined();
    expect(copyPreset('trap')).toBeUndefined();
  });
});

describe('the duplicate check', () => {
  const small = (values: string[]) => fc.option(fc.constantFrom(...values), { nil: undefined });
  const identity = fc.record({
    partner: fc.constantFrom('meta', 'tiktok', ' meta'),
    campaign: small(['spring', '', 'fall']),
    ios_url: small(['https://apps.apple.com/app/id1', '']),
    android_url: small(['https://play.google.com/store/apps/details?id=a']),
    web_url: small(['https://example.com']),
    honeypot: fc.option(fc.boolean(), { nil: undefined }),
  });
  const links = fc.array(identity, { maxLength: 8 });

  const app = fc.record({
    ios_url: small(['https://apps.apple.com/app/id1']),
    android_url: small(['https://play.google.com/store/apps/details?id=a']),
    web_url: small(['https://example.com']),
  });

  it("finds the first link with the same partner, campaign, destinations (blank = the app's) and honeypot flag", () => {
    fc.assert(
      fc.property(links, identity, app, (identities, candidate, defaults) => {
        // Stored as link create stores them: a destination not given is the app's.
        const listed: ListedLink[] = identities.map((id, i) => ({
          ...id,
          ios_url: id.ios_url || defaults.ios_url,
          android_url: id.android_url || defaults.android_url,
          web_url: id.web_url || defaults.web_url,
          link_id: `L${i}`,
        }));
        // The oracle: the candidate as link create would store it, compared with each as text.
        const stored = {
          ...candidate,
          ios_url: candidate.ios_url || defaults.ios_url,
          android_url: candidate.android_url || defaults.android_url,
          web_url: candidate.web_url || defaults.web_url,
        };
        const key = (l: Omit<ListedLink, 'link_id'>) =>
          [
            l.partner.trim(),
            l.campaign?.trim() || '-',
            l.ios_url || '-',
            l.android_url || '-',
            l.web_url || '-',
            l.honeypot ? 'hp' : 'no',
          ].join('|');
        const expected = listed.find((l) => key(l) === key(stored));
        expect(findDuplicate(listed, candidate, defaults)).toBe(expected);
      }),
    );
  });

  it('is never fooled by a different campaign or destination', () => {
    const existing: ListedLink = { link_id: 'L1', partner: 'meta', campaign: 'spring_sale' };
    expect(findDuplicate([existing], { partner: 'meta', campaign: 'spring_sale' })).toBe(existing);
    expect(findDuplicate([existing], { partner: 'meta', campaign: 'spring_sale', web_url: 'https://x.example' })).toBeUndefined();
    expect(findDuplicate([existing], { partner: 'meta' })).toBeUndefined();
    expect(findDuplicate([existing], { partner: 'tiktok', campaign: 'spring_sale' })).toBeUndefined();
    // A link made without destinations holds the app's: the same as a candidate without any.
    const stored: ListedLink = { link_id: 'L2', partner: 'tiktok', ios_url: 'https://apps.apple.com/app/id1' };
    expect(findDuplicate([stored], { partner: 'tiktok' }, { ios_url: 'https://apps.apple.com/app/id1' })).toBe(stored);
    expect(findDuplicate([stored], { partner: 'tiktok' })).toBeUndefined();
  });

  it('words the warning with partner, campaign and the existing link id', () => {
    expect(duplicateWarning({ link_id: 'L1', partner: 'meta', campaign: 'spring_sale' })).toBe(
      'A link for meta / spring_sale already exists (L1): create another anyway?',
    );
    expect(duplicateWarning({ link_id: 'L2', partner: 'tiktok', disabled: true })).toBe(
      'A link for tiktok (no campaign) already exists (L2, disabled): create another anyway?',
    );
  });
});

describe('per-link figures', () => {
  it('is installs / clicks, and undefined (blank) without clicks', () => {
    fc.assert(
      fc.property(fc.nat(10_000), fc.nat(10_000), (clicks, installs) => {
        const rate = conversionRate(clicks, installs);
        if (clicks === 0) expect(rate).toBeUndefined();
        else expect(rate).toBeCloseTo(installs / clicks, 12);
      }),
    );
  });

  it("reads a link's stats, and 0 for a link the stats do not name", () => {
    const of = statsByLink([{ link_id: 'a', clicks: 5, installs: 2 }]);
    expect(of('a')).toEqual({ clicks: 5, installs: 2 });
    expect(of('b')).toEqual({ clicks: 0, installs: 0 });
  });
});
