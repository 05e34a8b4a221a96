import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

const WRITES = new Set(['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand', 'BatchWriteItemCommand']);
let installed = 0;

/**
 * Counts the DynamoDB writes made through a client and, once `limit` of them have gone through,
 * fails every later call, reads included: the store became unreachable (or the function was
 * killed) right after the limit-th write.
 */
export function countingWrites(client: DynamoDBDocumentClient, limit: number) {
  let writes = 0;
  const name = `write-faults-${++installed}`;
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const command = (context as { commandName?: string }).commandName ?? '';
      if (writes >= limit) throw Object.assign(new Error('store unavailable (injected)'), { name: 'ServiceUnavailable' });
      if (WRITES.has(command)) writes++;
      return next(args);
    },
    { step: 'initialize', name },
  );
  return {
    writes: () => writes,
    stop: () => client.middlewareStack.remove(name),
  };
}
