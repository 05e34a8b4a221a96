import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo, Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  CreateTableCommand,
  DescribeTableCommand,
  DynamoDBClient,
  PutItemCommand,
  QueryCommand,
  ScanCommand,
} from '@aws-sdk/client-dynamodb';
import dynalite from 'dynalite';
import { tables } from '../../lib/manifest';
import { createTable, localCredentials, untilActive } from '../../local/provision';

/**
 * A data directory made by an earlier version of the service lacks the indexes the manifest has
 * gained since (the postbacks table's by_install, for the privacy drain): `npm start` adds them,
 * keeping every item, as CloudFormation adds an index to a live table.
 */
let server: Server;
let dir: string;
let dynamo: DynamoDBClient;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'local-provision-'));
  server = dynalite({ path: dir, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  dynamo = new DynamoDBClient({ region: 'us-east-1', endpoint: `http://127.0.0.1:${port}`, credentials: localCredentials });
});
afterAll(async () => {
  dynamo?.destroy();
  await new Promise((resolve) => server?.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

describe('local tables of an earlier data directory', () => {
  it('gain the indexes the manifest has since added, with every item kept and found through them', async () => {
    const spec = tables.postbacks;
    const index = spec.indexes[0];
    // The table as an earlier version made it: the same keys, no index.
    await dynamo.send(
      new CreateTableCommand({
        TableName: 'postbacks',
        KeySchema: [
          { AttributeName: 'pk', KeyType: 'HASH' },
          { AttributeName: 'sk', KeyType: 'RANGE' },
        ],
        AttributeDefinitions: [
          { AttributeName: 'pk', AttributeType: 'S' },
          { AttributeName: 'sk', AttributeType: 'S' },
        ],
        BillingMode: 'PAY_PER_REQUEST',
      }),
    );
    await untilActive(dynamo, 'postbacks');
    for (let n = 0; n < 60; n++) {
      await dynamo.send(
        new PutItemCommand({
          TableName: 'postbacks',
          Item: {
            pk: { S: `app-${n % 3}` },
            sk: { S: `pb#${n}` },
            ...(n % 2 ? { [index.partitionKey.name]: { S: `app-${n % 3}#install-${n % 5}` } } : {}),
            n: { N: String(n) },
          },
        }),
      );
    }

    await createTable(dynamo, 'postbacks', spec);
    await createTable(dynamo, 'postbacks', spec); // a second start: nothing to add, nothing lost

    const { Table } = await dynamo.send(new DescribeTableCommand({ TableName: 'postbacks' }));
    expect(Table?.GlobalSecondaryIndexes?.map((found) => found.IndexName)).toEqual([index.name]);
    const all = await dynamo.send(new ScanCommand({ TableName: 'postbacks' }));
    expect(all.Items?.map((item) => Number(item.n.N)).sort((a, b) => a - b)).toEqual(Array.from({ length: 60 }, (_, n) => n));
    const found = await dynamo.send(
      new QueryCommand({
        TableName: 'postbacks',
        IndexName: index.name,
        KeyConditionExpression: '#k = :v',
        ExpressionAttributeNames: { '#k': index.partitionKey.name },
        ExpressionAttributeValues: { ':v': { S: 'app-1#install-1' } },
      }),
    );
    // n odd, n % 3 = 1, n % 5 = 1: 1, 31.
    expect(found.Items?.map((item) => Number(item.n.N)).sort((a, b) => a - b)).toEqual([1, 31]);
  });
});
