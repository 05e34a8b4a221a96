// Issue 35: the faults an auditor found the ledger-lane design (docs/aggregation.md, "Exactly once")
// still loses counts under. Each test reproduces one on the in-memory ports of world.ts with a
// fault of the kind it names: a write that lands and then answers an error, a delivery that dies
// at a chosen step, two invocations in a chosen interleaving.

import { type DeliveryOutcome, isRetried } from '../../../functions/domain/aggregation/aggregate';
import { tokenOf } from '../../../functions/domain/aggregation/lease';
import { LEASE_MS, T0, world } from './world';

const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const event = (n: number, id: string, name: string, tsMs: number, extra: object = {}) => ({
  event_id: id,
  event_name: name,
  install_uuid: uuid(n),
  ts_ms: tsMs,
  ...extra,
});
const tokenOfBody = (body: string) => tokenOf((JSON.parse(body) as { audit_key: string }).audit_key);

type World = ReturnType<typeof world>;

/** Delivers the bodies again, after the leases run out, until none comes back (at most `rounds` times). */
async function redeliverUntilDone(w: World, bodies: readonly string[], outcomes: readonly DeliveryOutcome[], rounds = 5) {
  let pending = bodies.filter((_, i) => isRetried(outcomes[i] as DeliveryOutcome));
  for (let round = 0; round < rounds && pending.length > 0; round++) {
    w.clock.now += LEASE_MS + 1;
    const again = await w.deliver(pending);
    pending = pending.filter((_, i) => isRetried(again[i] as DeliveryOutcome));
  }
  expect(pending).toEqual([]);
}

describe('a mark that landed but whose answer was lost (issue 35, item 1)', () => {
  it('leaves the row counting all three objects of the invocation once their deliveries come back', async () => {
    const w = world();
    // Three objects, each an event of its own install, all on one events row.
    const bodies = [1, 2, 3].map((n) => w.upload([event(n, `e-${n}`, 'level', T0 + n)]));
    const lost = tokenOfBody(bodies[2] as string);
    const include = w.ledger.include.bind(w.ledger);
    const lossy = {
      ...w.ports,
      ledger: Object.assign(Object.create(w.ledger), {
        // C's mark is written, then the answer is lost (a timeout, the SDK's retries used up).
        include: async (...args: Parameters<typeof include>) => {
          const mark = await include(...args);
          if (args[0] === lost) throw Object.assign(new Error('socket hang up (injected, after the write)'), { name: 'TimeoutError' });
          return mark;
        },
      }),
    };
    const outcomes = await w.deliver(bodies, lossy);
    expect(outcomes[2]?.kind).toBe('failed');
    await redeliverUntilDone(w, bodies, outcomes);
    expect(w.table().events).toEqual({ '2026-06-01|level': { events: 3, unique_installs: 3 } });
    // Each event once in the stream too.
    expect(w.streamEvents().map((e) => e.event_id)).toEqual(['e-1', 'e-2', 'e-3']);
  });
});
