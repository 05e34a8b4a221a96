import { z } from 'zod';
import { NotFoundError, TenantStore } from '../functions/adapters/tenant-store';
import { AggregateStore } from '../functions/adapters/aggregate-store';
import { resourceName } from '../functions/shared/config';
import { answerReport, type ReportPorts } from '../functions/domain/reports/answer-report';
import { REPORT_NAMES } from '../functions/domain/reports/reports';
import { defineCommand } from './command';
import { key } from './flags';

/**
 * The operator holds AWS credentials, not a server key. answerReport (the Reporting API's own
 * use case) authenticates a bearer key through its serverKey port; here that port answers every
 * key with the chosen app, and this well-formed stand-in passes the format check. Everything
 * after authentication (the checks of the window and paging, the rows, their rendering) is the
 * API's, so the CLI and the console show exactly what GET /api/v1/reports/{report} would.
 */
const OPERATOR_BEARER = `Bearer srv_${'0'.repeat(48)}`;

export const reportCommands = [
  defineCommand({
    name: 'report show',
    usage:
      'report show --app-key K --report attribution|revenue|cohorts|events [--since-ms MS] [--until-ms MS]\n' +
      '            [--limit N] [--offset N]     (a page of the report, as GET /api/v1/reports/{report} answers it)',
    // Window and paging are passed through as given: the API's own checks read them.
    flags: z.object({
      'app-key': key,
      report: z.enum(REPORT_NAMES),
      'since-ms': z.string().optional(),
      'until-ms': z.string().optional(),
      limit: z.string().optional(),
      offset: z.string().optional(),
    }),
    async execute(f) {
      const app = await new TenantStore(resourceName.table('tenants')).appByKey(f['app-key']);
      if (!app) throw new NotFoundError('app');
      const aggregates = new AggregateStore(resourceName.table('aggregates'));
      const ports: ReportPorts = {
        serverKey: async () => ({ app_id: app.app_id, revoked: false }),
        rows: (appId, family, window, count) => aggregates.page(appId, family, window, count),
        nowMs: Date.now,
      };
      const answer = await answerReport(ports, {
        report: f.report,
        authorization: OPERATOR_BEARER,
        params: { since_ms: f['since-ms'], until_ms: f['until-ms'], limit: f.limit, offset: f.offset },
      });
      // Without If-None-Match the answer is always a page.
      return answer.kind === 'page' ? { app_id: app.app_id, report: f.report, ...answer.body } : { app_id: app.app_id };
    },
  }),
];
