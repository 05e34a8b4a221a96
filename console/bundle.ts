import { join } from 'node:path';
import { build } from 'esbuild';

export interface ConsoleBundle {
  readonly js: string;
  readonly css: string;
}

/**
 * The browser side, bundled in memory by the project's esbuild when the console starts: one
 * script and one stylesheet, served from the console itself (nothing from a CDN).
 */
export async function bundleConsole(): Promise<ConsoleBundle> {
  const result = await build({
    entryPoints: { console: join(__dirname, 'ui', 'main.ts') },
    bundle: true,
    write: false,
    outdir: 'out',
    format: 'iife',
    platform: 'browser',
    target: ['chrome120', 'firefox120', 'safari17'],
    minify: true,
    legalComments: 'none',
    logLevel: 'silent',
  });
  const text = (extension: string) => result.outputFiles.find((file) => file.path.endsWith(extension))?.text ?? '';
  return { js: text('.js'), css: text('.css') };
}
