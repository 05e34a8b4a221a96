import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { PerformanceStore } from '../functions/adapters/performance-store';
import { SORT_SEPARATOR } from '../functions/domain/aggregation/rows';
import type { CompactionSummary } from '../functions/domain/analytics/pages';
import {
  COST_COUNTERS,
  type CostRow,
  type DimensionValues,
  encodeCostDay,
  PERF_COUNTERS,
  PERF_FAMILIES,
  type PerfCounter,
} from '../functions/domain/analytics/performance';
import { DAY_MS, dayOf } from '../functions/domain/common/days';
import { pool } from '../functions/domain/common/pool';
import { dynamoClient } from '../functions/shared/clients';
import { resourceName } from '../functions/shared/config';
import { invoke } from '../local/lambda';
import { createTenant, type LocalStack } from '../test/support/local-stack';
import { readLatencies, reportGetEvent, SAMPLES, timedInvoke } from './report-requests';
import { type Report, sized } from './support';

/**
 * The performance report on a busy app (issue 23, item 6): a year of rows of 2,000 partner x
 * campaign x country x platform combinations a day (10 partners, 10 campaigns each, 10 countries,
 * 2 platforms), each with a cost row, written in the formats of docs/analytics.md (`perf` rows,
 * their `perf_partner` sums, the cost day and its `cost_partner` sums, the day's stamp); then the
 * pages built by the compactor itself (the performance-pages handler: day, week and partner
 * pages), then p50 and p95 of three reads, each checked for its rows and sums:
 *   30d_day_partner        30 days by day, partner       300 rows    (30 day partner pages)              aim < 50 ms
 *   30d_campaign_country   30 days by campaign, country  1,000 rows  (4 week pages + 2 day pages)        aim < 150 ms
 *   365d_partner           365 days by partner           10 rows     (52 week + <= 12 day partner pages) aim < 500 ms
 * Measured as bench/report-latency.ts measures the four reports: the report function's Lambda
 * handler invoked in-process against the local emulators.
 */

// Quick: the 30-day reads need 30 days, and a few more for a whole week page before them.
const DAYS = Number(process.env.PERFORMANCE_BENCH_DAYS ?? sized(365, 38));
const PARTNERS = Array.from({ length: 10 }, (_, p) => `partner_${String(p).padStart(2, '0')}`);
// Quick: 300 combinations a day instead of 2,000 (each read's rows follow from these).
const CAMPAIGNS_PER_PARTNER = sized(10, 3);
const COUNTRIES = ['US', 'GB', 'DE', 'FR', 'JP', 'BR', 'IN', 'CA', 'AU', 'ES'];
const PLATFORMS = sized(['ios', 'android'], ['ios']);
const BATCH_ITEMS = 25;
const SEED_CONCURRENCY = 16;

type Item = Record<string, string | number>;

const COMBINATIONS: DimensionValues[] = PARTNERS.flatMap((partner) =>
  Array.from({ length: CAMPAIGNS_PER_PARTNER }, (_, c) => `${partner}_campaign_${String(c).padStart(2, '0')}`)
    .flatMap((campaign) =>
      COUNTRIES.flatMap((country) => PLATFORMS.map((platform) => [partner, campaign, country, platform] as DimensionValues)),
    )
    .map((dims) => dims),
);

/** A combination's counters on day d: small varied integers, revenue in micro-dollars. */
function countersOf(d: number, i: number): Record<PerfCounter, number> {
  const installs = 1 + ((d * 7 + i * 3) % 23);
  const revenue = ((d + i) % 11) * 990_000;
  return {
    clicks: installs * 12 + (i % 7),
    installs,
    organic: 0,
    reinstalls: (d + i) % 3,
    fraud_flagged: (d * i) % 2,
    revenue_micros: revenue,
    cohort_d0_micros: Math.floor(revenue / 3),
    cohort_d7_micros: Math.floor(revenue / 2),
    cohort_d30_micros: revenue,
    retained_d1: Math.floor(installs / 2),
    retained_d7: Math.floor(installs / 4),
    retained_d30: Math.floor(installs / 9),
    reengagements: (d + i) % 2,
    recent_revenue_micros: revenue,
    ad_revenue_micros: Math.floor(revenue / 4),
    cohort_ad_d0_micros: Math.floor(revenue / 12),
    cohort_ad_d7_micros: Math.floor(revenue / 8),
    cohort_ad_d30_micros: Math.floor(revenue / 4),
    refunds: (d + i) % 2,
    refund_micros: Math.floor(revenue / 20),
    recent_refund_micros: Math.floor(revenue / 20),
    cohort_refund_d0_micros: 0,
    cohort_refund_d7_micros: Math.floor(revenue / 40),
    cohort_refund_d30_micros: Math.floor(revenue / 20),
  };
}

