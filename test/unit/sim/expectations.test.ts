import { compareReports, expectedReports, formatDifference } from '../../../sim/check';
import { expectedAttribution, type SentClick } from '../../../sim/expectations';
import { oracleRows } from '../../../sim/oracle';

const T = Date.UTC(2026, 10, 21, 12);
const DAY_MS = 86_400_000;
const click = (overrides: Partial<SentClick> = {}): SentClick => ({
  clickId: 'c1',
  partner: 'meta',
  ip: '81.2.69.160',
  platform: 'ios',
  sentMs: T,
  answeredMs: T + 20,
  ...overrides,
});
const app = (clicks: SentClick[], probabilistic = false) => ({ probabilistic, clicks: new Map(clicks.map((c) => [c.clickId, c])) });
const never = () => undefined;

describe('the attribution the simulator expects', () => {
  it('credits the named click, flags a click-to-install time under 10 s and a click after the download began', () => {
    expect(expectedAttribution({ tsMs: T + 60_000, platform: 'ios', ip: 'x', clickId: 'c1' }, app([click()]), never)).toMatchObject({
      partner: 'meta',
      type: 'deterministic',
      fraud: false,
    });
    expect(expectedAttribution({ tsMs: T + 3_000, platform: 'ios', ip: 'x', clickId: 'c1' }, app([click()]), never)).toMatchObject({
      fraud: true,
      reasons: ['ctit_under_10s'],
    });
    expect(
      expectedAttribution(
        { tsMs: T + 60_000, platform: 'android', ip: 'x', clickId: 'c1', installBeginMs: T - 30_000 },
        app([click()]),
        never,
      ),
    ).toMatchObject({ reasons: ['click_injection'] });
  });

  it('is organic for a click made after the install, and flags an address the honeypot blocked', () => {
    expect(expectedAttribution({ tsMs: T - DAY_MS, platform: 'ios', ip: 'x', clickId: 'c1' }, app([click()]), never)).toMatchObject({
      partner: 'organic',
      type: 'organic',
      fraud: false,
    });
    expect(expectedAttribution({ tsMs: T + 60_000, platform: 'ios', ip: 'x' }, app([]), () => T)).toMatchObject({
      partner: 'organic',
      fraud: true,
      reasons: ['honeypot_ip'],
    });
  });

  it('matches the latest click of the same address and platform only where the app allows it', () => {
    const clicks = [click(), click({ clickId: 'c2', partner: 'tiktok', sentMs: T + 1_000, answeredMs: T + 1_010 })];
    const install = { tsMs: T + 60_000, platform: 'ios' as const, ip: '81.2.69.160' };
    expect(expectedAttribution(install, app(clicks, true), never)).toMatchObject({ partner: 'tiktok', type: 'probabilistic' });
    expect(expectedAttribution(install, app(clicks, false), never)).toMatchObject({ partner: 'organic' });
    expect(expectedAttribution({ ...install, platform: 'android' }, app(clicks, true), never)).toMatchObject({ partner: 'organic' });
  });

  it('says when a slow click makes the decision unpredictable', () => {
    const slow = click({ answeredMs: T + 15_000 });
    expect(expectedAttribution({ tsMs: T + 12_000, platform: 'ios', ip: 'x', clickId: 'c1' }, app([slow]), never).ambiguous).toBe(true);
  });
});

describe('the report check', () => {
  const rows = expectedReports(
    oracleRows(
      [
        { installUuid: 'u1', eventId: 'i', name: 'install', tsMs: T },
        { installUuid: 'u1', eventId: 'p', name: 'purchase', tsMs: T + DAY_MS + 60_000, revenueUsd: 4.99 },
      ],
      () => ({ partner: 'meta', type: 'deterministic', fraud: false }),
    ),
  );

  it('renders the oracle counters as the API renders rows', () => {
    expect(rows.attribution).toEqual([
      { day: '2026-11-21', partner: 'meta', attribution_type: 'deterministic', installs: 1, organic: 0, reinstalls: 0, fraud_flagged: 0 },
    ]);
    expect(rows.revenue).toEqual([{ day: '2026-11-22', partner: 'meta', purchases: 1, revenue_usd: 4.99, arppu_usd: 4.99 }]);
    expect(rows.cohorts).toEqual([{ day: '2026-11-21', installs: 1, d1: 1, d7: 0, d30: 0, d1_rate: 1, d7_rate: 0, d30_rate: 0 }]);
    expect(rows.events.map((r) => r.event_name)).toEqual(['install', 'purchase']);
  });

  it('names every differing value, missing row and unexpected row', () => {
    const actual = structuredClone(rows);
    actual.attribution[0].installs = 2;
    actual.revenue = [];
    actual.events.push({ day: '2026-11-23', event_name: 'share', events: 1, unique_installs: 1, revenue_usd: 0 });
    expect(compareReports(rows, actual).map(formatDifference)).toEqual([
      'attribution [2026-11-21 meta deterministic] installs: expected 1, got 2',
      'revenue [2026-11-22 meta] missing row: expected purchases=1 revenue_usd=4.99 arppu_usd=4.99',
      'events [2026-11-23 share] unexpected row: got events=1 unique_installs=1 revenue_usd=0',
    ]);
    expect(compareReports(rows, structuredClone(rows))).toEqual([]);
  });
});
