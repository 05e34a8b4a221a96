// admin sql --stack on Athena, with the AWS clients mocked (there is no AWS here): the query
// started in the stack's workgroup over its Glue database, polled until it ends, read page by
// page, its cells turned into JSON by type; a report runs its named query's text with Athena's
// ExecutionParameters; a free query reads the app's partitions only; failures and refusals.

import {
  AthenaClient,
  GetQueryExecutionCommand,
  GetQueryResultsCommand,
  type GetQueryResultsCommandOutput,
  StartQueryExecutionCommand,
  StopQueryExecutionCommand,
} from '@aws-sdk/client-athena';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { UsageError } from '../../../admin/commands';
import { runAdmin } from '../../../bin/admin';
import { AthenaSql } from '../../../functions/adapters/athena-sql';
import { reportQuery } from '../../../functions/domain/raw-data/report-sql';
import { SqlQueryFailed } from '../../../functions/domain/raw-data/sql-guard';
import { exportBucket, outputKey, queues, tables } from '../../../lib/manifest';

const athena = mockClient(AthenaClient);
const cloudFormation = mockClient(CloudFormationClient);
const dynamo = mockClient(DynamoDBDocumentClient);

const WAREHOUSE = { workGroup: 'svc-raw-data', database: 'svc_raw' };
const noWait = { sleep: async () => undefined };

const savedEnv = { ...process.env };
beforeEach(() => {
  athena.reset();
  cloudFormation.reset();
  dynamo.reset();
});
afterEach(() => {
  process.env = { ...savedEnv };
});

const column = (Name: string, Type: string, Precision?: number) => ({ Name, Type, Precision });
const row = (...values: (string | undefined)[]) => ({
  Data: values.map((VarCharValue) => (VarCharValue === undefined ? {} : { VarCharValue })),
});

/** A query that succeeds after a few polls and answers `pages`. */
function answering(pages: GetQueryResultsCommandOutput['ResultSet'][], states = ['QUEUED', 'RUNNING', 'SUCCEEDED']) {
  athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-1' });
  const polls = athena.on(GetQueryExecutionCommand);
  for (const state of states)
    polls.resolvesOnce({ QueryExecution: { QueryExecutionId: 'q-1', StatementType: 'DML', Status: { State: state as 'SUCCEEDED' } } });
  const results = athena.on(GetQueryResultsCommand);
  pages.forEach((ResultSet, i) => {
    results.resolvesOnce({ ResultSet, ...(i < pages.length - 1 ? { NextToken: `page-${i + 1}` } : {}) } as GetQueryResultsCommandOutput);
  });
}

