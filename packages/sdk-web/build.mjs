// Builds the web SDK: dist/esm and dist/cjs (the package, its dependencies left to the app's
// bundler, with types) and dist/attribution.js, the one-file script-tag build with everything in
// it, minified, at most 10 KB gzipped (`npm run bench` prints sdk_web_gzip_bytes).
import { execFileSync } from 'node:child_process';
import { cpSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const at = (path) => join(here, path);
// The core's and the web SDK's private members, named only inside the script-tag bundle (mangled
// there to short names, which keeps it inside its budget): no JSON, storage key, API or dependency uses them.
const PRIVATE_MEMBERS =
  /^(serial|measuring|sendSoon|withEvent|startSession|scheduleInterval|nextBatch|attempt|settle|scheduleRetry|cancelRetry|cancelInterval|firstLaunch|mergeQueued|mergeTimer|startLeading|stopLeading|readLanding|onVisibility|onHide|hiding|leadership|merging|retryAt|failures|sending|choices|choose|settings|chain|background|generation|sequence)$/;
const common = { bundle: true, target: 'es2020', platform: 'browser', logLevel: 'warning' };

// --script-tag-only: dist/attribution.js alone, for the browser test and the bench (no core build needed).
if (process.argv.includes('--script-tag-only')) {
  await build({ ...common, ...scriptTag() });
  process.exit(0);
}
rmSync(at('dist'), { recursive: true, force: true });
const external = ['@attribution/sdk-core', 'idb-keyval'];
await build({ ...common, entryPoints: [at('src/index.ts')], format: 'esm', external, outfile: at('dist/esm/index.js') });
await build({ ...common, entryPoints: [at('src/index.ts')], format: 'cjs', external, outfile: at('dist/cjs/index.js') });
writeFileSync(at('dist/cjs/package.json'), JSON.stringify({ type: 'commonjs' }));
await build({ ...common, ...scriptTag() });
execFileSync(process.execPath, [at('../../node_modules/typescript/bin/tsc'), '-p', at('tsconfig.build.json')], { stdio: 'inherit' });
cpSync(at('dist/esm'), at('dist/cjs'), { recursive: true, filter: (path) => !path.endsWith('.js') });

/** The script-tag build's options: the core from its source, and no gzip (src/script-tag.ts says why). */
export function scriptTag() {
  return {
    entryPoints: [at('src/script-tag.ts')],
    format: 'iife',
    globalName: 'Attribution',
    // ES2022 (Chrome 94, Firefox 93, Safari 15, all from 2021): class fields and `??=` as written,
    // without ES2020's helpers, which keeps the build inside its 10 KB (docs/sdk.md).
    target: 'es2022',
    minify: true,
    mangleProps: PRIVATE_MEMBERS,
    alias: { '@attribution/sdk-core': at('../sdk-core/src/index.ts'), fflate: at('src/no-gzip.ts') },
    outfile: at('dist/attribution.js'),
  };
}
