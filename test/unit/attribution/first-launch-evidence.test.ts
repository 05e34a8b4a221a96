import fc from 'fast-check';
import { FirstLaunchAnswers } from '../../../functions/adapters/first-launch-store';
import type { AdServicesAnswer } from '../../../functions/domain/adservices/answers';
import { isRetried } from '../../../functions/domain/aggregation/aggregate';
import { installReport } from '../../../functions/domain/aggregation/install-report';
import type { AttributionDecision, InstallFacts } from '../../../functions/domain/attribution/decision';
import {
  currentAttribution,
  type FirstLaunchAnswer,
  type FirstLaunchRecord,
  installDecision,
} from '../../../functions/domain/attribution/first-launch';
import { APP, click, LEASE_MS, T0 } from '../aggregation/world';
import { firstLaunchWorld, IP, UUID } from './first-launch-world';

/**
 * Issue 37, item 4: the first-launch answer is evidence the aggregator reads. The install's first
 * install event is decided with the click the app was told of, unless the event itself carries a
 * stronger signal (its click_id or referrer naming a valid click, Apple Ads' claim); an install
 * counted before any first launch asked keeps its decision as the answer.
 */

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const HOME = IP;
const CELL = '203.0.113.9';

/**
 * The first-launch world (first-launch-world.ts) seen from the aggregator: a first launch on iOS
 * two seconds after the install, `launchTicks` slowing its store calls for a race with the count.
 */
function evidenceWorld(options: { probabilistic?: boolean; launchTicks?: number } = {}) {
  const w = firstLaunchWorld({ probabilistic: options.probabilistic, storeTicks: options.launchTicks });
  const ask = (call: { ip?: string; atMs?: number; platform?: 'ios' | 'android'; referrer?: string } = {}) =>
    w.ask(
      { platform: call.platform ?? 'ios', ...(call.referrer === undefined ? {} : { installReferrer: call.referrer }) },
      { ip: call.ip ?? HOME, atMs: call.atMs ?? T0 + 2_000 },
    );
  /** The queue message of a batch holding the install's install event. */
  const installBatch = (event: { ip?: string; platform?: 'ios' | 'android'; attribution?: object; adservices?: AdServicesAnswer } = {}) => {
    const install = {
      event_id: 'i-1',
      event_name: 'install',
      install_uuid: UUID,
      ts_ms: T0,
      platform: event.platform ?? 'ios',
      ...(event.attribution ? { attribution: event.attribution } : {}),
    };
    return w.upload([install], { ip: event.ip ?? HOME });
  };
  const count = (event: Parameters<typeof installBatch>[0] = {}) => w.deliver([installBatch(event)]);
  const decision = async () => (await w.installs.get<{ decision: AttributionDecision }>(`${APP}#${UUID}`, 'e#i-1'))?.decision;
  const kept = () => w.installs.get<FirstLaunchRecord & { pk: string }>(`${APP}#${UUID}`, 'first_launch');
  return { ...w, ask, installBatch, count, decision, kept };
}

