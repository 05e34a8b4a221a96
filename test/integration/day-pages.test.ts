// The attribution day pages on the DynamoDB emulator: refreshes racing each other and the row
// writes they follow still leave each page equal to its rows (the conditional replace of the page
// and the merge by row version, functions/domain/aggregation/day-pages.ts), and a day too big for
// one item is read row by row, in the same order.

import { randomUUID } from 'node:crypto';
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { AggregateStore } from '../../functions/adapters/aggregate-store';
import { MAX_PAGE_ROWS_BYTES } from '../../functions/domain/aggregation/day-pages';
import { sortKeyOf } from '../../functions/domain/aggregation/rows';
import { dynamoClient } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import { type LocalStack, startLocalStack } from '../support/local-stack';
import { freshStamp } from '../support/row-stamps';
import { attributionFromPages } from '../support/stored-rows';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack();
});
afterAll(async () => {
  await stack?.stop();
});

const store = () => new AggregateStore(resourceName.table('aggregates'));
const PARTNERS = ['meta', 'google', 'tiktok', 'snap'];

it('leaves every page equal to its rows whatever the interleaving of row writes and concurrent refreshes', async () => {
  await fc.assert(
    fc.asyncProperty(
      fc.array(
        fc.record({ day: fc.integer({ min: 1, max: 3 }), partner: fc.constantFrom(...PARTNERS), installs: fc.integer({ min: 1, max: 9 }) }),
        { minLength: 1, maxLength: 24 },
      ),
      fc.integer({ min: 1, max: 6 }),
      async (writes, lanes) => {
        const appId = `app_pages_${randomUUID()}`;
        const expected: Record<string, { installs: number }> = {};
        // `lanes` writers at once, each writing its share and refreshing its day after every write.
        await Promise.all(
          Array.from({ length: lanes }, async (_, lane) => {
            for (const write of writes.filter((_, i) => i % lanes === lane)) {
              const day = `2026-11-0${write.day}`;
              await store().add(
                appId,
                { family: 'attribution', day, group: [write.partner, 'deterministic'], add: { installs: write.installs } },
                freshStamp(lane),
              );
              await store().refreshPages(appId, 'attribution', [day]);
            }
          }),
        );
        for (const write of writes) {
          const key = `2026-11-0${write.day}|${write.partner}|deterministic`;
          expected[key] = { installs: (expected[key]?.installs ?? 0) + write.installs };
        }
        expect(await attributionFromPages(appId)).toEqual(expected);
      },
    ),
    { numRuns: 25 },
  );
}, 120_000);

it('reads a day whose rows are too many for one page row by row, in key order, between paged days', async () => {
  const appId = `app_pages_${randomUUID()}`;
  const table = resourceName.table('aggregates');
  const partners = Array.from({ length: 5200 }, (_, i) => `partner_with_a_rather_long_name_${String(i).padStart(5, '0')}`);
  const big = '2026-11-02';
  const items = partners.map((partner, i) => ({
    pk: `${appId}#attribution`,
    sk: sortKeyOf({ day: big, group: [partner, 'deterministic'] }),
    day: big,
    partner,
    attribution_type: 'deterministic',
    installs: 1 + (i % 7),
    v: 1,
  }));
  for (let i = 0; i < items.length; i += 25) {
    await dynamoClient().send(
      new BatchWriteCommand({ RequestItems: { [table]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }),
    );
  }
  expect(JSON.stringify(items).length).toBeGreaterThan(MAX_PAGE_ROWS_BYTES);
  for (const day of ['2026-11-01', '2026-11-03'])
    await store().add(appId, { family: 'attribution', day, group: ['meta', 'deterministic'], add: { installs: 4 } }, freshStamp());
  await store().refreshPages(appId, 'attribution', ['2026-11-01', big, '2026-11-03']);

  const window = { firstDay: '2026-11-01', lastDay: '2026-11-03' };
  const all = await store().page(appId, 'attribution', window, 10_000);
  expect(all).toHaveLength(partners.length + 2);
  expect(all.map((row) => `${row.day}|${row.partner}`)).toEqual([
    `2026-11-01|meta`,
    ...partners.map((partner) => `${big}|${partner}`),
    `2026-11-03|meta`,
  ]);
  expect(all[1]).toEqual({ day: big, partner: partners[0], attribution_type: 'deterministic', installs: 1 });
  // A page of the window stops inside the big day.
  expect((await store().page(appId, 'attribution', window, 11)).map((row) => row.partner)).toEqual(['meta', ...partners.slice(0, 10)]);
}, 120_000);
