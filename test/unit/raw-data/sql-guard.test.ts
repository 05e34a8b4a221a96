// admin sql's rules for a free query (functions/domain/raw-data/sql-guard.ts and the sealed
// DuckDB of functions/adapters/duckdb-sql.ts): one SELECT over the app's four tables, nothing
// that reads a file, writes, attaches, installs or changes a setting; the tables exist, empty,
// for an app with no export yet; values come out as JSON that loses nothing.

import { DuckDBInstance } from '@duckdb/node-api';
import { checkQueryText, DuckDbTables } from '../../../functions/adapters/duckdb-sql';
import { checkReadOnlyQuery, SqlQueryFailed, SqlRefused } from '../../../functions/domain/raw-data/sql-guard';
import { scopedToApp } from '../../../functions/domain/raw-data/sql-scope';
import { athenaValue, safeDecimal, safeInteger } from '../../../functions/domain/raw-data/sql-values';
import { PARTITION_COLUMNS, RAW_TABLE_NAMES, RAW_TABLES } from '../../../functions/domain/raw-data/tables';
import { exportFolder, writeExportFiles } from '../../support/raw-sql-files';

const folder = exportFolder();
let tables: DuckDbTables;

beforeAll(async () => {
  writeExportFiles(folder.dir, [
    {
      table: 'events',
      appId: 'app1',
      receivedMs: Date.parse('2026-03-01T10:00:00Z'),
      row: { event_id: 'e1', event_name: 'open', install_uuid: 'u1' },
    },
    {
      table: 'events',
      appId: 'app1',
      receivedMs: Date.parse('2026-03-02T11:00:00Z'),
      row: { event_id: 'e2', event_name: 'open', install_uuid: 'u1' },
    },
  ]);
  tables = await DuckDbTables.load(folder.dir);
});
afterAll(() => {
  tables?.close();
  folder.remove();
});

const refusal = async (sql: string): Promise<string> => {
  try {
    await tables.query(sql);
  } catch (error) {
    expect(error).toBeInstanceOf(SqlRefused);
    return (error as Error).message;
  }
  throw new Error(`ran: ${sql}`);
};

