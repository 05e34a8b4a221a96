// Issue 40, item 6: a refund takes back dollars of one purchase of its install on the refund's own
// day, counted once, never more than the purchase counted. The property runs the aggregation on the
// in-memory ports of world.ts with deliveries that die after a random number of writes, and holds
// the performance rows to an oracle written from the rule alone (docs/analytics.md, "Refunds").

import fc from 'fast-check';
import { dayOf } from '../../../functions/domain/common/days';
import { failingAfter, redeliverUntilDone, T0, world } from './world';

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const UUID = '00000000-0000-4000-8000-000000000001';
const OTHER_UUID = '00000000-0000-4000-8000-000000000002';

const install = (tsMs = T0) => ({ event_id: 'i-1', event_name: 'install', install_uuid: UUID, ts_ms: tsMs, platform: 'ios' });
const purchase = (id: string, tsMs: number, cents: number, transactionId?: string) => ({
  event_id: id,
  event_name: 'purchase',
  install_uuid: UUID,
  ts_ms: tsMs,
  revenue_usd: cents / 100,
  ...(transactionId ? { transaction_id: transactionId } : {}),
});
const refund = (id: string, tsMs: number, cents: number, names: { purchase_event_id?: string; transaction_id?: string }, uuid = UUID) => ({
  event_id: id,
  event_name: 'refund',
  install_uuid: uuid,
  ts_ms: tsMs,
  refund: { ...names, revenue: cents / 100, currency: 'USD' },
});

/** The refund and revenue counters of the organic partner's perf rows, by day: what the report nets. */
function refundFigures(w: ReturnType<typeof world>) {
  const out: Record<string, Record<string, number>> = {};
  for (const [key, counters] of Object.entries(w.table().perf_partner)) {
    const picked = Object.fromEntries(Object.entries(counters).filter(([name]) => FIGURES.includes(name)));
    if (Object.keys(picked).length > 0) out[key] = picked;
  }
  return out;
}
const FIGURES = [
  'revenue_micros',
  'refunds',
  'refund_micros',
  'recent_refund_micros',
  'cohort_d0_micros',
  'cohort_d7_micros',
  'cohort_d30_micros',
  'cohort_refund_d0_micros',
  'cohort_refund_d7_micros',
  'cohort_refund_d30_micros',
];

async function aggregateInOrder(w: ReturnType<typeof world>, batches: readonly object[][]): Promise<void> {
  for (const events of batches) {
    const body = w.upload(events);
    const outcomes = await w.deliver([body]);
    await redeliverUntilDone(w, [body], outcomes);
  }
}

