import { installReport } from '../../../functions/domain/aggregation/install-report';
import type { AttributionDecision } from '../../../functions/domain/attribution/decision';
import { explain } from '../../../functions/domain/attribution/explanation';
import { APP, click, T0, world } from './world';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const install = (n: number, id: string, tsMs: number, extra: object = {}) => ({
  event_id: id,
  event_name: 'install',
  install_uuid: uuid(n),
  ts_ms: tsMs,
  platform: 'ios',
  ...extra,
});
const event = (n: number, id: string, name: string, tsMs: number) => ({
  event_id: id,
  event_name: name,
  install_uuid: uuid(n),
  ts_ms: tsMs,
});

/** The report of an install after the aggregator (on in-memory stores) has counted what it was sent. */
async function reportOf(w: ReturnType<typeof world>, n: number) {
  return installReport(APP, uuid(n), await w.installs.query<Record<string, unknown>>(`${APP}#${uuid(n)}`, ''));
}

describe('install report', () => {
  it('explains a deterministic install with the click, link, partner, time to install and lookback, keeping the decision as recorded', async () => {
    const w = world();
    w.clicks.set(
      'c1',
      click({
        click_id: 'c1',
        link_id: 'lnk1',
        ts_ms: T0 - HOUR,
        partner: 'meta',
        campaign: 'spring',
        sub1: 'creative_a',
        lookback_days: 7,
      }),
    );
    await w.deliver([w.upload([install(1, 'i-1', T0, { attribution: { click_id: 'c1' } }), event(1, 'e-1', 'purchase', T0 + 1000)])]);

    const report = await reportOf(w, 1);
    expect(report).toMatchObject({
      app_id: APP,
      install_uuid: uuid(1),
      found: true,
      current: { member: 'i-1', partner: 'meta', attribution_type: 'deterministic', ts_ms: T0, day: '2026-06-01', platform: 'ios' },
      events: { counted: 1, waiting_for_install: 0 },
      retention: {},
    });
    expect(report.installs).toEqual([
      {
        event_id: 'i-1',
        ts_ms: T0,
        day: '2026-06-01',
        platform: 'ios',
        partner: 'meta',
        attribution_type: 'deterministic',
        rule: 'click_id',
        reinstall: false,
        click_id: 'c1',
        link_id: 'lnk1',
        campaign: 'spring',
        sub1: 'creative_a',
        click_ms: T0 - HOUR,
        window: { from_ms: T0 - 7 * DAY, to_ms: T0, lookback_days: 7 },
        ctit_seconds: 3600,
        fraud_reasons: [],
        explanation:
          "deterministic: click c1 on link lnk1 (partner meta, campaign spring) 3600 s before the install, within the 7-day lookback, named by the install's attribution.click_id",
      },
    ]);
  });

  it('explains a probabilistic install by the latest click from the same address and platform', async () => {
    const w = world({ probabilistic: true });
    w.clicks.set('c2', click({ click_id: 'c2', link_id: 'lnk2', ts_ms: T0 - 2 * HOUR, partner: 'google' }));
    await w.deliver([w.upload([install(2, 'i-2', T0)])]);
    const [only] = (await reportOf(w, 2)).installs;
    expect(only).toMatchObject({
      partner: 'google',
      attribution_type: 'probabilistic',
      rule: 'same_ip_platform_24h',
      click_id: 'c2',
      ctit_seconds: 7200,
    });
    expect(only.explanation).toBe(
      'probabilistic: latest click c2 on link lnk2 (partner google) from the same address and platform in the 24 h before the install, 7200 s before it',
    );
  });

  it('explains an organic install and names the click it refused and why', async () => {
    const w = world();
    w.clicks.set('old', click({ click_id: 'old', ts_ms: T0 - 8 * DAY, lookback_days: 7, expires_at: Math.floor(T0 / 1000) + DAY / 1000 }));
    await w.deliver([w.upload([install(3, 'i-3', T0, { attribution: { click_id: 'old' } })])]);
    const [only] = (await reportOf(w, 3)).installs;
    expect(only).toMatchObject({
      partner: 'organic',
      attribution_type: 'organic',
      rule: 'no_match',
      refused_click: { click_id: 'old', reason: 'outside_lookback' },
    });
    expect(only.explanation).toBe('organic: no click matched (click old refused: outside_lookback)');
  });

  it('appends the fraud reasons to the explanation', async () => {
    const w = world();
    w.clicks.set('fast', click({ click_id: 'fast', ts_ms: T0 - 3000 }));
    w.block('203.0.113.9');
    await w.deliver([w.upload([install(4, 'i-4', T0, { attribution: { click_id: 'fast' } })], { ip: '203.0.113.9' })]);
    const [only] = (await reportOf(w, 4)).installs;
    expect(only.fraud_reasons).toEqual(['ctit_under_10s', 'honeypot_ip']);
    expect(only.explanation).toMatch(/^deterministic: click fast .* 3 s before the install/);
    expect(only.explanation).toMatch(
      /; flagged as fraud: ctit_under_10s \(3 s from click to install, under 10 s\), honeypot_ip \(the install came from an address a honeypot link blocked\)$/,
    );
  });

  it('lists every install event in time order, the current one, retention per install and events still waiting', async () => {
    const w = world();
    w.clock.now = T0 + 3 * DAY;
    // Named so that key order ("e#i-10" < "e#i-2") is not time order.
    await w.deliver([w.upload([install(5, 'i-2', T0), event(5, 'e-1', 'session', T0 + DAY + 5)])]);
    await w.deliver([w.upload([install(5, 'i-10', T0 + 2 * DAY), event(5, 'e-2', 'session', T0 + 3 * DAY - 5)])]);
    await w.deliver([w.upload([event(6, 'e-3', 'purchase', T0)])]);

    const report = await reportOf(w, 5);
    expect(report.installs.map((i) => [i.event_id, i.reinstall, i.reinstall_reason])).toEqual([
      ['i-2', false, undefined],
      ['i-10', true, 'same_install_uuid'],
    ]);
    expect(report.installs[1].explanation).toBe('organic: no click matched; a reinstall: this install_uuid was installed before');
    expect(report.current).toMatchObject({ member: 'i-10', ts_ms: T0 + 2 * DAY, partner: 'organic' });
    expect(report.retention).toEqual({ 'i-2': ['d1'] });
    expect(report.events).toEqual({ counted: 2, waiting_for_install: 0 });

    expect(await reportOf(w, 6)).toEqual({
      app_id: APP,
      install_uuid: uuid(6),
      found: true,
      current: null,
      installs: [],
      events: { counted: 1, waiting_for_install: 1 },
      retention: {},
      first_launch: null,
      consent: null,
    });
  });

  it('reports an install_uuid the aggregator has never seen as not found', () => {
    expect(installReport(APP, uuid(7), [])).toEqual({
      app_id: APP,
      install_uuid: uuid(7),
      found: false,
      current: null,
      installs: [],
      events: { counted: 0, waiting_for_install: 0 },
      retention: {},
      first_launch: null,
      consent: null,
    });
  });

  it("shows the install's latest consent as the aggregator keeps it", () => {
    const consent = { gdpr_applies: true, tcf_string: 'CQuZP8A', ad_user_data: false, ts_ms: T0, event_id: 'e-9' };
    const report = installReport(APP, uuid(8), [{ pk: `${APP}#${uuid(8)}`, sk: 'consent', ...consent }]);
    expect(report.consent).toEqual(consent);
  });

  it('names the Play install referrer and a device seen under another install_uuid', () => {
    const decision: AttributionDecision = {
      partner: 'tiktok',
      attribution_type: 'deterministic',
      rule: 'referrer_click_id',
      reinstall: true,
      reinstall_reason: 'device_seen_under_other_install',
      click_id: 'c9',
      link_id: 'lnk9',
      click_ms: T0 - 120_000,
      ctit_seconds: 120,
      window: { from_ms: T0 - 30 * DAY, to_ms: T0, lookback_days: 30 },
      fraud_reasons: ['click_injection'],
    };
    expect(explain(decision)).toBe(
      'deterministic: click c9 on link lnk9 (partner tiktok) 120 s before the install, within the 30-day lookback, named by the Play install referrer; ' +
        'a reinstall: the device was installed before under another install_uuid; flagged as fraud: click_injection (the click came after the install had begun)',
    );
  });
});
