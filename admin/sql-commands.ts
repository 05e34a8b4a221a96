import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import type { DuckDbTables } from '../functions/adapters/duckdb-sql';
import { copyAppExports } from '../functions/adapters/sql-export-files';
import { NotFoundError, TenantStore } from '../functions/adapters/tenant-store';
import { defineCommand, type Target, UsageError } from '../functions/commands/command';
import { key } from '../functions/commands/flags';
import { reportParameterValues, reportQuery, reportScope, sqlLiteral } from '../functions/domain/raw-data/report-sql';
import { SqlQueryFailed, SqlRefused } from '../functions/domain/raw-data/sql-guard';
import { scopedToApp } from '../functions/domain/raw-data/sql-scope';
import type { SqlResult } from '../functions/domain/raw-data/sql-values';
import { REPORT_NAMES, type ReportName } from '../functions/domain/reports/reports';
import { appTimeZone } from '../functions/domain/tenants/tenant';
import { resourceName } from '../functions/shared/config';
import { stackWarehouse } from './athena-target';

/**
 * `admin sql` (docs/raw-data.md, "SQL: DuckDB locally, Athena in AWS"): a read-only query over
 * one app's raw tables, or one of the four reports as SQL, printed as `{"rows": [...]}`. Locally
 * the app's export files are copied from the export bucket and loaded into DuckDB; with --stack
 * the query runs on the stack's Athena workgroup. A query that is not one SELECT over the app's
 * tables is refused, and a query the engine rejects is the operator's to fix: both are usage
 * errors (exit 2).
 */

const NAME = 'sql';

/**
 * DuckDB's native engine and Athena's client are loaded when `sql` runs, not with the registry:
 * every other admin command, and the console, start without them (about 170 ms).
 */
const duckdb = () => import('../functions/adapters/duckdb-sql');
const athena = async (stack: string) => {
  const [{ AthenaSql }, warehouse] = await Promise.all([import('../functions/adapters/athena-sql'), stackWarehouse(stack)]);
  return { engine: new AthenaSql(warehouse), database: warehouse.database };
};

export const sqlCommands = [
  defineCommand({
    name: NAME,
    usage:
      'sql --app-key K "SELECT ..."            (one read-only query over the app\'s raw tables: events, installs,\n' +
      '                                         clicks, skan_postbacks; on Athena with --stack, else DuckDB; --query SQL is the same)\n' +
      'sql --app-key K --report attribution|revenue|cohorts|events [--since-ms MS] [--until-ms MS]\n' +
      "                                         (the report's SQL: every row of the window, as the Reporting API renders it)",
    argument: { flag: 'query', name: 'SQL' },
    flags: z
      .object({
        'app-key': key,
        query: z.string().trim().min(1).optional(),
        report: z.enum(REPORT_NAMES).optional(),
        // The window is read as the Reporting API reads it (reportScope): the same defaults and refusals.
        'since-ms': z.string().optional(),
        'until-ms': z.string().optional(),
      })
      .refine((f) => (f.query === undefined) !== (f.report === undefined), {
        message: 'give either a query or --report NAME',
        path: ['query'],
      })
      .refine((f) => f.report !== undefined || (f['since-ms'] === undefined && f['until-ms'] === undefined), {
        message: '--since-ms and --until-ms go with --report; a query says its own window',
        path: ['since-ms'],
      }),
    async execute(f, target) {
      // The query is judged before anything is fetched: a refusal costs no download and no AWS call.
      const checked = f.query === undefined ? undefined : await refusedAsUsage(async () => (await duckdb()).checkQueryText(f.query ?? ''));
      const app = await new TenantStore(resourceName.table('tenants')).appByKey(f['app-key']);
      if (!app) throw new NotFoundError('app');
      const result = await refusedAsUsage(async () => {
        if (f.report !== undefined)
          return runReport(
            target,
            app.app_id,
            f.report,
            reportScope(app.app_id, { since_ms: f['since-ms'], until_ms: f['until-ms'] }, Date.now(), appTimeZone(app)),
          );
        const sql = f.query ?? '';
        if (target.stack) {
          const { engine, database } = await athena(target.stack);
          return engine.run(scopedToApp(sql, { appId: app.app_id, database, withClause: checked?.withClause ?? false }));
        }
        return withLocalTables(app.app_id, (tables) => tables.query(sql));
      });
      return { rows: result.rows };
    },
  }),
];

async function runReport(target: Target, appId: string, report: ReportName, scope: ReturnType<typeof reportScope>): Promise<SqlResult> {
  const query = reportQuery(report);
  const values = reportParameterValues(query, scope);
  if (target.stack) return (await athena(target.stack)).engine.run(query.sql, values.map(sqlLiteral));
  return withLocalTables(appId, (tables) => tables.report(query, values));
}

/** The app's export files from the local export bucket, in DuckDB for one use. */
async function withLocalTables(appId: string, use: (tables: DuckDbTables) => Promise<SqlResult>): Promise<SqlResult> {
  const bucket = resourceName.exportBucket();
  const dir = mkdtempSync(join(tmpdir(), 'admin-sql-'));
  let tables: DuckDbTables;
  try {
    await copyAppExports(bucket, appId, dir);
    tables = await (await duckdb()).DuckDbTables.load(dir);
  } finally {
    // Loaded into memory: the copies are not needed once the tables exist.
    rmSync(dir, { recursive: true, force: true });
  }
  try {
    return await use(tables);
  } finally {
    tables.close();
  }
}

/** A refused or failed query is the operator's to change: a usage error of `sql` (exit 2). */
async function refusedAsUsage<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof SqlRefused) throw new UsageError(`sql: ${error.message}`, NAME);
    if (error instanceof SqlQueryFailed) throw new UsageError(`sql: the query failed: ${error.message}`, NAME);
    throw error;
  }
}
