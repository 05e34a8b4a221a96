// Apple's well-known report-attribution paths (issue 39, item 3): Apple's sample postbacks, and a
// tampered one, posted to each path as Apple does (trailing slash and all) through the local edge
// are answered, filed and reported exactly as the same postbacks posted to POST /skan-postback.
// One stack and one app (handlers cache the app an App Store id names): after each path's run the
// SKAN claims, records and report items are deleted, so that every run starts from nothing.

import { DeleteItemCommand, DescribeTableCommand, DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import type { PostbackRecord } from '../../functions/domain/skan/postback-record';
import { resourceName } from '../../functions/shared/config';
import { APPATTRIBUTION_REPORT_PATH, SKADNETWORK_REPORT_PATH } from '../../lib/function-constants';
import { problemsOf } from '../support/documented-answers';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { OpenApi } from '../support/openapi';
import { AAK_EXAMPLE, changed, SKADNETWORK_EXAMPLES } from '../unit/skan/postbacks';

const api = new OpenApi();
const APP_STORE_ID = '525463029';
const POSTBACKS = [
  ...SKADNETWORK_EXAMPLES.map((example) => example.postback),
  AAK_EXAMPLE.postback,
  changed(SKADNETWORK_EXAMPLES[0]!.postback, { 'transaction-id': '0b1e2c3d-tampered', 'source-domain': 'evil.example' }),
];

/** What one run leaves behind, without what only the clock decides (days, receive times). */
interface Filing {
  answers: { status: number; text: string }[];
  records: [string, Omit<PostbackRecord, 'received_ms' | 'expires_at'>][];
  rows: Record<string, unknown>[];
  invalid: unknown;
}

let stack: LocalStack;
let tenant: Tenant;
let s3: S3Client;
let dynamo: DynamoDBClient;

/** Posts every sample to `path` in order, reads back what was filed and reported, then deletes it all. */
async function fileThrough(path: string): Promise<Filing> {
  const answers: Filing['answers'] = [];
  for (const postback of POSTBACKS) {
    const response = await fetch(`${stack.baseUrl}${path}`, { method: 'POST', body: JSON.stringify(postback) });
    const answer = {
      method: 'POST',
      path,
      status: response.status,
      headers: Object.fromEntries(response.headers),
      text: await response.text(),
    };
    expect({ path, problems: problemsOf(api, answer) }).toEqual({ path, problems: [] });
    answers.push({ status: answer.status, text: answer.text });
  }
  const { Contents = [] } = await s3.send(new ListObjectsV2Command({ Bucket: stack.endpoints.bucket, Prefix: 'audit/skan/' }));
  const records: Filing['records'] = [];
  for (const { Key = '' } of Contents) {
    const object = await s3.send(new GetObjectCommand({ Bucket: stack.endpoints.bucket, Key }));
    const { received_ms, expires_at, ...record } = JSON.parse(await object.Body!.transformToString()) as PostbackRecord;
    records.push([Key.replace(/\d{4}\/\d{2}\/\d{2}\//, '<day>/'), record]);
    await s3.send(new DeleteObjectCommand({ Bucket: stack.endpoints.bucket, Key }));
  }
  const now = Date.now();
  const report = await fetch(`${stack.baseUrl}/api/v1/reports/skan?since_ms=${now - 2 * 86_400_000}&until_ms=${now + 86_400_000}`, {
    headers: { authorization: `Bearer ${tenant.serverKey}` },
  });
  const body = (await report.json()) as { rows: Record<string, unknown>[]; invalid_postbacks?: unknown };
  expect(report.status).toBe(200);
  await emptyTable(resourceName.table('skan_postbacks'));
  await emptyTable(resourceName.table('aggregates'));
  const rows = body.rows.map(({ day, ...row }) => row);
  return { answers, records: records.sort(([a], [b]) => a.localeCompare(b)), rows, invalid: body.invalid_postbacks };
}

async function emptyTable(TableName: string): Promise<void> {
  const { Table } = await dynamo.send(new DescribeTableCommand({ TableName }));
  const keyNames = (Table?.KeySchema ?? []).map(({ AttributeName = '' }) => AttributeName);
  const { Items = [] } = await dynamo.send(new ScanCommand({ TableName }));
  for (const item of Items) {
    await dynamo.send(new DeleteItemCommand({ TableName, Key: Object.fromEntries(keyNames.map((name) => [name, item[name]!])) }));
  }
}

let throughSkanPostback: Filing;

beforeAll(async () => {
  stack = await startLocalStack();
  s3 = new S3Client({ forcePathStyle: true });
  dynamo = new DynamoDBClient({});
  tenant = await createTenant({ app: { appStoreId: APP_STORE_ID } });
  throughSkanPostback = await fileThrough('/skan-postback');
});

afterAll(async () => {
  s3?.destroy();
  dynamo?.destroy();
  await stack?.stop();
});

describe("Apple's well-known report-attribution paths", () => {
  it('file through POST /skan-postback what the comparison rests on: verified and invalid records, report rows', () => {
    expect(throughSkanPostback.answers.every(({ status }) => status === 200)).toBe(true);
    expect(throughSkanPostback.records.filter(([, record]) => record.verified).length).toBeGreaterThanOrEqual(5);
    expect(throughSkanPostback.records.filter(([, record]) => !record.verified)).toHaveLength(1);
    expect(throughSkanPostback.rows.length).toBeGreaterThan(0);
    expect(throughSkanPostback.invalid).toBe(1);
  });

  it.each([`${SKADNETWORK_REPORT_PATH}/`, `${APPATTRIBUTION_REPORT_PATH}/`])(
    "answers, files and reports Apple's sample postbacks posted to %s exactly as through POST /skan-postback",
    async (path) => {
      expect(await fileThrough(path)).toEqual(throughSkanPostback);
    },
  );
});