describe('AthenaSql', () => {
  it('starts the query in the workgroup over the database, polls until it succeeds, and reads every page once', async () => {
    const ColumnInfo = [
      column('day', 'varchar'),
      column('installs', 'bigint'),
      column('rate', 'double'),
      column('big', 'bigint'),
      column('flag', 'boolean'),
    ];
    answering([
      {
        ResultSetMetadata: { ColumnInfo },
        Rows: [row('day', 'installs', 'rate', 'big', 'flag'), row('2026-03-01', '3', '0.3333', '9007199254740993', 'true')],
      },
      { ResultSetMetadata: { ColumnInfo }, Rows: [row('2026-03-02', '1', '1.0', undefined, 'false')] },
    ]);
    const slept: number[] = [];
    const result = await new AthenaSql(WAREHOUSE, { firstWaitMs: 100, sleep: async (ms) => void slept.push(ms) }).run('SELECT 1', [
      "'app1'",
    ]);

    expect(athena.commandCalls(StartQueryExecutionCommand)[0]?.args[0].input).toEqual({
      QueryString: 'SELECT 1',
      WorkGroup: 'svc-raw-data',
      QueryExecutionContext: { Database: 'svc_raw' },
      ExecutionParameters: ["'app1'"],
    });
    expect(slept).toEqual([100, 150]);
    expect(athena.commandCalls(GetQueryResultsCommand).map((call) => call.args[0].input.NextToken)).toEqual([undefined, 'page-1']);
    expect(result).toEqual({
      columns: ['day', 'installs', 'rate', 'big', 'flag'],
      rows: [
        { day: '2026-03-01', installs: 3, rate: 0.3333, big: '9007199254740993', flag: true },
        { day: '2026-03-02', installs: 1, rate: 1, big: null, flag: false },
      ],
    });
  });

  it('sends no ExecutionParameters for a query without any', async () => {
    answering([{ ResultSetMetadata: { ColumnInfo: [column('n', 'bigint')] }, Rows: [row('n'), row('0')] }], ['SUCCEEDED']);
    expect((await new AthenaSql(WAREHOUSE, noWait).run('SELECT count(*) AS n FROM events')).rows).toEqual([{ n: 0 }]);
    expect(athena.commandCalls(StartQueryExecutionCommand)[0]?.args[0].input.ExecutionParameters).toBeUndefined();
  });

  it("takes a query Athena failed as the user's error as the operator's to fix, and any other failure as Athena's", async () => {
    athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-2' });
    athena.on(GetQueryExecutionCommand).resolvesOnce({
      QueryExecution: {
        Status: {
          State: 'FAILED',
          AthenaError: { ErrorCategory: 2, ErrorMessage: "COLUMN_NOT_FOUND: line 1:8: Column 'nope' cannot be resolved" },
        },
      },
    });
    await expect(new AthenaSql(WAREHOUSE, noWait).run('SELECT nope FROM events')).rejects.toThrow(
      new SqlQueryFailed("COLUMN_NOT_FOUND: line 1:8: Column 'nope' cannot be resolved"),
    );

    athena.reset();
    athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-2' });
    athena.on(GetQueryExecutionCommand).resolves({
      QueryExecution: { Status: { State: 'CANCELLED', StateChangeReason: 'Query cancelled: bytes scanned limit was exceeded' } },
    });
    const failure = new AthenaSql(WAREHOUSE, noWait).run('SELECT * FROM events');
    await expect(failure).rejects.toThrow('Athena query q-2 was cancelled: Query cancelled: bytes scanned limit was exceeded');
    await expect(failure).rejects.not.toBeInstanceOf(SqlQueryFailed);
  });

  it('stops a query that outlasts its time', async () => {
    athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-3' });
    athena.on(GetQueryExecutionCommand).resolves({ QueryExecution: { Status: { State: 'RUNNING' } } });
    athena.on(StopQueryExecutionCommand).resolves({});
    await expect(
      new AthenaSql(WAREHOUSE, { firstWaitMs: 1_000, timeoutMs: 5_000, sleep: async () => undefined }).run('SELECT 1'),
    ).rejects.toThrow(/took more than 5 s and was stopped/);
    expect(athena.commandCalls(StopQueryExecutionCommand)[0]?.args[0].input).toEqual({ QueryExecutionId: 'q-3' });
  });
});

