import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { parquetMetadata } from 'hyparquet';
import { MemoryExportWorld } from '../../../functions/adapters/memory/export-stores';
import { runExport } from '../../../functions/domain/raw-data/export';
import { HOUR_MS } from '../../../functions/domain/raw-data/export-layout';
import { decodeTable, encodeTable } from '../../../functions/domain/raw-data/export-parquet';
import { type ExportRow, eventRow, installRow } from '../../../functions/domain/raw-data/export-rows';
import { streamName } from '../../../functions/domain/raw-data/stream-objects';
import { RAW_TABLES } from '../../../functions/domain/raw-data/tables';
import { APP, click, ORGANIC, streamLine } from './export-fixtures';

const H0 = Date.UTC(2026, 2, 10, 9);

describe('the export’s Parquet files', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'export-parquet-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('reads back with hyparquet as the rows written, nulls included, in RAW_TABLES’ column order and types', async () => {
    const rows = [
      eventRow(streamLine('e1', H0, { revenue: 2.25, properties: { level: 3, name: 'ü' } })),
      eventRow(streamLine('e2', H0 + 1, { counted: 'held' })),
    ];
    const bytes = encodeTable('events', rows);
    expect(await decodeTable(bytes)).toEqual(rows);
    const schema = parquetMetadata(bytes.buffer.slice(0) as ArrayBuffer).schema.slice(1);
    expect(schema.map((element) => [element.name, element.type, element.repetition_type])).toEqual(
      RAW_TABLES.events.columns.map((column) => [
        column.name,
        { string: 'BYTE_ARRAY', bigint: 'INT64', double: 'DOUBLE', boolean: 'BOOLEAN' }[column.type],
        'OPTIONAL',
      ]),
    );
  });

  it('makes the same bytes from the same rows', () => {
    const rows = [installRow(streamLine('i1', H0, { name: 'install', decision: ORGANIC })) as ExportRow];
    expect(Buffer.from(encodeTable('installs', rows)).equals(Buffer.from(encodeTable('installs', rows)))).toBe(true);
  });

  it('reads back with DuckDB (read_parquet, hive_partitioning) as the same rows, with app_id, dt and hour from the path', async () => {
    const world = new MemoryExportWorld();
    world.putStream(APP, streamName({ openedMs: H0 + 5_000, lane: 0, seq: 1 }), [
      streamLine('i1', H0 + 1_000, { name: 'install' }),
      streamLine('e1', H0 + 2_000, { revenue: 0.99 }),
      streamLine('e2', H0 + 3_000, { counted: 'held', properties: { k: 'v' } }),
    ]);
    world.clicks.push(click('Ck1', H0 + 500));
    await runExport(world.ports(), { apps: [{ app_id: APP, created_ms: H0 }], lanes: [], nowMs: H0 + HOUR_MS / 2, skan: false });
    for (const [key, bytes] of world.files) {
      mkdirSync(dirname(join(dir, key)), { recursive: true });
      writeFileSync(join(dir, key), bytes);
    }

    const duckdb = await (await DuckDBInstance.create(':memory:')).connect();
    for (const table of ['events', 'installs', 'clicks'] as const) {
      const [key, bytes] = [...world.files].find(([name]) => name.startsWith(`${table}/`)) ?? [];
      if (!key || !bytes) throw new Error(`no ${table} file`);
      const read = await duckdb.runAndReadAll(
        `SELECT * FROM read_parquet('${join(dir, table)}/*/*/*/*.parquet', hive_partitioning = true, hive_types_autocast = false)`,
      );
      const fromDuckDb = read
        .getRowObjectsJS()
        .map((row) =>
          Object.fromEntries(Object.entries(row).map(([name, value]) => [name, typeof value === 'bigint' ? Number(value) : value])),
        );
      const fromHyparquet = (await decodeTable(bytes)).map((row) => ({ ...row, app_id: APP, dt: '2026-03-10', hour: '09' }));
      expect(fromDuckDb).toEqual(fromHyparquet);
      expect(read.columnNames()).toEqual([...RAW_TABLES[table].columns.map((column) => column.name), 'app_id', 'dt', 'hour']);
      expect(read.columnTypes().map(String).slice(0, RAW_TABLES[table].columns.length)).toEqual(
        RAW_TABLES[table].columns.map(
          (column) => ({ string: 'VARCHAR', bigint: 'BIGINT', double: 'DOUBLE', boolean: 'BOOLEAN' })[column.type],
        ),
      );
    }
    const events = await duckdb.runAndReadAll(
      `SELECT count(*) AS n, sum(revenue_micros) AS micros FROM read_parquet('${join(dir, 'events')}/*/*/*/*.parquet', hive_partitioning = true)`,
    );
    expect(events.getRowObjectsJS()).toEqual([{ n: 3n, micros: 990_000n }]);
    duckdb.closeSync();
  });
});
