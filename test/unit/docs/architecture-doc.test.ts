import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { type FunctionSpec, functions } from '../../../lib/manifest';

/**
 * docs/architecture.md's table of routes and triggers ("The shape") against the manifest: every
 * route is in a row, and every function is named by its handler file, so neither a new endpoint
 * nor a new consumer or schedule leaves the map behind. It says nothing is "not built yet".
 */

const doc = readFileSync(join(__dirname, '..', '..', '..', 'docs', 'architecture.md'), 'utf8');

/** `GET /api/v1/reports/{a,b}` names both routes; `{link_id}` is a path parameter, kept. */
const expand = (route: string): string[] => {
  const braces = /\{([^}]*,[^}]*)\}/.exec(route);
  return braces ? (braces[1] ?? '').split(',').flatMap((part) => expand(route.replace(braces[0], part))) : [route];
};

const rows = doc
  .slice(doc.indexOf('| Route or trigger |'))
  .split('\n')
  .slice(2)
  .filter((line, i, lines) => line.startsWith('|') && lines.slice(0, i).every((earlier) => earlier.startsWith('|')));
const cells = rows.map((row) => row.split('|').slice(1, 3));
const routes = cells.flatMap(([first]) => [...(first ?? '').matchAll(/`([^`]+)`/g)].flatMap((match) => expand(match[1] ?? '')));
const handlers = cells.flatMap(([, second]) => [...(second ?? '').matchAll(/`([^`]+)`/g)].map((match) => match[1] ?? ''));

describe('docs/architecture.md', () => {
  const specs = Object.values(functions as Record<string, FunctionSpec>);

  it('names every route of the manifest in its table of routes and triggers', () => {
    expect(rows.length).toBeGreaterThan(10);
    expect([...new Set(routes)].sort()).toEqual(specs.flatMap((spec) => spec.routes ?? []).sort());
  });

  it('names every function by its handler file', () => {
    const named = (file: string) =>
      handlers.some((handler) => new RegExp(`^${handler.replace('.', '\\.').replace('*', '.*')}$`).test(file));
    expect(specs.map((spec) => basename(spec.entry)).filter((file) => !named(file))).toEqual([]);
  });

  it('lists nothing as not built yet', () => {
    expect(doc).not.toMatch(/not built yet/i);
  });
});
