import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { build } from 'esbuild';
import { esbuildOptionsOf } from './bundles';
import { INGEST_CPU_BATCH, type IngestCpuRun, median, type SideBySide } from './ingest-cpu-measure';
import { QUICK, type Report, sized } from './support';

/**
 * The ingest CPU figures (bench/ingest-cpu-measure.ts says what is timed): the ceiling, the
 * project and their ratio for a 100-event batch, the validation bench's (`ingest_cpu_ratio`, the
 * goal's) and an SDK's (`ingest_cpu_ratio_sdk`).
 *
 * Measured on the code as Lambda runs it: the measurement is bundled with the stack's own
 * options (BUNDLING: minified CommonJS for node22, what bench/bundles.ts builds), not run through
 * tsx, whose module wrappers put a getter in front of every imported function; and in PROCESSES
 * fresh node processes one after another, the median of each figure reported, since one process
 * can settle into a faster or slower compilation of the same code (docs/benchmarks.md, "Timing
 * the ratio pair by pair").
 */
export const INGEST_CPU_RATIO_GOAL = 0.7;
const PROCESSES = sized(5, 1);

export async function ingestCpuFigures(report: Report): Promise<void> {
  const out = mkdtempSync(path.join(tmpdir(), 'attribution-ingest-cpu-'));
  try {
    const outfile = path.join(out, 'index.js');
    await build({ ...esbuildOptionsOf(path.join(__dirname, 'ingest-cpu-child.ts'), outfile), metafile: false });
    const runs: IngestCpuRun[] = [];
    for (let i = 0; i < PROCESSES; i++) {
      const stdout = execFileSync(process.execPath, [outfile, ...(QUICK ? ['--quick'] : [])], { encoding: 'utf8' });
      runs.push(JSON.parse(stdout) as IngestCpuRun);
    }
    for (const [suffix, what, side] of [
      ['', 'the validation batch', 'validation'],
      ['_sdk', "an SDK's batch", 'sdk'],
    ] as const) {
      const of = (figure: keyof SideBySide) => median(runs.map((run) => run[side][figure]));
      const ceilingUs = Number(of('ceilingUs').toFixed(1));
      const projectUs = Number(of('projectUs').toFixed(1));
      const ratio = Number(of('ratio').toFixed(2));
      const label = `${INGEST_CPU_BATCH}-event batch CPU, ${what}`;
      report(`${label}, ceiling: HMAC + gunzip + JSON.parse + gzip 1 (µs)`, ceilingUs.toFixed(1), {
        [`ingest_cpu_ceiling_us${suffix}`]: ceilingUs,
      });
      report(`${label}, project: signature..audit object (µs)`, projectUs.toFixed(1), { [`ingest_cpu_project_us${suffix}`]: projectUs });
      report(`${label}: ratio, ceiling / project (goal >= ${INGEST_CPU_RATIO_GOAL})`, ratio.toFixed(2), {
        [`ingest_cpu_ratio${suffix}`]: ratio,
      });
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}
