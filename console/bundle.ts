import { join } from 'node:path';
import { type BuildOptions, type BuildResult, build, buildSync } from 'esbuild';

export interface ConsoleBundle {
  readonly js: string;
  readonly css: string;
}

const OPTIONS = {
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
} as const satisfies BuildOptions;

/**
 * The browser side, bundled in memory by the project's esbuild when the console starts: one
 * script and one stylesheet, served from the console itself (nothing from a CDN).
 */
export async function bundleConsole(): Promise<ConsoleBundle> {
  return filesOf(await build(OPTIONS));
}

/** The same bundle, made while the CDK app synthesizes (constructs are built synchronously): the deployed console's files. */
export function bundleConsoleSync(): ConsoleBundle {
  return filesOf(buildSync(OPTIONS));
}

function filesOf(result: BuildResult<typeof OPTIONS>): ConsoleBundle {
  const text = (extension: string) => result.outputFiles.find((file) => file.path.endsWith(extension))?.text ?? '';
  return { js: text('.js'), css: text('.css') };
}
