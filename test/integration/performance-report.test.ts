// GET /api/v1/reports/performance through the local edge, on rows put in the formats of
// docs/analytics.md, with the pages built by the performance-pages function itself (its grants
// enforced): sums and maturity checked by hand, the errors of the four reports and its own, every
// answer as docs/openapi.yaml documents it, and 503 while the store fails.

import { BatchWriteCommand, GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { runAdmin } from '../../bin/admin';
import { SORT_SEPARATOR } from '../../functions/domain/aggregation/rows';
import type { CompactionSummary } from '../../functions/domain/analytics/pages';
import { encodeCostDay, PERF_FAMILIES } from '../../functions/domain/analytics/performance';
import { dynamoClient } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import { invoke } from '../../local/lambda';
import { problemsOf } from '../support/documented-answers';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { OpenApi } from '../support/openapi';
import { countingWrites } from '../support/write-faults';

const PATH = '/api/v1/reports/performance';
const DAY = 86_400_000;
const api = new OpenApi();
let stack: LocalStack;
let a: Tenant;
let b: Tenant;
const table = () => resourceName.table('aggregates');
// Two days long past (every cohort mature) and today.
const D1 = '2025-01-10';
const D2 = '2025-01-11';
const since = Date.parse(`${D1}T00:00:00Z`);
const until = Date.parse(`${D2}T00:00:00Z`) + DAY;

async function get(query = '', headers: Record<string, string> = {}, method = 'GET') {
  const response = await fetch(`${stack.baseUrl}${PATH}${query}`, { method, headers });
  const text = await response.text();
  const answer = { method, path: PATH, status: response.status, headers: Object.fromEntries(response.headers), text };
  expect({ status: answer.status, problems: problemsOf(api, answer) }).toEqual({ status: answer.status, problems: [] });
  return {
    status: response.status,
    headers: response.headers,
    body: text ? (JSON.parse(text) as { rows?: Record<string, unknown>[]; error?: string }) : undefined,
  };
}
const bearer = (tenant: Tenant) => ({ authorization: `Bearer ${tenant.serverKey}` });
const window = `since_ms=${since}&until_ms=${until}`;

async function put(items: Record<string, unknown>[]) {
  for (let i = 0; i < items.length; i += 25) {
    await dynamoClient().send(
      new BatchWriteCommand({ RequestItems: { [table()]: items.slice(i, i + 25).map((Item) => ({ PutRequest: { Item } })) } }),
    );
  }
}

/** A perf row, its partner sum and a stamp bump, as the aggregator writes them. */
function perf(appId: string, day: string, dims: string[], counters: Record<string, number>) {
  return [
    { pk: `${appId}#${PERF_FAMILIES.perf}`, sk: [day, ...dims].join(SORT_SEPARATOR), ...counters, v: 1 },
    { pk: `${appId}#${PERF_FAMILIES.perfPartner}`, sk: [day, dims[0]].join(SORT_SEPARATOR), ...counters, v: 1 },
  ];
}

async function bumpStamp(appId: string, day: string) {
  await dynamoClient().send(
    new UpdateCommand({
      TableName: table(),
      Key: { pk: `${appId}#${PERF_FAMILIES.perfStamp}`, sk: day },
      UpdateExpression: 'ADD v :one',
      ExpressionAttributeValues: { ':one': 1 },
    }),
  );
}

beforeAll(async () => {
  stack = await startLocalStack();
  [a, b] = [await createTenant(), await createTenant()];
  const app = a.app.app_id;
  await put([
    ...perf(app, D1, ['meta', 'spring', 'US', 'ios'], { installs: 10, clicks: 40, cohort_d7_micros: 30_000_000, retained_d1: 4 }),
    ...perf(app, D2, ['google', 'winter', 'DE', 'android'], { installs: 5, organic: 1, revenue_micros: 2_500_000 }),
    {
      pk: `${app}#${PERF_FAMILIES.cost}`,
      sk: D1,
      ver: 1,
      rows: encodeCostDay([
        { dims: ['meta', 'spring', 'US', 'ios'], cost_micros: 20_000_000, network_clicks: 38, impressions: 900, currency: 'USD', cost: 20 },
      ]),
    },
    {
      pk: `${app}#${PERF_FAMILIES.costPartner}`,
      sk: [D1, 'meta'].join(SORT_SEPARATOR),
      ver: 1,
      cost_micros: 20_000_000,
      network_clicks: 38,
      impressions: 900,
    },
  ]);
  await bumpStamp(app, D1);
  await bumpStamp(app, D2);
});
afterAll(async () => {
  await stack?.stop();
});

describe('GET /api/v1/reports/performance', () => {
  it('sums the rows and cost by the group columns, from the pages the compactor built, and from the rows of a day changed since', async () => {
    const summary = (await invoke('performance-pages', {})) as CompactionSummary;
    expect(summary.pages).toBeGreaterThanOrEqual(2);
    const page = await dynamoClient().send(
      new GetCommand({ TableName: table(), Key: { pk: `${a.app.app_id}#${PERF_FAMILIES.perfPage}`, sk: D1 } }),
    );
    expect(page.Item).toMatchObject({ v: 1 });
    // A write after the page: D2 is stale, and read from its rows.
    await put(perf(a.app.app_id, D2, ['google', 'autumn', 'DE', 'android'], { installs: 2 }).slice(0, 1));
    await bumpStamp(a.app.app_id, D2);

    const byCampaign = await get(`?${window}&group_by=campaign,partner`, bearer(a));
    expect(byCampaign.status).toBe(200);
    expect(
      byCampaign.body?.rows?.map((row) => [row.partner, row.campaign, row.installs, row.cost_usd, row.ecpi_usd, row.roas_d7, row.d1_rate]),
    ).toEqual([
      ['google', 'autumn', 2, 0, 0, 0, 0],
      ['google', 'winter', 5, 0, 0, 0, 0],
      ['meta', 'spring', 10, 20, 2, 1.5, 0.4],
    ]);
    expect(byCampaign.body?.rows?.[2]).toMatchObject({
      clicks: 40,
      network_clicks: 38,
      impressions: 900,
      d0_mature: true,
      d30_mature: true,
    });

    const byDay = await get(`?${window}`, bearer(a));
    expect(byDay.body?.rows?.map((row) => [row.day, row.partner, row.installs, row.revenue_usd])).toEqual([
      [D1, 'meta', 10, 0],
      [D2, 'google', 5, 2.5],
    ]);
    const filtered = await get(`?${window}&group_by=country&platform=android,web`, bearer(a));
    expect(filtered.body?.rows?.map((row) => [row.country, row.installs])).toEqual([['DE', 7]]);
  });

  it('reads a whole week from the week page the compactor built while its 7 stamps match, and its days once one changes', async () => {
    const tenant = await createTenant();
    const app = tenant.app.app_id;
    // Monday 2025-01-13 to Sunday 2025-01-19, one install a day on campaign spring, 2 on the Wednesday.
    const week = Array.from({ length: 7 }, (_, i) => new Date(Date.parse('2025-01-13T00:00:00Z') + i * DAY).toISOString().slice(0, 10));
    await put(week.flatMap((day, i) => perf(app, day, ['meta', 'spring', 'US', 'ios'], { installs: i === 2 ? 2 : 1 })));
    for (const day of week) await bumpStamp(app, day);
    const summary = (await invoke('performance-pages', {})) as CompactionSummary;
    expect(summary.weeks).toBeGreaterThanOrEqual(1);
    const stored = await Promise.all(
      [PERF_FAMILIES.weekPage, PERF_FAMILIES.partnerWeek].map((family) =>
        dynamoClient().send(new GetCommand({ TableName: table(), Key: { pk: `${app}#${family}`, sk: week[0] } })),
      ),
    );
    expect(stored.map((item) => item.Item?.vs)).toEqual([
      [1, 1, 1, 1, 1, 1, 1],
      [1, 1, 1, 1, 1, 1, 1],
    ]);
    const weekWindow = `since_ms=${Date.parse('2025-01-13T00:00:00Z')}&until_ms=${Date.parse('2025-01-20T00:00:00Z')}`;
    const totals = async (groupBy: string) =>
      (await get(`?${weekWindow}&group_by=${groupBy}`, bearer(tenant))).body?.rows?.map((row) => [row[groupBy], row.installs]);
    expect(await totals('campaign')).toEqual([['spring', 8]]);
    expect(await totals('partner')).toEqual([['meta', 8]]);
    // A write on the Friday after the week was built: the week is read from its days.
    const [summer] = perf(app, week[4] as string, ['meta', 'summer', 'US', 'ios'], { installs: 3 });
    const [, partnerSum] = perf(app, week[4] as string, ['meta'], { installs: 4 });
    await put([summer as Record<string, unknown>, partnerSum as Record<string, unknown>]);
    await bumpStamp(app, week[4] as string);
    expect(await totals('campaign')).toEqual([
      ['spring', 8],
      ['summer', 3],
    ]);
    expect(await totals('partner')).toEqual([['meta', 11]]);
  });

  it('builds the pages of every app beside one holding a cost row of 9999-12-27, and answers a window in 9999 at once (issue 36)', async () => {
    const [poisoned, other] = [await createTenant(), await createTenant()];
    const far = '9999-12-27';
    const costRows = [
      { dims: ['meta', 'spring', 'US', 'ios'], cost_micros: 1_000_000, network_clicks: 0, impressions: 0, currency: 'USD', cost: 1 },
    ] as const;
    await put([
      { pk: `${poisoned.app.app_id}#${PERF_FAMILIES.cost}`, sk: far, ver: 1, rows: encodeCostDay(costRows) },
      ...perf(other.app.app_id, D1, ['meta', 'spring', 'US', 'ios'], { installs: 3 }),
    ]);
    await bumpStamp(poisoned.app.app_id, far);
    await bumpStamp(other.app.app_id, D1);
    const summary = (await invoke('performance-pages', {})) as CompactionSummary;
    expect(summary.failed).toEqual([]);
    const [page, stamp] = await Promise.all([
      dynamoClient().send(new GetCommand({ TableName: table(), Key: { pk: `${other.app.app_id}#${PERF_FAMILIES.perfPage}`, sk: D1 } })),
      dynamoClient().send(
        new GetCommand({ TableName: table(), Key: { pk: `${poisoned.app.app_id}#${PERF_FAMILIES.perfStamp}`, sk: far } }),
      ),
    ]);
    expect(page.Item).toMatchObject({ v: 1 });
    expect(stamp.Item).toMatchObject({ v: 1, page_v: 1 });

    const startedMs = Date.now();
    const farWindow = `since_ms=253402214400000&until_ms=${253402214400000 + 2 * DAY}`;
    for (const group_by of ['partner', 'campaign', 'day,partner']) {
      const answer = await get(`?${farWindow}&group_by=${group_by}`, bearer(poisoned));
      expect({ status: answer.status, rows: answer.body?.rows }).toEqual({ status: 200, rows: [] });
    }
    expect(Date.now() - startedMs).toBeLessThan(3000);
  });

  it('shows the operator the same page through admin report show --report performance', async () => {
    const api = await get(`?${window}&group_by=campaign&country=DE`, bearer(a));
    const shown = (await runAdmin([
      'report',
      'show',
      '--app-key',
      a.app.app_key,
      '--report',
      'performance',
      '--since-ms',
      String(since),
      '--until-ms',
      String(until),
      '--group-by',
      'campaign',
      '--country',
      'DE',
    ])) as { rows: unknown[] };
    expect(shown.rows).toEqual(api.body?.rows);
    expect(shown.rows.length).toBe(2);
    await expect(runAdmin(['report', 'show', '--app-key', a.app.app_key, '--report', 'performance', '--group-by', 'os'])).rejects.toThrow(
      /invalid_group_by/,
    );
  });

  it('answers 304 to its ETag', async () => {
    const first = await get(`?${window}&group_by=partner`, bearer(a));
    const etag = first.headers.get('etag') ?? '';
    expect((await get(`?${window}&group_by=partner`, { ...bearer(a), 'if-none-match': etag })).status).toBe(304);
  });

  it('shows a tenant none of another tenant rows', async () => {
    const response = await get(`?${window}&group_by=campaign`, bearer(b));
    expect({ status: response.status, rows: response.body?.rows }).toEqual({ status: 200, rows: [] });
  });

  it.each([
    ['an unknown group column', '?group_by=day,os', 400, 'invalid_group_by'],
    ['an empty group_by', '?group_by=', 400, 'invalid_group_by'],
    ['a repeated group column', '?group_by=partner,day,partner', 400, 'invalid_group_by'],
    ['an empty filter value', '?country=US,', 400, 'invalid_filter'],
    ['a window over 365 days', `?since_ms=0&until_ms=${366 * DAY}`, 400, 'window_too_large'],
    ['a limit of 0', '?limit=0', 400, 'invalid_limit'],
  ])('answers %s with a 400 and its code', async (_name, query, status, code) => {
    const response = await get(query, bearer(a));
    expect({ status: response.status, body: response.body }).toEqual({ status, body: { error: code } });
  });

  it.each([
    ['no Authorization header', {}, 'missing_bearer_token'],
    ['an unknown key', { authorization: `Bearer srv_${'0'.repeat(48)}` }, 'invalid_or_revoked_key'],
  ])('answers %s with 401', async (_name, headers, code) => {
    const response = await get('?group_by=day', headers);
    expect({ status: response.status, body: response.body }).toEqual({ status: 401, body: { error: code } });
  });

  it('answers POST with 405 method_not_allowed, as the four reports', async () => {
    const response = await get('', {}, 'POST');
    expect({ status: response.status, body: response.body }).toEqual({ status: 405, body: { error: 'method_not_allowed' } });
  });

  it('answers 503 store_unavailable while the store fails', async () => {
    await get(`?${window}`, bearer(a)); // the key is cached: the rows' read is what fails
    const fault = countingWrites(dynamoClient(), 0);
    try {
      for (const query of [`?${window}`, `?${window}&group_by=campaign`]) {
        const response = await get(query, bearer(a));
        expect({ status: response.status, body: response.body }).toEqual({ status: 503, body: { error: 'store_unavailable' } });
      }
    } finally {
      fault.stop();
    }
  });
});
