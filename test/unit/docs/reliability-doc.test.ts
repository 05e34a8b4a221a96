import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import { leaseMsFor } from '../../../functions/domain/aggregation/lease';
import { queues } from '../../../lib/manifest';

/**
 * docs/reliability.md pairs each guarantee with the test that would fail if it stopped holding.
 * That promise is only as good as the names: a test renamed, removed or skipped leaves a row
 * pointing at nothing, and nobody notices. This reads the doc's tables and holds every named test
 * to a real, running `it(`/`test(` with that title in the file the doc gives.
 */

const ROOT = join(__dirname, '..', '..', '..');
const DOC = 'docs/reliability.md';
const SUITE = 'test/integration/reliability';

/** A test the doc names: its file, its title (or the part before "..." when the doc abbreviates), and the row that names it. */
interface NamedTest {
  file: string;
  title: string;
  abbreviated: boolean;
  row: string;
}

interface Row {
  half: 'suite' | 'elsewhere';
  text: string;
  files: string[];
  tests: NamedTest[];
}

const backticked = (text: string): string[] => [...text.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
const isTestFile = (span: string): boolean => /^test\/\S+\.test\.ts$/.test(span);

/** The table rows of both halves: the reliability suite (file in the `### ... (`x.test.ts`)` heading) and "Guarantees proven elsewhere". */
function rowsOf(doc: string): Row[] {
  const rows: Row[] = [];
  let half: Row['half'] | undefined;
  let suiteFile: string | undefined;
  for (const line of doc.split('\n')) {
    if (line.startsWith('## ')) {
      half = /reliability suite/i.test(line) ? 'suite' : /proven elsewhere/i.test(line) ? 'elsewhere' : undefined;
      suiteFile = undefined;
      continue;
    }
    if (line.startsWith('### ')) {
      const file = /\(`([\w.-]+\.test\.ts)`\)/.exec(line)?.[1];
      suiteFile = file ? `${SUITE}/${file}` : undefined;
      continue;
    }
    if (!line.startsWith('|') || /^\|[\s|:-]+\|$/.test(line) || /^\|\s*Guarantee\s*\|/.test(line)) continue;
    const cells = line.split('|').slice(1, -1);
    const last = cells[cells.length - 1] ?? '';
    if (half === 'suite' && suiteFile) {
      const file = suiteFile;
      rows.push({ half, text: line, files: [file], tests: backticked(last).map((name) => named(file, name, line)) });
    } else if (half === 'elsewhere') {
      const row: Row = { half, text: line, files: [], tests: [] };
      let file: string | undefined;
      for (const span of backticked(last)) {
        if (isTestFile(span)) {
          file = span;
          row.files.push(span);
        } else row.tests.push(named(file ?? '(no file before this name)', span, line));
      }
      rows.push(row);
    }
  }
  return rows;
}

function named(file: string, name: string, row: string): NamedTest {
  const abbreviated = /\s*(\.\.\.|…)$/.test(name);
  return { file, title: name.replace(/\s*(\.\.\.|…)$/, ''), abbreviated, row };
}

// A title as written in the source: literal text, with holes where a value is filled in at run
// time (a `${...}` of a template literal, or a placeholder of it.each whose value is not a literal).
const HOLE = Symbol('hole');
type Piece = string | typeof HOLE;

/** The titles of the tests a file runs: `it`/`test`, `.concurrent`, `.only` and `.each`; skipped and todo tests prove nothing and are left out. */
function titlesIn(file: string): Piece[][] {
  const source = ts.createSourceFile(file, readFileSync(join(ROOT, file), 'utf8'), ts.ScriptTarget.Latest, true);
  const titles: Piece[][] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && node.arguments.length > 0) {
      const title = titleOf(node.arguments[0]!);
      let callee: ts.Expression = node.expression;
      let table: ts.Expression | 'tagged' | undefined;
      if (ts.isCallExpression(callee)) [table, callee] = [callee.arguments[0], callee.expression];
      else if (ts.isTaggedTemplateExpression(callee)) [table, callee] = ['tagged', callee.tag];
      const chain = chainOf(callee);
      const runs =
        chain !== undefined &&
        (chain[0] === 'it' || chain[0] === 'test') &&
        chain.slice(1).every((part) => ['concurrent', 'only', 'each'].includes(part));
      const each = chain?.includes('each') ?? false;
      if (runs && title && each === (table !== undefined))
        titles.push(...(each ? expandEach(title, table === 'tagged' ? undefined : table) : [title]));
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return titles;
}

/** `it.concurrent.each` as ['it', 'concurrent', 'each']; undefined for anything but a chain of names. */
function chainOf(expression: ts.Expression): string[] | undefined {
  if (ts.isIdentifier(expression)) return [expression.text];
  if (ts.isPropertyAccessExpression(expression)) {
    const head = chainOf(expression.expression);
    return head && [...head, expression.name.text];
  }
  return undefined;
}

function titleOf(node: ts.Node): Piece[] | undefined {
  if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) return [node.text];
  if (ts.isTemplateExpression(node)) return [node.head.text, ...node.templateSpans.flatMap((span) => [HOLE, span.literal.text] as Piece[])];
  if (ts.isBinaryExpression(node) && node.operatorToken.kind === ts.SyntaxKind.PlusToken) {
    const left = titleOf(node.left);
    const right = titleOf(node.right);
    return left && right && [...left, ...right];
  }
  return undefined;
}