describe('refunds in the performance rows', () => {
  const day = (ms: number) => dayOf(ms);

  it('subtracts a refund on its own day and counts a duplicate of it once', async () => {
    const w = world();
    w.clock.now = T0 + 10 * DAY;
    await aggregateInOrder(w, [
      [install(), purchase('p-1', T0 + HOUR, 999)],
      [refund('r-1', T0 + 3 * DAY, 400, { purchase_event_id: 'p-1' })],
      [refund('r-1', T0 + 3 * DAY, 400, { purchase_event_id: 'p-1' })],
    ]);
    expect(refundFigures(w)).toEqual({
      // The cohort of the install loses the refund in the windows it falls in: 3 days after the install, d7 and d30.
      [`${day(T0)}|organic`]: {
        revenue_micros: 9_990_000,
        cohort_d0_micros: 9_990_000,
        cohort_d7_micros: 9_990_000,
        cohort_d30_micros: 9_990_000,
        cohort_refund_d7_micros: 4_000_000,
        cohort_refund_d30_micros: 4_000_000,
      },
      [`${day(T0 + 3 * DAY)}|organic`]: { refunds: 1, refund_micros: 4_000_000, recent_refund_micros: 4_000_000 },
    });
  });

  it('streams a refund with its refund as sent and a purchase with its transaction id, once each', async () => {
    const w = world();
    w.clock.now = T0 + 10 * DAY;
    const asked = refund('r-1', T0 + 3 * DAY, 400, { transaction_id: 'GPA.1' });
    await aggregateInOrder(w, [
      [install(), purchase('p-1', T0 + HOUR, 999, 'GPA.1'), purchase('p-2', T0 + HOUR, 100)],
      [{ ...asked, refund: { ...asked.refund, note: 'not a member' } }],
      [asked],
    ]);
    const streamed = Object.fromEntries(w.streamEvents().map((event) => [event.event_id, event]));
    expect(w.streamEvents().map((event) => event.event_id)).toEqual(['i-1', 'p-1', 'p-2', 'r-1']);
    expect(streamed['p-1']).toMatchObject({ transaction_id: 'GPA.1', revenue_usd: 9.99 });
    expect(streamed['p-1']).not.toHaveProperty('refund');
    expect(streamed['p-2']).not.toHaveProperty('transaction_id');
    // The refund's dollars as asked (the performance rows count what the purchase has left), its members by name only.
    expect(streamed['r-1']).toMatchObject({ revenue_usd: 4, refund: { transaction_id: 'GPA.1', revenue: 4, currency: 'USD' } });
    expect(Object.keys(streamed['r-1']?.refund ?? {})).toEqual(['transaction_id', 'revenue', 'currency']);
    expect(streamed['r-1']).not.toHaveProperty('transaction_id');
  });

  it('never takes back more than the purchase counted, whatever the refunds ask', async () => {
    const w = world();
    w.clock.now = T0 + 10 * DAY;
    await aggregateInOrder(w, [
      [install(), purchase('p-1', T0 + HOUR, 500, 'GPA.1')],
      [refund('r-1', T0 + DAY, 300, { transaction_id: 'GPA.1' }), refund('r-2', T0 + DAY, 300, { purchase_event_id: 'p-1' })],
      [refund('r-3', T0 + 2 * DAY, 100, { purchase_event_id: 'p-1' })],
    ]);
    const rows = w.table().perf_partner;
    expect(rows[`${day(T0 + DAY)}|organic`]).toMatchObject({ refunds: 2, refund_micros: 5_000_000 });
    // Nothing left of the purchase: the third refund counts nothing.
    expect(rows[`${day(T0 + 2 * DAY)}|organic`]).toBeUndefined();
  });

  it('counts nothing for a refund before its purchase, of another install, or naming no purchase known', async () => {
    const w = world();
    w.clock.now = T0 + 10 * DAY;
    await aggregateInOrder(w, [
      [install(), { ...install(), install_uuid: OTHER_UUID }],
      [refund('r-early', T0 + 2 * DAY, 100, { purchase_event_id: 'p-1' })],
      [purchase('p-1', T0 + HOUR, 500)],
      [refund('r-other', T0 + 2 * DAY, 100, { purchase_event_id: 'p-1' }, OTHER_UUID)],
      [refund('r-unknown', T0 + 2 * DAY, 100, { transaction_id: 'no-such' })],
    ]);
    const figures = refundFigures(w);
    expect(Object.values(figures).some((counters) => 'refund_micros' in counters)).toBe(false);
    // Each is still an event of the events report, with the dollars it asked.
    expect(w.table().events[`${day(T0 + 2 * DAY)}|refund`]).toEqual({ events: 3, revenue_micros: 3_000_000, unique_installs: 2 });
  });

  it('leaves the interface revenue report as purchases alone', async () => {
    const w = world();
    w.clock.now = T0 + 10 * DAY;
    await aggregateInOrder(w, [
      [install(), purchase('p-1', T0 + HOUR, 500)],
      [refund('r-1', T0 + HOUR * 2, 500, { purchase_event_id: 'p-1' })],
    ]);
    expect(w.table().revenue).toEqual({ [`${day(T0)}|organic`]: { purchases: 1, revenue_micros: 5_000_000, payers: 1 } });
  });

  it('counts a refund held before its install against the purchase held with it', async () => {
    const w = world();
    w.clock.now = T0 + 10 * DAY;
    await aggregateInOrder(w, [
      [purchase('p-1', T0 + HOUR, 500)],
      [refund('r-1', T0 + DAY, 200, { purchase_event_id: 'p-1' })],
      [install()],
    ]);
    expect(w.table().perf_partner[`${day(T0 + DAY)}|organic`]).toMatchObject({ refunds: 1, refund_micros: 2_000_000 });
  });
});