describe('the first-launch answer as evidence of the aggregator', () => {
  it("decides the install by the answer's click when the install event comes from another address", async () => {
    const w = evidenceWorld({ probabilistic: true });
    w.clicks.set(
      'c1',
      click({ click_id: 'c1', ts_ms: T0 - HOUR, ip: HOME, platform: 'ios', partner: 'meta', deep_link: { value: 'promo' } }),
    );
    const answer = await w.ask({ ip: HOME });
    expect(answer).toMatchObject({
      status: 'found',
      attribution: { click_id: 'c1', match: 'probabilistic' },
      deep_link: { value: 'promo' },
    });

    // The batch with the install event went out over the cell network: no click of that address.
    await w.count({ ip: CELL });
    expect(await w.decision()).toMatchObject({
      partner: 'meta',
      click_id: 'c1',
      attribution_type: 'probabilistic',
      rule: 'first_launch_answer',
      first_launch: { answered_ms: T0 + 2_000, status: 'found', click_id: 'c1', outcome: 'taken' },
    });
    expect(await currentAttribution(w.launchPorts, APP, UUID)).toMatchObject({ status: 'found', attribution: { click_id: 'c1' } });
  });

  it("reads the answer with the install's partition, which the count reads anyway: no read of its own", async () => {
    for (const asked of [true, false]) {
      const w = evidenceWorld({ probabilistic: true });
      w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 - HOUR, ip: HOME, platform: 'ios', partner: 'meta' }));
      if (asked) await w.ask({ ip: HOME });
      const reads: string[] = [];
      // Every reader of the installs table (the count's ports, the answers store) reads this one store.
      const get = w.installs.get.bind(w.installs);
      w.installs.get = <T extends object>(pk: string, sk: string) => {
        reads.push(sk);
        return get<T>(pk, sk);
      };
      await w.count({ ip: CELL });
      w.installs.get = get;
      expect(reads).not.toContain('first_launch');
      expect(await w.decision()).toMatchObject(asked ? { partner: 'meta', rule: 'first_launch_answer' } : { partner: 'organic' });
      // Counted first, the install keeps its decision as the answer.
      expect((await w.kept())?.kept_by).toBe(asked ? undefined : 'install_event');
    }
  });

  it('without an answer, the same install event from that address is organic', async () => {
    const w = evidenceWorld({ probabilistic: true });
    w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 - HOUR, ip: HOME, platform: 'ios' }));
    await w.count({ ip: CELL });
    expect(await w.decision()).toMatchObject({ partner: 'organic', rule: 'no_match' });
    expect((await w.decision())?.first_launch).toBeUndefined();
  });

  it('keeps an install organic that the app was told was not found, though its batch came from an address that clicked', async () => {
    const w = evidenceWorld({ probabilistic: true });
    w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 - HOUR, ip: CELL, platform: 'ios' }));
    expect(await w.ask({ ip: HOME })).toMatchObject({ status: 'not_found', reason: 'no_click_in_window' });
    await w.count({ ip: CELL });
    expect(await w.decision()).toMatchObject({
      partner: 'organic',
      first_launch: { status: 'not_found', click_id: null, outcome: 'taken' },
    });
  });

  it("gives way to a valid click named by the install event, and says so (the GET then answers the reports' click)", async () => {
    const w = evidenceWorld({ probabilistic: true });
    w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 - HOUR, ip: HOME, platform: 'ios', partner: 'meta' }));
    w.clicks.set(
      'c2',
      click({ click_id: 'c2', ts_ms: T0 - 2 * HOUR, ip: CELL, platform: 'ios', partner: 'tiktok', deep_link: { value: 'sale' } }),
    );
    await w.ask({ ip: HOME });
    await w.count({ ip: CELL, attribution: { click_id: 'c2' } });
    expect(await w.decision()).toMatchObject({
      partner: 'tiktok',
      click_id: 'c2',
      rule: 'click_id',
      first_launch: { click_id: 'c1', outcome: 'overridden_by_click_id' },
    });
    expect(await currentAttribution(w.launchPorts, APP, UUID)).toMatchObject({
      attribution: { click_id: 'c2' },
      deep_link: { value: 'sale' },
    });
  });

  it('confirms an answer whose click the install event names too', async () => {
    const w = evidenceWorld();
    w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 - HOUR, platform: 'android' }));
    await w.ask({ platform: 'android', referrer: 'click_id=c1' });
    await w.count({ platform: 'android', attribution: { referrer: 'click_id=c1' } });
    expect(await w.decision()).toMatchObject({ click_id: 'c1', rule: 'referrer_click_id', first_launch: { outcome: 'same_click' } });
  });

  it("gives way to Apple Ads' claim", async () => {
    const w = evidenceWorld({ probabilistic: true });
    w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 - HOUR, ip: HOME, platform: 'ios' }));
    await w.ask({ ip: HOME });
    // The answers object adservices-enrich stores beside the audit object: joined to the install line.
    const adservices: AdServicesAnswer = {
      outcome: 'attributed',
      apple_ads: { campaign_id: 42, ad_group_id: 7, click_ms: T0 - 3 * HOUR, country_or_region: 'US', org_id: 1 },
    };
    const decide = w.ports.decide;
    w.ports.decide = (facts) => decide({ ...facts, adservices });
    await w.count({ ip: HOME });
    expect(await w.decision()).toMatchObject({
      partner: 'apple_search_ads',
      rule: 'adservices_token',
      first_launch: { click_id: 'c1', outcome: 'overridden_by_adservices_token' },
    });
  });

  it('sets aside an answer naming a click made after the install (a first launch asked late, after another click)', async () => {
    const w = evidenceWorld({ probabilistic: true });
    w.clicks.set('late', click({ click_id: 'late', ts_ms: T0 + 2 * HOUR, ip: HOME, platform: 'ios' }));
    w.clicks.set('early', click({ click_id: 'early', ts_ms: T0 - HOUR, ip: HOME, platform: 'ios', partner: 'tiktok' }));
    await w.ask({ ip: HOME, atMs: T0 + 3 * HOUR });
    await w.count({ ip: HOME });
    expect(await w.decision()).toMatchObject({
      click_id: 'early',
      rule: 'same_ip_platform_24h',
      first_launch: { click_id: 'late', outcome: 'click_after_install' },
    });
  });

  it('keeps the decision of an install counted before any first launch as its answer, deep link included', async () => {
    const w = evidenceWorld();
    w.clicks.set(
      'c1',
      click({ click_id: 'c1', ts_ms: T0 - HOUR, platform: 'android', partner: 'meta', deep_link: { value: 'home', sub1: 'x' } }),
    );
    await w.count({ platform: 'android', attribution: { referrer: 'click_id=c1' } });
    expect(await w.kept()).toMatchObject({ kept_by: 'install_event', answered_ms: T0, answer: { status: 'found' } });
    // The app asks afterwards, from another address and without the referrer: told what the reports say.
    const answer = await w.ask({ platform: 'android', ip: CELL });
    expect(answer).toMatchObject({
      status: 'found',
      attribution: { partner: 'meta', click_id: 'c1', match: 'deterministic' },
      deep_link: { value: 'home', sub1: 'x' },
    });
    expect(await currentAttribution(w.launchPorts, APP, UUID)).toEqual(answer);
    // A redelivery of the install's object decides nothing new and keeps the same answer.
    await w.count({ platform: 'android', attribution: { referrer: 'click_id=c1' } });
    expect((await w.kept())?.answer).toEqual(answer);
  });

  it('reads no answer for a reinstall of the install_uuid', async () => {
    const w = evidenceWorld({ probabilistic: true });
    w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 - HOUR, ip: HOME, platform: 'ios' }));
    await w.ask({ ip: HOME });
    await w.count({ ip: HOME });
    const again = { event_id: 'i-2', event_name: 'install', install_uuid: UUID, ts_ms: T0 + 10 * DAY, platform: 'ios' };
    w.clock.now = T0 + 10 * DAY;
    await w.deliver([w.upload([again], { ip: CELL })]);
    const second = (await w.installs.get<{ decision: AttributionDecision }>(`${APP}#${UUID}`, 'e#i-2'))?.decision;
    expect(second).toMatchObject({ partner: 'organic', reinstall: true });
    expect(second?.first_launch).toBeUndefined();
  });

  it('shows both in admin install show, with what the decision made of the answer', async () => {
    const w = evidenceWorld({ probabilistic: true });
    w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 - HOUR, ip: HOME, platform: 'ios', partner: 'meta' }));
    const answer = await w.ask({ ip: HOME });
    await w.count({ ip: CELL });
    const report = installReport(APP, UUID, [...(w.installs.items.get(`${APP}#${UUID}`)?.values() ?? [])] as Record<string, unknown>[]);
    expect(report.first_launch).toEqual({ answered_ms: T0 + 2_000, platform: 'ios', kept_by: 'first_launch', answer });
    expect(report.installs[0].explanation).toMatch(/first-launch answer/);
    expect(report.installs[0].explanation).toMatch(/click c1/);
  });
});

