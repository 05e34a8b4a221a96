import {
  AthenaClient,
  type ColumnInfo,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  type QueryExecution,
  StartQueryExecutionCommand,
  StopQueryExecutionCommand,
} from '@aws-sdk/client-athena';
import { SqlQueryFailed } from '../domain/raw-data/sql-guard';
import { athenaValue, type SqlJson, type SqlResult } from '../domain/raw-data/sql-values';

/**
 * A query on the stack's Athena workgroup (docs/raw-data.md, "SQL: DuckDB locally, Athena in
 * AWS"): started in the workgroup, over the Glue database, then polled until it ends, then its
 * result read page by page and each cell turned into JSON by its column's type, as DuckDB's are
 * (sql-values.ts). The workgroup enforces its own result location, encryption and scan cutoff.
 * Only the admin CLI queries Athena, with the operator's credentials: no function does.
 */

/** The stack's warehouse, from its outputs (lib/constructs/warehouse.ts). */
export interface AthenaWarehouse {
  readonly workGroup: string;
  readonly database: string;
}

export interface AthenaPolling {
  /** First wait between GetQueryExecution calls; it grows by half each time, to at most 2 s. */
  readonly firstWaitMs?: number;
  /** Longest a query may take before it is stopped (StopQueryExecution). */
  readonly timeoutMs?: number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Athena's error category of a query the user wrote wrong (1 is the system's, 3 other). */
const USER_ERROR = 2;
const MAX_WAIT_MS = 2_000;
const PAGE_SIZE = 1_000;

let client: AthenaClient | undefined;
/** Made on first use (the admin CLI loads it only with --stack); region and credentials are the usual chain's. */
const athena = (): AthenaClient => (client ??= new AthenaClient({ maxAttempts: 5 }));

export class AthenaSql {
  constructor(
    private readonly warehouse: AthenaWarehouse,
    private readonly polling: AthenaPolling = {},
  ) {}

  /** Runs one query; `parameters` are SQL literals for its `?`s (Athena's ExecutionParameters). */
  async run(sql: string, parameters: readonly string[] = []): Promise<SqlResult> {
    const started = await athena().send(
      new StartQueryExecutionCommand({
        QueryString: sql,
        WorkGroup: this.warehouse.workGroup,
        QueryExecutionContext: { Database: this.warehouse.database },
        ...(parameters.length > 0 ? { ExecutionParameters: [...parameters] } : {}),
      }),
    );
    const id = started.QueryExecutionId;
    if (!id) throw new Error('Athena started no query (no QueryExecutionId)');
    const execution = await this.finished(id);
    return this.results(id, execution.StatementType === 'DML');
  }

  private async finished(id: string): Promise<QueryExecution> {
    const {
      firstWaitMs = 200,
      timeoutMs = 600_000,
      sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms)),
    } = this.polling;
    let waitMs = firstWaitMs;
    let waited = 0;
    for (;;) {
      const { QueryExecution: execution } = await athena().send(new GetQueryExecutionCommand({ QueryExecutionId: id }));
      const state = execution?.Status?.State;
      if (execution && state === 'SUCCEEDED') return execution;
      if (execution && (state === 'FAILED' || state === 'CANCELLED')) {
        const reason = execution.Status?.AthenaError?.ErrorMessage ?? execution.Status?.StateChangeReason ?? state;
        if (execution.Status?.AthenaError?.ErrorCategory === USER_ERROR) throw new SqlQueryFailed(reason);
        throw new Error(`Athena query ${id} ${state === 'FAILED' ? 'failed' : 'was cancelled'}: ${reason}`);
      }
      if (waited >= timeoutMs) {
        await athena().send(new StopQueryExecutionCommand({ QueryExecutionId: id }));
        throw new Error(`Athena query ${id} took more than ${Math.round(timeoutMs / 1000)} s and was stopped`);
      }
      await sleep(waitMs);
      waited += waitMs;
      waitMs = Math.min(MAX_WAIT_MS, Math.round(waitMs * 1.5));
    }
  }

  /** Every page of the result; a SELECT's first row is its column names. */
  private async results(id: string, headerRow: boolean): Promise<SqlResult> {
    let columns: ColumnInfo[] | undefined;
    const rows: Record<string, SqlJson>[] = [];
    let NextToken: string | undefined;
    let first = true;
    do {
      const page = await athena().send(new GetQueryResultsCommand({ QueryExecutionId: id, NextToken, MaxResults: PAGE_SIZE }));
      columns ??= page.ResultSet?.ResultSetMetadata?.ColumnInfo ?? [];
      const data = page.ResultSet?.Rows ?? [];
      for (const row of first && headerRow ? data.slice(1) : data) {
        const cells = row.Data ?? [];
        const record: Record<string, SqlJson> = {};
        columns.forEach((column, i) => {
          record[column.Name ?? `_col${i}`] = athenaValue(cells[i]?.VarCharValue, column.Type ?? 'varchar', column.Precision);
        });
        rows.push(record);
      }
      first = false;
      NextToken = page.NextToken;
    } while (NextToken);
    return { columns: (columns ?? []).map((column, i) => column.Name ?? `_col${i}`), rows };
  }
}
