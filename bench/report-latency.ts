import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { BatchWriteCommand, GetCommand } from '@aws-sdk/lib-dynamodb';
import { AggregateStore, laneAttribute } from '../functions/adapters/aggregate-store';
import { PAGED_FAMILIES } from '../functions/domain/aggregation/day-pages';
import { ROW_GROUPS, type RowDelta, sortKeyOf } from '../functions/domain/aggregation/rows';
import { DAY_MS, dayOf } from '../functions/domain/common/days';
import { pool } from '../functions/domain/common/pool';
import { REPORTS_PREFIX, type ReportName } from '../functions/domain/reports/reports';
import { dynamoClient } from '../functions/shared/clients';
import { resourceName } from '../functions/shared/config';
import { createTenant, type LocalStack } from '../test/support/local-stack';
import { readLatencies, reportGetEvent, SAMPLES, timedInvoke } from './report-requests';
import { type Report, sized } from './support';

/**
 * What a report costs its reader on a busy app: a year of prebuilt rows (365 days ending today:
 * 30 partner and type groups, 10 revenue partners, one cohort and 200 event names a day), then the
 * p50 and p95 latency of three reads, each checked for a 200 and its full page of rows:
 *   one_day          the events of yesterday                     200 rows
 *   cohorts_365      the cohorts of the last 365 days            365 rows
 *   attribution_365  the first attribution page of 365 days      1,000 of 10,950 rows
 * A report reads its window in key order and stops after the page (answer-report.ts), so the
 * 365-day reads should cost about what the one-day read costs: the aim is a p95 within twice the
 * one-day read's and under 100 ms.
 *
 * The figure is the handler's: each report function's Lambda handler (middy, Powertools and all,
 * loaded from the manifest by local/lambda.ts as the local edge does) is invoked in-process with
 * an API Gateway v2 event, against the local emulators. The HTTP hop to the edge is left out, as
 * it is not the handler's and only adds the client's noise; each read is still made once over
 * HTTP, to check that the route answers the same page.
 */

// Quick: 40 days still hold more than the 1,000-row attribution page.
const DAYS = sized(365, 40);
const PARTNERS = Array.from({ length: 10 }, (_, i) => `partner_${String(i).padStart(2, '0')}`);
const ATTRIBUTION_TYPES = ['deterministic', 'probabilistic', 'organic'];
const EVENT_NAMES = Array.from({ length: 200 }, (_, i) => `event_${String(i).padStart(3, '0')}`);
/** BatchWriteItem takes at most 25 items; several requests in flight keep the emulator busy. */
const BATCH_ITEMS = 25;
const SEED_CONCURRENCY = 16;

type Item = Record<string, string | number>;

/** One day's rows of every family, with counters that vary by day and group. */
function rowsOfDay(day: string, d: number): RowDelta[] {
  const rows: RowDelta[] = [];
  PARTNERS.forEach((partner, p) => {
    ATTRIBUTION_TYPES.forEach((type, t) => {
      const installs = 20 + ((d * 7 + p * 3 + t) % 40);
      rows.push({
        family: 'attribution',
        day,
        group: [partner, type],
        add: { installs, organic: type === 'organic' ? installs : 0, reinstalls: (d + p) % 5, fraud_flagged: (d + t) % 3 },
      });
    });
    const payers = 3 + ((d + p) % 9);
    rows.push({ family: 'revenue', day, group: [partner], add: { purchases: payers * 2, revenue_micros: payers * 4_990_000, payers } });
  });
  const installs = 600 + (d % 50);
  rows.push({
    family: 'cohorts',
    day,
    group: [],
    add: { installs, d1: Math.floor(installs * 0.4), d7: Math.floor(installs * 0.2), d30: Math.floor(installs * 0.08) },
  });
  EVENT_NAMES.forEach((name, e) => {
    const events = 1 + ((d * 13 + e * 7) % 5000);
    rows.push({
      family: 'events',
      day,
      group: [name],
      add: { events, unique_installs: Math.ceil(events / 3), revenue_micros: e % 20 === 0 ? events * 990_000 : 0 },
    });
  });
  return rows;
}

