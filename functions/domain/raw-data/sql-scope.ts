import { SqlRefused } from './sql-guard';
import { RAW_TABLE_NAMES } from './tables';

/**
 * A free query on Athena reads one app's rows only: each of the app's tables is put in front of
 * the query as a WITH query of the same name that keeps the app's partition (`app_id = '<id>'`,
 * which Athena's partition projection needs anyway: app_id is `injected`). The query names the
 * tables unqualified, so they are these (functions/domain/raw-data/sql-guard.ts refused any other
 * name). Locally nothing is needed: DuckDB holds the app's files only.
 */

/** An identifier in double quotes (Athena's and DuckDB's), doubled quotes inside. */
export const quotedName = (name: string): string => `"${name.replaceAll('"', '""')}"`;

/** The query with the app's tables first; `withClause` says the query begins with its own WITH. */
export function scopedToApp(
  sql: string,
  scope: { readonly appId: string; readonly database: string; readonly withClause: boolean },
): string {
  const app = `'${scope.appId.replaceAll("'", "''")}'`;
  const tables = RAW_TABLE_NAMES.map(
    (table) => `${table} AS (SELECT * FROM ${quotedName(scope.database)}.${quotedName(table)} WHERE app_id = ${app})`,
  ).join(',\n     ');
  const body = withoutTrailingSemicolon(sql);
  if (!scope.withClause) return `WITH ${tables}\n${body}`;
  // The query's own WITH list follows the tables in one list (Trino allows one WITH per query level).
  // A query holds no comment (sql-guard.ts, checkOneReading): only blanks may come before its WITH.
  const keyword = /^\s*with(\s+recursive)?\s+/i.exec(body);
  if (!keyword) throw new SqlRefused('a query with WITH queries must begin with WITH');
  const at = keyword[0].length;
  return `${body.slice(0, at)}${tables},\n${body.slice(at)}`;
}

/** Athena takes one statement without a closing semicolon. */
const withoutTrailingSemicolon = (sql: string): string => sql.replace(/;\s*$/, '');