/**
 * The titles an it.each runs. With a table of literal rows (`['HEAD', 'OPTIONS']`, or rows of
 * literals), each row's values are put in for %s, %d and %i in turn, so dropping a row drops its
 * title; any other placeholder, `$name`, or a table that is not literal leaves a hole.
 */
function expandEach(title: Piece[], table: ts.Expression | undefined): Piece[][] {
  const rows = table && ts.isArrayLiteralExpression(table) ? table.elements.map(rowValues) : undefined;
  if (!rows || rows.some((row) => row === undefined)) return [fill(title, undefined)];
  return rows.map((row) => fill(title, row));
}

function rowValues(element: ts.Expression): (string | undefined)[] | undefined {
  const literal = (node: ts.Expression): string | undefined =>
    ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) || ts.isNumericLiteral(node) ? node.text : undefined;
  if (ts.isArrayLiteralExpression(element)) return element.elements.map(literal);
  const value = literal(element);
  return value === undefined ? undefined : [value];
}

function fill(title: Piece[], row: (string | undefined)[] | undefined): Piece[] {
  let next = 0;
  return title.flatMap((piece): Piece[] => {
    if (piece === HOLE) return [HOLE];
    return piece.split(/(%[sdifjop#%]|\$[\w.]+)/).map((part, index): Piece => {
      if (index % 2 === 0) return part;
      if (part === '%%') return '%';
      const value = /^%[sdi]$/.test(part) ? row?.[next] : undefined;
      if (part.startsWith('%') && part !== '%#') next += 1;
      return value ?? HOLE;
    });
  });
}

/** Whether a title matches the name (all of it, or its start when abbreviated); a hole matches any text. */
function matches(title: Piece[], name: string, abbreviated: boolean): boolean {
  const atoms = title.flatMap((piece): Piece[] => (piece === HOLE ? [HOLE] : [...piece]));
  const close = (states: Set<number>): Set<number> => {
    for (const state of states) if (atoms[state] === HOLE) states.add(state + 1);
    return states;
  };
  let states = close(new Set([0]));
  for (const char of name) {
    const next = new Set<number>();
    for (const state of states) {
      if (atoms[state] === HOLE) next.add(state);
      else if (atoms[state] === char) next.add(state + 1);
    }
    states = close(next);
  }
  return abbreviated ? states.size > 0 : states.has(atoms.length);
}

const doc = readFileSync(join(ROOT, DOC), 'utf8');
const rows = rowsOf(doc);
const tests = rows.flatMap((row) => row.tests);

describe(DOC, () => {
  it('names a test file in every row of both halves, and a test in every row of the reliability suite', () => {
    expect(rows.filter((row) => row.half === 'suite').length).toBeGreaterThanOrEqual(5);
    expect(rows.filter((row) => row.half === 'elsewhere').length).toBeGreaterThanOrEqual(20);
    expect(rows.filter((row) => row.files.length === 0 || (row.half === 'suite' && row.tests.length === 0)).map((row) => row.text)).toEqual(
      [],
    );
    expect(tests.filter((test) => !isTestFile(test.file)).map((test) => `${test.title} in ${test.row}`)).toEqual([]);
  });

  it('names only files and directories that exist', () => {
    const paths = [...new Set([...backticked(doc), ...rows.flatMap((row) => row.files)])].filter((span) =>
      /^(test|local|lib|functions|docs|admin|bin)\/[\w./-]+$/.test(span),
    );
    expect(paths.length).toBeGreaterThan(20);
    expect(paths.filter((path) => !existsSync(join(ROOT, path)))).toEqual([]);
  });

  it('names only tests that run under that exact title in that file (the start of the title where the doc writes "...")', () => {
    const titles = new Map<string, Piece[][]>();
    const titlesOf = (file: string) => titles.get(file) ?? titles.set(file, existsSync(join(ROOT, file)) ? titlesIn(file) : []).get(file)!;
    const missing = tests.filter((test) => !titlesOf(test.file).some((title) => matches(title, test.title, test.abbreviated)));
    expect(missing.map((test) => `${test.file}: ${test.title}${test.abbreviated ? ' ...' : ''}`)).toEqual([]);
  });
});

/** The numbers of the first match of a pattern in a text, whatever the line breaks. */
function quoted(text: string, pattern: RegExp): number[] {
  const match = pattern.exec(text.replace(/\s+/g, ' '));
  if (!match) throw new Error(`no ${pattern} in the text`);
  return match.slice(1).map(Number);
}

describe(`the numbers ${DOC} quotes`, () => {
  const source = (file: string) => readFileSync(join(ROOT, SUITE, file), 'utf8');

  it("are the manifest's: the aggregation queue's visibility timeout and the aggregator's lease margin", () => {
    expect(quoted(doc, /\((\d+) s in the manifest\)/)).toEqual([queues.aggregation.visibilityTimeoutSeconds]);
    const [margin] = quoted(doc, /lease \(its timeout plus (\d+) s\)/);
    expect(leaseMsFor(60) - 60_000).toBe(margin! * 1000);
  });

  it("are the reliability tests': the load test's visibility timeout, and the fault test's timeout, lease and visibility timeout, the lease the shorter", () => {
    expect(quoted(doc, /visibility timeout is set to (\d+) s in this test/)).toEqual(
      quoted(source('load.test.ts'), /VisibilityTimeout: '(\d+)'/),
    );
    const [timeout, lease, visibility] = quoted(doc, /\((\d+) s timeout, so a (\d+) s lease, under a (\d+) s visibility timeout\)/) as [
      number,
      number,
      number,
    ];
    const faults = source('faults.test.ts');
    expect([timeout, visibility]).toEqual([
      ...quoted(faults, /\.timeoutSeconds = (\d+);/),
      ...quoted(faults, /VISIBILITY_SECONDS = (\d+);/),
    ]);
    expect(leaseMsFor(timeout)).toBe(lease * 1000);
    expect(lease).toBeLessThan(visibility);
  });
});

describe('the title matching the doc test relies on', () => {
  const HEAD_OPTIONS = expandEach(
    ['answers %s on every route'],
    ts.factory.createArrayLiteralExpression([ts.factory.createStringLiteral('HEAD'), ts.factory.createStringLiteral('OPTIONS')]),
  );

  it('matches a title exactly, or by its start when abbreviated, and no other', () => {
    expect(matches(['stops within 2 s of Ctrl-C'], 'stops within 2 s of Ctrl-C', false)).toBe(true);
    expect(matches(['stops within 2 s of Ctrl-C'], 'stops within 2 s', false)).toBe(false);
    expect(matches(['stops within 2 s of Ctrl-C'], 'stops within 2 s', true)).toBe(true);
    expect(matches(['stops within 2 s of Ctrl-C'], 'stops within 3 s', true)).toBe(false);
    expect(matches(['stops within 2 s of Ctrl-C'], 'stops within 2 s of Ctrl-C and more', true)).toBe(false);
  });

  it('puts the literal rows of it.each into its title, and leaves a hole for anything else', () => {
    expect(HEAD_OPTIONS).toEqual([
      ['answers ', 'HEAD', ' on every route'],
      ['answers ', 'OPTIONS', ' on every route'],
    ]);
    expect(HEAD_OPTIONS.some((title) => matches(title, 'answers OPTIONS', true))).toBe(true);
    expect(HEAD_OPTIONS.some((title) => matches(title, 'answers PUT on every route', false))).toBe(false);
    const unknown = expandEach(['%s sees its own variables'], ts.factory.createIdentifier('specs'));
    expect(unknown.some((title) => matches(title, 'ingest sees its own variables', false))).toBe(true);
    expect(unknown.some((title) => matches(title, 'ingest sees every variable', false))).toBe(false);
  });
});