describe('a decision its evidence cannot settle', () => {
  it('decides organic, outcome click_gone, when the click the answer named is no longer kept', async () => {
    const w = evidenceWorld({ probabilistic: true });
    w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 - HOUR, ip: HOME, platform: 'ios', partner: 'meta' }));
    expect(await w.ask({ ip: HOME })).toMatchObject({ status: 'found', attribution: { click_id: 'c1' } });
    // A privacy deletion took the click before the install event was counted (from another address).
    w.clicks.delete('c1');
    await w.count({ ip: CELL });
    expect(await w.decision()).toMatchObject({
      partner: 'organic',
      rule: 'no_match',
      first_launch: { status: 'found', click_id: 'c1', outcome: 'click_gone' },
    });
    expect(await currentAttribution(w.launchPorts, APP, UUID)).toMatchObject({ status: 'not_found', reason: 'organic' });
  });

  it.each(['first', 'keep'] as const)(
    "fails the delivery when the answers store's %s fails inside installDecision: the message comes back, and is counted once then",
    async (failing) => {
      const w = evidenceWorld();
      const stored = new FirstLaunchAnswers(w.installs);
      const answers = {
        first: stored.first.bind(stored),
        keep: stored.keep.bind(stored),
        [failing]: () => Promise.reject(new Error('installs table unavailable (injected)')),
      };
      const down = { ...w.ports, decide: (facts: InstallFacts) => installDecision(facts, w.lookups, answers) };
      const batch = w.installBatch();
      const installsCounted = () => Object.values(w.table().attribution).reduce((sum, row) => sum + (row.installs ?? 0), 0);

      const [outcome] = await w.deliver([batch], down);
      expect(outcome).toMatchObject({ kind: 'failed', error: { message: 'installs table unavailable (injected)' } });
      // Not acknowledged: the queue delivers it again, as after any other installs-table failure.
      expect(outcome && isRetried(outcome)).toBe(true);
      expect(installsCounted()).toBe(0);
      expect(await w.decision()).toBeUndefined();

      w.clock.now += LEASE_MS + 1;
      expect((await w.deliver([batch])).map((o) => o.kind)).toEqual(['counted']);
      expect(installsCounted()).toBe(1);
      expect(await w.decision()).toMatchObject({ partner: 'organic' });
    },
  );
});

