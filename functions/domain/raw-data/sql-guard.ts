import { RAW_TABLE_NAMES } from './tables';

/**
 * What `admin sql` lets a query do (docs/raw-data.md, "SQL: DuckDB locally, Athena in AWS"): one
 * SELECT (WITH ... SELECT included) that reads the app's raw tables, and nothing else. The query
 * is judged on DuckDB's own parse tree (json_serialize_sql, which serializes SELECT statements
 * only and says so of any other), not on its text, so no spelling of COPY, ATTACH, INSTALL,
 * PRAGMA, SET or a second statement gets through. The same judgement serves Athena: its query is
 * parsed by DuckDB first, and the text sent is the text judged, so it must mean the same to both
 * lexers: `checkOneReading` refuses comments and every spelling the two read differently.
 *
 * Locally the engine is also shut off from files and the network before any query runs
 * (functions/adapters/duckdb-sql.ts); this check is what makes the refusal say why.
 */

/** A query `admin sql` will not run, and why, in the operator's words. */
export class SqlRefused extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SqlRefused';
  }
}

/** The engine refused or failed a query that passed the check (an unknown column, a type error, a permission): the operator's query to fix. */
export class SqlQueryFailed extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SqlQueryFailed';
  }
}

/** The app's tables, the only tables a query names. */
export const APP_TABLES: readonly string[] = RAW_TABLE_NAMES;

/** Table functions that compute rows and read nothing: unnesting a list, a series of numbers. */
const TABLE_FUNCTIONS: readonly string[] = ['unnest', 'range', 'generate_series'];

/** What the check learned of an accepted query. */
export interface ReadOnlyQuery {
  /** The statement begins with WITH: Athena's app scoping joins its list (functions/domain/raw-data/sql-scope.ts). */
  readonly withClause: boolean;
}

/**
 * Refuses a text that DuckDB and Athena (Trino) could split into different tokens, before either
 * parses it. DuckDB nests block comments and Trino does not, so `/* /* *\/ UNION ... -- *\/` hid a
 * second SELECT from the check and showed it to Athena (issue 36). Both read '...' strings and
 * "..." names alike (a doubled quote inside), so outside them the text may hold none of: a
 * comment (`--`, `/*`), DuckDB's escape and dollar strings (`E'\''`, `$$...$$`), a backslash, a
 * backquote, or a control character other than tab and line breaks. A query needs none of them.
 */
export function checkOneReading(sql: string): void {
  let at = 0;
  while (at < sql.length) {
    const char = sql.charAt(at);
    if (char === "'" || char === '"') {
      if (char === "'" && /[eE]/.test(sql.charAt(at - 1)) && !/[\w$]/.test(sql.charAt(at - 2)))
        throw new SqlRefused(`an escape string (E'...') reads differently on DuckDB and Athena: write '...' with '' for a quote`);
      at = closingQuote(sql, at);
      continue;
    }
    const pair = sql.slice(at, at + 2);
    if (pair === '--' || pair === '/*') throw new SqlRefused(`comments are not allowed in a query (${pair} at character ${at + 1})`);
    if (char === '$' || char === '\\' || char === '`' || isControl(char))
      throw new SqlRefused(`${JSON.stringify(char)} at character ${at + 1} is allowed only inside a '...' string`);
    at += 1;
  }
}

/** A control character other than tab, line feed and carriage return (the blanks both lexers skip). */
const isControl = (char: string): boolean => (char < ' ' && !'\t\n\r'.includes(char)) || char === '\u007f';

/** Where the string or quoted name opened at `open` ends (past its closing quote); an unclosed one is refused. */
function closingQuote(sql: string, open: number): number {
  const quote = sql.charAt(open);
  let at = open + 1;
  for (;;) {
    const close = sql.indexOf(quote, at);
    if (close < 0) throw new SqlRefused(`the ${quote === "'" ? 'string' : 'quoted name'} at character ${open + 1} is not closed`);
    if (sql.charAt(close + 1) !== quote) return close + 1;
    at = close + 2;
  }
}

