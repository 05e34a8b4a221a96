import { MemoryUsageCounter } from '../../../functions/adapters/memory/aggregate-store';
import { capMeteredKey } from '../../../functions/domain/ingest/cap';
import { failingAfter, LEASE_MS, T0, world } from './world';

const event = (n: number, id: string, name = 'session') => ({
  event_id: id,
  event_name: name,
  install_uuid: `00000000-0000-4000-8000-00000000000${n}`,
  ts_ms: T0 + n,
  ...(name === 'install' ? { platform: 'ios' } : {}),
});

/** A company without a cap: ingestion hands its objects off for the aggregator to meter (`meter`). */
const metered = (body: string) => JSON.stringify({ ...JSON.parse(body), meter: true });

describe("the aggregator's count of a company without a cap", () => {
  it('adds each metered object once, duplicates of its events included, whatever write the store fails after', async () => {
    const scenario = (w: ReturnType<typeof world>) => [
      metered(w.upload([event(1, 'i-1', 'install'), event(1, 'e-1'), event(1, 'e-2')])),
      metered(w.upload([event(2, 'i-2', 'install')])),
      // Every event a duplicate: no row changes, but the batch was taken, and it is metered.
      metered(w.upload([event(1, 'e-1')], { body: 'again' })),
      // Handed off by an ingestion that counted it itself (a capped company): not metered here.
      w.upload([event(3, 'i-3', 'install')]),
    ];
    const key = capMeteredKey('com_0123456789abcdef0123', T0);
    const clean = world();
    const cleanUsage = new MemoryUsageCounter();
    const counting = failingAfter({ ...clean.ports, usage: cleanUsage }, Infinity);
    await clean.deliver(scenario(clean), counting.ports);
    expect(cleanUsage.counts.get(key)?.n).toBe(5);
    const total = counting.writes();

    for (let k = 0; k <= total; k++) {
      const w = world();
      const usage = new MemoryUsageCounter();
      const ports = { ...w.ports, usage };
      const bodies = scenario(w);
      await w.deliver(bodies, failingAfter(ports, k).ports);
      for (let round = 0; round < 3; round++) {
        w.clock.now += LEASE_MS + 1;
        const outcomes = await w.deliver(bodies, ports);
        if (outcomes.every((o) => o.kind === 'counted' || o.kind === 'already_counted')) break;
      }
      expect({ k, metered: usage.counts.get(key)?.n }).toEqual({ k, metered: 5 });
      // And once more after everything is done: acknowledged, nothing added.
      await w.deliver(bodies, ports);
      expect({ k, metered: usage.counts.get(key)?.n }).toEqual({ k, metered: 5 });
    }
  });
});
