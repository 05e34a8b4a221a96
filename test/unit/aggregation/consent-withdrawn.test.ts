import type { AggregationPorts } from '../../../functions/domain/aggregation/aggregate';
import { APP, failingAfter, T0, withConsentStore, world } from './world';

// Measurement withdrawn (docs/privacy.md, "Consent"): an install's events after a consent saying
// `measurement: false` count in no figure and reach no stream, until a later `measurement: true`.

const HOUR = 3_600_000;
const UUID = '00000000-0000-4000-8000-000000000001';
const install = (tsMs: number, extra: object = {}) => ({
  event_id: 'i-1',
  event_name: 'install',
  install_uuid: UUID,
  ts_ms: tsMs,
  platform: 'ios',
  ...extra,
});
const event = (id: string, name: string, tsMs: number, extra: object = {}) => ({
  event_id: id,
  event_name: name,
  install_uuid: UUID,
  ts_ms: tsMs,
  ...extra,
});
const purchase = (id: string, tsMs: number, usd: number) => event(id, 'purchase', tsMs, { revenue_usd: usd });

/** The world with the consent store the aggregator keeps (latest wins), as functions/aggregator.ts wires it. */
function consentWorld() {
  const w = world();
  // Every upload comes after its events (an event stamped later than its batch would be refused).
  w.clock.now = T0 + 4 * HOUR;
  const ports = withConsentStore(w);
  const deliver = (bodies: readonly string[], using: AggregationPorts = ports) => w.deliver(bodies, using);
  const purchases = () => w.table().revenue['2026-06-01|organic'];
  const streamed = () => w.streamEvents().map((line) => line.event_id);
  return { w, ports, deliver, purchases, streamed };
}

describe('measurement withdrawn', () => {
  it('counts and streams none of the events after measurement: false, whether the upload or the stored consent says it, until measurement: true', async () => {
    const { w, deliver, purchases, streamed } = consentWorld();
    await deliver([w.upload([install(T0, { consent: { measurement: true } }), purchase('e-1', T0 + 1_000, 1)])]);
    // The event carrying the withdrawal was tracked after it (the SDK sends consent on the next event): it counts no more than what follows.
    await deliver([w.upload([event('e-2', 'session', T0 + 2_000, { consent: { measurement: false } }), purchase('e-3', T0 + 3_000, 2)])]);
    // A later upload without consent: the stored withdrawal decides.
    await deliver([w.upload([purchase('e-4', T0 + HOUR, 4)])]);
    await deliver([
      w.upload([event('e-5', 'session', T0 + 2 * HOUR, { consent: { measurement: true } }), purchase('e-6', T0 + 3 * HOUR, 8)]),
    ]);

    expect(streamed()).toEqual(['i-1', 'e-1', 'e-5', 'e-6']);
    expect(purchases()).toEqual({ purchases: 2, revenue_micros: 9_000_000, payers: 1 });
    expect(w.table().events['2026-06-01|purchase']).toEqual({ events: 2, unique_installs: 1, revenue_micros: 9_000_000 });
  });

  it('decides once, on the claim item: a redelivery withholds the same events though a consent granting measurement came in between', async () => {
    // The first write limit at which the withheld event's claim item is written and the delivery still fails.
    for (let limit = 1; limit < 40; limit++) {
      const { w, ports, deliver, purchases, streamed } = consentWorld();
      await deliver([w.upload([install(T0), event('e-2', 'session', T0 + 2_000, { consent: { measurement: false } })])]);
      // Another install's event in the object: writes after the withheld one's claim item, to fail.
      const other = { ...install(T0 + HOUR), event_id: 'i-2', install_uuid: '00000000-0000-4000-8000-000000000002' };
      const withheld = w.upload([purchase('e-4', T0 + HOUR, 4), other]);
      const [first] = await deliver([withheld], failingAfter(ports, limit).ports);
      const items = [...(w.installs.items.get(`${APP}#${UUID}`)?.values() ?? [])];
      if (first?.kind === 'counted' || !items.some((item) => (item.withheld as string[] | undefined)?.includes('e-4'))) continue;
      // A grant stamped before e-4 but delivered after its first attempt: deciding anew would count e-4.
      await deliver([w.upload([event('e-5', 'session', T0 + HOUR - 1, { consent: { measurement: true } })])]);
      w.clock.now += 2 * 75_000;
      const [again] = await deliver([withheld]);
      expect(again?.kind).toBe('counted');
      expect(streamed()).toEqual(['i-1', 'e-5', 'i-2']);
      expect(purchases()).toBeUndefined();
      return;
    }
    throw new Error('no write limit left the claim item written and the delivery unfinished');
  });
});
