import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { logMetrics } from '@aws-lambda-powertools/metrics/middleware';
import middy from '@middy/core';
import { DynamoInstallStore } from './adapters/install-store';
import { download, knownInstall, readReportKey } from './adapters/max-report';
import { TenantStore } from './adapters/tenant-store';
import { takeImpressions } from './domain/ingest/ad-revenue-upload';
import { MaxPullError, type MaxPullSummary, pullDay } from './domain/ingest/max-pull';
import type { App } from './domain/tenants/tenant';
import { resourceName } from './shared/config';
import { impressionPorts } from './shared/impression-ports';
import { appFailed, logger, metrics } from './shared/observability';

const tenants = new TenantStore(resourceName.table('tenants'));
const installs = new DynamoInstallStore(resourceName.table('installs'));
const ports = impressionPorts();
/**
 * MAX's endpoint: the stack sets MAX's own (lib/manifest.ts). Locally '' (npm start never reaches
 * the internet) and the run only says so, unless a test's run gives a stand-in (local/max-report-stub.ts).
 */
const baseUrl = process.env.MAX_REPORT_URL ?? '';

const DAY_MS = 86_400_000;
/** MAX keeps a user-level report 45 days: a day asked for must be within them. */
const MAX_DAYS_BACK = 45;

export interface MaxRevenuePullResult {
  readonly day: string;
  readonly apps: readonly MaxPullSummary[];
  readonly failed: readonly { readonly app_id: string; readonly code: string }[];
}

/** The day to pull: yesterday (UTC), or the `day` an operator's invocation names to pull one again. */
export function dayToPull(event: unknown, nowMs: number): string {
  const asked = (event as { detail?: { day?: unknown } } | null)?.detail?.day;
  if (asked === undefined) return new Date(nowMs - DAY_MS).toISOString().slice(0, 10);
  const ms = typeof asked === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(asked) ? Date.parse(`${asked}T00:00:00Z`) : Number.NaN;
  if (!(ms <= nowMs - DAY_MS && ms >= nowMs - MAX_DAYS_BACK * DAY_MS)) {
    throw new Error(`detail.day must be a past UTC day (YYYY-MM-DD) within ${MAX_DAYS_BACK} days, not ${JSON.stringify(asked)}`);
  }
  return asked as string;
}

async function pullApp(app: App, settings: NonNullable<App['max_pull']>, day: string, receivedMs: number): Promise<MaxPullSummary> {
  const company = await tenants.companyByKey(app.company_key);
  if (!company) throw new Error('the app has no company');
  const apiKey = await readReportKey(settings.report_key_secret);
  return pullDay(
    {
      download,
      knownInstall: (installUuid) => knownInstall(installs, app.app_id, installUuid),
      take: async (impressions) => {
        const body = { impressions };
        const raw = Buffer.from(JSON.stringify(body));
        const taken = await takeImpressions(ports, { appId: app.app_id, company, raw, body, clientIp: '0.0.0.0', receivedMs });
        return taken.results;
      },
    },
    { appId: app.app_id, apiKey, day, platform: settings.platform, application: settings.application, baseUrl },
  );
}

/**
 * Daily (lib/manifest.ts, schedules), after MAX has the day (8 hours after it ends, UTC): each app
 * whose MAX pull is on (`admin app update --max-pull on`) has yesterday's user-level report pulled
 * and its rows taken as impressions (functions/domain/ingest/max-pull.ts). One app failing is an
 * error line and MaxRevenuePullAppFailed for that app; the others are pulled all the same, and the
 * function's Errors alarm fires at the end. A day pulled again counts nothing twice.
 */
export async function maxRevenuePull(event: unknown): Promise<MaxRevenuePullResult | { readonly skipped: 'no MAX_REPORT_URL' }> {
  if (baseUrl === '') {
    logger.info('no MAX_REPORT_URL: no MAX report pulled');
    return { skipped: 'no MAX_REPORT_URL' };
  }
  const receivedMs = Date.now();
  const day = dayToPull(event, receivedMs);
  const apps: MaxPullSummary[] = [];
  const failed: { app_id: string; code: string }[] = [];
  for (const app of await tenants.listApps()) {
    const settings = app.max_pull;
    if (!settings?.on) continue;
    try {
      const summary = await pullApp(app, settings, day, receivedMs);
      apps.push(summary);
      metrics.addMetric('MaxRowsAccepted', MetricUnit.Count, summary.accepted);
      metrics.addMetric('MaxRowsRejected', MetricUnit.Count, summary.rejected);
      // Rows not taken are said with their reasons: never lost without a word.
      if (summary.rejected > 0) logger.warn('MAX report pulled, some rows not taken', { ...summary });
      else logger.info('MAX report pulled', { ...summary });
    } catch (error) {
      const code = error instanceof MaxPullError ? error.code : ((error as { code?: string }).code ?? 'failed');
      failed.push({ app_id: app.app_id, code });
      appFailed('MaxRevenuePull', app.app_id, error, { day, code });
    }
  }
  if (failed.length > 0)
    throw new Error(`MAX pull of ${day} failed for ${failed.length} apps: ${failed.map((f) => `${f.app_id} (${f.code})`).join(', ')}`);
  return { day, apps, failed };
}

export const handler = middy(maxRevenuePull).use(injectLambdaContext(logger)).use(logMetrics(metrics));
