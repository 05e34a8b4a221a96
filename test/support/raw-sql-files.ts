// Export files made by hand for the SQL tests: rows of the raw tables written with the export's
// own Parquet codec (encodeTable) under the export's own keys (exportFileKey), in a folder laid
// out as the export bucket is, which is what DuckDbTables.load reads.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { exportFileKey, hourOf } from '../../functions/domain/raw-data/export-layout';
import { encodeTable } from '../../functions/domain/raw-data/export-parquet';
import type { ExportRow } from '../../functions/domain/raw-data/export-rows';
import type { RawTableName } from '../../functions/domain/raw-data/tables';

/** A row of a table, with the app and the receive time whose hour is its partition. */
export interface PlacedRow {
  readonly table: RawTableName;
  readonly appId: string;
  readonly receivedMs: number;
  readonly row: ExportRow;
}

/** Writes the rows, one file per table, app and receive hour, into `dir`. */
export function writeExportFiles(dir: string, rows: readonly PlacedRow[]): void {
  const files = new Map<string, { table: RawTableName; rows: ExportRow[] }>();
  for (const placed of rows) {
    const key = exportFileKey(placed.table, placed.appId, hourOf(placed.receivedMs));
    const file = files.get(key) ?? { table: placed.table, rows: [] };
    file.rows.push(placed.row);
    files.set(key, file);
  }
  for (const [key, file] of files) {
    const path = join(dir, ...key.split('/'));
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, encodeTable(file.table, file.rows));
  }
}

/** A fresh folder for one test's files, removed by the returned function. */
export function exportFolder(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'raw-sql-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
