import { z } from 'zod';
import { AggregateStore } from '../adapters/aggregate-store';
import { PerformanceStore } from '../adapters/performance-store';
import { SkanReportStore } from '../adapters/skan-report-store';
import { NotFoundError, TenantStore } from '../adapters/tenant-store';
import { PAGED_FAMILIES } from '../domain/aggregation/day-pages';
import { answerAppPerformance } from '../domain/analytics/performance-report';
import { answerAppReport, type ReportAnswer } from '../domain/reports/answer-report';
import { REPORT_NAMES, type ReportName } from '../domain/reports/reports';
import { answerAppSkan } from '../domain/skan/skan-report';
import { appTimeZone } from '../domain/tenants/tenant';
import { resourceName } from '../shared/config';
import { defineCommand } from './command';
import { key } from './flags';

export const reportCommands = [
  defineCommand({
    name: 'report show',
    usage:
      'report show --app-key K --report attribution|revenue|cohorts|events|performance|skan [--since-ms MS] [--until-ms MS]\n' +
      '            [--limit N] [--offset N]     (a page of the report, as GET /api/v1/reports/{report} answers it)\n' +
      '            [--group-by day,partner,...] [--partner A,B] [--campaign C] [--country US] [--platform ios]   (performance only)',
    // Window and paging are passed through as given: the API's own checks read them.
    flags: z.object({
      'app-key': key,
      report: z.enum([...REPORT_NAMES, 'performance', 'skan']),
      'since-ms': z.string().optional(),
      'until-ms': z.string().optional(),
      limit: z.string().optional(),
      offset: z.string().optional(),
      'group-by': z.string().optional(),
      partner: z.string().optional(),
      campaign: z.string().optional(),
      country: z.string().optional(),
      platform: z.string().optional(),
    }),
    async execute(f) {
      const app = await new TenantStore(resourceName.table('tenants')).appByKey(f['app-key']);
      if (!app) throw new NotFoundError('app');
      // The operator reaches the app through AWS access, not a server key: everything after the
      // key check (window and paging checks, the rows, their rendering) is the Reporting API's own.
      const params = { since_ms: f['since-ms'], until_ms: f['until-ms'], limit: f.limit, offset: f.offset };
      const target = { appId: app.app_id, timeZone: appTimeZone(app) };
      const answer = await answerOf(f.report, target, params, f);
      // Without If-None-Match the answer is always a page.
      return answer.kind === 'page' ? { app_id: app.app_id, report: f.report, ...answer.body } : { app_id: app.app_id };
    },
  }),
  defineCommand({
    name: 'report pages',
    usage:
      "report pages --app-key K                  (brings the app's day pages, which the attribution report reads,\n" +
      '                                          up to date with its rows: after an upgrade from a version without them)',
    flags: z.object({ 'app-key': key }),
    async execute(f) {
      const app = await new TenantStore(resourceName.table('tenants')).appByKey(f['app-key']);
      if (!app) throw new NotFoundError('app');
      const aggregates = new AggregateStore(resourceName.table('aggregates'));
      const refreshed: Record<string, number> = {};
      for (const family of PAGED_FAMILIES) {
        const days = [...new Set((await aggregates.rows(app.app_id, family)).map((row) => row.day))];
        await aggregates.refreshPages(app.app_id, family, days);
        refreshed[family] = days.length;
      }
      return { app_id: app.app_id, days_refreshed: refreshed };
    },
  }),
];

/** The report's own use case on the aggregate store, after the key check (which the operator's AWS access replaces). */
function answerOf(
  report: ReportName | 'performance' | 'skan',
  target: { appId: string; timeZone: string },
  params: Record<string, string | undefined>,
  filters: Partial<Record<'group-by' | 'partner' | 'campaign' | 'country' | 'platform', string>>,
): Promise<ReportAnswer> {
  const table = resourceName.table('aggregates');
  switch (report) {
    case 'skan':
      // A stale day summary is rebuilt and written back, as the API's read does.
      return answerAppSkan({ rows: new SkanReportStore(table), nowMs: Date.now }, target, { params });
    case 'performance':
      return answerAppPerformance({ rows: new PerformanceStore(table), nowMs: Date.now }, target, {
        params: {
          ...params,
          group_by: filters['group-by'],
          partner: filters.partner,
          campaign: filters.campaign,
          country: filters.country,
          platform: filters.platform,
        },
      });
    default:
      return answerAppReport({ rows: new AggregateStore(table), nowMs: Date.now }, target, { report, params });
  }
}
