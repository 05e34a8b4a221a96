import { PoisonMessageError, poisonIfUnreadable } from '../../../functions/domain/aggregation/message';
import { AuditObjectError } from '../../../functions/domain/audit/decode';

describe('reading an audit object for aggregation', () => {
  const read = (failure: unknown) => Promise.reject(failure).catch(poisonIfUnreadable);

  it.each(['missing_object', 'unreadable_object'] as const)('makes a %s poison, with the same reason and message', async (reason) => {
    const cause = new AuditObjectError(reason, 'audit/2026/11/24/c/a/x.jsonl.gz');
    const poison = await read(cause).catch((error: unknown) => error);
    expect(poison).toBeInstanceOf(PoisonMessageError);
    expect(poison).toMatchObject({ reason, message: cause.message });
  });

  it('throws any other failure as it is, so the message is retried', async () => {
    const outage = Object.assign(new Error('S3 is down'), { name: 'ServiceUnavailable' });
    await expect(read(outage)).rejects.toBe(outage);
  });
});
