import type { AggregationPorts } from '../../../functions/domain/aggregation/aggregate';
import type { InstallStore, ObjectClaims } from '../../../functions/domain/aggregation/install-state';
import { APP, T0, world } from './world';

const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
/** Event ids as SDKs make them: a UUID each. */
const eventId = (n: number) => `4f0c1c2e-8d7a-4b1e-9a3f-${String(n).padStart(12, '0')}`;
const install = (n: number, tsMs: number) => ({
  event_id: `i-${n}`,
  event_name: 'install',
  install_uuid: uuid(n),
  ts_ms: tsMs,
  platform: 'ios',
});
const session = (n: number, id: string, tsMs: number) => ({ event_id: id, event_name: 'session', install_uuid: uuid(n), ts_ms: tsMs });
/** An ad impression under an event id of its own: the impression_id is what counts it once. */
const impression = (n: number, id: string, tsMs: number) => ({
  ...session(n, id, tsMs),
  event_name: 'ad_revenue',
  ad_revenue: {
    source: 'unity',
    network: 'Unity Ads',
    format: 'rewarded',
    revenue: 0.0125,
    currency: 'USD',
    precision: 'estimated',
    impression_id: 'imp-1',
  },
});

/**
 * The installs table's writes as DynamoDB would bill them: each write (refused conditional ones
 * included) costs one unit per started KB of the item it leaves (the item's JSON length standing
 * in for DynamoDB's size).
 */
function metered(ports: AggregationPorts, store: InstallStore) {
  const meter = { writes: 0, bytes: 0, units: 0 };
  const bill = async (pk: string, sk: string) => {
    const bytes = Buffer.byteLength(JSON.stringify((await store.get(pk, sk)) ?? {}));
    meter.writes++;
    meter.bytes += bytes;
    meter.units += Math.max(1, Math.ceil(bytes / 1024));
  };
  const installs: InstallStore = {
    get: (pk, sk) => store.get(pk, sk),
    query: (pk, prefix, after) => store.query(pk, prefix, after),
    claimItem: async (item) => {
      const stored = await store.claimItem(item);
      await bill(item.pk, item.sk);
      return stored;
    },
    claimAttributes: async (pk, sk, attributes) => {
      const stored = await store.claimAttributes(pk, sk, attributes);
      await bill(pk, sk);
      return stored;
    },
    replaceHead: async (head, expected) => {
      const replaced = await store.replaceHead(head, expected);
      await bill(head.pk, head.sk);
      return replaced;
    },
  };
  return { ports: { ...ports, installs }, meter };
}

