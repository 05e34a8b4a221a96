import { mockClient } from 'aws-sdk-client-mock';
import { BatchGetCommand, DeleteCommand, DynamoDBDocumentClient, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { CapCounter } from '../../../functions/adapters/cap-counter';
import { BATCH_MARK_TTL_SECONDS, CAP_SHARDS, capCounterKey, capCounterKeys, capMonth, capReached, capShardOf } from '../../../functions/domain/ingest/cap';

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
  it('spreads a month over shards, the plain key being shard 0, and picks a batch\'s shard from its hash', () => {
    const keys = capCounterKeys('com_1', received);
    expect(keys).toHaveLength(CAP_SHARDS);
    expect(keys[0]).toBe('cap#com_1#2025-01');
    expect(keys[3]).toBe('cap#com_1#2025-01#3');
    expect(capShardOf('com_1', received, '00000003'.padEnd(64, 'f'))).toBe('cap#com_1#2025-01#3');
    const used = new Set(Array.from({ length: 400 }, (_, i) => capShardOf('com_1', received, i.toString(16).padStart(8, '0').repeat(8))));
    expect(used).toEqual(new Set(keys));
  });

  it('reads the month count consistently as the sum of its shards, zero when there is none', async () => {
    db.on(BatchGetCommand)
      .resolvesOnce({ Responses: { counters: [{ pk: 'cap#com_1#2025-01', n: 40 }, { pk: 'cap#com_1#2025-01#5', n: 2 }] } })
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

  it('marks the batch, then adds its accepted events to the month', async () => {
    db.on(PutCommand).resolves({}).on(UpdateCommand).resolves({});
    expect(await counter().countOnce(batch)).toBe(true);
    expect(db.commandCalls(PutCommand)[0].args[0].input).toEqual({
      TableName: 'ledger',
      Item: { pk: `ingest#batch#app_1#${batch.bodySha256}`, expires_at: Math.floor(received / 1000) + BATCH_MARK_TTL_SECONDS, accepted: 7 },
      ConditionExpression: 'attribute_not_exists(pk)',
    });
    expect(db.commandCalls(UpdateCommand)[0].args[0].input).toMatchObject({
      TableName: 'counters',
      Key: { pk: capShardOf('com_1', received, batch.bodySha256) },
      UpdateExpression: 'ADD n :accepted',
      ExpressionAttributeValues: { ':accepted': 7 },
    });
  });

  it('counts nothing for a batch that was counted before', async () => {
    db.on(PutCommand).rejects(failure('ConditionalCheckFailedException'));
    expect(await counter().countOnce(batch)).toBe(false);
    expect(db.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('counts nothing and writes nothing for a batch without accepted events', async () => {
    expect(await counter().countOnce({ ...batch, accepted: 0 })).toBe(true);
    expect(db.calls()).toHaveLength(0);
  });

  it('fails without counting when the mark cannot be written', async () => {
    db.on(PutCommand).rejects(failure('ProvisionedThroughputExceededException'));
    await expect(counter().countOnce(batch)).rejects.toThrow('ProvisionedThroughputExceededException');
    expect(db.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('takes the mark back when the count fails, so the retry counts the batch', async () => {
    db.on(PutCommand).resolves({}).on(UpdateCommand).rejects(failure('InternalServerError')).on(DeleteCommand).resolves({});
    await expect(counter().countOnce(batch)).rejects.toThrow('InternalServerError');
    expect(db.commandCalls(DeleteCommand)[0].args[0].input).toEqual({ TableName: 'ledger', Key: { pk: `ingest#batch#app_1#${batch.bodySha256}` } });
  });

  it('reports the count failure even when taking the mark back fails too', async () => {
    db.on(PutCommand).resolves({}).on(UpdateCommand).rejects(failure('InternalServerError')).on(DeleteCommand).rejects(failure('Unreachable'));
    await expect(counter().countOnce(batch)).rejects.toThrow('InternalServerError');
  });
});