function costOf(d: number, i: number, dims: DimensionValues): CostRow {
  const cost_micros = (150 + ((d * 13 + i * 5) % 700)) * 10_000;
  return { dims, cost_micros, network_clicks: 20 + (i % 9), impressions: 1000 + ((d + i) % 500), currency: 'USD', cost: cost_micros / 1e6 };
}

/** One day's items of every family, as the aggregator, the link redirect and the cost upload leave them. */
function itemsOfDay(appId: string, day: string, d: number): Item[] {
  const pk = (family: string) => `${appId}#${family}`;
  const sk = (...parts: string[]) => [day, ...parts].join(SORT_SEPARATOR);
  const items: Item[] = [];
  const partnerSums = new Map<string, Record<string, number>>();
  const costSums = new Map<string, Record<string, number>>();
  const costRows: CostRow[] = [];
  COMBINATIONS.forEach((dims, i) => {
    const counters = countersOf(d, i);
    items.push({ pk: pk(PERF_FAMILIES.perf), sk: sk(...dims), ...counters, v: 1 });
    const sums = partnerSums.get(dims[0]) ?? {};
    for (const name of PERF_COUNTERS) sums[name] = (sums[name] ?? 0) + counters[name];
    partnerSums.set(dims[0], sums);
    const cost = costOf(d, i, dims);
    costRows.push(cost);
    const costSum = costSums.get(dims[0]) ?? {};
    for (const name of COST_COUNTERS) costSum[name] = (costSum[name] ?? 0) + cost[name];
    costSums.set(dims[0], costSum);
  });
  for (const [partner, sums] of partnerSums) items.push({ pk: pk(PERF_FAMILIES.perfPartner), sk: sk(partner), ...sums, v: 1 });
  for (const [partner, sums] of costSums) items.push({ pk: pk(PERF_FAMILIES.costPartner), sk: sk(partner), ...sums, ver: 1 });
  items.push({ pk: pk(PERF_FAMILIES.cost), sk: day, rows: encodeCostDay(costRows), ver: 1 });
  // Every perf row and the cost day bumped the stamp once.
  items.push({ pk: pk(PERF_FAMILIES.perfStamp), sk: day, v: COMBINATIONS.length + 1 });
  return items;
}

async function putAll(items: readonly Item[]): Promise<void> {
  const table = resourceName.table('aggregates');
  const batches: Item[][] = [];
  for (let i = 0; i < items.length; i += BATCH_ITEMS) batches.push(items.slice(i, i + BATCH_ITEMS));
  await pool(batches, SEED_CONCURRENCY, async (batch) => {
    let requests = batch.map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; requests.length > 0; attempt++) {
      if (attempt === 10) throw new Error(`${requests.length} seed items left unprocessed after ${attempt} attempts`);
      const { UnprocessedItems } = await dynamoClient().send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
      requests = (UnprocessedItems?.[table] ?? []) as typeof requests;
    }
  });
}

interface Read {
  readonly key: 'performance_30d_day_partner' | 'performance_30d_campaign_country' | 'performance_365d_partner';
  readonly label: string;
  readonly params: Record<string, string>;
  readonly rows: number;
  /** The installs of every row together, as seeded. */
  readonly installs: number;
}

const PATH = '/api/v1/reports/performance';

/** A 200 with the rows and the installs the seed put there, or the timing measured nothing. */
function checkPage(read: Read, via: string, status: number | undefined, body: string | undefined): void {
  const rows = status === 200 ? ((JSON.parse(body ?? '{}') as { rows?: { installs: number }[] }).rows ?? []) : undefined;
  const installs = rows?.reduce((sum, row) => sum + row.installs, 0);
  if (status !== 200 || rows?.length !== read.rows || installs !== read.installs) {
    throw new Error(
      `${read.key} ${via}: expected 200 with ${read.rows} rows and ${read.installs} installs, got ${status} with ${rows?.length ?? 'no'} rows and ${installs} installs: ${String(body).slice(0, 200)}`,
    );
  }
}

async function timedRead(read: Read, serverKey: string): Promise<number> {
  const { ms, status, body } = await timedInvoke('report-performance', reportGetEvent(PATH, read.params, serverKey));
  checkPage(read, 'from the handler', status, body);
  return ms;
}

const round = (n: number) => Number(n.toFixed(1));