type Tree = Record<string, unknown>;
const isTree = (value: unknown): value is Tree => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * Accepts the parse tree of one SELECT over the app's tables, or throws SqlRefused. `tree` is
 * DuckDB's json_serialize_sql of the query text, parsed.
 */
export function checkReadOnlyQuery(tree: unknown): ReadOnlyQuery {
  if (!isTree(tree)) throw new SqlRefused('the query could not be read');
  if (tree.error === true) {
    const message = String(tree.error_message ?? '');
    // json_serialize_sql serializes SELECT statements only: anything else is "not implemented" there.
    if (/only select statements/i.test(message)) throw new SqlRefused(ONLY_SELECT);
    throw new SqlRefused(`the query does not parse: ${message}`);
  }
  const statements = Array.isArray(tree.statements) ? tree.statements : [];
  if (statements.length !== 1) throw new SqlRefused(`${ONLY_SELECT}; this is ${statements.length} statements`);
  const [statement] = statements;
  const node = isTree(statement) ? statement.node : undefined;
  if (!isTree(node)) throw new SqlRefused(ONLY_SELECT);

  const ctes = new Set<string>();
  collectCtes(node, ctes);
  for (const name of ctes) {
    if (APP_TABLES.includes(name.toLowerCase()))
      throw new SqlRefused(`a WITH query may not be named ${name}: that is one of the app's tables`);
  }
  checkReferences(node, ctes);
  return { withClause: cteNames(node).length > 0 };
}

const ONLY_SELECT = 'only a single SELECT (or WITH ... SELECT) query is allowed';
const TABLES_WORDS = `the app's tables are ${APP_TABLES.join(', ')}`;

function cteNames(node: Tree): string[] {
  const map = isTree(node.cte_map) && Array.isArray(node.cte_map.map) ? node.cte_map.map : [];
  return map.filter(isTree).map((entry) => String(entry.key));
}

/** Every WITH query's name, at any depth: a table reference to one of them is no table. */
function collectCtes(value: unknown, into: Set<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) collectCtes(item, into);
    return;
  }
  if (!isTree(value)) return;
  for (const name of cteNames(value)) into.add(name.toLowerCase());
  for (const child of Object.values(value)) collectCtes(child, into);
}

function checkReferences(value: unknown, ctes: ReadonlySet<string>): void {
  if (Array.isArray(value)) {
    for (const item of value) checkReferences(item, ctes);
    return;
  }
  if (!isTree(value)) return;
  switch (value.type) {
    case 'BASE_TABLE': {
      const name = String(value.table_name ?? '');
      if (value.catalog_name || value.schema_name) {
        throw new SqlRefused(
          `tables are named without a database or schema (${[value.catalog_name, value.schema_name, name].filter(Boolean).join('.')}): ${TABLES_WORDS}`,
        );
      }
      if (!APP_TABLES.includes(name.toLowerCase()) && !ctes.has(name.toLowerCase())) {
        throw new SqlRefused(`the query reads ${JSON.stringify(name)}, which is not one of the app's tables: ${TABLES_WORDS}`);
      }
      break;
    }
    case 'TABLE_FUNCTION': {
      const fn = isTree(value.function) ? String(value.function.function_name ?? '') : '';
      if (!TABLE_FUNCTIONS.includes(fn.toLowerCase())) {
        throw new SqlRefused(
          `the query calls the table function ${fn}(): it may read only the app's tables (${APP_TABLES.join(', ')}), not files or other sources`,
        );
      }
      break;
    }
    case 'SHOW_REF':
      // DESCRIBE, SHOW and SUMMARIZE are SELECTs to DuckDB's parser, but no query: the columns are in docs/raw-data.md.
      throw new SqlRefused(`${ONLY_SELECT}, not DESCRIBE, SHOW or SUMMARIZE`);
  }
  for (const child of Object.values(value)) checkReferences(child, ctes);
}
