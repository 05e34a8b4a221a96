// A honeypot block flags an install only if it was in force at the install's time
// (docs/aggregation.md, fraud flags; issue 35, item 3): an install made before the hit that
// arrives after it (a late batch, an SDK that was offline) is not flagged. The store is the real
// adapter over a DynamoDB table kept in a map (aws-sdk-client-mock), so what is stored on a hit
// and what a look-up reads are the adapter's own.

import { DeleteCommand, DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { IpBlockStore } from '../../../functions/adapters/ip-block-store';
import { HONEYPOT_BLOCK_DAYS, type IpBlockEntry } from '../../../functions/domain/links/tracking-link';

const DAY = 86_400_000;
const COMPANY = 'com_0123456789abcdef';
const ADDRESS = '203.0.113.7';
const hitAt = Date.UTC(2026, 10, 20, 12);

const dynamo = mockClient(DynamoDBDocumentClient);
const table = new Map<string, Record<string, unknown>>();
beforeEach(() => {
  table.clear();
  dynamo.reset();
  dynamo.on(GetCommand).callsFake(async ({ Key }) => ({ Item: table.get(Key.ip) }));
  dynamo.on(PutCommand).callsFake(async ({ Item }) => void table.set(Item.ip, Item));
  dynamo.on(DeleteCommand).callsFake(async ({ Key }) => void table.delete(Key.ip));
});
afterAll(() => dynamo.restore());

const store = new IpBlockStore('ip_blocks');
const hit = (atMs: number): IpBlockEntry => ({
  ip: ADDRESS,
  ip_block: '203.0.113.0/24',
  link_id: 'lnk_trap',
  app_id: 'app_1',
  company_id: COMPANY,
  blocked_ms: atMs,
  expires_at: Math.floor(atMs / 1000) + HONEYPOT_BLOCK_DAYS * 86_400,
});

describe('a honeypot block at an install time', () => {
  it('does not flag an install made two days before the hit that arrives after it', async () => {
    await store.block(hit(hitAt));
    expect(await store.isBlocked(COMPANY, ADDRESS, hitAt - 2 * DAY)).toBe(false);
    expect(await store.isBlocked(COMPANY, ADDRESS, hitAt - 1)).toBe(false);
  });

  it('flags an install made from the hit until the block expires, and not after', async () => {
    await store.block(hit(hitAt));
    expect(await store.isBlocked(COMPANY, ADDRESS, hitAt)).toBe(true);
    expect(await store.isBlocked(COMPANY, ADDRESS, hitAt + HONEYPOT_BLOCK_DAYS * DAY - 1)).toBe(true);
    expect(await store.isBlocked(COMPANY, ADDRESS, hitAt + HONEYPOT_BLOCK_DAYS * DAY)).toBe(false);
  });

  it('keeps the block in force from its first hit when a later hit renews it', async () => {
    await store.block(hit(hitAt));
    await store.block(hit(hitAt + 3 * DAY));
    // Between the two hits: the first one's block was in force, and the renewal does not undo it.
    expect(await store.isBlocked(COMPANY, ADDRESS, hitAt + DAY)).toBe(true);
    expect(await store.isBlocked(COMPANY, ADDRESS, hitAt + (3 + HONEYPOT_BLOCK_DAYS) * DAY - 1)).toBe(true);
    expect(await store.isBlocked(COMPANY, ADDRESS, hitAt - 1)).toBe(false);
  });

  it('starts a new block at a hit after the previous one expired', async () => {
    await store.block(hit(hitAt));
    const later = hitAt + (HONEYPOT_BLOCK_DAYS + 2) * DAY;
    await store.block(hit(later));
    expect(await store.isBlocked(COMPANY, ADDRESS, later - DAY)).toBe(false);
    expect(await store.isBlocked(COMPANY, ADDRESS, later)).toBe(true);
  });
});
