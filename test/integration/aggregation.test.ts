// The aggregator over the emulators: traffic through the public endpoints (tracking links and
// POST /event) aggregated by the runtime's queue poller calling the real handler, compared row by
// row with an oracle; the store failing after every single write; concurrent and poison deliveries.

import { GetQueueAttributesCommand, ReceiveMessageCommand, SendMessageCommand, SetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import type { SQSEvent } from 'aws-lambda';
import fc from 'fast-check';
import { ClickStore } from '../../functions/adapters/click-store';
import { DynamoInstallStore } from '../../functions/adapters/install-store';
import { LinkStore } from '../../functions/adapters/link-store';
import { appIpPlatform, buildClick } from '../../functions/domain/links/click';
import { newClickId } from '../../functions/domain/links/click-log-key';
import { clientAddress } from '../../functions/domain/links/ip-block';
import { clickTables } from '../../functions/shared/click-tables';
import { dynamoClient, sqsClient } from '../../functions/shared/clients';
import { resourceName } from '../../functions/shared/config';
import { queues } from '../../lib/manifest';
import { freeLanes, sqsEvent, stored } from '../support/aggregation-deliveries';
import { dropZeros, type OracleAttribution, type OracleEvent, oracleRows } from '../support/aggregation-oracle';
import { eventClientFrom } from '../support/event-client';
import { createTenant, type LocalStack, startLocalStack, type Tenant } from '../support/local-stack';
import { storedRows } from '../support/stored-rows';
import { countingWrites } from '../support/write-faults';
import { MOBILE } from '../unit/links/user-agents';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startLocalStack({ trustProxy: true });
});
afterAll(async () => {
  await stack?.stop();
});

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const PARTNERS = ['meta', 'google', 'tiktok'] as const;

let network = 0;
/** One /24 per address, so no test spends another's rate-limit allowance or shares an address. */
const freshIp = () => `10.${100 + Math.floor(++network / 250)}.${network % 250}.9`;

async function clickFrom(linkId: string, ip: string, platform: 'ios' | 'android'): Promise<string | undefined> {
  const response = await fetch(`${stack.baseUrl}/l/${linkId}?click_id=ext-${ip}&sub1=s1`, {
    redirect: 'manual',
    headers: { 'user-agent': platform === 'ios' ? MOBILE.iosSafari : MOBILE.chromeAndroid, 'x-forwarded-for': ip },
  });
  const location = new URL(response.headers.get('location') ?? 'http://x/');
  if (platform === 'ios') return location.searchParams.get('click_id') ?? undefined;
  return new URLSearchParams(location.searchParams.get('referrer') ?? '').get('click_id') ?? undefined;
}

const clientFor = (tenant: Tenant, ip: string) => eventClientFrom(stack.baseUrl, tenant, ip);

type Kind = 'click_id' | 'referrer' | 'probabilistic' | 'organic' | 'honeypot' | 'backdated';
const EDGES = [1, 2, 7, 8, 30, 31].flatMap((n) => [n * DAY - 60_000, n * DAY + 60_000]);

const installArb = fc.record({
  kind: fc.constantFrom<Kind>('click_id', 'referrer', 'probabilistic', 'organic', 'honeypot', 'backdated'),
  partner: fc.integer({ min: 0, max: PARTNERS.length - 1 }),
  fastCtit: fc.boolean(),
  injection: fc.boolean(),
  sharedDevice: fc.boolean(),
  reinstall: fc.boolean(),
  early: fc.boolean(),
  duplicate: fc.constantFrom('none', 'identical', 're-encoded'),
  events: fc.array(
    fc.record({
      name: fc.constantFrom('session', 'purchase', 'level_up'),
      edge: fc.integer({ min: 0, max: EDGES.length - 1 }),
      revenue: fc.option(fc.integer({ min: 1, max: 99_999 }), { nil: undefined }),
    }),
    { maxLength: 5 },
  ),
});

