// The free-tier cap against dynalite, through the local edge and the handler: how far concurrent
// batches can take a company past its cap, and that a batch is metered exactly once whatever
// write its first attempt died after (issue 19, items 4 and 5).

import { randomUUID } from 'node:crypto';
import { ListObjectsV2Command, S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import fc from 'fast-check';
import { eventBatchRequest, type SignedRequest } from '../../client/event-client';
import { CapCounter } from '../../functions/adapters/cap-counter';
import { capCounterKeys } from '../../functions/domain/ingest/cap';
import { dynamoClient } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import { startQueuePollers } from '../../local/queue-pollers';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { MemoryCapStore } from '../support/memory-cap-store';
import { countingWrites } from '../support/write-faults';
import { credentialsOf, post, validEvent } from './ingest-support';

let stack: LocalStack;
let s3: S3Client;

beforeAll(async () => {
  process.env.KEY_CACHE_TTL_MS = '0';
  process.env.POWERTOOLS_LOG_LEVEL = 'SILENT';
  stack = await startLocalStack();
  // Nothing here needs the aggregator, and its writes would be counted with the handler's below.
  await stack.pollers.stop();
  s3 = new S3Client({ forcePathStyle: true });
});

afterAll(async () => {
  s3.destroy();
  await stack.stop();
});

const send = (request: SignedRequest) => post(stack.baseUrl, '/event', request);
const batchOf = (tenant: Tenant, size: number) =>
  eventBatchRequest(credentialsOf(tenant), { events: Array.from({ length: size }, () => validEvent()), sent_at_ms: Date.now() });
const counter = () => new CapCounter(resourceName.table('counters'), resourceName.table('ledger'));
/**
 * The company's month once what was taken is aggregated: a company without a cap is counted by
 * the aggregator, once per audit object (the runtime's own pollers are stopped here, so the queue
 * is drained by consumers of this call's own).
 */
const metered = async (tenant: Tenant) => {
  const sqs = new SQSClient({ region: stack.endpoints.region, endpoint: stack.endpoints.sqs });
  const consumers = startQueuePollers({ sqs, queueUrls: stack.endpoints.queues, onError: (error) => console.error(error) });
  try {
    await consumers.drain();
  } finally {
    await consumers.stop();
    sqs.destroy();
  }
  return counter().acceptedThisMonth(tenant.company.company_id, Date.now());
};
/** Holds left on the month's items: a batch counted but not yet settled. */
const holdsLeft = async (tenant: Tenant) =>
  (await counter().read(capCounterKeys(tenant.company.company_id, Date.now()))).reduce((sum, item) => sum + item.holds.size, 0);

async function auditObjectsOf(tenant: Tenant): Promise<number> {
  const { Contents = [] } = await s3.send(new ListObjectsV2Command({ Bucket: stack.endpoints.bucket, Prefix: 'audit/' }));
  return Contents.filter((object) => object.Key!.includes(`/${tenant.company.company_id}/`)).length;
}

describe('the cap under concurrent batches', () => {
  it('takes one of 30 concurrent 1,000-event batches under a cap of 5 and refuses the others 429 cap_exceeded, storing nothing for them', async () => {
    const capped = await createTenant({ plan: 'free', monthlyCap: 5 });
    const requests = Array.from({ length: 30 }, () => batchOf(capped, 1_000));

    const answers = await Promise.all(requests.map(send));

    const taken = answers.filter((answer) => answer.status === 200);
    expect(answers.filter((answer) => answer.status !== 200).map((answer) => [answer.status, answer.body])).toEqual(
      Array.from({ length: 29 }, () => [429, { error: 'cap_exceeded' }]),
    );
    expect(taken.map((answer) => answer.body.accepted)).toEqual([1_000]);
    // The documented bound: the count stops under the cap plus one batch (docs/ingestion.md).
    expect(await metered(capped)).toBe(1_000);
    expect(await auditObjectsOf(capped)).toBe(1);
  }, 120_000);

  it('counts copies of one batch sent at once once, answering each 200', async () => {
    const capped = await createTenant({ plan: 'free', monthlyCap: 10_000 });
    const request = batchOf(capped, 40);
    const answers = await Promise.all(Array.from({ length: 6 }, () => send(request)));
    expect(answers.map((answer) => [answer.status, answer.body.accepted])).toEqual(Array.from({ length: 6 }, () => [200, 40]));
    expect(await metered(capped)).toBe(40);
  });
});

describe('metering after a crash', () => {
  // Every DynamoDB write the first attempt can make, whichever comes last before the store is
  // gone (the function killed): the retry of the same bytes is answered 200 and the batch is
  // metered once. The loop stops at the first k the first attempt survives untouched.
  it.each([
    ['a capped company', { plan: 'free' as const, monthlyCap: 10_000 }],
    ['a company without a cap', { plan: 'paid' as const }],
  ])(
    'meters the batch of %s once when its first attempt dies after any of its writes and the same bytes are sent again',
    async (_name, plan) => {
      for (let k = 0; ; k++) {
        const tenant = await createTenant(plan);
        const request = batchOf(tenant, 20);
        const fault = countingWrites(dynamoClient(), k);
        const first = await send(request);
        const writes = fault.writes();
        fault.stop();

        const retried = await send(request);
        expect({ k, status: retried.status, accepted: retried.body.accepted }).toEqual({ k, status: 200, accepted: 20 });
        expect({ k, metered: await metered(tenant) }).toEqual({ k, metered: 20 });
        expect({ k, holds: await holdsLeft(tenant) }).toEqual({ k, holds: 0 });
        // A retry after the answer was lost is not metered again either.
        expect((await send(request)).status).toBe(200);
        expect({ k, metered: await metered(tenant), holds: await holdsLeft(tenant) }).toEqual({ k, metered: 20, holds: 0 });
        if (first.status === 200 && writes < k) break;
        expect(k).toBeLessThan(10);
      }
    },
    120_000,
  );
});

describe('the in-memory counters the unit tests use', () => {
  const op = fc.oneof(
    fc.record({
      op: fc.constant('hold' as const),
      key: fc.nat(1),
      hold: fc.nat(1),
      token: fc.nat(1),
      accepted: fc.integer({ min: 1, max: 5 }),
      below: fc.option(fc.integer({ min: 1, max: 12 }), { nil: null }),
    }),
    fc.record({
      op: fc.constantFrom('join' as const, 'leave' as const, 'unhold' as const),
      key: fc.nat(1),
      hold: fc.nat(1),
      token: fc.nat(1),
    }),
    fc.record({
      op: fc.constant('release' as const),
      key: fc.nat(1),
      hold: fc.nat(1),
      token: fc.nat(1),
      accepted: fc.integer({ min: 1, max: 5 }),
      lastOnly: fc.boolean(),
    }),
    fc.record({ op: fc.constant('mark' as const), hold: fc.nat(1), token: fc.nat(1) }),
  );

  it('answer every call as the DynamoDB adapter does against dynalite, and end with the same items', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 25 }), async (ops) => {
        const run = randomUUID();
        const keys = [`cap#${run}#2025-01`, `cap#${run}#2025-01#3`];
        const holds = ['h_0000aaaa', 'h_0000bbbb'];
        const tokens = ['tok-a', 'tok-b'];
        const memory = new MemoryCapStore();
        const stores = [memory, counter()] as const;
        for (const step of ops) {
          const answers = await Promise.all(
            stores.map((store) => {
              const token = tokens[step.token]!;
              switch (step.op) {
                case 'hold':
                  return store.hold(keys[step.key]!, holds[step.hold]!, token, step.accepted, step.below);
                case 'join':
                  return store.join(keys[step.key]!, holds[step.hold]!, token);
                case 'leave':
                  return store.leave(keys[step.key]!, holds[step.hold]!, token);
                case 'unhold':
                  return store.unhold(keys[step.key]!, holds[step.hold]!, token);
                case 'release':
                  return store.release(keys[step.key]!, holds[step.hold]!, token, step.accepted, step.lastOnly);
                case 'mark':
                  return store.mark(`ingest#batch#${run}#${step.hold}`, token, 1, 1);
                default:
                  throw new Error(`no such step: ${JSON.stringify(step)}`);
              }
            }),
          );
          expect({ step, answer: answers[1] }).toEqual({ step, answer: answers[0] });
        }
        const [inMemory, inDynamo] = await Promise.all(stores.map((store) => store.read(keys)));
        expect(inDynamo).toEqual(inMemory);
      }),
      { numRuns: 25 },
    );
  }, 120_000);
});