describe('the answer and the reports, whatever the order', () => {
  it('agree on the click for every order of clicks, first launch and count (a race included), unless the install event names a valid click of its own', async () => {
    const ips = [HOME, CELL];
    const clickArb = fc.record({
      ago: fc.integer({ min: -HOUR, max: 30 * HOUR }),
      ip: fc.constantFrom(...ips),
      platform: fc.constantFrom<'ios' | 'android'>('ios', 'android'),
      deepLink: fc.boolean(),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(clickArb, { maxLength: 4 }),
        fc.record({
          probabilistic: fc.boolean(),
          platform: fc.constantFrom<'ios' | 'android'>('ios', 'android'),
          launchIp: fc.constantFrom(...ips),
          eventIp: fc.constantFrom(...ips),
          launchDelayMs: fc.integer({ min: 0, max: 5_000 }),
          referrer: fc.option(fc.nat({ max: 4 }), { nil: undefined }),
          eventClick: fc.option(fc.oneof(fc.nat({ max: 4 }), fc.constant(-1)), { nil: undefined }),
          order: fc.constantFrom('launch_first', 'count_first', 'race'),
          // Small: the aggregator reads the answer and keeps its own within a few ticks of each other.
          launchTicks: fc.nat({ max: 12 }),
        }),
        async (clicks, s) => {
          const w = evidenceWorld({ probabilistic: s.probabilistic, launchTicks: s.launchTicks });
          const records = clicks.map((c, i) =>
            click({
              click_id: `c${i}`,
              ts_ms: T0 - c.ago,
              ip: c.ip,
              platform: c.platform,
              partner: `partner${i}`,
              ...(c.deepLink ? { deep_link: { value: `screen${i}` } } : {}),
            }),
          );
          for (const record of records) w.clicks.set(record.click_id, record);
          const referrer = s.referrer === undefined ? undefined : `click_id=c${s.referrer}`;
          const eventClickId = s.eventClick === undefined ? undefined : s.eventClick < 0 ? 'unknown' : `c${s.eventClick}`;
          const attribution = eventClickId === undefined ? undefined : { click_id: eventClickId };
          const launch = () => w.ask({ ip: s.launchIp, platform: s.platform, atMs: T0 + s.launchDelayMs, referrer });
          const count = () => w.count({ ip: s.eventIp, platform: s.platform, attribution });

          let answer: FirstLaunchAnswer;
          if (s.order === 'launch_first') {
            answer = await launch();
            await count();
          } else if (s.order === 'count_first') {
            await count();
            answer = await launch();
          } else [answer] = await Promise.all([launch(), count()]);
          const decision = await w.decision();
          expect(decision).toBeDefined();
          const decided = decision?.attribution_type === 'organic' ? null : (decision?.click_id ?? null);

          // The oracle of the stronger signal, from docs/aggregation.md: the install event's click_id
          // naming a click of the app made within the 7-day lookback before the install.
          const named = records.find((c) => c.click_id === eventClickId && c.ts_ms <= T0 && c.ts_ms >= T0 - 7 * DAY);
          if (named) expect(decided).toBe(named.click_id);
          else {
            // No stronger signal: the reports count what the app was told at first launch.
            expect(decided).toBe(answer.attribution?.click_id ?? null);
            expect(answer.status).toBe(decided === null ? 'not_found' : 'found');
            // And what it was told is a click the rules allow for a first launch at that moment.
            const told = records.find((c) => c.click_id === decided);
            if (told) {
              expect(told.ts_ms).toBeLessThanOrEqual(T0 + s.launchDelayMs);
              if (answer.attribution?.match === 'probabilistic') expect(told.platform).toBe(s.platform);
            }
          }
          // Asked again, the same answer; the GET answers the reports' click either way.
          expect(await launch()).toEqual(answer);
          const current = await currentAttribution(w.launchPorts, APP, UUID);
          expect(current.attribution?.click_id ?? null).toBe(decided);
          if (decided !== null) expect(current.deep_link?.value ?? null).toBe(w.clicks.get(decided)?.deep_link?.value ?? null);
        },
      ),
      { numRuns: 200 },
    );
  });
});