describe('the aggregator on traffic through the public endpoints', () => {
  it('agrees with the oracle on every row of all four families', async () => {
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(installArb, { minLength: 3, maxLength: 9 }), async (installs) => {
        run++;
        const plain = await createTenant();
        const probabilistic = await createTenant({ app: { probabilistic: true } });
        const links = new LinkStore(resourceName.table('links'));
        const partnerLinks = new Map<string, Map<string, string>>();
        for (const tenant of [plain, probabilistic]) {
          const byPartner = new Map<string, string>();
          for (const partner of PARTNERS) byPartner.set(partner, (await links.create(tenant.app, { partner })).link_id);
          partnerLinks.set(tenant.app.app_id, byPartner);
        }
        const honeypot = await links.create(plain.app, { partner: 'trap', honeypot: true });

        const expected = new Map<string, OracleAttribution>();
        const taken: Record<string, OracleEvent[]> = { [plain.app.app_id]: [], [probabilistic.app.app_id]: [] };
        const now = Date.now();
        const backdatedAt = Date.UTC(
          new Date(now - 40 * DAY).getUTCFullYear(),
          new Date(now - 40 * DAY).getUTCMonth(),
          new Date(now - 40 * DAY).getUTCDate(),
          12,
        );

        for (const [i, spec] of installs.entries()) {
          const tenant = spec.kind === 'probabilistic' ? probabilistic : plain;
          const appId = tenant.app.app_id;
          const platform = spec.kind === 'referrer' || i % 2 === 0 ? 'android' : 'ios';
          const ip = freshIp();
          const installUuid = `${String(run).padStart(8, '0')}-0000-4000-8000-${String(i).padStart(12, '0')}`;
          const partner = PARTNERS[spec.partner];
          const clickedAt = Date.now();
          let attribution: Record<string, unknown> | undefined;
          let expectation: OracleAttribution = { partner: 'organic', type: 'organic', fraud: false };

          if (spec.kind === 'click_id' || spec.kind === 'referrer' || spec.kind === 'probabilistic') {
            const clickId = await clickFrom(partnerLinks.get(appId)!.get(partner)!, ip, platform);
            expect(clickId).toBeDefined();
            if (spec.kind === 'click_id') attribution = { click_id: clickId };
            if (spec.kind === 'referrer') attribution = { referrer: `click_id=${clickId}&link_id=x&utm_source=${partner}` };
            const injected = spec.kind !== 'probabilistic' && spec.injection;
            if (injected) attribution = { ...attribution, install_begin_ms: clickedAt - 30_000 };
            expectation = {
              partner,
              type: spec.kind === 'probabilistic' ? 'probabilistic' : 'deterministic',
              fraud: spec.fastCtit || injected,
            };
          }
          if (spec.kind === 'honeypot') {
            await clickFrom(honeypot.link_id, ip, platform);
            expectation = { partner: 'organic', type: 'organic', fraud: true };
          }
          const installTs = spec.kind === 'backdated' ? backdatedAt + i * 60_000 : clickedAt + (spec.fastCtit ? 3_000 : 40_000);
          const deviceId = spec.sharedDevice ? `device-shared-${run}` : undefined;
          const install = {
            event_id: 'install-1',
            event_name: 'install',
            install_uuid: installUuid,
            ts_ms: installTs,
            platform,
            ...(attribution ? { attribution } : {}),
            ...(deviceId ? { device_id: deviceId } : {}),
          };
          // Events keep clear of the future limit (1 h) for installs made now; back-dated ones reach every retention edge.
          const later = spec.events.map((e, n) => ({
            event_id: `ev-${n}`,
            event_name: e.name,
            install_uuid: installUuid,
            ts_ms: spec.kind === 'backdated' ? installTs + EDGES[e.edge] : installTs + (n + 1) * 1000,
            ...(e.revenue !== undefined ? { revenue_usd: e.revenue / 100 } : {}),
          }));
          // The reinstall names no click: on the probabilistic app the same click still matches it.
          const again: OracleAttribution =
            spec.kind === 'probabilistic'
              ? { partner, type: 'probabilistic', fraud: false }
              : { partner: 'organic', type: 'organic', fraud: spec.kind === 'honeypot' };
          const client = clientFor(tenant, ip);
          const batches: object[][] = spec.early ? [later, [install]] : [[install], later];
          if (spec.reinstall)
            batches.push([
              { ...install, event_id: 'install-2', ts_ms: installTs + 5 * 60_000, attribution: undefined, device_id: undefined },
            ]);
          for (const batch of batches.filter((b) => b.length > 0)) {
            const sentAtMs = Date.now();
            const result = await client.sendEvents(batch as never, { sentAtMs });
            expect(result.results.filter((r) => r.status !== 'accepted')).toEqual([]);
            if (spec.duplicate === 'identical') await client.sendEvents(batch as never, { sentAtMs });
            if (spec.duplicate === 're-encoded') await client.sendEvents([...batch].reverse() as never, { gzip: true });
            for (const e of batch as {
              event_id: string;
              event_name: string;
              install_uuid: string;
              ts_ms: number;
              revenue_usd?: number;
              device_id?: string;
            }[]) {
              taken[appId].push({
                installUuid,
                eventId: e.event_id,
                name: e.event_name,
                tsMs: e.ts_ms,
                revenueUsd: e.revenue_usd,
                deviceHash: e.device_id,
              });
              if (e.event_name === 'install')
                expected.set(`${installUuid}|${e.event_id}`, e.event_id === 'install-1' ? expectation : again);
            }
          }
        }
        await stack.pollers.drain();
        for (const tenant of [plain, probabilistic]) {
          const oracle = dropZeros(oracleRows(taken[tenant.app.app_id], (e) => expected.get(`${e.installUuid}|${e.eventId}`)!));
          expect(await storedRows(tenant.app.app_id)).toEqual(oracle);
        }
      }),
      { numRuns: 8 },
    );
  }, 240_000);
});

