// Builds the React Native SDK: dist/esm (for Metro and bundlers) and dist/cjs (for `require`, and
// for Expo's prebuild, which loads the config plugin through app.plugin.js), file by file with
// esbuild (the app's bundler takes the dependencies), and the declarations with tsc.
import { execFileSync } from 'node:child_process';
import { cpSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const at = (path) => join(here, path);
const entryPoints = readdirSync(at('src'), { recursive: true })
  .filter((file) => file.endsWith('.ts'))
  .map((file) => at(join('src', file)));

rmSync(at('dist'), { recursive: true, force: true });
for (const format of ['esm', 'cjs']) {
  await build({
    entryPoints,
    outdir: at(`dist/${format}`),
    outbase: at('src'),
    format,
    platform: 'neutral',
    target: 'es2020',
    logLevel: 'warning',
  });
}
writeFileSync(at('dist/esm/package.json'), JSON.stringify({ type: 'module' }));
writeFileSync(at('dist/cjs/package.json'), JSON.stringify({ type: 'commonjs' }));
execFileSync(process.execPath, [at('../../node_modules/typescript/bin/tsc'), '-p', at('tsconfig.build.json')], { stdio: 'inherit' });
cpSync(at('dist/esm'), at('dist/cjs'), { recursive: true, filter: (path) => !path.endsWith('.js') && !path.endsWith('package.json') });
