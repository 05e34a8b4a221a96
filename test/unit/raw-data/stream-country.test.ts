// Issue 35, rules to decide: an event's `country` in the stream (and so in the export's events and
// installs tables) is what docs/raw-data.md says: the country of the click the install it counts
// against matched, else the viewer country of the request that carried the event, as the
// performance report counts an organic install under its request's country.

import { click, T0, world } from '../aggregation/world';

const HOUR = 3_600_000;
const uuid = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;

describe("the stream's event country", () => {
  it("is the request's viewer country when no click matched, and the click's when one did", async () => {
    const w = world();
    w.clicks.set('c1', click({ click_id: 'c1', ts_ms: T0 - HOUR, partner: 'meta', country: 'US' }));
    await w.deliver([
      w.upload([{ event_id: 'i-1', event_name: 'install', install_uuid: uuid(1), ts_ms: T0, platform: 'ios' }], { country: 'FR' }),
    ]);
    await w.deliver([
      w.upload([{ event_id: 'e-1', event_name: 'level', install_uuid: uuid(1), ts_ms: T0 + HOUR }], { country: 'DE' }),
      w.upload(
        [{ event_id: 'i-2', event_name: 'install', install_uuid: uuid(2), ts_ms: T0, platform: 'ios', attribution: { click_id: 'c1' } }],
        {
          country: 'FR',
        },
      ),
    ]);
    const countries = Object.fromEntries(w.streamEvents().map((e) => [e.event_id, e.country]));
    expect(countries).toEqual({ 'i-1': 'FR', 'e-1': 'DE', 'i-2': 'US' });
    // The performance report counted the organic install under its request's country.
    expect(Object.keys(w.table().perf).filter((key) => key.includes('organic'))).toEqual(['2026-06-01|organic|(none)|FR|ios']);
  });
});