describe('refunds under redelivery and crashes (property)', () => {
  type Spec =
    | { kind: 'install' }
    | { kind: 'purchase'; n: number; cents: number; hours: number; tx: boolean }
    | { kind: 'refund'; n: number; of: number; byTx: boolean; cents: number; hours: number };

  const specArb: fc.Arbitrary<Spec> = fc.oneof(
    fc.record({
      kind: fc.constant('purchase' as const),
      n: fc.integer({ min: 1, max: 3 }),
      cents: fc.integer({ min: 1, max: 5_000 }),
      hours: fc.integer({ min: 0, max: 40 * 24 }),
      tx: fc.boolean(),
    }),
    fc.record({
      kind: fc.constant('refund' as const),
      n: fc.integer({ min: 1, max: 4 }),
      of: fc.integer({ min: 1, max: 4 }),
      byTx: fc.boolean(),
      cents: fc.integer({ min: 1, max: 5_000 }),
      hours: fc.integer({ min: 0, max: 40 * 24 }),
    }),
  );

  /** The event of a spec: ids drawn from small pools, so that duplicates (the same id sent again) are common. */
  const eventOf = (spec: Spec): object => {
    const ts = T0 + (spec.kind === 'install' ? 0 : spec.hours * HOUR);
    if (spec.kind === 'install') return install();
    if (spec.kind === 'purchase') return purchase(`p-${spec.n}`, ts, spec.cents, spec.tx ? `tx-${spec.n}` : undefined);
    return refund(`r-${spec.n}`, ts, spec.cents, spec.byTx ? { transaction_id: `tx-${spec.of}` } : { purchase_event_id: `p-${spec.of}` });
  };

  /**
   * The oracle, from the rule alone: objects in the order they are counted, each event id the first
   * time it is met (a later duplicate in a batch is rejected, elsewhere it is counted no more); in an
   * object, its purchases come before its refunds; a refund counts what its purchase has left.
   */
  function oracle(batches: readonly Spec[][]): Record<string, Record<string, number>> {
    const seen = new Set<string>();
    const left = new Map<string, { micros: number }>();
    const out: Record<string, Record<string, number>> = {};
    const add = (d: string, counter: string, value: number) => {
      if (value === 0) return;
      const row = out[`${d}|organic`] ?? {};
      row[counter] = (row[counter] ?? 0) + value;
      out[`${d}|organic`] = row;
    };
    const fresh = batches.map((batch) =>
      batch.filter((spec) => {
        const id = spec.kind === 'install' ? 'i-1' : `${spec.kind[0]}-${spec.n}`;
        if (seen.has(id)) return false;
        seen.add(id);
        return true;
      }),
    );
    // Purchases and refunds apply to the install at T0 whenever it comes (before it they are held, then released).
    const cohorts = (hours: number, prefix: string, micros: number) => {
      for (const [window, days] of [
        ['d0', 1],
        ['d7', 7],
        ['d30', 30],
      ] as const) {
        if (hours * HOUR < days * DAY) add(dayOf(T0), `${prefix}_${window}_micros`, micros);
      }
    };
    for (const batch of fresh) {
      for (const spec of batch) {
        if (spec.kind !== 'purchase') continue;
        const micros = spec.cents * 10_000;
        const purchase = { micros };
        if (!left.has(`e:${spec.n}`)) left.set(`e:${spec.n}`, purchase);
        if (spec.tx && !left.has(`t:${spec.n}`)) left.set(`t:${spec.n}`, purchase);
        add(dayOf(T0 + spec.hours * HOUR), 'revenue_micros', micros);
        cohorts(spec.hours, 'cohort', micros);
      }
      for (const spec of batch) {
        if (spec.kind !== 'refund') continue;
        const purchase = left.get(`${spec.byTx ? 't' : 'e'}:${spec.of}`);
        const counted = purchase ? Math.min(purchase.micros, spec.cents * 10_000) : 0;
        if (purchase) purchase.micros -= counted;
        if (counted === 0) continue;
        const d = dayOf(T0 + spec.hours * HOUR);
        add(d, 'refunds', 1);
        add(d, 'refund_micros', counted);
        add(d, 'recent_refund_micros', counted);
        cohorts(spec.hours, 'cohort_refund', counted);
      }
    }
    return out;
  }

  it('nets each refund once, capped by its purchase, as the oracle does', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(specArb, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 5 }),
        fc.nat({ max: 5 }),
        fc.array(fc.option(fc.integer({ min: 0, max: 25 }), { nil: undefined }), { minLength: 7, maxLength: 7 }),
        async (later, installAt, faults) => {
          const batches: Spec[][] = [...later];
          batches.splice(Math.min(installAt, batches.length), 0, [{ kind: 'install' }]);
          const w = world();
          w.clock.now = T0 + 45 * DAY;
          for (const [i, batch] of batches.entries()) {
            const body = w.upload(batch.map(eventOf));
            const limit = faults[i];
            // A delivery that dies after `limit` writes, then comes back until done; then once more, a duplicate message.
            const first = await w.deliver([body], limit === undefined ? w.ports : failingAfter(w.ports, limit).ports);
            await redeliverUntilDone(w, [body], first);
            await w.deliver([body]);
          }
          // In a batch, a later entry with the id of an earlier one is rejected: the oracle's first-seen rule covers it.
          expect(refundFigures(w)).toEqual(oracle(batches));
        },
      ),
      { numRuns: 60 },
    );
  });
});
