// The click counter items (docs/adr/0006-one-click-counter.md) through the local stack: real
// clicks through GET /l/{link_id} under the redirect's grants, counted by the lane sweep under its
// own (docs/adr/0008-click-counts-from-the-click-log.md), beside rows an earlier version
// stored with `clicks` on them, read back by every reader that derives clicks from the items.

import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { AggregateStore } from '../../functions/adapters/aggregate-store';
import { ClickStore } from '../../functions/adapters/click-store';
import { LinkStore } from '../../functions/adapters/link-store';
import { PerformanceStore } from '../../functions/adapters/performance-store';
import { sortKeyOf } from '../../functions/domain/aggregation/rows';
import { localDayOf } from '../../functions/domain/common/days';
import { clickTables } from '../../functions/shared/click-tables';
import { dynamoClient } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import { createTenant, type LocalStack, startLocalStack } from '../support/local-stack';
import { MOBILE } from '../unit/links/user-agents';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack({ trustProxy: true });
});
afterAll(async () => {
  await stack?.stop();
});

const aggregates = () => new AggregateStore(resourceName.table('aggregates'));

/** A row as a version before issue 41 left it: `clicks` added on the row itself. */
async function storedBefore(appId: string, family: string, day: string, group: Record<string, string>, clicks: number) {
  const names = Object.keys(group);
  await dynamoClient().send(
    new UpdateCommand({
      TableName: resourceName.table('aggregates'),
      Key: { pk: `${appId}#${family}`, sk: sortKeyOf({ day, group: Object.values(group) }) },
      UpdateExpression: `SET #day = :day, ${names.map((_, i) => `#g${i} = :g${i}`).join(', ')} ADD clicks :n`,
      ExpressionAttributeNames: { '#day': 'day', ...Object.fromEntries(names.map((name, i) => [`#g${i}`, name])) },
      ExpressionAttributeValues: { ':day': day, ':n': clicks, ...Object.fromEntries(names.map((name, i) => [`:g${i}`, group[name]])) },
    }),
  );
}

it('counts clicks on the counter items and on rows stored before them alike, for the perf rows, the report, the pages and link stats, and a rebuild never sets them', async () => {
  const tenant = await createTenant();
  const appId = tenant.app.app_id;
  const link = await new LinkStore(resourceName.table('links')).create(tenant.app, { partner: 'acme_ads', campaign: 'spring' });
  const clickIds: string[] = [];
  for (const [i, country] of ['US', 'US', 'JP'].entries()) {
    const response = await fetch(`${stack.baseUrl}/l/${link.link_id}`, {
      redirect: 'manual',
      headers: { 'user-agent': MOBILE.iosSafari, 'x-forwarded-for': `10.88.${i}.9`, 'cloudfront-viewer-country': country },
    });
    expect(response.status).toBe(302);
    clickIds.push(new URL(response.headers.get('location') ?? 'http://x/').searchParams.get('click_id') ?? '');
  }
  const first = await new ClickStore(clickTables()).byId(appId, clickIds[0] as string);
  const day = localDayOf(first?.ts_ms ?? 0);
  await storedBefore(appId, 'perf', day, { partner: 'acme_ads', campaign: 'spring', country: 'US', platform: 'ios' }, 2);
  await storedBefore(appId, 'perf_partner', day, { partner: 'acme_ads' }, 2);
  await storedBefore(appId, 'link', day, { link_id: link.link_id }, 2);

  const counted = async () => {
    const clicksOf = (rows: Awaited<ReturnType<AggregateStore['rows']>>) =>
      Object.fromEntries(
        rows.map((row) => [[row.day, row.partner, row.campaign, row.country, row.platform, row.link_id].join('|'), row.clicks]),
      );
    return {
      perf: clicksOf(await aggregates().rows(appId, 'perf')),
      perfPartner: clicksOf(await aggregates().rows(appId, 'perf_partner')),
      link: clicksOf(await aggregates().rows(appId, 'link')),
    };
  };
  const expected = {
    perf: { [`${day}|acme_ads|spring|US|ios|`]: 4, [`${day}|acme_ads|spring|JP|ios|`]: 1 },
    perfPartner: { [`${day}|acme_ads||||`]: 5 },
    link: { [`${day}|||||${link.link_id}`]: 5 },
  };
  expect(await counted()).toEqual(expected);

  const window = { firstDay: day, lastDay: day };
  expect((await aggregates().linkCounts(appId, window)).get(link.link_id)).toEqual({ clicks: 5, installs: 0 });
  const performance = new PerformanceStore(resourceName.table('aggregates'));
  const clicksByDims = (facts: Awaited<ReturnType<PerformanceStore['perfRows']>>) => {
    const sums: Record<string, number> = {};
    for (const fact of facts) sums[fact.dims.join('|')] = (sums[fact.dims.join('|')] ?? 0) + (fact.counters.clicks ?? 0);
    return sums;
  };
  // The report's rows of a stale day and the compactor's page of the day read the same facts.
  expect(clicksByDims(await performance.perfRows(appId, window))).toEqual({ 'acme_ads|spring|US|ios': 4, 'acme_ads|spring|JP|ios': 1 });
  expect(clicksByDims((await performance.dayRows(appId, day)).perf)).toEqual({ 'acme_ads|spring|US|ios': 4, 'acme_ads|spring|JP|ios': 1 });
  expect(clicksByDims(await performance.partnerRows(appId, window))).toEqual({ 'acme_ads|(none)|(none)|(none)': 5 });

  // admin rebuild --apply sets a row to the live counters, clicks included: they must not count twice.
  await aggregates().setCounters(appId, {
    family: 'perf',
    day,
    group: ['acme_ads', 'spring', 'US', 'ios'],
    add: { clicks: 4, installs: 1 },
  });
  await aggregates().setCounters(appId, { family: 'link', day, group: [link.link_id], add: { clicks: 5, installs: 1 } });
  expect(await counted()).toEqual(expected);
  expect((await aggregates().linkCounts(appId, window)).get(link.link_id)).toEqual({ clicks: 5, installs: 1 });

  // The lane sweep counts the three clicks from the log once they are 5 s old (ADR 0008), under its
  // own grants: every reader then finds them on the counter items instead of the top-up, once.
  let laneCounted = 0;
  for (const deadline = Date.now() + 30_000; laneCounted < 3 && Date.now() < deadline; ) {
    const run = (await stack.scheduler.run('lane-sweep')) as { clicks: { clicks: number; failed: string[] } };
    expect(run.clicks.failed).toEqual([]);
    laneCounted += run.clicks.clicks;
    if (laneCounted < 3) await new Promise((resolve) => setTimeout(resolve, 500));
  }
  expect(laneCounted).toBe(3);
  expect(await counted()).toEqual(expected);
  expect((await aggregates().linkCounts(appId, window)).get(link.link_id)).toEqual({ clicks: 5, installs: 1 });
  expect(clicksByDims(await performance.perfRows(appId, window))).toEqual({ 'acme_ads|spring|US|ios': 4, 'acme_ads|spring|JP|ios': 1 });
  // A run with nothing new counts nothing again.
  expect(((await stack.scheduler.run('lane-sweep')) as { clicks: { clicks: number } }).clicks.clicks).toBe(0);
  expect(await counted()).toEqual(expected);
}, 90_000);
