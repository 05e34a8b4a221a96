import type { AggregationPorts } from '../../../functions/domain/aggregation/aggregate';
import { type PostbackIntent, postbackIdOf } from '../../../functions/domain/partner-postbacks/trigger';
import { APP, click, failingAfter, LEASE_MS, T0, world } from '../aggregation/world';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const install = (n: number, tsMs: number, extra: object = {}) => ({
  event_id: `i-${n}`,
  event_name: 'install',
  install_uuid: uuid(n),
  ts_ms: tsMs,
  platform: 'ios',
  ...extra,
});
const event = (n: number, id: string, name: string, tsMs: number, extra: object = {}) => ({
  event_id: id,
  event_name: name,
  install_uuid: uuid(n),
  ts_ms: tsMs,
  ...extra,
});

const idOf = (intent: PostbackIntent) =>
  postbackIdOf(APP, intent.installUuid, intent.eventId, intent.kind === 'install' ? intent.decision.partner : intent.member.partner);

/**
 * The postbacks an aggregation owes, as the postbacks table would hold them: one per id, made
 * whenever the aggregator hands it over (the adapter writes it only if absent).
 */
function postbackTable(ports: AggregationPorts) {
  const made = new Map<string, number>();
  const failing = { dead: () => false };
  const withPostbacks: AggregationPorts = {
    ...ports,
    postbacks: async (_appId, intents) => {
      if (failing.dead()) throw new Error('store unavailable');
      for (const intent of intents) made.set(idOf(intent), (made.get(idOf(intent)) ?? 0) + 1);
    },
  };
  return { ports: withPostbacks, ids: () => [...made.keys()].sort(), failing };
}

describe('postbacks of an aggregation, under faults', () => {
  it('owes the same postbacks, with the same ids, after the store fails following any single write and the object comes back', async () => {
    const scenario = (w: ReturnType<typeof world>) => {
      w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 - HOUR, partner: 'meta' }));
      w.clicks.set('c2', click({ click_id: 'c2', ts_ms: T0 - HOUR, partner: 'tiktok' }));
      w.clock.now = T0 + 2 * DAY;
      // Events of install 2 arrive before it; install 3 is organic; install 1 comes twice (a reinstall).
      const early = w.upload([event(2, 'h-1', 'purchase', T0 + DAY, { revenue_usd: 3 }), event(2, 'h-2', 'session', T0 + DAY + 1)]);
      const a = w.upload([
        install(1, T0, { attribution: { click_id: 'c1' }, device_id: 'd1' }),
        event(1, 'e-1', 'session', T0 + DAY + 5),
        event(1, 'e-2', 'purchase', T0 + DAY + 6, { revenue_usd: 1.5 }),
      ]);
      const b = w.upload(
        [install(2, T0 + 10, { attribution: { click_id: 'c2' } }), event(2, 'h-1', 'purchase', T0 + DAY, { revenue_usd: 3 })],
        { body: 'b' },
      );
      const c = w.upload(
        [install(3, T0 + 20), event(3, 'x-1', 'purchase', T0 + 30, { revenue_usd: 9 }), { ...install(1, T0 + HOUR), event_id: 'i-1b' }],
        { body: 'c' },
      );
      return { first: [early], rest: [a, b, c] };
    };

    const clean = world();
    const cleanBatches = scenario(clean);
    const cleanTable = postbackTable(clean.ports);
    await clean.deliver(cleanBatches.first, cleanTable.ports);
    const counting = failingAfter(cleanTable.ports, Infinity);
    await clean.deliver(cleanBatches.rest, { ...counting.ports, postbacks: cleanTable.ports.postbacks });
    const expected = cleanTable.ids();
    // Installs 1 and 2 and their events: the organic install 3 and the reinstall (which names no click) owe none here.
    expect(expected.length).toBeGreaterThanOrEqual(4);
    const total = counting.writes();

    for (let k = 0; k <= total; k++) {
      const w = world();
      const batches = scenario(w);
      const table = postbackTable(w.ports);
      await w.deliver(batches.first, table.ports);
      const faulty = failingAfter(table.ports, k);
      // Making postbacks is one more write: it fails with the rest once the store is gone.
      table.failing.dead = () => faulty.writes() >= k;
      await w.deliver(batches.rest, { ...faulty.ports, postbacks: table.ports.postbacks });
      table.failing.dead = () => false;
      for (let round = 0; round < 3; round++) {
        w.clock.now += LEASE_MS + 1;
        const outcomes = await w.deliver(batches.rest, table.ports);
        if (outcomes.every((o) => o.kind === 'counted' || o.kind === 'already_counted')) break;
      }
      expect({ k, ids: table.ids() }).toEqual({ k, ids: expected });
    }
  });
});
