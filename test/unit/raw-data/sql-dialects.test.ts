// admin sql --stack judges a query on DuckDB's parse and sends the same text to Athena (issue 36,
// finding 3): the tables DuckDB sees must be the tables Trino reads. Trino is not run here; its
// lexer's rules for what hides text (trino-parser SqlBase.g4: STRING, QUOTED_IDENTIFIER,
// SIMPLE_COMMENT `--` to the line's end, BRACKETED_COMMENT `/* ... */` that does NOT nest) are
// written out below as the oracle, independent of the guard's own scanner.

import { DuckDBInstance } from '@duckdb/node-api';
import fc from 'fast-check';
import { checkQueryText } from '../../../functions/adapters/duckdb-sql';
import { SqlRefused } from '../../../functions/domain/raw-data/sql-guard';
import { scopedToApp } from '../../../functions/domain/raw-data/sql-scope';
import { RAW_TABLE_NAMES } from '../../../functions/domain/raw-data/tables';

interface Token {
  readonly kind: 'word' | 'quoted' | 'string' | 'other';
  readonly text: string;
}

/** Trino's tokens of a text; an unclosed string, name or comment is Trino's syntax error (thrown). */
function trinoTokens(sql: string): Token[] {
  const tokens: Token[] = [];
  let at = 0;
  while (at < sql.length) {
    const rest = sql.slice(at);
    const blank = /^[ \t\r\n]+/.exec(rest);
    const line = /^--[^\r\n]*/.exec(rest);
    const block = /^\/\*[\s\S]*?\*\//.exec(rest);
    const string = /^'(?:[^']|'')*'/.exec(rest);
    const quoted = /^"(?:[^"]|"")*"/.exec(rest);
    const word = /^[A-Za-z_][A-Za-z0-9_]*/.exec(rest);
    const skip = blank ?? line ?? block;
    if (skip) {
      at += skip[0].length;
    } else if (string) {
      tokens.push({ kind: 'string', text: string[0] });
      at += string[0].length;
    } else if (quoted) {
      tokens.push({ kind: 'quoted', text: quoted[0].slice(1, -1).replaceAll('""', '"') });
      at += quoted[0].length;
    } else if (rest.startsWith('/*') || rest.startsWith("'") || rest.startsWith('"')) {
      throw new Error(`Trino: unclosed at ${at}`);
    } else if (word) {
      tokens.push({ kind: 'word', text: word[0].toLowerCase() });
      at += word[0].length;
    } else {
      tokens.push({ kind: 'other', text: rest.charAt(0) });
      at += 1;
    }
  }
  return tokens;
}

const isName = (token: Token | undefined): token is Token => token?.kind === 'word' || token?.kind === 'quoted';

/** The tables Trino reads: each (dotted) name after FROM or JOIN. The generated queries list one table per FROM. */
function trinoTables(sql: string): string[] {
  const tokens = trinoTokens(sql);
  const tables: string[] = [];
  tokens.forEach((token, i) => {
    if (token.kind !== 'word' || (token.text !== 'from' && token.text !== 'join')) return;
    const parts: string[] = [];
    let j = i + 1;
    for (let name = tokens[j]; isName(name); name = tokens[j]) {
      parts.push(name.text);
      if (tokens[j + 1]?.text !== '.') break;
      j += 2;
    }
    if (parts.length > 0) tables.push(parts.join('.'));
  });
  return tables.sort();
}

/** The tables DuckDB's parse reads (json_serialize_sql's BASE_TABLE nodes), named as trinoTables names them. */
async function duckdbTables(sql: string): Promise<string[]> {
  const instance = await DuckDBInstance.create(':memory:');
  const connection = await instance.connect();
  try {
    const reader = await connection.runAndReadAll('SELECT json_serialize_sql(CAST($1 AS VARCHAR))', [sql]);
    const tables: string[] = [];
    const walk = (value: unknown): void => {
      if (Array.isArray(value)) {
        value.forEach(walk);
        return;
      }
      if (typeof value !== 'object' || value === null) return;
      const node = value as Record<string, unknown>;
      if (node.type === 'BASE_TABLE')
        tables.push([node.catalog_name, node.schema_name, node.table_name].filter(Boolean).join('.').toLowerCase());
      Object.values(node).forEach(walk);
    };
    walk(JSON.parse(String(reader.getRows()[0]?.[0])));
    return tables.sort();
  } finally {
    connection.closeSync();
    instance.closeSync();
  }
}