/**
 * A row as AggregateStore.add leaves it after its first write: key, day, group columns, counters.
 * Seeding writes these directly, 25 to a request, because 88,000 single updates take minutes;
 * seed() first checks the shape against a row written through add itself.
 */
function itemOf(appId: string, row: RowDelta): Item {
  const groups = Object.fromEntries(ROW_GROUPS[row.family].map((column, i) => [column, row.group[i]]));
  return { pk: `${appId}#${row.family}`, sk: sortKeyOf(row), day: row.day, ...groups, ...row.add, v: 1, [laneAttribute(0)]: 1 };
}

async function seed(appId: string, nowMs: number): Promise<number> {
  const table = resourceName.table('aggregates');
  const store = new AggregateStore(table);
  const rows = Array.from({ length: DAYS }, (_, d) => rowsOfDay(dayOf(nowMs - (DAYS - 1 - d) * DAY_MS), d)).flat();

  const [probe] = rows;
  if (probe === undefined) throw new Error('the bench seeds no rows');
  const probeApp = `bench_layout_${randomUUID()}`;
  await store.add(probeApp, probe, { lane: 0, seq: 1 });
  const { Item: written } = await dynamoClient().send(
    new GetCommand({ TableName: table, Key: { pk: `${probeApp}#${probe.family}`, sk: sortKeyOf(probe) } }),
  );
  if (!isDeepStrictEqual(written, itemOf(probeApp, probe))) {
    throw new Error(
      `the bench's row layout differs from AggregateStore.add's: ${JSON.stringify(written)} vs ${JSON.stringify(itemOf(probeApp, probe))}`,
    );
  }

  const batches: Item[][] = [];
  for (let i = 0; i < rows.length; i += BATCH_ITEMS) batches.push(rows.slice(i, i + BATCH_ITEMS).map((row) => itemOf(appId, row)));
  await pool(batches, SEED_CONCURRENCY, async (items) => {
    let requests = items.map((Item) => ({ PutRequest: { Item } }));
    for (let attempt = 0; requests.length > 0; attempt++) {
      if (attempt === 10) throw new Error(`${requests.length} seed rows left unprocessed after ${attempt} attempts`);
      const { UnprocessedItems } = await dynamoClient().send(new BatchWriteCommand({ RequestItems: { [table]: requests } }));
      requests = (UnprocessedItems?.[table] ?? []) as typeof requests;
    }
  });
  // Then, as the aggregator does after its row writes, each day's page of the paged families.
  const days = [...new Set(rows.map((row) => row.day))];
  for (const family of PAGED_FAMILIES) await pool(days, SEED_CONCURRENCY, (day) => store.refreshPages(appId, family, [day]));
  return rows.length;
}

interface Read {
  readonly key: 'one_day' | 'cohorts_365' | 'attribution_365' | 'attribution_365_200_rows';
  readonly label: string;
  readonly report: ReportName;
  readonly params: Record<string, string>;
  readonly rows: number;
}

/** The page must be a 200 with every row the read asks for, or the timing measured nothing. */
function checkPage(read: Read, via: string, status: number | undefined, body: string | undefined): void {
  const rows = status === 200 ? (JSON.parse(body ?? '{}') as { rows?: unknown[] }).rows?.length : undefined;
  if (status !== 200 || rows !== read.rows) {
    throw new Error(
      `${read.key} ${via}: expected 200 with ${read.rows} rows, got ${status} with ${rows ?? 'no'} rows: ${String(body).slice(0, 200)}`,
    );
  }
}

async function timedRead(read: Read, serverKey: string): Promise<number> {
  const { ms, status, body } = await timedInvoke(
    `report-${read.report}`,
    reportGetEvent(`${REPORTS_PREFIX}/${read.report}`, read.params, serverKey),
  );
  checkPage(read, 'from the handler', status, body);
  return ms;
}

