import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { SlotCounter } from '../domain/links/sliding-window';
import { dynamoClient } from '../shared/clients/dynamo';

const SLOT_ATTRIBUTE = /^s(\d+)$/;
const slotAttribute = (slot: number) => `s${slot}`;

/**
 * The sliding window's slot counters (functions/domain/links/sliding-window.ts) in DynamoDB: one item
 * per key (block#<cidr>) with one number attribute per slot, s<slot index>. One UpdateItem adds
 * to the current slot and returns the whole item (ALL_NEW), which is the atomic
 * increment-then-read the algorithm needs, in a single round trip; the item stays a few hundred
 * bytes because stale slots are removed as they appear.
 */
export class RateLimitStore implements SlotCounter {
  constructor(private readonly tableName: string) {}

  async increment(key: string, slot: number, expiresAtMs: number): Promise<ReadonlyMap<number, number>> {
    const { Attributes } = await dynamoClient().send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: key },
        UpdateExpression: 'ADD #slot :one SET expires_at = :expires',
        ExpressionAttributeNames: { '#slot': slotAttribute(slot) },
        ExpressionAttributeValues: { ':one': 1, ':expires': Math.ceil(expiresAtMs / 1000) },
        ReturnValues: 'ALL_NEW',
      }),
    );
    const counts = new Map<number, number>();
    for (const [name, value] of Object.entries(Attributes ?? {})) {
      const match = SLOT_ATTRIBUTE.exec(name);
      if (match) counts.set(Number(match[1]), Number(value));
    }
    return counts;
  }

  async tidy(key: string, change: { release?: number; stale: readonly number[] }): Promise<void> {
    const names: Record<string, string> = {};
    const clauses: string[] = [];
    if (change.release !== undefined) {
      names['#release'] = slotAttribute(change.release);
      clauses.push('ADD #release :minusOne');
    }
    if (change.stale.length > 0) {
      for (const [i, slot] of change.stale.entries()) names[`#stale${i}`] = slotAttribute(slot);
      clauses.push(`REMOVE ${change.stale.map((_, i) => `#stale${i}`).join(', ')}`);
    }
    if (clauses.length === 0) return;
    await dynamoClient().send(
      new UpdateCommand({
        TableName: this.tableName,
        Key: { pk: key },
        UpdateExpression: clauses.join(' '),
        ExpressionAttributeNames: names,
        ExpressionAttributeValues: change.release !== undefined ? { ':minusOne': -1 } : undefined,
      }),
    );
  }
}
