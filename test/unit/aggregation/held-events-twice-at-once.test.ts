// Found by the property test of issue 35 (exactly-once-faults.test.ts) once it delivered one
// message to two invocations at once: the held events of an install_uuid and its first install,
// in one message, delivered twice concurrently. docs/aggregation.md ("Exactly once") promises the
// rows of one clean delivery under concurrent deliveries of the same message.

import { isDeepStrictEqual } from 'node:util';
import type { AggregationPorts } from '../../../functions/domain/aggregation/aggregate';
import { redeliverUntilDone, T0, world } from './world';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const UUID = '00000000-0000-4000-8000-000000000002';
/** The purchase and the install of UUID, each counted once: what both tests expect in the end. */
const COUNTED_ONCE = {
  revenue: { '2026-06-02|organic': { purchases: 1, revenue_micros: 1_000_000, payers: 1 } },
  cohorts: { '2026-06-01': { installs: 1, d1: 1 } },
};
const purchaseAndInstall = (w: ReturnType<typeof world>) => {
  const { revenue, cohorts } = w.table();
  return { revenue, cohorts };
};

describe('held events whose message is delivered to two invocations at once', () => {
  it('are counted once, under the first install, whenever the second invocation starts', async () => {
    const short: number[] = [];
    for (let turns = 0; turns <= 60; turns++) {
      const w = world();
      w.clock.now = T0 + 3 * DAY;
      // A purchase before any install (held), then the install, as two objects of one message batch.
      const held = w.upload([{ event_id: 'p', event_name: 'purchase', install_uuid: UUID, ts_ms: T0 + DAY + 2 * HOUR, revenue_usd: 1 }]);
      const install = w.upload([{ event_id: 'i', event_name: 'install', install_uuid: UUID, ts_ms: T0, platform: 'ios' }]);
      const bodies = [held, install];
      // The second invocation starts after the first has run `turns` steps.
      const second = async () => {
        for (let turn = 0; turn < turns; turn++) await Promise.resolve();
        return w.deliver(bodies);
      };
      const [a, b] = await Promise.all([w.deliver(bodies), second()]);
      await redeliverUntilDone(w, bodies, a, b);
      if (!isDeepStrictEqual(purchaseAndInstall(w), COUNTED_ONCE)) short.push(turns);
    }
    // The turns after which the second invocation's start left the purchase uncounted: none.
    expect(short).toEqual([]);
  });

  it('are counted once when a delivery of the first install reads them and another, concurrent, did not', async () => {
    // I is the uuid's install, delivered to two invocations at once (I1, I2); X a purchase of the
    // uuid whose object read the partition before I's head was written, so it holds the purchase.
    // I1 releases held events before X's log item is there, I2 after; X claims `applied` after I2.
    // I1's journal of I is the one that stands: the purchase must be applied all the same.
    const w = world();
    w.clock.now = T0 + 3 * DAY;
    const install = w.upload([{ event_id: 'i', event_name: 'install', install_uuid: UUID, ts_ms: T0, platform: 'ios' }]);
    const purchase = w.upload([{ event_id: 'p', event_name: 'purchase', install_uuid: UUID, ts_ms: T0 + DAY + 2 * HOUR, revenue_usd: 1 }]);
    const xRead = gate();
    const xApplied = gate();
    let reads = 0;
    const x: AggregationPorts = {
      ...w.ports,
      installs: Object.assign(Object.create(w.installs), {
        query: async (...args: Parameters<typeof w.installs.query>) => {
          const items = await w.installs.query(...args);
          if (reads++ === 0) await xRead.pass();
          return items;
        },
        claimAttributes: async (...args: Parameters<typeof w.installs.claimAttributes>) => {
          if ('applied' in args[2]) await xApplied.pass();
          return w.installs.claimAttributes(...args);
        },
      }),
    };
    const i1Lane = gate();
    const i2Lane = gate();
    const beforeLane = (g: ReturnType<typeof gate>): AggregationPorts => ({
      ...w.ports,
      ledger: Object.assign(Object.create(w.ledger), {
        take: async (...args: Parameters<typeof w.ledger.take>) => {
          await g.pass();
          return w.ledger.take(...args);
        },
      }),
    });

    const xDelivery = w.deliver([purchase], x);
    await xRead.reached; // X has read the partition: no head, no install
    const i1 = w.deliver([install], beforeLane(i1Lane));
    await i1Lane.reached; // I1 has claimed everything, its release of held events included
    xRead.open();
    await xApplied.reached; // X's log item holds the purchase, and X found the first install
    const i2 = w.deliver([install], beforeLane(i2Lane));
    await i2Lane.reached; // I2 has claimed everything: it read X's item
    i1Lane.open();
    const outcomes = [...(await i1)];
    i2Lane.open();
    outcomes.push(...(await i2));
    xApplied.open();
    outcomes.push(...(await xDelivery));

    await redeliverUntilDone(w, [install, install, purchase], outcomes);
    expect(purchaseAndInstall(w)).toEqual(COUNTED_ONCE);
  });

  it('are counted once when the held object is delivered twice at once and only one delivery finds the first install', async () => {
    // X holds a purchase of the uuid, delivered to two invocations at once (X1, X2); I is the
    // uuid's install. X1 finds no install and claims `applied` naming none (the first install is to
    // release it); X2 read X's item before that claim, and finds I counted. X1's journal of X is
    // the one that stands, so X2, whose journal does not, must not take the purchase from I.
    const w = world();
    w.clock.now = T0 + 3 * DAY;
    const purchase = w.upload([{ event_id: 'p', event_name: 'purchase', install_uuid: UUID, ts_ms: T0 + DAY + 2 * HOUR, revenue_usd: 1 }]);
    const install = w.upload([{ event_id: 'i', event_name: 'install', install_uuid: UUID, ts_ms: T0, platform: 'ios' }]);
    const x1Applies = gate();
    const x1: AggregationPorts = {
      ...w.ports,
      installs: Object.assign(Object.create(w.installs), {
        claimAttributes: async (...args: Parameters<typeof w.installs.claimAttributes>) => {
          if ('applied' in args[2]) await x1Applies.pass();
          return w.installs.claimAttributes(...args);
        },
      }),
    };
    const x2Read = gate();
    const x2: AggregationPorts = {
      ...w.ports,
      installs: Object.assign(Object.create(w.installs), {
        query: async (...args: Parameters<typeof w.installs.query>) => {
          const items = await w.installs.query(...args);
          await x2Read.pass();
          return items;
        },
      }),
    };
    const iPins = gate();
    const i: AggregationPorts = {
      ...w.ports,
      installs: Object.assign(Object.create(w.installs), {
        claimAttributes: async (...args: Parameters<typeof w.installs.claimAttributes>) => {
          if ('released_upto' in args[2]) await iPins.pass();
          return w.installs.claimAttributes(...args);
        },
      }),
    };

    const x1Delivery = w.deliver([purchase], x1);
    await x1Applies.reached; // X's log item holds the purchase; X1 found no install
    const x2Delivery = w.deliver([purchase], x2);
    await x2Read.reached; // X2 has read X's item, with no `applied` on it yet
    x1Applies.open();
    const outcomes = [...(await x1Delivery)]; // X1 claimed `applied` naming none, and its journal stands
    const iDelivery = w.deliver([install], i);
    await iPins.reached; // I is the first install, about to release the held events
    x2Read.open();
    outcomes.push(...(await x2Delivery)); // X2 finds I, and applied naming none
    iPins.open();
    outcomes.push(...(await iDelivery));

    await redeliverUntilDone(w, [purchase, purchase, install], outcomes);
    expect(purchaseAndInstall(w)).toEqual(COUNTED_ONCE);
  });
});

/** A point a delivery stops at: `reached` once it is there, and it goes on when `open()` is called. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  let reach!: () => void;
  const reached = new Promise<void>((resolve) => {
    reach = resolve;
  });
  return {
    reached,
    open,
    pass: () => {
      reach();
      return opened;
    },
  };
}
