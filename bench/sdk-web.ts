import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import type { Report } from './support';

const ROOT = path.resolve(__dirname, '..');
/** Issue 38: the script-tag build at most 10 KB gzipped, read as 10,000 bytes. */
export const SDK_WEB_GZIP_BUDGET_BYTES = 10_000;

/**
 * The web SDK's one-file script-tag build (packages/sdk-web/build.mjs), gzipped at level 9 as a
 * CDN serves it: what a page downloads. The run fails past the budget, so a change that grows it
 * is seen before it ships.
 */
export function sdkWebFigures(report: Report): void {
  execFileSync(process.execPath, [path.join(ROOT, 'packages/sdk-web/build.mjs'), '--script-tag-only'], { stdio: 'inherit' });
  const script = readFileSync(path.join(ROOT, 'packages/sdk-web/dist/attribution.js'));
  const bytes = gzipSync(script, { level: 9 }).length;
  report(
    'web SDK, script-tag build gzipped (bytes)',
    `${bytes.toLocaleString('en-US')} (${script.length.toLocaleString('en-US')} minified)`,
    {
      sdk_web_gzip_bytes: bytes,
    },
  );
  if (bytes > SDK_WEB_GZIP_BUDGET_BYTES)
    throw new Error(`the web SDK's script-tag build is ${bytes} bytes gzipped, over its ${SDK_WEB_GZIP_BUDGET_BYTES}`);
}
