import fc from 'fast-check';
import type { AdServicesAnswer, AdServicesAnswers } from '../../../functions/domain/adservices/answers';
import { withAnswers } from '../../../functions/domain/adservices/token';
import type { AggregationPorts } from '../../../functions/domain/aggregation/aggregate';
import { installReport } from '../../../functions/domain/aggregation/install-report';
import { APP, click, T0, world } from '../aggregation/world';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const install = (n: number, attribution: object, tsMs = T0) => ({
  event_id: `i-${n}`,
  event_name: 'install',
  install_uuid: uuid(n),
  ts_ms: tsMs,
  platform: 'ios',
  attribution,
});
const APPLE = (campaignId: number, clickMs: number): AdServicesAnswer => ({
  outcome: 'attributed',
  apple_ads: {
    campaign_id: campaignId,
    ad_group_id: campaignId + 1,
    keyword_id: campaignId + 2,
    ad_id: campaignId + 3,
    org_id: 1234567,
    country_or_region: 'US',
    click_ms: clickMs,
  },
});

/**
 * The aggregator on in-memory stores, reading each object with the answers adservices-enrich
 * stored for it (a map by audit key, each answer for the object's line 0): the join the handler does.
 */
function appleWorld() {
  const w = world();
  const answers = new Map<string, AdServicesAnswers>();
  const ports: AggregationPorts = {
    ...w.ports,
    readAudit: async (message) => {
      const stored = answers.get(message.audit_key);
      const lines = await w.ports.readAudit(message);
      return stored ? withAnswers(lines, stored) : lines;
    },
  };
  /** Uploads one install and stores Apple's answer for it; returns the message. */
  const send = (n: number, answer: AdServicesAnswer, attribution: object = {}, tsMs = T0) => {
    const body = w.upload([install(n, { ...attribution, adservices_token: `tok${n}` }, tsMs)]);
    answers.set(JSON.parse(body).audit_key, { version: 1, answers: [{ index: 0, ...answer }] });
    return JSON.stringify({ ...JSON.parse(body), enriched: true });
  };
  const decision = async (n: number) =>
    (await w.installs.get<{ decision: Record<string, unknown> }>(`${APP}#${uuid(n)}`, `e#i-${n}`))?.decision;
  return { ...w, send, decision, deliverAll: (bodies: string[]) => w.deliver(bodies, ports) };
}

describe('Apple Ads attribution in the aggregator', () => {
  it("gives an install Apple claims to apple_search_ads, deterministic, with the campaign id as its campaign and Apple's ids on its record", async () => {
    const w = appleWorld();
    await w.deliverAll([w.send(1, APPLE(542370539, T0 - 30 * MINUTE))]);

    expect(await w.decision(1)).toMatchObject({
      partner: 'apple_search_ads',
      attribution_type: 'deterministic',
      rule: 'adservices_token',
      campaign: '542370539',
      click_ms: T0 - 30 * MINUTE,
      ctit_seconds: 1800,
      adservices: 'attributed',
      apple_ads: APPLE(542370539, T0 - 30 * MINUTE).apple_ads,
      fraud_reasons: [],
    });
    expect(w.table().attribution).toEqual({ '2026-06-01|apple_search_ads|deterministic': { installs: 1 } });
    expect(Object.keys(w.table().perf)).toEqual(['2026-06-01|apple_search_ads|542370539|US|ios']);
    const report = installReport(APP, uuid(1), await w.installs.query<Record<string, unknown>>(`${APP}#${uuid(1)}`, ''));
    expect(report.installs[0]).toMatchObject({ apple_ads: { campaign_id: 542370539, click_ms: T0 - 30 * MINUTE } });
    expect(report.installs[0]?.explanation).toContain('Apple Ads claimed it');
  });

  it.each([
    ['not_attributed', 'Apple Ads: not attributed'],
    ['bad_token', 'the token was refused as bad'],
    ['unavailable', 'no answer after the retries'],
  ] as const)('leaves an install Apple answers %s to the other rules, organic here, and records the outcome', async (outcome, said) => {
    const w = appleWorld();
    await w.deliverAll([w.send(1, { outcome })]);
    expect(await w.decision(1)).toMatchObject({ partner: 'organic', attribution_type: 'organic', adservices: outcome });
    expect(await w.decision(1)).not.toHaveProperty('apple_ads');
    expect(w.table().attribution).toEqual({ '2026-06-01|organic|organic': { installs: 1, organic: 1 } });
    const report = installReport(APP, uuid(1), await w.installs.query<Record<string, unknown>>(`${APP}#${uuid(1)}`, ''));
    expect(report.installs[0]?.explanation).toContain(said);
  });

  it('counts a redelivered enriched object once, with the decision of its first delivery', async () => {
    const w = appleWorld();
    const body = w.send(1, APPLE(7, T0 - MINUTE));
    await w.deliverAll([body]);
    const rows = w.table();
    await w.deliverAll([body]);
    await w.deliverAll([body, body]);
    expect(w.table()).toEqual(rows);
    expect(rows.attribution).toEqual({ '2026-06-01|apple_search_ads|deterministic': { installs: 1 } });
  });

  it('beats a probabilistic match whatever its time', async () => {
    const w = world({ probabilistic: true });
    const answers = new Map<string, AdServicesAnswers>();
    w.clicks.set('p', click({ click_id: 'p', ts_ms: T0 - MINUTE, platform: 'ios' }));
    const body = w.upload([install(1, { adservices_token: 't' })]);
    answers.set(JSON.parse(body).audit_key, { version: 1, answers: [{ index: 0, ...APPLE(9, T0 - DAY / 2) }] });
    await w.deliver([body], {
      ...w.ports,
      readAudit: async (m) => withAnswers(await w.ports.readAudit(m), answers.get(m.audit_key) ?? { version: 1, answers: [] }),
    });
    expect(w.table().attribution).toEqual({ '2026-06-01|apple_search_ads|deterministic': { installs: 1 } });
  });

  it('lets the later click win between an Apple Ads claim and a tracking-link click (a tie stays with the link)', async () => {
    // Oracle: the two click times, written apart from decision.ts: Apple wins only when strictly later.
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 6 * 24 * 60 }), fc.integer({ min: 1, max: 6 * 24 * 60 }), async (linkAgo, appleAgo) => {
        const w = appleWorld();
        w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 - linkAgo * MINUTE, partner: 'meta', campaign: 'spring', lookback_days: 7 }));
        await w.deliverAll([w.send(1, APPLE(42, T0 - appleAgo * MINUTE), { click_id: 'c1' })]);
        const appleWins = appleAgo < linkAgo;
        const decision = await w.decision(1);
        expect(decision).toMatchObject(
          appleWins
            ? { partner: 'apple_search_ads', campaign: '42', click_ms: T0 - appleAgo * MINUTE }
            : { partner: 'meta', campaign: 'spring', click_id: 'c1', click_ms: T0 - linkAgo * MINUTE },
        );
        // Either way the record keeps what Apple said.
        expect(decision).toMatchObject({ adservices: 'attributed', apple_ads: { campaign_id: 42 } });
        expect(w.table().attribution).toEqual({
          [`2026-06-01|${appleWins ? 'apple_search_ads' : 'meta'}|deterministic`]: { installs: 1 },
        });
      }),
      {
        numRuns: 60,
        examples: [
          [30, 30],
          [30, 29],
          [29, 30],
        ],
      },
    );
  });
});