describe('a free query on DuckDB', () => {
  it.each([
    ['a file read by a table function', "SELECT * FROM read_parquet('/etc/passwd')", /table function read_parquet\(\)/],
    ['a text file', "SELECT * FROM read_text('/etc/hostname')", /table function read_text\(\)/],
    ['a file named as a table', "SELECT * FROM '/etc/passwd'", /"\/etc\/passwd", which is not one of the app's tables/],
    ['COPY', "COPY events TO '/tmp/out.csv'", /only a single SELECT/],
    ['COPY of a query', "COPY (SELECT 1) TO '/tmp/out.csv'", /only a single SELECT/],
    ['ATTACH', "ATTACH '/tmp/other.duckdb' AS other", /only a single SELECT/],
    ['INSTALL', 'INSTALL httpfs', /only a single SELECT/],
    ['LOAD', 'LOAD httpfs', /only a single SELECT/],
    ['PRAGMA', 'PRAGMA version', /only a single SELECT/],
    ['SET', 'SET enable_external_access = true', /only a single SELECT/],
    ['CALL', 'CALL pragma_version()', /only a single SELECT/],
    ['a write', "INSERT INTO events (event_id) VALUES ('x')", /only a single SELECT/],
    ['a table made', 'CREATE TABLE copy AS SELECT * FROM events', /only a single SELECT/],
    ['EXPORT DATABASE', "EXPORT DATABASE '/tmp/db'", /only a single SELECT/],
    ['two statements', 'SELECT 1; SELECT 2', /only a single SELECT .*; this is 2 statements/],
    ['a SELECT then a COPY', "SELECT 1; COPY events TO '/tmp/x.csv'", /only a single SELECT/],
    ['no statement', ' ; ', /this is 0 statements/],
    ['a comment, which Athena may read otherwise (issue 36)', '-- nothing', /comments are not allowed/],
    ['DESCRIBE', 'DESCRIBE events', /not DESCRIBE, SHOW or SUMMARIZE/],
    ['a schema-qualified table', 'SELECT * FROM main.events', /without a database or schema \(main\.events\)/],
    ['a system table', 'SELECT * FROM information_schema.tables', /without a database or schema/],
    ['another table', 'SELECT * FROM ledger', /"ledger", which is not one of the app's tables/],
    ['a WITH query named as a table', 'WITH events AS (SELECT 1) SELECT * FROM events', /may not be named events/],
    ['text that does not parse', 'SELEC 1', /does not parse/],
  ])('refuses %s, saying why', async (_case, sql, message) => {
    expect(await refusal(sql)).toMatch(message);
  });

  it.each([
    ['a SELECT', 'SELECT count(*) AS n FROM events', [{ n: 2 }]],
    ['a WITH query', 'WITH e AS (SELECT * FROM events) SELECT count(*) AS n FROM e', [{ n: 2 }]],
    ['a FROM-first query with a semicolon', 'FROM events SELECT event_id ORDER BY event_id;', [{ event_id: 'e1' }, { event_id: 'e2' }]],
    ['a UNION of two tables', 'SELECT count(*) AS n FROM installs UNION ALL SELECT count(*) FROM clicks', [{ n: 0 }, { n: 0 }]],
    ['unnest and range', 'SELECT x FROM range(2) t(x) CROSS JOIN unnest([1]) u(y) ORDER BY x', [{ x: 0 }, { x: 1 }]],
    [
      'the partition columns',
      'SELECT DISTINCT app_id, dt, hour FROM events ORDER BY dt',
      [
        { app_id: 'app1', dt: '2026-03-01', hour: '10' },
        { app_id: 'app1', dt: '2026-03-02', hour: '11' },
      ],
    ],
    [
      'a Trino function of the shims',
      'SELECT from_unixtime(86400) AS t, json_extract_scalar(\'{"a": "b"}\', \'$.a\') AS a',
      [{ t: '1970-01-02 00:00:00+00', a: 'b' }],
    ],
  ])('runs %s', async (_case, sql, rows) => {
    expect((await tables.query(sql)).rows).toEqual(rows);
  });

  it('says what the engine refused in a query that passed the check', async () => {
    await expect(tables.query('SELECT nope FROM events')).rejects.toThrow(SqlQueryFailed);
    await expect(tables.query('SELECT nope FROM events')).rejects.toThrow(/nope/);
  });

  it('cannot reach a file or change a setting even past the check: the engine is sealed', async () => {
    const raw = (sql: string) => tables.report({ report: 'events', sql, parameters: [] }, []);
    await expect(raw("SELECT * FROM read_text('/etc/hostname')")).rejects.toThrow(/Permission Error/);
    await expect(raw("SELECT * FROM read_parquet('/etc/passwd')")).rejects.toThrow(/Permission Error/);
    await expect(raw('SET enable_external_access = true')).rejects.toThrow(/locked/i);
  });

  it("has every table of an app without exports, empty, with RAW_TABLES' columns and the partition columns", async () => {
    const empty = exportFolder();
    const fresh = await DuckDbTables.load(empty.dir);
    try {
      for (const table of RAW_TABLE_NAMES) {
        const result = await fresh.query(`SELECT * FROM ${table}`);
        expect(result.rows).toEqual([]);
        expect(result.columns).toEqual([...RAW_TABLES[table].columns, ...PARTITION_COLUMNS].map((c) => c.name));
      }
    } finally {
      fresh.close();
      empty.remove();
    }
  });

  it('prints values as JSON that loses nothing: exact integers as numbers, others as digits', async () => {
    const { rows } = await tables.query(
      "SELECT 9007199254740991 AS safe, 9007199254740993 AS unsafe, CAST(-2 AS HUGEINT) AS huge, 1.25 AS dec, CAST(1.5 AS DECIMAL(18, 2)) AS wide, 1e300 * 1e300 AS inf, true AS yes, NULL AS nothing, DATE '2026-03-01' AS day, [1, 2] AS list, {'a': 9007199254740993} AS struct",
    );
    expect(rows).toEqual([
      {
        safe: 9007199254740991,
        unsafe: '9007199254740993',
        huge: -2,
        dec: 1.25,
        wide: '1.50',
        inf: 'Infinity',
        yes: true,
        nothing: null,
        day: '2026-03-01',
        list: [1, 2],
        struct: { a: '9007199254740993' },
      },
    ]);
  });
});

describe('a query checked without tables (before a download, and for Athena)', () => {
  it('is judged by the same rule', async () => {
    await expect(checkQueryText('WITH x AS (SELECT 1) SELECT * FROM x')).resolves.toEqual({ withClause: true });
    await expect(checkQueryText('SELECT * FROM events')).resolves.toEqual({ withClause: false });
    await expect(checkQueryText("COPY events TO 'x'")).rejects.toThrow(SqlRefused);
  });

  it('refuses a parse tree it cannot read', () => {
    expect(() => checkReadOnlyQuery(null)).toThrow(SqlRefused);
    expect(() => checkReadOnlyQuery({ error: false, statements: [{}] })).toThrow(/only a single SELECT/);
  });
});

describe("Athena's app scoping", () => {
  /** The scoped text run on DuckDB against a schema standing in for the Glue database, with two apps in it. */
  async function runScoped(sql: string, withClause: boolean) {
    const instance = await DuckDBInstance.create(':memory:');
    const connection = await instance.connect();
    try {
      await connection.run('CREATE SCHEMA raw_db');
      for (const table of RAW_TABLE_NAMES) await connection.run(`CREATE TABLE raw_db.${table} (id VARCHAR, app_id VARCHAR)`);
      await connection.run("INSERT INTO raw_db.events VALUES ('mine', 'app1'), ('theirs', 'app2'), ('quote', 'o''app')");
      const scoped = scopedToApp(sql, { appId: 'app1', database: 'raw_db', withClause });
      return { scoped, rows: (await connection.runAndReadAll(scoped)).getRowObjectsJson() };
    } finally {
      connection.closeSync();
      instance.closeSync();
    }
  }

  it("puts the app's tables, filtered on app_id, in front of a query", async () => {
    const { scoped, rows } = await runScoped('SELECT id FROM events ORDER BY id;', false);
    expect(scoped).toContain(`events AS (SELECT * FROM "raw_db"."events" WHERE app_id = 'app1')`);
    expect(scoped).not.toMatch(/;\s*$/);
    expect(rows).toEqual([{ id: 'mine' }]);
  });

  it("joins a query's own WITH list, after blanks, RECURSIVE or not", async () => {
    for (const sql of [
      ' \n WITH e AS (SELECT id FROM events) SELECT id FROM e',
      'with recursive e AS (SELECT id FROM events) SELECT id FROM e',
    ]) {
      expect((await runScoped(sql, true)).rows).toEqual([{ id: 'mine' }]);
    }
  });

  it('quotes an app id and a database name', () => {
    const scoped = scopedToApp('SELECT 1', { appId: "o'app", database: 'a"b', withClause: false });
    expect(scoped).toContain(`FROM "a""b"."events" WHERE app_id = 'o''app'`);
    expect(() => scopedToApp('SELECT 1', { appId: 'x', database: 'd', withClause: true })).toThrow(/must begin with WITH/);
  });
});

describe('JSON values of Athena cells', () => {
  it.each([
    [undefined, 'varchar', undefined, null],
    ['42', 'bigint', undefined, 42],
    ['9007199254740993', 'bigint', undefined, '9007199254740993'],
    ['7', 'integer', undefined, 7],
    ['0.1234', 'double', undefined, 0.1234],
    ['Infinity', 'double', undefined, 'Infinity'],
    ['NaN', 'double', undefined, 'NaN'],
    ['1.50', 'decimal', 10, 1.5],
    ['1.50', 'decimal', 18, '1.50'],
    ['12345678901234567.50', 'decimal', 38, '12345678901234567.50'],
    ['true', 'boolean', undefined, true],
    ['false', 'boolean', undefined, false],
    ['2026-03-01', 'date', undefined, '2026-03-01'],
    ['[a, b]', 'array', undefined, '[a, b]'],
  ])('reads %p of type %s', (text, type, precision, value) => {
    expect(athenaValue(text, type, precision)).toEqual(value);
  });

  it('agrees with DuckDB on integers and decimals', () => {
    expect(safeInteger(2n ** 53n)).toBe('9007199254740992');
    expect(safeInteger(-(2n ** 53n) + 1n)).toBe(-9007199254740991);
    expect(safeDecimal('1.5', 15)).toBe(1.5);
    expect(safeDecimal('1.5', 16)).toBe('1.5');
  });
});
