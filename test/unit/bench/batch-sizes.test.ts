import { createRequire } from 'node:module';
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { anonymousKey, backlogBatches, hottestKey, itemBytes, scaledToRate } from '../../../bench/batch-figures';

// The local DynamoDB's own sizing (what its ConsumedCapacity is computed from), untyped.
const { itemSize } = createRequire(__filename)('dynalite/db') as { itemSize(item: Record<string, AttributeValue>): number };

// The arithmetic of the bench's batch-size and backlog figures (bench/batch-sizes.ts), without
// running anything: expected values are worked out by hand.

describe('scaling a run to 10,000 events/s', () => {
  it('takes a key units per event of the run times the rate', () => {
    // 75 units on a key over 600 events: 0.125 units per event, 1,250 units/s at 10,000 events/s.
    expect(scaledToRate(75, 600)).toBe(1250);
    expect(scaledToRate(75, 600, 2000)).toBe(250);
  });

  it('refuses a run of no events', () => {
    expect(() => scaledToRate(3, 0)).toThrow('no events');
  });
});

describe('the hottest key', () => {
  it('is the key with the most units, scaled', () => {
    const units = new Map([
      ['counters:<company_id>#cap#1', 90],
      ['aggregates:<app_id>#events', 120],
      ['ledger:x', 1],
    ]);
    expect(hottestKey(units, 1200)).toEqual({ key: 'aggregates:<app_id>#events', wcu_per_s: 1000 });
  });

  it('keeps the first of equals, and needs a key', () => {
    expect(
      hottestKey(
        new Map([
          ['a', 5],
          ['b', 5],
        ]),
        10,
      ).key,
    ).toBe('a');
    expect(() => hottestKey(new Map(), 10)).toThrow('no partition key');
  });

  it('names keys without the tenant ids or the month', () => {
    expect(anonymousKey('counters:com_9#cap#2026-11', 'app_7', 'com_9')).toBe('counters:<company_id>#cap#<yyyy-mm>');
    expect(anonymousKey('aggregates:app_7#events', 'app_7', 'com_9')).toBe('aggregates:<app_id>#events');
    expect(anonymousKey('counters:cap#com_9#2026-11#7', 'app_7', 'com_9')).toBe('counters:cap#<company_id>#<yyyy-mm>#7');
    expect(anonymousKey('app_7#events 2026-11-24\x01session', 'app_7', 'com_9')).toBe('<app_id>#events 2026-11-24\\x01session');
  });
});

describe('an item size as DynamoDB counts it', () => {
  it('adds attribute names and values', () => {
    // "pk" 2 + "app_1#events" 12; "n" 1 + 12345 (5 digits: 1 + 3); "ok" 2 + 1; "é" 2 + "€" 3
    expect(itemBytes({ pk: { S: 'app_1#events' }, n: { N: '12345' }, ok: { BOOL: true }, é: { S: '€' } })).toBe(14 + 5 + 3 + 5);
    // a map: 3 + 1 per element + its names and values; a list: 3 + 1 per element + the values
    expect(itemBytes({ m: { M: { a: { S: 'xy' }, b: { NULL: true } } } })).toBe(1 + 3 + 2 + (1 + 2) + (1 + 1));
    expect(itemBytes({ l: { L: [{ S: 'abc' }, { N: '7' }] } })).toBe(1 + 3 + (1 + 3) + (1 + 2));
    expect(itemBytes({ s: { SS: ['ab', 'cde'] }, b: { B: new Uint8Array(10) } })).toBe(1 + 5 + 1 + 10);
  });

  it('counts numbers as the local DynamoDB bills them', () => {
    const samples = ['0', '7', '10', '12', '100', '12.5', '0.05', '-3', '-1234', '1.5e3', '1712345678901', '4.99', '0.000123'];
    for (const n of samples) expect([n, itemBytes({ n: { N: n } })]).toEqual([n, itemSize({ n: { N: n } })]);
  });

  it('agrees with the local DynamoDB on a report row with markers', () => {
    const row: Record<string, AttributeValue> = {
      pk: { S: 'app_0123456789#events' },
      sk: { S: '2026-11-24#session' },
      events: { N: '3000' },
      revenue_usd: { N: '14.97' },
      installs: { N: '50' },
      markers: {
        M: Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`audit/2026/11/24/batch-${i}`, { N: String(1732400000000 + i) }])),
      },
      pending: { L: [{ S: 'a' }, { S: 'b' }, { S: 'c' }] },
      seen: { SS: ['x1', 'x2'] },
    };
    expect(itemBytes(row)).toBe(itemSize(row));
    expect(itemBytes(row)).toBeGreaterThan(1024);
  });
});

describe('the backlog flag', () => {
  it('defaults to 3,000 one-event batches and takes --backlog-batches N', () => {
    expect(backlogBatches(['node', 'run.ts'])).toBe(3000);
    expect(backlogBatches(['node', 'run.ts', '--json', '--backlog-batches', '500'])).toBe(500);
    expect(() => backlogBatches(['--backlog-batches', 'x'])).toThrow('positive whole number');
  });
});
