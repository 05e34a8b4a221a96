import { parquetReadObjects } from 'hyparquet';
import { parquetWriteBuffer } from 'hyparquet-writer';
import type { ExportRow, ExportValue } from './export-rows';
import { RAW_TABLES, type RawColumnType, type RawTableName } from './tables';

/**
 * A table's rows as one Parquet file and back (docs/raw-data.md#warehouse-exports). Columns in
 * RAW_TABLES order, every one OPTIONAL, with the physical type Glue/Athena and DuckDB read as the
 * column's type: string UTF8 BYTE_ARRAY, bigint INT64, double DOUBLE, boolean BOOLEAN. Snappy
 * pages (hyparquet-writer's default, which both engines read). The same rows always make the
 * same bytes, so an hour exported again is the same file.
 */

const PARQUET_TYPE: Readonly<Record<RawColumnType, 'STRING' | 'INT64' | 'DOUBLE' | 'BOOLEAN'>> = {
  string: 'STRING',
  bigint: 'INT64',
  double: 'DOUBLE',
  boolean: 'BOOLEAN',
};

/** Says which file wrote the data, for whoever finds one in a bucket. */
const CREATED_BY = 'attribution export (functions/domain/raw-data/export-parquet.ts)';

export function encodeTable(table: RawTableName, rows: readonly ExportRow[]): Uint8Array {
  const columnData = RAW_TABLES[table].columns.map((column) => ({
    name: column.name,
    type: PARQUET_TYPE[column.type],
    nullable: true,
    data: rows.map((row) => {
      const value = row[column.name] ?? null;
      return column.type === 'bigint' && value !== null ? BigInt(value as number) : value;
    }),
  }));
  return new Uint8Array(parquetWriteBuffer({ columnData, createdBy: CREATED_BY }));
}

/** The rows of an export file, INT64 read back as numbers (every exported integer is a safe one). */
export async function decodeTable(bytes: Uint8Array): Promise<ExportRow[]> {
  const file = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
  const rows = (await parquetReadObjects({ file })) as Record<string, unknown>[];
  return rows.map((row) =>
    Object.fromEntries(
      Object.entries(row).map(([name, value]) => [name, (typeof value === 'bigint' ? Number(value) : value) as ExportValue]),
    ),
  );
}