describe('the aggregator handler against DynamoDB and S3 emulators', () => {
  // Loaded once the stack is up: the handler reads its tables' names at cold start.
  const aggregator = async (event: SQSEvent) => (await import('../../functions/aggregator')).aggregator(event);
  const scenario = async (tenant: Tenant, now: number) => {
    const uuid = (n: number) => `0000000${n}-aaaa-4bbb-8ccc-${tenant.app.app_id.slice(-12)}`;
    const address = clientAddress('198.51.100.20');
    const clickMs = now - 2 * DAY - HOUR;
    const clickId = newClickId({ tsMs: clickMs, appIpPlatform: appIpPlatform(tenant.app.app_id, address.ip, 'ios') });
    await new ClickStore(clickTables()).record(
      buildClick({
        clickId,
        link: { link_id: 'link-x', app_id: tenant.app.app_id, company_id: tenant.company.company_id, partner: 'meta', lookback_days: 7 },
        address,
        userAgent: MOBILE.iosSafari,
        platform: 'ios',
        query: { sub1: 'creative' },
        nowMs: clickMs,
      }),
    );
    return stored(
      tenant,
      [
        [{ event_id: 'early', event_name: 'purchase', install_uuid: uuid(1), ts_ms: now - DAY + 60_000, revenue_usd: 3.5 }],
        [
          {
            event_id: 'i',
            event_name: 'install',
            install_uuid: uuid(1),
            ts_ms: now - 2 * DAY,
            platform: 'ios',
            attribution: { click_id: clickId },
            device_id: 'dev',
          },
          { event_id: 'e1', event_name: 'session', install_uuid: uuid(1), ts_ms: now - DAY + 1000 },
          { event_id: 'j', event_name: 'install', install_uuid: uuid(2), ts_ms: now - 2 * DAY + 5, platform: 'android', device_id: 'dev' },
        ],
        [
          { event_id: 'e1', event_name: 'session', install_uuid: uuid(1), ts_ms: now - DAY + 1000 },
          { event_id: 'p', event_name: 'purchase', install_uuid: uuid(2), ts_ms: now - DAY, revenue_usd: 0.99 },
          { event_id: 'i2', event_name: 'install', install_uuid: uuid(1), ts_ms: now - HOUR, platform: 'ios' },
        ],
      ],
      now,
    );
  };

  it('gives the rows of one clean delivery when the store fails after any single write of an invocation', async () => {
    const now = Date.UTC(2026, 10, 20, 12);
    const clean = await createTenant();
    const cleanBodies = await scenario(clean, now);
    const counting = countingWrites(dynamoClient(), Infinity);
    expect((await aggregator(sqsEvent(cleanBodies))).batchItemFailures).toEqual([]);
    counting.stop();
    const writes = counting.writes();
    const expected = await storedRows(clean.app.app_id);
    expect(expected.attribution).toEqual({
      '2026-11-18|meta|deterministic': { installs: 1 },
      '2026-11-18|organic|organic': { installs: 1, organic: 1, reinstalls: 1 },
      '2026-11-20|organic|organic': { installs: 1, organic: 1, reinstalls: 1 },
    });
    expect(writes).toBeGreaterThan(25);

    for (let k = 0; k < writes; k++) {
      const tenant = await createTenant();
      const bodies = await scenario(tenant, now);
      const fault = countingWrites(dynamoClient(), k);
      // Stopped whatever happens: a fault left on would fail every test after this one.
      const first = await aggregator(sqsEvent(bodies))
        .catch(() => ({ batchItemFailures: bodies.map((_, i) => ({ itemIdentifier: `m${i}` })) }))
        .finally(() => fault.stop());
      expect(first.batchItemFailures.length).toBeGreaterThan(0);
      // The dead invocation's lane lease runs out (given back here rather than waited for), and SQS
      // delivers the failed messages again.
      const again = bodies.filter((_, i) => first.batchItemFailures.some((f) => f.itemIdentifier === `m${i}`));
      await freeLanes();
      expect((await aggregator(sqsEvent(again, 'again-'))).batchItemFailures).toEqual([]);
      expect({ k, rows: await storedRows(tenant.app.app_id) }).toEqual({ k, rows: expected });
    }
  }, 240_000);

  it('counts the install that claimed the first mark as the first when its invocation died and another batch installed the uuid before the redelivery', async () => {
    const now = Date.UTC(2026, 10, 20, 12);
    const objects = (tenant: Tenant) => {
      const installUuid = `abcdef01-aaaa-4bbb-8ccc-${tenant.app.app_id.slice(-12)}`;
      return stored(
        tenant,
        [
          [
            { event_id: 'i', event_name: 'install', install_uuid: installUuid, ts_ms: now - 2 * DAY, platform: 'ios' },
            { event_id: 'e1', event_name: 'session', install_uuid: installUuid, ts_ms: now - 2 * DAY + 1000 },
          ],
          [{ event_id: 'i2', event_name: 'install', install_uuid: installUuid, ts_ms: now - 2 * DAY + HOUR, platform: 'ios' }],
        ],
        now,
      );
    };
    const installs = new DynamoInstallStore(resourceName.table('installs'));
    const firstInstalls = async (tenant: Tenant) => {
      const pk = `${tenant.app.app_id}#abcdef01-aaaa-4bbb-8ccc-${tenant.app.app_id.slice(-12)}`;
      const mark = await installs.get<{ member: string }>(pk, 'first');
      const claims = await installs.query<{ sk: string; decision?: { reinstall: boolean } }>(pk, 'e#');
      return {
        mark: mark?.member,
        notReinstalls: claims.filter((claim) => claim.decision && !claim.decision.reinstall).map((claim) => claim.sk),
      };
    };
    const clean = await createTenant();
    const [cleanCrashed, cleanOther] = await objects(clean);
    const counting = countingWrites(dynamoClient(), Infinity);
    expect((await aggregator(sqsEvent([cleanCrashed]))).batchItemFailures).toEqual([]);
    counting.stop();
    const writes = counting.writes();
    expect((await aggregator(sqsEvent([cleanOther], 'other-'))).batchItemFailures).toEqual([]);
    const expected = await storedRows(clean.app.app_id);
    expect(expected.attribution).toEqual({ '2026-11-18|organic|organic': { installs: 2, organic: 2, reinstalls: 1 } });
    expect(await firstInstalls(clean)).toEqual({ mark: 'i', notReinstalls: ['e#i'] });

    for (let k = 0; k < writes; k++) {
      const tenant = await createTenant();
      const [crashed, other] = await objects(tenant);
      const fault = countingWrites(dynamoClient(), k);
      const first = await aggregator(sqsEvent([crashed])).catch(() => ({ batchItemFailures: [{ itemIdentifier: 'm0' }] }));
      fault.stop();
      expect(first.batchItemFailures).toEqual([{ itemIdentifier: 'm0' }]);
      // Another batch's install of the same install_uuid is counted while the dead invocation's lane lease runs out.
      expect((await aggregator(sqsEvent([other], 'other-'))).batchItemFailures).toEqual([]);
      await freeLanes();
      expect((await aggregator(sqsEvent([crashed], 'again-'))).batchItemFailures).toEqual([]);
      expect({ k, rows: await storedRows(tenant.app.app_id) }).toEqual({ k, rows: expected });
      // Whichever install claimed the mark (the crashed one, unless it died before claiming it) is the first.
      const { mark, notReinstalls } = await firstInstalls(tenant);
      expect({ k, notReinstalls }).toEqual({ k, notReinstalls: [`e#${mark}`] });
    }
  }, 240_000);

  it('counts a message delivered to two invocations at once exactly once', async () => {
    const tenant = await createTenant();
    const now = Date.now();
    const [body] = await stored(
      tenant,
      [
        [
          {
            event_id: 'i',
            event_name: 'install',
            install_uuid: '11111111-2222-4333-8444-555555555555',
            ts_ms: now,
            platform: 'ios',
            revenue_usd: 2,
          },
        ],
      ],
      now,
    );
    const results = await Promise.all([aggregator(sqsEvent([body], 'a-')), aggregator(sqsEvent([body], 'b-'))]);
    const retried = results.flatMap((r) => r.batchItemFailures);
    expect(retried).toHaveLength(1);
    expect((await aggregator(sqsEvent([body], 'c-'))).batchItemFailures).toEqual([]);
    const day = new Date(now).toISOString().slice(0, 10);
    expect((await storedRows(tenant.app.app_id)).events).toEqual({
      [`${day}|install`]: { events: 1, unique_installs: 1, revenue_micros: 2_000_000 },
    });
  });

  it('moves a poison message to the DLQ after maxReceiveCount while the batch beside it is counted', async () => {
    const tenant = await createTenant();
    const queueUrl = resourceName.queueUrl('aggregation');
    const dlqUrl = stack.endpoints.dead_letter_queues.aggregation;
    await sqsClient().send(new SetQueueAttributesCommand({ QueueUrl: queueUrl, Attributes: { VisibilityTimeout: '1' } }));
    // A receive already waiting keeps the old timeout: let the poller start afresh.
    await stack.pollers.drain();
    try {
      const poison = JSON.stringify({ version: 99, audit_key: 'audit/2026/01/01/x/y/z.jsonl.gz' });
      await sqsClient().send(new SendMessageCommand({ QueueUrl: queueUrl, MessageBody: poison }));
      const installUuid = '99999999-2222-4333-8444-555555555555';
      await clientFor(tenant, freshIp()).sendEvents([
        { event_id: 'i', event_name: 'install', install_uuid: installUuid, ts_ms: Date.now(), platform: 'android' },
      ]);
      let dead: string | undefined;
      for (let i = 0; i < 100 && !dead; i++) {
        const { Messages = [] } = await sqsClient().send(new ReceiveMessageCommand({ QueueUrl: dlqUrl, WaitTimeSeconds: 1 }));
        dead = Messages.find((m) => m.Body === poison)?.Body;
      }
      expect(dead).toBe(poison);
      await stack.pollers.drain();
      const { Attributes } = await sqsClient().send(
        new GetQueueAttributesCommand({ QueueUrl: queueUrl, AttributeNames: ['ApproximateNumberOfMessages'] }),
      );
      expect(Attributes?.ApproximateNumberOfMessages).toBe('0');
      expect(Object.values((await storedRows(tenant.app.app_id)).cohorts)).toEqual([{ installs: 1 }]);
    } finally {
      const { visibilityTimeoutSeconds } = queues.aggregation;
      await sqsClient().send(
        new SetQueueAttributesCommand({ QueueUrl: queueUrl, Attributes: { VisibilityTimeout: String(visibilityTimeoutSeconds) } }),
      );
    }
  }, 60_000);
});