describe('the claim log', () => {
  it('costs one item of about 2 KB for a 50-event object and one small item for a 1-event object, no refused flag claims', async () => {
    const w = world();
    await w.deliver([w.upload([install(1, T0)])]);

    const fifty = metered(w.ports, w.installs);
    const events = Array.from({ length: 50 }, (_, i) => session(1, eventId(i), T0 + 1000 + i));
    expect((await w.deliver([w.upload(events)], fifty.ports)).map((o) => o.kind)).toEqual(['counted']);
    // The object's log item, and the day's unique-install flag it is the first to win.
    expect(fifty.meter.writes).toBe(2);
    expect(fifty.meter.bytes).toBeLessThan(3000);
    expect(fifty.meter.units / 50).toBeLessThanOrEqual(0.1);

    const one = metered(w.ports, w.installs);
    expect((await w.deliver([w.upload([session(1, eventId(50), T0 + 2000)])], one.ports)).map((o) => o.kind)).toEqual(['counted']);
    // The flag is held already: read, not claimed again.
    expect(one.meter).toMatchObject({ writes: 1, units: 1 });
    expect(one.meter.bytes).toBeLessThan(500);

    expect(w.table().events['2026-06-01|session']).toEqual({ events: 51, unique_installs: 1 });
  });

  it('counts an event, and an impression under two event ids, carried by two concurrent objects racing on the same sequence number once', async () => {
    const w = world();
    await w.deliver([w.upload([install(1, T0)])]);
    // Both objects read the log before either writes its item: both try the same sequence number.
    const tried: string[] = [];
    let arrived = 0;
    let release = () => {};
    const bothRead = new Promise<void>((resolve) => {
      release = resolve;
    });
    const gated: AggregationPorts = {
      ...w.ports,
      installs: {
        ...w.installs,
        get: (pk, sk) => w.installs.get(pk, sk),
        query: (pk, prefix) => w.installs.query(pk, prefix),
        claimAttributes: (pk, sk, attributes) => w.installs.claimAttributes(pk, sk, attributes),
        replaceHead: (head, expected) => w.installs.replaceHead(head, expected),
        claimItem: async (item) => {
          if (item.sk.startsWith('c#')) {
            tried.push(item.sk);
            if (++arrived === 2) release();
            await bothRead;
          }
          return w.installs.claimItem(item);
        },
      },
    };
    const x = w.upload([session(1, 'dup', T0 + 10), session(1, 'x-1', T0 + 11), impression(1, 'x-ad', T0 + 13)], { body: 'x' });
    const y = w.upload([session(1, 'dup', T0 + 10), session(1, 'y-1', T0 + 12), impression(1, 'y-ad', T0 + 14)], { body: 'y' });
    const outcomes = await Promise.all([w.deliver([x], gated), w.deliver([y], gated)]);
    expect(outcomes.flat().map((o) => o.kind)).toEqual(['counted', 'counted']);
    expect(tried).toEqual(['c#00000002', 'c#00000002', 'c#00000003']);
    expect(w.table().events['2026-06-01|session']).toEqual({ events: 3, unique_installs: 1 });
    expect(w.table().events['2026-06-01|ad_revenue']).toEqual({ events: 1, revenue_micros: 12_500, unique_installs: 1 });

    const log = await w.installs.query<ObjectClaims>(`${APP}#${uuid(1)}`, 'c#');
    expect(log.map((item) => item.sk)).toEqual(['c#00000001', 'c#00000002', 'c#00000003']);
    expect(log.flatMap((item) => item.ids).sort()).toEqual(['ad#imp-1', 'dup', 'i-1', 'x-1', 'y-1']);
  });

  it('counts an event a legacy e# claim of another object holds as claimed', async () => {
    const w = world();
    await w.deliver([w.upload([install(1, T0)])]);
    const pk = `${APP}#${uuid(1)}`;
    // A partition written before the claim log: one e# item per event.
    await w.installs.claimItem({ pk, sk: 'e#old', owner: 'f'.repeat(24), event_name: 'session', ts_ms: T0 + 5, day: '2026-06-01' });
    await w.deliver([w.upload([session(1, 'old', T0 + 5), session(1, 'new', T0 + 6)])]);
    expect(w.table().events['2026-06-01|session']).toEqual({ events: 1, unique_installs: 1 });
  });

  it('counts the next object of an install whose log holds a stub item without ids (an applied claim that landed after the privacy drain)', async () => {
    const w = world();
    await w.deliver([w.upload([install(1, T0)])]);
    const pk = `${APP}#${uuid(1)}`;
    await w.installs.claimAttributes(pk, 'c#00000002', {
      applied: { by: 'f'.repeat(24), member: { id: 'i-1', ts_ms: T0, day: '2026-06-01', partner: 'organic' } },
    });
    expect((await w.deliver([w.upload([session(1, 's-1', T0 + 5)])])).map((o) => o.kind)).toEqual(['counted']);
    expect(w.table().events['2026-06-01|session']).toEqual({ events: 1, unique_installs: 1 });
    expect((await w.installs.query<ObjectClaims>(pk, 'c#')).map((item) => item.sk)).toEqual(['c#00000001', 'c#00000002', 'c#00000003']);
  });
});
