import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import {
  type DuckDBConnection,
  type DuckDBDecimalType,
  DuckDBInstance,
  type DuckDBResultReader,
  DuckDBTypeId,
  type DuckDBValueConverter,
  JsonDuckDBValueConverter,
  StatementType,
} from '@duckdb/node-api';
import { DUCKDB_SHIMS, type ReportQuery } from '../domain/raw-data/report-sql';
import { checkOneReading, checkReadOnlyQuery, type ReadOnlyQuery, SqlQueryFailed, SqlRefused } from '../domain/raw-data/sql-guard';
import { quotedName } from '../domain/raw-data/sql-scope';
import { type SqlJson, type SqlResult, safeDecimal, safeInteger } from '../domain/raw-data/sql-values';
import { PARTITION_COLUMNS, RAW_TABLE_NAMES, RAW_TABLES, type RawColumnType, type RawTableName } from '../domain/raw-data/tables';

/**
 * The raw tables of one app in DuckDB, in memory (docs/raw-data.md, "SQL: DuckDB locally, Athena
 * in AWS"): the export's Parquet files, laid out as in the export bucket
 * (`<table>/app_id=<id>/dt=<day>/hour=<HH>/part-*.parquet`, the partition columns read from the
 * path), are loaded into tables named events, installs, clicks and skan_postbacks with
 * RAW_TABLES' columns; a table without files is there, empty, so a query of a new app does not
 * fail. Then the database is sealed: `enable_external_access = false` (no file, no network, no
 * extension from any query) and `lock_configuration = true` (no query can undo it), and a query
 * runs only if it is one SELECT over those tables (sql-guard.ts).
 */

const DUCKDB_TYPES: Record<RawColumnType, string> = { string: 'VARCHAR', bigint: 'BIGINT', double: 'DOUBLE', boolean: 'BOOLEAN' };
const PARQUET_FILE = /^part-[^/]*\.parquet$/;

export class DuckDbTables {
  private constructor(
    private readonly instance: DuckDBInstance,
    private readonly connection: DuckDBConnection,
  ) {}

  /** The tables of the Parquet files under `dir` (the export bucket's layout), sealed. */
  static async load(dir: string): Promise<DuckDbTables> {
    const instance = await DuckDBInstance.create(':memory:', OFFLINE);
    const connection = await instance.connect();
    const tables = new DuckDbTables(instance, connection);
    try {
      for (const table of RAW_TABLE_NAMES) await tables.loadTable(table, parquetFiles(join(dir, table)));
      for (const shim of DUCKDB_SHIMS) await connection.run(shim.sql);
      await connection.run('SET enable_external_access = false');
      await connection.run('SET lock_configuration = true');
    } catch (error) {
      tables.close();
      throw error;
    }
    return tables;
  }

  private async loadTable(table: RawTableName, files: readonly string[]): Promise<void> {
    const columns = [...RAW_TABLES[table].columns, ...PARTITION_COLUMNS];
    await this.connection.run(
      `CREATE TABLE ${quotedName(table)} (${columns.map((c) => `${quotedName(c.name)} ${DUCKDB_TYPES[c.type]}`).join(', ')})`,
    );
    if (files.length === 0) return;
    const names = columns.map((c) => sqlString(c.name)).join(', ');
    const partitions = PARTITION_COLUMNS.map((c) => `${sqlString(c.name)}: VARCHAR`).join(', ');
    // By name, and only the columns RAW_TABLES knows: a file written before a column was added
    // leaves it null, and one with a column this version does not know still loads.
    await this.connection.run(
      `INSERT INTO ${quotedName(table)} BY NAME
       SELECT COLUMNS(c -> list_contains([${names}], c))
       FROM read_parquet([${files.map(sqlString).join(', ')}], hive_partitioning = true, hive_types = {${partitions}}, union_by_name = true)`,
    );
  }

  /** A free query: refused unless it is one SELECT over the app's tables (SqlRefused); an error of the engine is SqlQueryFailed. */
  async query(sql: string): Promise<SqlResult> {
    checkReadOnlyQuery(await parseTree(this.connection, sql));
    let reader: DuckDBResultReader;
    try {
      const statements = await this.connection.extractStatements(sql);
      if (statements.count !== 1) throw new SqlRefused('only a single SELECT (or WITH ... SELECT) query is allowed');
      const prepared = await statements.prepare(0);
      if (prepared.statementType !== StatementType.SELECT)
        throw new SqlRefused('only a single SELECT (or WITH ... SELECT) query is allowed');
      reader = await prepared.runAndReadAll();
    } catch (error) {
      throw error instanceof SqlRefused ? error : new SqlQueryFailed((error as Error).message);
    }
    return resultOf(reader);
  }

  /** A report's SQL (report-sql.ts) with its parameters' values, in order. */
  async report(query: ReportQuery, values: readonly string[]): Promise<SqlResult> {
    return resultOf(await this.connection.runAndReadAll(query.sql, [...values]));
  }

  close(): void {
    this.connection.closeSync();
    this.instance.closeSync();
  }
}

/** Extensions are never fetched: Parquet and JSON are built in, and the machine may be offline. */
const OFFLINE = { autoinstall_known_extensions: 'false', autoload_known_extensions: 'false' };

/**
 * Checks a query on DuckDB's parser alone, without tables (sql-guard.ts): before `admin sql`
 * fetches any file, and for Athena, whose queries are held to the same rule.
 */
export async function checkQueryText(sql: string): Promise<ReadOnlyQuery> {
  const instance = await DuckDBInstance.create(':memory:', OFFLINE);
  const connection = await instance.connect();
  try {
    return checkReadOnlyQuery(await parseTree(connection, sql));
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/**
 * DuckDB's own parse of the text: json_serialize_sql, which serializes SELECT statements only.
 * A text Athena could read otherwise is refused first (sql-guard.ts, checkOneReading).
 */
async function parseTree(connection: DuckDBConnection, sql: string): Promise<unknown> {
  checkOneReading(sql);
  const reader = await connection.runAndReadAll('SELECT json_serialize_sql(CAST($1 AS VARCHAR)) AS tree', [sql]);
  return JSON.parse(String(reader.getRows()[0]?.[0] ?? 'null'));
}

/** Every `part-*.parquet` under a table's folder, at any depth. */
function parquetFiles(tableDir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(tableDir, { recursive: true, encoding: 'utf8' });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
  return entries
    .filter((entry) => PARQUET_FILE.test(entry.split(sep).at(-1) ?? ''))
    .map((entry) => join(tableDir, entry))
    .sort((a, b) => relative(tableDir, a).localeCompare(relative(tableDir, b)));
}

const sqlString = (value: string): string => `'${value.replaceAll("'", "''")}'`;

/**
 * DuckDB values as JSON (sql-values.ts): DuckDB's own JSON conversion, except that integers are
 * numbers while exact and decimals numbers up to 15 digits.
 */
const jsonSafe: DuckDBValueConverter<SqlJson> = (value, type, converter) => {
  if (value === null) return null;
  if (typeof value === 'bigint') return safeInteger(value);
  if (type.typeId === DuckDBTypeId.DECIMAL) return safeDecimal(String(value), (type as DuckDBDecimalType).width);
  return JsonDuckDBValueConverter(value, type, converter) as SqlJson;
};

function resultOf(reader: DuckDBResultReader): SqlResult {
  return { columns: reader.deduplicatedColumnNames(), rows: reader.convertRowObjects(jsonSafe) as Record<string, SqlJson>[] };
}