export async function performanceReportFigures(report: Report, stack: LocalStack): Promise<void> {
  const { app, serverKey } = await createTenant({ plan: 'paid' });
  const nowMs = Date.now();
  // Day d of the seed is DAYS - 1 - d days before today (UTC: the tenant's zone).
  const days = Array.from({ length: DAYS }, (_, d) => ({ day: dayOf(nowMs - (DAYS - 1 - d) * DAY_MS), d }));

  const seedStarted = Date.now();
  let seeded = 0;
  // A day at a time keeps the seed's memory to one day's items.
  await pool(days, 2, async ({ day, d }) => {
    const items = itemsOfDay(app.app_id, day, d);
    seeded += items.length;
    await putAll(items);
  });
  const seedS = (Date.now() - seedStarted) / 1000;

  const compactStarted = Date.now();
  const compaction = (await invoke('performance-pages', {})) as CompactionSummary;
  const compactS = (Date.now() - compactStarted) / 1000;
  // The local stack's own 5-minute schedule may have built some days during the seed: what counts
  // is that no day is left stale.
  const stale = await new PerformanceStore(resourceName.table('aggregates')).staleDays(app.app_id);
  if (compaction.overflows > 0 || stale.length > 0 || compaction.unfinished.length > 0)
    throw new Error(`the compactor did not page every day: ${JSON.stringify(compaction)}, ${stale.length} days stale`);

  const installsOf = (from: number) =>
    days.filter(({ d }) => d >= from).reduce((sum, { d }) => sum + COMBINATIONS.reduce((s, _, i) => s + countersOf(d, i).installs, 0), 0);
  const startOf = (daysAgo: number) => String(Date.parse(`${dayOf(nowMs - daysAgo * DAY_MS)}T00:00:00Z`));
  const month = { since_ms: startOf(29), until_ms: String(nowMs), limit: '1000' };
  const reads: Read[] = [
    {
      key: 'performance_30d_day_partner',
      label: `30 days by day, partner (${30 * PARTNERS.length} rows, 30 day partner pages)`,
      params: { ...month, group_by: 'day,partner' },
      rows: 30 * PARTNERS.length,
      installs: installsOf(DAYS - 30),
    },
    {
      key: 'performance_30d_campaign_country',
      label: `30 days by campaign, country (${(PARTNERS.length * CAMPAIGNS_PER_PARTNER * COUNTRIES.length).toLocaleString('en-US')} rows, 4 week pages and 2 day pages of ${COMBINATIONS.length.toLocaleString('en-US')} or more)`,
      params: { ...month, group_by: 'campaign,country' },
      rows: PARTNERS.length * CAMPAIGNS_PER_PARTNER * COUNTRIES.length,
      installs: installsOf(DAYS - 30),
    },
    {
      key: 'performance_365d_partner',
      label: `${DAYS} days by partner (${PARTNERS.length} rows, week and day partner pages)`,
      params: { since_ms: startOf(DAYS - 1), until_ms: String(nowMs), group_by: 'partner' },
      rows: PARTNERS.length,
      installs: installsOf(0),
    },
  ];

  for (const read of reads) {
    const response = await fetch(`${stack.baseUrl}${PATH}?${new URLSearchParams(read.params)}`, {
      headers: { authorization: `Bearer ${serverKey}` },
    });
    checkPage(read, 'over HTTP', response.status, await response.text());
  }

  const figures = await readLatencies(reads, (read) => timedRead(read, serverKey));

  report(
    `performance rows seeded (${DAYS} days of ${COMBINATIONS.length.toLocaleString('en-US')} combinations) / seconds`,
    `${seeded.toLocaleString('en-US')} / ${seedS.toFixed(1)}`,
    { performance_items_seeded: seeded, performance_seed_s: round(seedS) },
  );
  report(
    `performance day pages / week pages built by the compactor (${compaction.pages} / ${compaction.weeks}) / seconds`,
    compactS.toFixed(1),
    {
      performance_pages_built: compaction.pages,
      performance_week_pages_built: compaction.weeks,
      performance_compaction_s: round(compactS),
    },
  );
  report(`performance report latency: Lambda handler in-process, ${SAMPLES} samples (ms)`, 'p50 / p95', {
    report_p50_ms: Object.fromEntries(figures.map(({ read, p50 }) => [read.key, p50])),
    report_p95_ms: Object.fromEntries(figures.map(({ read, p95 }) => [read.key, p95])),
  });
  for (const { read, p50, p95 } of figures) report(`  ${read.label}`, `${p50.toFixed(1)} / ${p95.toFixed(1)}`, {});
}