describe('admin sql --stack', () => {
  /** The stack's outputs, the warehouse's among them, and app1 (in Asia/Tokyo) behind app key K. */
  function deployed(withWarehouse = true) {
    const outputs = [
      ...Object.keys(tables).map((name) => [outputKey.table(name), `svc-${name}`]),
      ...Object.keys(queues).map((name) => [outputKey.queue(name), `https://sqs/${name}`]),
      [outputKey.bucket(), 'svc-audit'],
      [outputKey.exportBucket(), `svc-${exportBucket.name}`],
      [outputKey.baseUrl(), 'https://svc.example'],
      ...(withWarehouse
        ? [
            [outputKey.warehouseDatabase(), WAREHOUSE.database],
            [outputKey.athenaWorkGroup(), WAREHOUSE.workGroup],
          ]
        : []),
    ].map(([OutputKey, OutputValue]) => ({ OutputKey, OutputValue }));
    cloudFormation
      .on(DescribeStacksCommand)
      .resolves({ Stacks: [{ StackName: 'svc', CreationTime: new Date(), StackStatus: 'UPDATE_COMPLETE', Outputs: outputs }] });
    dynamo.on(GetCommand).resolves({ Item: { pk: 'app#K', app_id: 'app1', app_key: 'K', company_id: 'c1', time_zone: 'Asia/Tokyo' } });
  }

  it("runs a free query over the app's partitions only and prints its rows", async () => {
    deployed();
    answering([{ ResultSetMetadata: { ColumnInfo: [column('n', 'bigint')] }, Rows: [row('n'), row('12')] }], ['SUCCEEDED']);
    const answer = await runAdmin([
      'sql',
      '--app-key',
      'K',
      '--stack',
      'svc',
      'WITH e AS (SELECT * FROM events) SELECT count(*) AS n FROM e;',
    ]);
    expect(answer).toEqual({ rows: [{ n: 12 }] });
    const input = athena.commandCalls(StartQueryExecutionCommand)[0]?.args[0].input;
    expect(input?.WorkGroup).toBe(WAREHOUSE.workGroup);
    expect(input?.QueryExecutionContext).toEqual({ Database: WAREHOUSE.database });
    expect(input?.QueryString).toBe(
      'WITH events AS (SELECT * FROM "svc_raw"."events" WHERE app_id = \'app1\'),\n' +
        '     installs AS (SELECT * FROM "svc_raw"."installs" WHERE app_id = \'app1\'),\n' +
        '     clicks AS (SELECT * FROM "svc_raw"."clicks" WHERE app_id = \'app1\'),\n' +
        '     skan_postbacks AS (SELECT * FROM "svc_raw"."skan_postbacks" WHERE app_id = \'app1\'),\n' +
        'e AS (SELECT * FROM events) SELECT count(*) AS n FROM e',
    );
  });

  it("runs a report's named query with the app and the window's days as parameters", async () => {
    deployed();
    const ColumnInfo = [
      column('day', 'varchar'),
      column('partner', 'varchar'),
      column('purchases', 'bigint'),
      column('revenue_usd', 'double'),
      column('arppu_usd', 'double'),
    ];
    answering(
      [
        {
          ResultSetMetadata: { ColumnInfo },
          Rows: [row('day', 'partner', 'purchases', 'revenue_usd', 'arppu_usd'), row('2026-03-02', 'meta', '2', '3.000001', '1.5')],
        },
      ],
      ['SUCCEEDED'],
    );
    const since = Date.parse('2026-03-01T12:00:00Z');
    const until = Date.parse('2026-03-08T00:00:00Z');
    const answer = await runAdmin([
      'sql',
      '--app-key',
      'K',
      '--report',
      'revenue',
      '--since-ms',
      String(since),
      '--until-ms',
      String(until),
      '--stack',
      'svc',
    ]);
    expect(answer).toEqual({ rows: [{ day: '2026-03-02', partner: 'meta', purchases: 2, revenue_usd: 3.000001, arppu_usd: 1.5 }] });
    const input = athena.commandCalls(StartQueryExecutionCommand)[0]?.args[0].input;
    expect(input?.QueryString).toBe(reportQuery('revenue').sql);
    // The window's days are Tokyo's (the app's zone): 2026-03-08T00:00Z is 09:00 there.
    expect(input?.ExecutionParameters).toEqual(["'app1'", "'app1'", "'2026-03-01'", "'Asia/Tokyo'", "'2026-03-01'", "'2026-03-08'"]);
  });

  it('refuses a query that is not one SELECT before it reaches Athena, as a usage error', async () => {
    deployed();
    await expect(runAdmin(['sql', '--app-key', 'K', '--stack', 'svc', "COPY events TO 's3://elsewhere/x'"])).rejects.toThrow(
      new UsageError('sql: only a single SELECT (or WITH ... SELECT) query is allowed', 'sql'),
    );
    await expect(runAdmin(['sql', '--app-key', 'K', '--stack', 'svc', 'SELECT * FROM "svc_raw"."events"'])).rejects.toThrow(
      /without a database or schema/,
    );
    expect(athena.commandCalls(StartQueryExecutionCommand)).toHaveLength(0);
  });

  it("says a query Athena refused is the operator's to fix", async () => {
    deployed();
    athena.on(StartQueryExecutionCommand).resolves({ QueryExecutionId: 'q-4' });
    athena
      .on(GetQueryExecutionCommand)
      .resolves({ QueryExecution: { Status: { State: 'FAILED', AthenaError: { ErrorCategory: 2, ErrorMessage: 'SYNTAX_ERROR' } } } });
    const failure = runAdmin(['sql', '--app-key', 'K', '--stack', 'svc', 'SELECT nope FROM events']);
    await expect(failure).rejects.toBeInstanceOf(UsageError);
    await expect(failure).rejects.toThrow('sql: the query failed: SYNTAX_ERROR');
  });

  it('asks for a deploy when the stack has no warehouse yet', async () => {
    deployed(false);
    await expect(runAdmin(['sql', '--app-key', 'K', '--stack', 'svc', 'SELECT 1'])).rejects.toThrow(
      `stack svc has no output ${outputKey.athenaWorkGroup()}: deploy this version (it adds the warehouse) and try again`,
    );
  });

  it('refuses a window as the Reporting API does, and a window without --report', async () => {
    deployed();
    await expect(
      runAdmin(['sql', '--app-key', 'K', '--report', 'events', '--since-ms', '5', '--until-ms', '5', '--stack', 'svc']),
    ).rejects.toThrow('since_ms_must_be_less_than_until_ms');
    await expect(runAdmin(['sql', '--app-key', 'K', '--since-ms', '5', 'SELECT 1'])).rejects.toThrow(
      '--since-ms and --until-ms go with --report',
    );
    expect(athena.commandCalls(StartQueryExecutionCommand)).toHaveLength(0);
  });
});
