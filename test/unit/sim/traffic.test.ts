import { DAY, HOUR, INSTALL_KINDS, PARTNERS, planTraffic, SIM_TIME_ZONE, type TrafficOptions } from '../../../sim/traffic';

const NOW = Date.UTC(2026, 10, 21, 15, 30);
const options = (overrides: Partial<TrafficOptions> = {}): TrafficOptions => ({
  seed: 's1',
  apps: 2,
  days: 45,
  installs: 60,
  nowMs: NOW,
  addressing: 'many',
  ...overrides,
});
const events = (plan: ReturnType<typeof planTraffic>) =>
  plan.apps.flatMap((a) => a.people.flatMap((p) => p.batches.flatMap((b) => b.events)));

describe('the traffic plan', () => {
  it('is the same for the same seed and differs for another seed', () => {
    expect(JSON.stringify(planTraffic(options()))).toEqual(JSON.stringify(planTraffic(options())));
    expect(JSON.stringify(planTraffic(options({ seed: 's2' })))).not.toEqual(JSON.stringify(planTraffic(options())));
  });

  it('gives every app every kind of install, probabilistic matching on every second app', () => {
    const plan = planTraffic(options());
    for (const app of plan.apps) {
      const kinds = new Set(app.people.flatMap((p) => p.installs.map((i) => i.kind)));
      expect([...kinds].sort()).toEqual(INSTALL_KINDS.filter((k) => k !== 'probabilistic' || app.probabilistic).sort());
      expect(app.people).toHaveLength(60);
    }
    expect(plan.apps.map((a) => a.probabilistic)).toEqual([false, true]);
  });

  it('leaves out what needs many client addresses when every request comes from one', () => {
    const plan = planTraffic(options({ addressing: 'one' }));
    for (const app of plan.apps) {
      const purposes = new Set(app.clicks.map((c) => c.purpose));
      for (const purpose of ['honeypot', 'blocked_ip', 'flood', 'data_centre', 'geo_excluded']) expect(purposes).not.toContain(purpose);
      expect(app.probabilistic).toBe(false);
      expect(app.links.some((l) => l.honeypot || l.countriesAllow)).toBe(false);
      // Under the rate limit of one address block (120 a minute), both apps together.
      expect(plan.apps.flatMap((a) => a.clicks).filter((c) => c.expect === 'recorded').length).toBeLessThanOrEqual(115);
    }
  });

  it.each([1, 3, 45, 85])(
    'back-dates only organic lives, within a period of %i days, and keeps click-driven ones within the hour ahead',
    (days) => {
      const plan = planTraffic(options({ days }));
      for (const e of events(plan)) {
        if ('at' in e.time) {
          expect(e.time.at).toBeGreaterThanOrEqual(NOW - days * DAY - 60_000);
          expect(e.time.at).toBeLessThan(NOW);
        } else {
          expect(e.time.ms).toBeLessThan(40 * 60_000);
        }
        if (e.attribution) expect('click' in e.time).toBe(true);
      }
    },
  );

  it('retains installs less and less: more D1 than D7 than D30 sessions', () => {
    const plan = planTraffic(options({ installs: 400, apps: 1 }));
    const retained = (n: number) => {
      const byInstall = new Map<string, number>();
      const installs = new Set<string>();
      for (const e of events(plan)) {
        if (!('at' in e.time)) continue;
        if (e.event_name === 'install') byInstall.set(`${e.install_uuid}`, e.time.at);
      }
      for (const e of events(plan)) {
        const t = byInstall.get(e.install_uuid);
        if (t !== undefined && 'at' in e.time && e.time.at >= t + n * DAY && e.time.at < t + (n + 1) * DAY) installs.add(e.install_uuid);
      }
      return installs.size;
    };
    const [d1, d7, d30] = [retained(1), retained(7), retained(30)];
    expect(d1).toBeGreaterThan(d7);
    expect(d7).toBeGreaterThan(d30);
    expect(d30).toBeGreaterThan(0);
  });

  it('keeps sessions five minutes clear of the retention day edges', () => {
    const plan = planTraffic(options());
    for (const app of plan.apps) {
      for (const person of app.people) {
        const all = person.batches.flatMap((b) => b.events).filter((e) => 'at' in e.time);
        const installs = new Map(all.filter((e) => e.event_name === 'install').map((e) => [e.install_uuid, (e.time as { at: number }).at]));
        for (const e of all) {
          const offset = (e.time as { at: number }).at - installs.get(e.install_uuid)!;
          if (offset > HOUR) expect(offset % DAY).toBeGreaterThanOrEqual(5 * 60_000);
          if (offset > HOUR) expect(DAY - (offset % DAY)).toBeGreaterThanOrEqual(5 * 60_000);
        }
      }
    }
  });

  it('gives each partner a link per campaign, every second app a time zone, and purchases in three currencies', () => {
    const plan = planTraffic(options({ installs: 200 }));
    expect(plan.apps.map((a) => a.timeZone)).toEqual([SIM_TIME_ZONE, 'UTC']);
    for (const app of plan.apps) {
      for (const [partner, p] of Object.entries(PARTNERS))
        expect(app.links.filter((l) => l.partner === partner).map((l) => l.campaign)).toEqual(p.campaigns);
      const all = app.people.flatMap((p) => p.batches.flatMap((b) => b.events));
      const purchases = all.filter((e) => e.event_name === 'purchase' && !e.malformed);
      expect(new Set(purchases.map((e) => e.revenue?.currency ?? 'USD'))).toEqual(new Set(['USD', 'EUR', 'JPY']));
      for (const e of purchases) expect((e.revenue_usd === undefined) !== (e.revenue === undefined)).toBe(true);
      // Exactly one purchase in a currency with no rate, to be refused alone.
      expect(all.filter((e) => e.malformed?.reason === 'bad_currency').map((e) => e.malformed?.event.currency)).toEqual(['QQQ']);
      // Clicks that may lead to installs reach several campaigns of a partner.
      expect(new Set(app.clicks.filter((c) => c.link.startsWith('meta/')).map((c) => c.link)).size).toBeGreaterThan(1);
    }
    // Cost per install varies by partner.
    expect(new Set(Object.values(PARTNERS).map((p) => p.cpiUsd)).size).toBe(Object.keys(PARTNERS).length);
  });
});
