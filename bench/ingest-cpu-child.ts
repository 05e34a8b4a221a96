import { measureIngestCpu } from './ingest-cpu-measure';

/**
 * The entry bench/ingest-cpu.ts bundles as the stack bundles a handler and runs in a fresh node:
 * the figures of one process, as JSON on stdout.
 */
void measureIngestCpu(process.argv.includes('--quick')).then((figures) => {
  process.stdout.write(JSON.stringify(figures));
});
