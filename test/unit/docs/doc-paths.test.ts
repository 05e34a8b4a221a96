import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The documents point only at what is in the repository: every path they name in backticks under
 * one of the repository's folders, and every relative link, exists; none cites a document outside
 * it. And README's TypeScript example is the program that runs (client/example.ts), word for word.
 */

const ROOT = resolve(__dirname, '../../..');
const FOLDERS = ['.ci', 'admin', 'bench', 'bin', 'client', 'console', 'docs', 'functions', 'lib', 'local', 'sim', 'test'];

function documents(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.md'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
  return ['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md', ...docs].filter((file) => existsSync(join(ROOT, file)));
}

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** `functions/x.ts`, `docs/y.md#z`, `lib/`: a path under a repository folder, without globs or placeholders. */
function namedPaths(text: string): string[] {
  return [...text.matchAll(/`([^`\s]+)`/g)]
    .map((match) => (match[1] ?? '').split('#')[0]?.replace(/[.,:;)]+$/, '') ?? '')
    .filter((path) => FOLDERS.some((folder) => path.startsWith(`${folder}/`)) && !/[*{}<>$]/.test(path));
}

/** Relative Markdown links, resolved against the linking file. */
function links(file: string, text: string): string[] {
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => match[1] ?? '')
    .filter((target) => !/^(https?:|mailto:|#)/.test(target))
    .map((target) => relative(ROOT, resolve(ROOT, dirname(file), target.split('#')[0] ?? '')));
}

describe('the documents', () => {
  const files = documents();

  it('finds what it checks', () => {
    expect(files.length).toBeGreaterThan(20);
    expect(namedPaths(read('README.md'))).toContain('lib/manifest.ts');
    expect(links('docs/ios.md', '[x](../lib/manifest.ts)')).toEqual(['lib/manifest.ts']);
  });

  it('name only paths that exist in the repository', () => {
    // CHANGELOG.md records history: a path it names may since have moved, so it is held to links only.
    const missing = files.flatMap((file) =>
      [...(file === 'CHANGELOG.md' ? [] : namedPaths(read(file))), ...links(file, read(file))]
        .filter((path) => path.startsWith('..') || !existsSync(join(ROOT, path)))
        .map((path) => `${file}: ${path}`),
    );
    expect(missing).toEqual([]);
  });

  it('cite no document outside the repository', () => {
    const outside = files.flatMap((file) =>
      read(file)
        .split('\n')
        .filter((line) => /\bDESIGN\b|\.\.\/shared\b|\/work\//.test(line))
        .map((line) => `${file}: ${line.trim()}`),
    );
    expect(outside).toEqual([]);
  });

  it("show client/example.ts in README's TypeScript example, as it runs", () => {
    const block = /```ts\n([\s\S]*?)```/.exec(read('README.md'))?.[1];
    expect(block).toBe(read('client/example.ts'));
  });
});
