import fc from 'fast-check';
import { stubAnswer } from '../../../local/adservices-stub';
import { type AppleAdsAnswer, appleClickMs, planAppleAds, tokenOf, withAppleAds } from '../../../sim/apple-ads';
import type { ExpectedAttribution } from '../../../sim/expectations';
import { Random } from '../../../sim/random';
import { planTraffic } from '../../../sim/traffic';

const NOW = Date.UTC(2026, 10, 21, 15, 0);
const traffic = planTraffic({ seed: 'apple-ads', apps: 1, days: 30, installs: 80, nowMs: NOW, addressing: 'many' });
const people = traffic.apps[0]?.people ?? [];
const plan = planAppleAds(new Random('apple-ads'), people);
const organic: ExpectedAttribution = { partner: 'organic', type: 'organic', fraud: false, reasons: [] };
const tracked: ExpectedAttribution = { partner: 'meta', type: 'deterministic', fraud: false, reasons: [], campaign: 'spark' };
const HOUR = 3_600_000;

describe("the simulator's Apple Ads plan", () => {
  it('is the same for the same seed', () => {
    expect(planAppleAds(new Random('apple-ads'), people)).toEqual(plan);
  });

  it('puts tokens on iOS installs only: every outcome among the organic ones, and a claim against a tracking click each way', () => {
    const installs = new Map(
      people.flatMap((p) => p.installs.map((i) => [`${i.install_uuid}|${i.event_id}`, { ...i, platform: p.platform }])),
    );
    for (const key of plan.keys()) expect(installs.get(key)?.platform).toBe('ios');
    const answers = [...plan.values()];
    for (const outcome of ['attributed', 'not_attributed', 'bad_token']) expect(answers.some((a) => a.outcome === outcome)).toBe(true);
    expect(answers.some((a) => a.outcome === 'attributed' && a.notReady > 0)).toBe(true);
    expect(
      answers.filter((a) => a.outcome === 'attributed' && a.against !== undefined).map((a) => a.outcome === 'attributed' && a.against),
    ).toEqual(['earlier', 'later']);
    for (const [key, answer] of plan)
      if (answer.outcome === 'attributed' && answer.against !== undefined) expect(installs.get(key)?.kind).toBe('click_id');
  });
});

describe("the simulator's Apple Ads tokens", () => {
  it('get from the local stub the answer the plan means: the campaign and click date, after the 404s asked for', () => {
    const claim: AppleAdsAnswer = { outcome: 'attributed', campaignId: 542370539, beforeInstallMs: 5 * HOUR, notReady: 2 };
    const token = tokenOf(claim, NOW);
    expect(stubAnswer(token, 1).status).toBe(404);
    expect(stubAnswer(token, 2).status).toBe(404);
    expect(stubAnswer(token, 3)).toEqual({
      status: 200,
      body: expect.objectContaining({ attribution: true, campaignId: 542370539, clickDate: new Date(NOW - 5 * HOUR).toISOString() }),
    });
    expect(stubAnswer(tokenOf({ outcome: 'not_attributed' }, NOW), 1)).toEqual({ status: 200, body: { attribution: false } });
    expect(stubAnswer(tokenOf({ outcome: 'bad_token' }, NOW), 1).status).toBe(400);
  });

  it('are what the event API takes: base64 characters, "-" and "_", up to 4,096', () => {
    for (const [i, answer] of [...plan.values()].entries()) expect(tokenOf(answer, NOW - i * HOUR)).toMatch(/^[A-Za-z0-9+/=_-]{1,4096}$/);
  });
});

describe("the simulator's Apple Ads decision", () => {
  const claim = (against?: 'earlier' | 'later'): AppleAdsAnswer =>
    against
      ? { outcome: 'attributed', campaignId: 7, against, notReady: 0 }
      : { outcome: 'attributed', campaignId: 7, beforeInstallMs: HOUR, notReady: 0 };

  it("gives an organic install to apple_search_ads under its campaign id and Apple's country when Apple claims it, and leaves it otherwise", () => {
    expect(withAppleAds(organic, claim(), NOW)).toEqual({
      partner: 'apple_search_ads',
      type: 'deterministic',
      fraud: false,
      reasons: [],
      campaign: '7',
      clickCountry: 'US',
    });
    expect(withAppleAds(organic, { outcome: 'not_attributed' }, NOW)).toBe(organic);
    expect(withAppleAds(organic, { outcome: 'bad_token' }, NOW)).toBe(organic);
  });

  it('lets the later click win: the tracking click over an earlier Apple click, Apple over an earlier tracking click', () => {
    const click = { sentMs: NOW - 60_000, answeredMs: NOW - 59_900 };
    expect(withAppleAds(tracked, claim('earlier'), NOW, click)).toBe(tracked);
    expect(withAppleAds(tracked, claim('later'), NOW, click)).toMatchObject({ partner: 'apple_search_ads', campaign: '7' });
    expect(appleClickMs(claim('later') as Extract<AppleAdsAnswer, { outcome: 'attributed' }>, NOW, click)).toBe(click.answeredMs + 1_000);
  });

  it('never puts an Apple click inside the moments the server may have stamped the tracking click, nor within 20 s of the install', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 3_000 }),
        fc.integer({ min: 2_000, max: 1_200_000 }),
        fc.constantFrom('earlier' as const, 'later' as const),
        (answerMs, ctit, against) => {
          const click = { sentMs: NOW, answeredMs: NOW + answerMs };
          const install = click.answeredMs + ctit;
          const at = appleClickMs({ outcome: 'attributed', campaignId: 7, against, notReady: 0 }, install, click);
          expect(at < click.sentMs || at > click.answeredMs).toBe(true);
          expect(install - at).toBeGreaterThanOrEqual(20_000);
        },
      ),
    );
  });

  it('keeps the honeypot flag of the address on an Apple Ads install, and no flag of the click it replaced', () => {
    const flagged: ExpectedAttribution = { ...tracked, fraud: true, reasons: ['ctit_under_10s', 'honeypot_ip'] };
    const click = { sentMs: NOW - 600_000, answeredMs: NOW - 599_000 };
    expect(withAppleAds(flagged, claim('later'), NOW, click)).toMatchObject({
      partner: 'apple_search_ads',
      fraud: true,
      reasons: ['honeypot_ip'],
    });
  });
});