/** The text admin sql would send to Athena, or undefined when the guard refuses it. */
async function sent(sql: string): Promise<string | undefined> {
  try {
    const { withClause } = await checkQueryText(sql);
    return scopedToApp(sql, { appId: 'app1', database: 'raw_db', withClause });
  } catch (error) {
    if (error instanceof SqlRefused) return undefined;
    throw error;
  }
}

const SCOPE_TABLES = RAW_TABLE_NAMES.map((table) => `raw_db.${table}`);

/** The reproduction: DuckDB nests the block comment, Trino ends it at the first `*\/`. */
const NESTED_COMMENT_BYPASS =
  "SELECT id FROM events /* /* */ UNION ALL SELECT id FROM attribution_service_raw.events WHERE app_id = 'app2' -- */";

describe('a free query sent to Athena', () => {
  it("reads another app's partition on Trino while DuckDB sees one table, so the guard refuses it", async () => {
    expect(await duckdbTables(NESTED_COMMENT_BYPASS)).toEqual(['events']);
    expect(trinoTables(NESTED_COMMENT_BYPASS)).toEqual(['attribution_service_raw.events', 'events']);
    await expect(checkQueryText(NESTED_COMMENT_BYPASS)).rejects.toThrow(/comments are not allowed/);
  });

  it.each([
    ['a line comment', 'SELECT id FROM events -- mine'],
    ['a block comment', 'SELECT /* n */ id FROM events'],
    ['an escape string', "SELECT id FROM events WHERE id = E'\\''"],
    ['a dollar string', 'SELECT $$x$$ FROM events'],
    ['a backslash', 'SELECT 1 \\ 2 FROM events'],
    ['an unclosed string', "SELECT id FROM events WHERE id = 'a"],
  ])('refuses %s', async (_, sql) => {
    await expect(checkQueryText(sql)).rejects.toThrow(SqlRefused);
  });

  it('accepts comment marks inside strings and quoted names, read alike by both', async () => {
    const sql = `SELECT id AS "a--b/*" FROM events WHERE id = '/* -- ''*/' OR id = 'it''s'`;
    expect(await sent(sql)).toBeDefined();
    expect(trinoTables(sql)).toEqual(await duckdbTables(sql));
  });

  it('reads the same tables on both dialects whatever comments and strings are placed in it', async () => {
    const fragment = fc.constantFrom(
      '/*',
      '/* /*',
      '*/',
      '-- */',
      '--',
      '\n',
      "'",
      "'/* -- */'",
      '"',
      "E'\\'",
      '$$',
      "WHERE id = 'x'",
      'UNION ALL SELECT id FROM installs',
      "UNION ALL SELECT id FROM attribution_service_raw.events WHERE app_id = 'app2'",
      'UNION ALL SELECT id FROM "raw_db"."clicks"',
    );
    await fc.assert(
      fc.asyncProperty(fc.array(fragment, { maxLength: 6 }), async (fragments) => {
        const sql = ['SELECT id FROM events', ...fragments].join(' ');
        const text = await sent(sql);
        if (text === undefined) return;
        const duckdb = await duckdbTables(sql);
        // What DuckDB judged is what Trino reads, and the sent text reads nothing else.
        expect(trinoTables(sql)).toEqual(duckdb);
        expect(trinoTables(text)).toEqual([...SCOPE_TABLES, ...duckdb].sort());
        for (const table of duckdb) expect(RAW_TABLE_NAMES).toContain(table);
      }),
      {
        numRuns: 300,
        examples: [[['/* /*', '*/', "UNION ALL SELECT id FROM attribution_service_raw.events WHERE app_id = 'app2'", '-- */']]],
      },
    );
  });
});
