import { BatchGetCommand, DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { CapCounter } from '../../../functions/adapters/cap-counter';
import { CAP_SHARDS, capCounterKey, capCounterKeys, capMonth, capReached } from '../../../functions/domain/ingest/cap';

const db = mockClient(DynamoDBDocumentClient);
const counter = () => new CapCounter('counters', 'ledger');
const received = Date.UTC(2025, 0, 31, 23, 59, 59);
const batch = { companyId: 'com_1', appId: 'app_1', bodySha256: 'ab'.repeat(32), accepted: 7, receivedMs: received };

function failure(name: string): Error {
  const error = new Error(name);
  error.name = name;
  return error;
}

beforeEach(() => db.reset());

describe('cap rules', () => {
  it('keys the count by company and UTC month', () => {
    expect(capMonth(Date.UTC(2025, 11, 31, 23, 59, 59))).toBe('2025-12');
    expect(capMonth(Date.UTC(2026, 0, 1))).toBe('2026-01');
    expect(capCounterKey('com_1', received)).toBe('cap#com_1#2025-01');
  });

  it('is reached at the cap, never without one', () => {
    expect(capReached(4, 5)).toBe(false);
    expect(capReached(5, 5)).toBe(true);
    expect(capReached(9, 5)).toBe(true);
    expect(capReached(1_000_000, null)).toBe(false);
  });
});

describe('cap counter', () => {
  it("reads a month as its shards, the plain key being shard 0, and the aggregator's count", () => {
    const keys = capCounterKeys('com_1', received);
    // The shards, and the aggregator's count of the objects it meters (a company without a cap).
    expect(keys).toHaveLength(CAP_SHARDS + 1);
    expect(keys.at(-1)).toBe('cap#com_1#2025-01#agg');
    expect(keys[0]).toBe('cap#com_1#2025-01');
    expect(keys[3]).toBe('cap#com_1#2025-01#3');
  });

  it('reads the month count consistently as the sum of its shards, zero when there is none', async () => {
    db.on(BatchGetCommand)
      .resolvesOnce({
        Responses: {
          counters: [
            { pk: 'cap#com_1#2025-01', n: 40 },
            { pk: 'cap#com_1#2025-01#5', n: 2 },
          ],
        },
      })
      .resolvesOnce({ Responses: { counters: [] } });
    expect(await counter().acceptedThisMonth('com_1', received)).toBe(42);
    expect(await counter().acceptedThisMonth('com_1', received)).toBe(0);
    expect(db.commandCalls(BatchGetCommand)[0].args[0].input).toEqual({
      RequestItems: { counters: { Keys: capCounterKeys('com_1', received).map((pk) => ({ pk })), ConsistentRead: true } },
    });
  });

  it('reads again the shards a batch read left unprocessed, and fails rather than under-count', async () => {
    const [first, second] = capCounterKeys('com_1', received);
    db.on(BatchGetCommand)
      .resolvesOnce({ Responses: { counters: [{ pk: first, n: 1 }] }, UnprocessedKeys: { counters: { Keys: [{ pk: second }] } } })
      .resolvesOnce({ Responses: { counters: [{ pk: second, n: 2 }] } });
    expect(await counter().acceptedThisMonth('com_1', received)).toBe(3);
    db.reset();
    db.on(BatchGetCommand).resolves({ Responses: { counters: [] }, UnprocessedKeys: { counters: { Keys: [{ pk: second }] } } });
    await expect(counter().acceptedThisMonth('com_1', received)).rejects.toThrow('unread');
  });

  it("reads each item's holds beside its count, and an item never written as 0 without holds", async () => {
    const [first, second] = capCounterKeys('com_1', received);
    db.on(BatchGetCommand).resolves({
      Responses: { counters: [{ pk: second, n: 12, h_00ff: { t: 'tok', a: 7, r: 2 }, expires: 'not a hold' }] },
    });
    expect(await counter().read([first!, second!])).toEqual([
      { key: first, n: 0, holds: new Map() },
      { key: second, n: 12, holds: new Map([['h_00ff', { token: 'tok', accepted: 7, refs: 2 }]]) },
    ]);
  });

  it("adds a capped batch's events with its hold only while the batch holds none there and the count is below the cap", async () => {
    db.on(UpdateCommand).resolves({});
    expect(await counter().hold('cap#com_1#2025-01', 'h_ab', 'tok', 7, 5)).toBe(true);
    expect(db.commandCalls(UpdateCommand)[0]!.args[0].input).toEqual({
      TableName: 'counters',
      Key: { pk: 'cap#com_1#2025-01' },
      UpdateExpression: 'ADD n :accepted SET #hold = :hold',
      ConditionExpression: 'attribute_not_exists(#hold) AND (attribute_not_exists(n) OR n < :below)',
      ExpressionAttributeNames: { '#hold': 'h_ab' },
      ExpressionAttributeValues: { ':accepted': 7, ':hold': { t: 'tok', a: 7, r: 1 }, ':below': 5 },
    });
  });

  it('adds a batch without a cap with its hold, only while the batch holds none there', async () => {
    db.on(UpdateCommand).rejects(failure('ConditionalCheckFailedException'));
    expect(await counter().hold('cap#com_1#2025-01#3', 'h_ab', 'tok', 7, null)).toBe(false);
    expect(db.commandCalls(UpdateCommand)[0]!.args[0].input).toMatchObject({
      ConditionExpression: 'attribute_not_exists(#hold)',
      ExpressionAttributeValues: { ':accepted': 7, ':hold': { t: 'tok', a: 7, r: 1 } },
    });
  });

  it("joins and leaves a hold only while it is the token's, and tells the attempts left", async () => {
    db.on(UpdateCommand)
      .resolvesOnce({})
      .resolvesOnce({ Attributes: { h_ab: { r: 0 } } })
      .rejects(failure('ConditionalCheckFailedException'));
    expect(await counter().join('cap#com_1#2025-01', 'h_ab', 'tok')).toBe(true);
    expect(await counter().leave('cap#com_1#2025-01', 'h_ab', 'tok')).toBe(0);
    expect(await counter().leave('cap#com_1#2025-01', 'h_ab', 'tok')).toBeUndefined();
    const [join, leave] = db.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    expect(join).toMatchObject({
      UpdateExpression: 'SET #hold.r = #hold.r + :one',
      ConditionExpression: '#hold.t = :token',
      ExpressionAttributeNames: { '#hold': 'h_ab' },
    });
    expect(leave).toMatchObject({
      UpdateExpression: 'SET #hold.r = #hold.r - :one',
      ConditionExpression: '#hold.t = :token',
      ReturnValues: 'UPDATED_NEW',
    });
  });

  it("takes a hold's events off with the hold: the last attempt's only with none left on it, a second count's whoever is on it", async () => {
    db.on(UpdateCommand).resolves({});
    await counter().release('cap#com_1#2025-01', 'h_ab', 'tok', 7, true);
    await counter().release('cap#com_1#2025-01', 'h_ab', 'tok', 7, false);
    const [last, second] = db.commandCalls(UpdateCommand).map((call) => call.args[0].input);
    expect(last).toMatchObject({
      UpdateExpression: 'ADD n :taken REMOVE #hold',
      ConditionExpression: '#hold.t = :token AND #hold.r = :none',
      ExpressionAttributeValues: { ':token': 'tok', ':taken': -7, ':none': 0 },
    });
    expect(second).toMatchObject({ UpdateExpression: 'ADD n :taken REMOVE #hold', ConditionExpression: '#hold.t = :token' });
  });

  it("writes the mark for a token, again for the same token, and refuses another token's", async () => {
    db.on(PutCommand).resolvesOnce({}).rejects(failure('ConditionalCheckFailedException'));
    expect(await counter().mark(`ingest#batch#app_1#${batch.bodySha256}`, 'tok', 7, 1_700_000_000)).toBe(true);
    expect(await counter().mark(`ingest#batch#app_1#${batch.bodySha256}`, 'other', 7, 1_700_000_000)).toBe(false);
    expect(db.commandCalls(PutCommand)[0]!.args[0].input).toEqual({
      TableName: 'ledger',
      Item: { pk: `ingest#batch#app_1#${batch.bodySha256}`, t: 'tok', accepted: 7, expires_at: 1_700_000_000 },
      ConditionExpression: 'attribute_not_exists(pk) OR t = :token',
      ExpressionAttributeValues: { ':token': 'tok' },
    });
  });

  it("takes a settled hold away, and leaves another token's", async () => {
    db.on(UpdateCommand).resolvesOnce({}).rejects(failure('ConditionalCheckFailedException'));
    await counter().unhold('cap#com_1#2025-01', 'h_ab', 'tok');
    await counter().unhold('cap#com_1#2025-01', 'h_ab', 'tok');
    expect(db.commandCalls(UpdateCommand)[0]!.args[0].input).toMatchObject({
      UpdateExpression: 'REMOVE #hold',
      ConditionExpression: '#hold.t = :token',
    });
  });

  it('fails on any other error than a refused condition', async () => {
    db.on(UpdateCommand).rejects(failure('ProvisionedThroughputExceededException')).on(PutCommand).rejects(failure('InternalServerError'));
    await expect(counter().hold('cap#com_1#2025-01', 'h_ab', 'tok', 7, 5)).rejects.toThrow('ProvisionedThroughputExceededException');
    await expect(counter().leave('cap#com_1#2025-01', 'h_ab', 'tok')).rejects.toThrow('ProvisionedThroughputExceededException');
    await expect(counter().mark('m', 'tok', 7, 1)).rejects.toThrow('InternalServerError');
  });
});
