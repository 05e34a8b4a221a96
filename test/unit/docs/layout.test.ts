import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

/**
 * The layout docs/architecture.md describes, held as imports: the domain (rules) reaches no AWS
 * SDK, adapter, handler or shared edge code; adapters reach no handler; nothing that is deployed
 * reaches the local runtime or the tests. lib/manifest.ts is plain data (names, limits, routes)
 * that both worlds read, and lib/function-constants.ts the part of it handlers take at run time
 * (test/stack/bundled-functions.test.ts keeps the manifest itself out of every bundle), so
 * anything may import either.
 */
const MANIFEST = new Set(['lib/manifest', 'lib/function-constants']);
const ROOT = resolve(__dirname, '../../..');

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => relative(ROOT, join(entry.parentPath, entry.name)));
}

/** Every module a file imports (static imports, re-exports and require), resolved against the repository when relative. */
function importsOf(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:^|\n)\s*(?:import|export)[^'";]*?from\s+'([^']+)'|require\('([^']+)'\)/g)].map(
    (match) => match[1] ?? match[2] ?? '',
  );
  return specifiers.map((specifier) => (specifier.startsWith('.') ? relative(ROOT, resolve(ROOT, dirname(file), specifier)) : specifier));
}

const violations = (files: readonly string[], forbidden: (target: string) => boolean) =>
  files.flatMap((file) =>
    importsOf(file)
      .filter(forbidden)
      .map((target) => `${file} imports ${target}`),
  );

describe('the layout', () => {
  const domain = sourceFiles('functions/domain');
  const adapters = sourceFiles('functions/adapters');
  const deployed = sourceFiles('functions');
  const handlers = readdirSync(join(ROOT, 'functions')).filter((name) => name.endsWith('.ts'));

  it('finds the files it checks', () => {
    expect(domain.length).toBeGreaterThan(50);
    expect(adapters.length).toBeGreaterThan(20);
    expect(handlers.length).toBeGreaterThan(10);
    expect(importsOf('functions/domain/aggregation/rebuild.ts')).toContain('functions/domain/aggregation/aggregate');
  });

  it('keeps the domain free of AWS, adapters, handlers and the shared edge code', () => {
    // Pure libraries with no I/O: address parsing, bot and user-agent rules, and the Parquet codec
    // (the export's files are bytes, as the audit object's gzip is: functions/domain/raw-data/export-parquet.ts),
    // and the XML parser the ECB's reference rates are read with (functions/domain/fx/ecb.ts).
    const allowedPackages = new Set([
      'ipaddr.js',
      'isbot',
      'ua-parser-js',
      'hyparquet',
      'hyparquet-writer',
      'fast-xml-parser',
      '@iabtechlabtcf/core',
    ]);
    expect(
      violations(domain, (target) =>
        target.startsWith('functions/')
          ? !target.startsWith('functions/domain/')
          : !MANIFEST.has(target) && !target.startsWith('node:') && !allowedPackages.has(target),
      ),
    ).toEqual([]);
  });

  it('keeps adapters from reaching the handlers', () => {
    const handlerModules = new Set(handlers.map((name) => `functions/${name.replace(/\.ts$/, '')}`));
    expect(violations(adapters, (target) => handlerModules.has(target))).toEqual([]);
  });

  it('keeps what is deployed from reaching the local runtime, the tests, the admin CLI or the CDK app', () => {
    expect(
      violations(deployed, (target) => !MANIFEST.has(target) && /^(local|test|admin|bin|lib|console|sim|bench)\//.test(target)),
    ).toEqual([]);
  });

  it('has the rooms the architecture names, one name for each', () => {
    const rooms = readdirSync(join(ROOT, 'functions/domain'));
    expect(rooms).toEqual(
      expect.arrayContaining(['attribution', 'aggregation', 'audit', 'partner-postbacks', 'skan', 'ingest', 'privacy']),
    );
    expect(rooms).not.toContain('postbacks');
  });
});
