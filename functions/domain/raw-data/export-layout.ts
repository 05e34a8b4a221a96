import type { RawTableName } from './tables';

/**
 * Where the export puts things in the export bucket (docs/raw-data.md#warehouse-exports): one
 * Parquet file per table, app and UTC receive hour under Hive-style partition folders, and one
 * small checkpoint object per app.
 */

export const HOUR_MS = 3_600_000;

/** An hour as the export names it: `YYYY-MM-DDTHH`, UTC. */
export type ExportHour = string;

export const EXPORT_HOUR_PATTERN = /^\d{4}-\d{2}-\d{2}T\d{2}$/;

/** The UTC hour of an epoch-ms instant. */
export const hourOf = (ms: number): ExportHour => new Date(ms).toISOString().slice(0, 13);

/** The first millisecond of an hour. */
export const hourStartMs = (hour: ExportHour): number => Date.parse(`${hour}:00:00.000Z`);

/** A `YYYY-MM-DDTHH` that names a real UTC hour (2024-02-30T10 does not). */
export const isExportHour = (value: string): boolean =>
  EXPORT_HOUR_PATTERN.test(value) && !Number.isNaN(hourStartMs(value)) && hourOf(hourStartMs(value)) === value;

/** Every hour from the one holding fromMs to the one holding toMs, both included, in order (none when toMs is before fromMs). */
export function hoursFrom(fromMs: number, toMs: number): ExportHour[] {
  const hours: ExportHour[] = [];
  if (toMs < fromMs) return hours;
  for (let start = hourStartMs(hourOf(fromMs)); start <= toMs; start += HOUR_MS) hours.push(hourOf(start));
  return hours;
}

/** The one file of a partition: `<table>/app_id=<app>/dt=<YYYY-MM-DD>/hour=<HH>/part-00000.parquet`. */
export function exportFileKey(table: RawTableName, appId: string, hour: ExportHour): string {
  return `${table}/app_id=${appId}/dt=${hour.slice(0, 10)}/hour=${hour.slice(11, 13)}/part-00000.parquet`;
}

/** The prefix of the export's checkpoints, kept out of every table's prefix. */
export const CHECKPOINT_PREFIX = '_export/';

/** An app's checkpoint: how far its last run read the stream and the clicks (skan_postbacks: `_unmatched`). */
export const checkpointKey = (appId: string): string => `${CHECKPOINT_PREFIX}${appId}.json`;
