import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { exportApps, exportPorts } from '../functions/adapters/export-store';
import { LedgerLaneReader } from '../functions/adapters/stream-reader';
import { appByKey } from '../functions/commands/apps';
import { defineCommand } from '../functions/commands/command';
import { key } from '../functions/commands/flags';
import { type ExportApp, type ExportSummary, runExport } from '../functions/domain/raw-data/export';
import { isExportHour } from '../functions/domain/raw-data/export-layout';
import { type LaneOpening, STREAM_SETTLE_MS, watermarkOf } from '../functions/domain/raw-data/watermark';
import { clickTables } from '../functions/shared/click-tables';
import { resourceName } from '../functions/shared/config';

/**
 * How long `export run` waits for the stream to be final up to the moment it was started: the
 * settle time, plus an apply that is open then (the aggregator's invocations last seconds). An
 * apply left open longer (a crashed invocation, replayed after its lease) is not waited for:
 * the run exports what is final and says how far (watermark_ms); the next run takes the rest.
 */
const WAIT_FOR_STREAM_MS = STREAM_SETTLE_MS + 30_000;

export const exportCommands = [
  defineCommand({
    name: 'export run',
    usage:
      'export run [--app-key K] [--hour YYYY-MM-DDTHH]   (the warehouse export now, as the hourly schedule runs it:\n' +
      '                                                 without --hour every hour with data not exported yet, the\n' +
      '                                                 current one included; with --hour that UTC hour again. Without\n' +
      '                                                 --app-key every app and the SKAN postbacks. Waits about 10 s for\n' +
      "                                                 the event stream to be final up to now; prints each table's files and rows)",
    flags: z.object({
      'app-key': key.optional(),
      hour: z.string().refine(isExportHour, '--hour must be a UTC hour, YYYY-MM-DDTHH').optional(),
    }),
    async execute(f) {
      const startedMs = Date.now();
      const apps: ExportApp[] = f['app-key'] ? [await appByKey(f['app-key'])] : await exportApps(resourceName.table('tenants'));
      const { lanes, readMs } = await finalUpTo(new LedgerLaneReader(resourceName.table('ledger')), apps, startedMs);
      const summary: ExportSummary = await runExport(
        exportPorts({
          exportBucket: resourceName.exportBucket(),
          auditBucket: resourceName.bucket(),
          clickTables: clickTables(),
        }),
        // The watermark's "now" is when the lanes were read, never later.
        { apps, lanes, nowMs: readMs, skan: !f['app-key'], ...(f.hour ? { hour: f.hour } : {}) },
      );
      // An app's failure is in the answer (the run went on with the others), as a message: an Error prints as {}.
      const failed = summary.failed.map(({ app_id, error }) => ({ app_id, error: error instanceof Error ? error.message : String(error) }));
      return { ...(f['app-key'] ? { app_id: apps[0]?.app_id } : {}), ...summary, failed };
    },
  }),
];

/** The lanes (and when they were read) once every app's watermark has passed `startedMs`, or the last read after WAIT_FOR_STREAM_MS. */
async function finalUpTo(
  ledger: LedgerLaneReader,
  apps: readonly ExportApp[],
  startedMs: number,
): Promise<{ lanes: readonly LaneOpening[]; readMs: number }> {
  for (;;) {
    const readMs = Date.now();
    const lanes = await ledger.lanes();
    const behind = apps.some((app) => watermarkOf(lanes, readMs, app.app_id) < startedMs);
    if (!behind || readMs - startedMs >= WAIT_FOR_STREAM_MS) return { lanes, readMs };
    await sleep(500);
  }
}
