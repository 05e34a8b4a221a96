import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * .ci/node-subset.txt, the integration files `.ci/run` also runs on the machine's Node
 * (CONTRIBUTING.md, "The CI budget"): a name that no longer exists would silently drop a test
 * from that run, so every line must name an integration test file, once.
 */
const ROOT = resolve(__dirname, '../../..');
const listed = readFileSync(join(ROOT, '.ci/node-subset.txt'), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line !== '' && !line.startsWith('#'));

describe('the Node subset of CI', () => {
  it('names integration test files that exist, each once', () => {
    expect(listed.length).toBeGreaterThan(0);
    expect(listed.filter((path) => !/^test\/integration\/[\w/-]+\.test\.ts$/.test(path) || !existsSync(join(ROOT, path)))).toEqual([]);
    expect(new Set(listed).size).toBe(listed.length);
  });

  it('runs `npm start` on the machine’s Node, the Node a user runs it on', () => {
    expect(listed).toContain('test/integration/npm-start.test.ts');
  });
});
