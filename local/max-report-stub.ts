/**
 * A stand-in for AppLovin MAX's User-Level Ad Revenue API
 * (https://support.axon.ai/en/max/reporting-apis/user-level-ad-revenue-api) on 127.0.0.1, which
 * max-revenue-pull reaches through MAX_REPORT_URL when a test's runtime is given it
 * (RuntimeOptions.internet), since the local runtime never reaches the internet. It follows MAX's documented format:
 *
 * - `GET /max/userAdRevenueReport?api_key=&date=&platform=&application=&aggregated=false` answers
 *   200 `{"status":200,"url":...,"ad_revenue_report_url":...}` for a key it was given a report
 *   under (`report`), 401 for any other key, 404 for a day or app it has no report of;
 * - `GET /csv/<id>` answers that report's CSV: MAX's header (Date, Ad Unit ID, Ad Unit Name,
 *   Waterfall, Ad Format, Placement, Country, Device Type, IDFA, IDFV, User ID, Revenue, Network)
 *   and a row per impression, `Date` as `YYYY-MM-DD HH:MM:SS.ss` in UTC, `Revenue` in dollars.
 *
 * `requests()` counts the report requests, so a check can tell an app was pulled or not.
 */

import { randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export const MAX_CSV_HEADER = [
  'Date',
  'Ad Unit ID',
  'Ad Unit Name',
  'Waterfall',
  'Ad Format',
  'Placement',
  'Country',
  'Device Type',
  'IDFA',
  'IDFV',
  'User ID',
  'Revenue',
  'Network',
] as const;

/** One impression as MAX's report has it. */
export interface MaxImpression {
  readonly tsMs: number;
  readonly adUnitId: string;
  readonly adFormat: string;
  readonly placement: string;
  readonly userId: string;
  readonly revenue: number;
  readonly network: string;
}

export interface MaxReportStub {
  /** What MAX_REPORT_URL is set to. */
  readonly url: string;
  /** Serves `impressions` as the report of (key, platform, application, day). */
  report(query: { apiKey: string; platform: string; application: string; day: string }, impressions: readonly MaxImpression[]): void;
  /** Serves a CSV as it is (a malformed report). */
  rawReport(query: { apiKey: string; platform: string; application: string; day: string }, csv: string): void;
  requests(): number;
  close(): Promise<void>;
}

const quoted = (field: string) => (/[",\r\n]/.test(field) ? `"${field.replaceAll('"', '""')}"` : field);

/** MAX's CSV of some impressions. */
export function maxCsv(impressions: readonly MaxImpression[]): string {
  const rows = impressions.map((i) => [
    new Date(i.tsMs)
      .toISOString()
      .replace('T', ' ')
      .replace(/\d(Z)$/, ''),
    i.adUnitId,
    `${i.adFormat} unit`,
    'Default Waterfall',
    i.adFormat,
    i.placement,
    'us',
    'phone',
    '',
    '',
    i.userId,
    String(i.revenue),
    i.network,
  ]);
  return `${[MAX_CSV_HEADER, ...rows].map((row) => row.map(quoted).join(',')).join('\n')}\n`;
}

export async function startMaxReportStub(host = '127.0.0.1'): Promise<MaxReportStub> {
  const reports = new Map<string, string>();
  const csvs = new Map<string, string>();
  let requests = 0;
  const keyOf = (q: { apiKey: string; platform: string; application: string; day: string }) =>
    JSON.stringify([q.apiKey, q.platform, q.application, q.day]);
  const server: Server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://stub');
    if (request.method !== 'GET') {
      response.writeHead(405).end();
      return;
    }
    const csv = url.pathname.startsWith('/csv/') ? csvs.get(url.pathname.slice('/csv/'.length)) : undefined;
    if (csv !== undefined) {
      response.writeHead(200, { 'content-type': 'text/csv' }).end(csv);
      return;
    }
    if (url.pathname !== '/max/userAdRevenueReport') {
      response.writeHead(404).end();
      return;
    }
    requests++;
    const q = url.searchParams;
    const apiKey = q.get('api_key') ?? '';
    if (![...reports.keys()].some((key) => (JSON.parse(key) as string[])[0] === apiKey)) {
      response.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 401, error: 'invalid api_key' }));
      return;
    }
    const id = reports.get(
      keyOf({ apiKey, platform: q.get('platform') ?? '', application: q.get('application') ?? '', day: q.get('date') ?? '' }),
    );
    if (id === undefined || q.get('aggregated') !== 'false') {
      response.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ status: 404 }));
      return;
    }
    const csvUrl = `http://${host}:${(server.address() as AddressInfo).port}/csv/${id}`;
    response
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ status: 200, url: csvUrl, ad_revenue_report_url: csvUrl }));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  const rawReport: MaxReportStub['rawReport'] = (query, csv) => {
    const id = randomUUID();
    csvs.set(id, csv);
    reports.set(keyOf(query), id);
  };
  return {
    url: `http://${host}:${port}/max/userAdRevenueReport`,
    report: (query, impressions) => rawReport(query, maxCsv(impressions)),
    rawReport,
    requests: () => requests,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