const round = (n: number) => Number(n.toFixed(1));

export async function reportLatencyFigures(report: Report, stack: LocalStack): Promise<void> {
  const { app, serverKey } = await createTenant({ plan: 'paid' });
  const nowMs = Date.now();
  const seedStarted = Date.now();
  const seeded = await seed(app.app_id, nowMs);
  const seedS = (Date.now() - seedStarted) / 1000;

  const yesterday = Date.parse(`${dayOf(nowMs - DAY_MS)}T00:00:00Z`);
  const year = { since_ms: String(nowMs - DAYS * DAY_MS), until_ms: String(nowMs), limit: '1000' };
  const reads: Read[] = [
    {
      key: 'one_day',
      label: `one day, events (${EVENT_NAMES.length} rows)`,
      report: 'events',
      params: { since_ms: String(yesterday), until_ms: String(yesterday + DAY_MS), limit: '1000' },
      rows: EVENT_NAMES.length,
    },
    { key: 'cohorts_365', label: `${DAYS} days, cohorts (${DAYS} rows)`, report: 'cohorts', params: year, rows: DAYS },
    {
      key: 'attribution_365',
      label: `${DAYS} days, attribution page (1,000 of ${(DAYS * PARTNERS.length * ATTRIBUTION_TYPES.length).toLocaleString('en-US')} rows)`,
      report: 'attribution',
      params: { ...year, offset: '0' },
      rows: 1000,
    },
    // The same number of rows as the one-day read, from a year: what the window's length costs (nothing).
    {
      key: 'attribution_365_200_rows',
      label: `${DAYS} days, attribution page of ${EVENT_NAMES.length} rows`,
      report: 'attribution',
      params: { ...year, limit: String(EVENT_NAMES.length) },
      rows: EVENT_NAMES.length,
    },
  ];

  // The route answers the same page over HTTP (once each: the timing below leaves the hop out).
  for (const read of reads) {
    const response = await fetch(`${stack.baseUrl}${REPORTS_PREFIX}/${read.report}?${new URLSearchParams(read.params)}`, {
      headers: { authorization: `Bearer ${serverKey}` },
    });
    checkPage(read, 'over HTTP', response.status, await response.text());
  }

  const figures = await readLatencies(reads, (read) => timedRead(read, serverKey));
  const oneDay = figures.find(({ read }) => read.key === 'one_day');
  if (oneDay === undefined) throw new Error('the bench has no one-day read to compare with');
  const others = figures
    .filter((figure) => figure !== oneDay)
    .map((figure) => ({ ...figure, ratio: Number((figure.p95 / oneDay.p95).toFixed(2)) }));
  const p50 = Object.fromEntries(figures.map(({ read, p50 }) => [read.key, p50]));
  const p95 = Object.fromEntries(figures.map(({ read, p95 }) => [read.key, p95]));
  const overOneDay = Object.fromEntries(others.map(({ read, ratio }) => [read.key, ratio]));

  report(`report rows seeded (${DAYS} days of ${seeded / DAYS}) / seconds`, `${seeded.toLocaleString('en-US')} / ${seedS.toFixed(1)}`, {
    report_rows_seeded: seeded,
    report_seed_s: round(seedS),
  });
  report(`report latency: Lambda handler in-process, ${SAMPLES} samples (ms)`, 'p50 / p95', {
    report_p50_ms: p50,
    report_p95_ms: p95,
    report_p95_over_one_day: overOneDay,
  });
  for (const figure of figures) {
    const ratio = others.find((other) => other.read === figure.read)?.ratio;
    const versus = ratio === undefined ? '' : `  (p95 ${ratio.toFixed(2)}x one day's)`;
    report(`  ${figure.read.label}`, `${figure.p50.toFixed(1)} / ${figure.p95.toFixed(1)}${versus}`, {});
  }
}
