import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import fc from 'fast-check';
import { localDayOf } from '../../../functions/domain/common/days';
import { APPLE_KEYS, type PostbackKeys } from '../../../functions/domain/skan/postback-keys';
import type { SkanApp } from '../../../functions/domain/skan/postback-match';
import type { PostbackRecord } from '../../../functions/domain/skan/postback-record';
import type { SkanSchema } from '../../../functions/domain/skan/schema';
import {
  type DaySummary,
  type SkanItem,
  type SkanReportRows,
  type SkanReportWriter,
  skanRows,
} from '../../../functions/domain/skan/skan-report';
import {
  CLAIM_LAPSE_MS,
  mayTakeOver,
  type PostbackClaim,
  type SkanPostbackPorts,
  takePostback,
} from '../../../functions/domain/skan/take-postback';
import { changed, type Postback } from './postbacks';

/**
 * The SKAN report counts each verified transaction id once, whatever happens to its deliveries:
 * duplicates, replays with other unsigned values, stores failing at any step, the function dying
 * between two steps, claims lapsing, retries on later days, and report reads (which rebuild day
 * summaries and write them back) in between. The oracle is independent of the report: the set of
 * distinct verified ids, each with its own estimate, under the day its first claim was won.
 */

const APP_STORE_ID = 525463029;
const ZONE = 'Asia/Tokyo';
const APP: SkanApp = { app_id: 'app1', time_zone: ZONE, skan_networks: { 'meta.skadnetwork': 'meta' } };
const SCHEMA: SkanSchema = {
  fine: [
    { value: 63, revenue_usd: [10, 20], events: [] },
    { value: 1, revenue_usd: [0.01, 0.02], events: [] },
  ],
  coarse: [{ window: 0, value: 'high', revenue_usd: [5, 15.5], events: [] }],
  lock: [],
} as SkanSchema;
const ESTIMATE: Record<string, number> = { fine63: 15, fine1: 0.015, high: 10.25, none: 0 };
const START = Date.UTC(2025, 2, 9, 14, 0, 0);

const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
const KEYS: PostbackKeys = { ...APPLE_KEYS, skadnetworkTest: publicKey };

/** A SKAdNetwork 4.0 postback signed with a key of the test's own (trusted here as the local runtime trusts its test key). */
function skan4(id: string, fields: Postback, key: KeyObject = privateKey): Postback {
  const body: Postback = {
    version: '4.0',
    'ad-network-id': 'meta.skadnetwork',
    'source-identifier': '5239',
    'app-id': APP_STORE_ID,
    'transaction-id': id,
    redownload: false,
    'fidelity-type': 1,
    'did-win': true,
    'postback-sequence-index': 0,
    ...fields,
  };
  const order = ['version', 'ad-network-id', 'source-identifier', 'app-id', 'transaction-id', 'redownload', 'fidelity-type', 'did-win'];
  const message = [...order, 'postback-sequence-index'].map((name) => String(body[name])).join('\u2063');
  return { ...body, 'attribution-signature': sign('sha256', Buffer.from(message, 'utf8'), key).toString('base64') };
}

type Value = 'fine63' | 'fine1' | 'high' | 'none';
const valueFields = (value: Value): Postback =>
  value === 'fine63'
    ? { 'conversion-value': 63 }
    : value === 'fine1'
      ? { 'conversion-value': 1 }
      : value === 'high'
        ? { 'coarse-conversion-value': 'high' }
        : {};

interface Entry {
  readonly id: string;
  readonly verified: boolean;
  readonly value: Value;
  readonly network: string;
  readonly body: Postback;
}

function entryOf(n: number, verified: boolean, value: Value, network: string): Entry {
  const id = `tx-${n}`;
  const body = skan4(id, { 'ad-network-id': network, ...valueFields(value) });
  // Invalid: a signed field changed after signing.
  return { id, verified, value, network, body: verified ? body : changed(body, { 'source-identifier': '9999' }) };
}

const STEPS = ['claim', 'putRecord', 'putItem', 'addWritten', 'addInvalid', 'markStored', 'release'] as const;
type Step = (typeof STEPS)[number];
/** A store fails at a step (the call throws, nothing written), or the function dies just after it (it is written; nothing runs after). */
type Fault = { readonly kind: 'fail' | 'die_after'; readonly step: Step } | undefined;

interface Delivery {
  readonly entry: number;
  /** A replay with another unsigned conversion value. */
  readonly replay: boolean;
  readonly advanceMs: number;
  readonly fault: Fault;
  readonly readReport: boolean;
}

class Died extends Error {}

function world() {
  const ledger = new Map<string, { verified: boolean; stored: boolean; claimedMs: number; claimId: string; firstVerifiedMs?: number }>();
  const objects = new Map<string, PostbackRecord>();
  const items = new Map<string, Map<string, SkanItem>>();
  const summaries = new Map<string, { written: number; built?: number; rows?: string }>();
  const invalid = new Map<string, { postbacks: number; expiresAt: number }>();
  /** The harness's own log: when each id's first verified claim was won. */
  const firstWon = new Map<string, number>();
  let fault: Fault;
  let dead = false;
  let claims = 0;

  async function step<T>(name: Step, body: () => T): Promise<T> {
    if (dead) throw new Died();
    if (fault?.step === name && fault.kind === 'fail') throw new Error(`${name} failed`);
    const result = body();
    if (fault?.step === name && fault.kind === 'die_after') {
      dead = true;
      throw new Died();
    }
    return result;
  }

  const writer: SkanReportWriter = {
    putItem: (appId, item) =>
      step('putItem', () => {
        const pk = `${appId}#${item.day}`;
        const day = items.get(pk) ?? new Map<string, SkanItem>();
        day.set(item.transaction_id, item);
        items.set(pk, day);
      }),
    addWritten: (appId, day) =>
      step('addWritten', () => {
        const key = `${appId}#${day}`;
        const summary = summaries.get(key) ?? { written: 0 };
        summaries.set(key, { ...summary, written: summary.written + 1 });
      }),
    addInvalid: (appId, day, expiresAt) =>
      step('addInvalid', () => {
        const total = invalid.get(`${appId}#${day}`) ?? { postbacks: 0, expiresAt };
        invalid.set(`${appId}#${day}`, { postbacks: total.postbacks + 1, expiresAt: Math.max(total.expiresAt, expiresAt) });
      }),
  };
  const rows: SkanReportRows = {
    async summaries(appId, window) {
      const days = new Map<string, DaySummary>();
      for (const [key, summary] of summaries) {
        const day = key.slice(appId.length + 1);
        if (key.startsWith(`${appId}#`) && day >= window.firstDay && day <= window.lastDay) days.set(day, { ...summary });
      }
      const inv = new Map<string, { postbacks: number; expiresAt: number }>();
      for (const [key, total] of invalid) inv.set(key.slice(appId.length + 1), { ...total });
      return { days, invalid: inv };
    },
    async items(appId, day) {
      return [...(items.get(`${appId}#${day}`)?.values() ?? [])];
    },
    async saveSummary(appId, day, written, encoded) {
      const summary = summaries.get(`${appId}#${day}`);
      if (summary?.written === written) summaries.set(`${appId}#${day}`, { written, built: written, rows: encoded });
    },
  };
  const ours = (claim: PostbackClaim) => ledger.get(claim.transactionId)?.claimId === claim.claimId;
  const ports: SkanPostbackPorts = {
    keys: KEYS,
    newClaimId: () => `claim-${++claims}`,
    filing: {
      claim: (claim) =>
        step('claim', () => {
          const holder = ledger.get(claim.transactionId);
          if (!mayTakeOver(holder, claim, claim.nowMs)) return { kind: 'held' as const, holder };
          const firstVerifiedMs = claim.verified ? (holder?.firstVerifiedMs ?? claim.nowMs) : holder?.firstVerifiedMs;
          ledger.set(claim.transactionId, {
            verified: claim.verified,
            stored: false,
            claimedMs: claim.nowMs,
            claimId: claim.claimId,
            ...(firstVerifiedMs === undefined ? {} : { firstVerifiedMs }),
          });
          if (claim.verified && !firstWon.has(claim.transactionId)) firstWon.set(claim.transactionId, claim.nowMs);
          return {
            kind: 'claimed' as const,
            objectKey: `${claim.verified}/${claim.transactionId}`,
            ...(claim.verified ? { firstVerifiedMs } : {}),
          };
        }),
      putRecord: (key, record) => step('putRecord', () => void objects.set(key, record)),
      markStored: (claim) =>
        step('markStored', () => {
          const item = ledger.get(claim.transactionId);
          if (item && ours(claim)) item.stored = true;
        }),
      release: (claim) =>
        step('release', () => {
          const item = ledger.get(claim.transactionId);
          if (item && ours(claim) && !item.stored) item.claimedMs = 0;
        }),
    },
    report: {
      apps: async (id) => (id === String(APP_STORE_ID) ? APP : undefined),
      schemas: { active: async () => ({ version: 3, schema: SCHEMA, updated_ms: 0 }) },
      report: writer,
    },
  };

  async function deliver(body: Postback, nowMs: number, next: Fault) {
    fault = next;
    dead = false;
    try {
      return await takePostback(ports, { body: Buffer.from(JSON.stringify(body)), receivedMs: nowMs });
    } catch (error) {
      if (error instanceof Died) return { kind: 'died' as const };
      throw error;
    } finally {
      fault = undefined;
    }
  }
  return { deliver, rows, firstWon, items };
}

const entries = fc
  .array(
    fc.record({
      verified: fc.boolean(),
      value: fc.constantFrom<Value>('fine63', 'fine1', 'high', 'none'),
      network: fc.constantFrom('meta.skadnetwork', 'other.skadnetwork'),
    }),
    {
      minLength: 1,
      maxLength: 6,
    },
  )
  .map((list) => list.map((e, n) => entryOf(n, e.verified, e.value, e.network)));

const delivery = (count: number) =>
  fc.record({
    entry: fc.nat({ max: count - 1 }),
    replay: fc.boolean(),
    advanceMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 2 * CLAIM_LAPSE_MS }), fc.integer({ min: 1, max: 2 * 86_400_000 })),
    fault: fc.option(fc.record({ kind: fc.constantFrom<'fail' | 'die_after'>('fail', 'die_after'), step: fc.constantFrom(...STEPS) }), {
      nil: undefined,
    }),
    readReport: fc.boolean(),
  });

const WINDOW = { firstDay: '2025-03-01', lastDay: '2025-04-30' };

describe('the SKAN report over any deliveries', () => {
  it('counts each verified transaction id once, under the day its first claim was won, with its first filed value’s estimate', async () => {
    await fc.assert(
      fc.asyncProperty(
        entries.chain((pool) => fc.tuple(fc.constant(pool), fc.array(delivery(pool.length), { maxLength: 25 }))),
        async ([pool, deliveries]: [Entry[], Delivery[]]) => {
          const w = world();
          let now = START;
          let invalidDeliveries = 0;
          for (const d of deliveries) {
            now += d.advanceMs;
            const entry = pool[d.entry] as Entry;
            const body = d.replay ? { ...entry.body, 'conversion-value': 1 } : entry.body;
            if (!entry.verified) invalidDeliveries += 1;
            await w.deliver(body, now, d.fault);
            if (d.readReport) await skanRows(w.rows, APP.app_id, WINDOW, now);
          }
          // Apple retries whatever was not answered 200: once claims lapse, every postback goes through.
          for (const entry of pool) {
            now += CLAIM_LAPSE_MS + 1;
            if (!entry.verified) invalidDeliveries += 1;
            const outcome = await w.deliver(entry.body, now, undefined);
            expect(['stored', 'duplicate']).toContain(outcome.kind);
          }

          const { rows: report, invalidPostbacks } = await skanRows(w.rows, APP.app_id, WINDOW, now);
          // The oracle: every distinct verified id once, its value the first filed (its item's), its day the first won claim's.
          const verifiedIds = [...new Set(pool.filter((e) => e.verified).map((e) => e.id))];
          const filedValue = (id: string): number => {
            const item = [...w.items.values()].flatMap((day) => [...day.values()]).find((i) => i.transaction_id === id);
            return item?.fine === 1 ? ESTIMATE.fine1 : item?.fine === 63 ? ESTIMATE.fine63 : item?.coarse === 'high' ? ESTIMATE.high : 0;
          };
          const expectedByDay = new Map<string, number>();
          for (const id of verifiedIds) {
            const day = localDayOf(w.firstWon.get(id) as number, ZONE);
            expectedByDay.set(day, (expectedByDay.get(day) ?? 0) + 1);
          }
          const byDay = new Map<string, number>();
          for (const row of report) byDay.set(String(row.day), (byDay.get(String(row.day)) ?? 0) + Number(row.postbacks));
          for (const [day, n] of [...byDay]) if (n === 0) byDay.delete(day);
          expect(byDay).toEqual(expectedByDay);

          const sum = (column: string) => report.reduce((total, row) => total + Number(row[column]), 0);
          expect(sum('postbacks')).toBe(verifiedIds.length);
          expect(sum('installs')).toBe(verifiedIds.length);
          expect(sum('with_fine_value') + sum('with_coarse_value') + sum('without_value')).toBe(verifiedIds.length);
          const expectedMicros = verifiedIds.reduce((total, id) => total + Math.round(filedValue(id) * 1e6), 0);
          expect(Math.round(sum('estimated_revenue_usd') * 100)).toBe(
            report.reduce((t, row) => t + Math.round(Number(row.estimated_revenue_usd) * 100), 0),
          );
          expect(Math.abs(sum('estimated_revenue_usd') - expectedMicros / 1e6)).toBeLessThanOrEqual(0.005 * report.length + 1e-9);
          // A filed value is one the id was sent with: its own, or the replay's.
          for (const id of verifiedIds) {
            const entry = pool.find((e) => e.id === id) as Entry;
            expect([ESTIMATE[entry.value], ESTIMATE.fine1]).toContain(filedValue(id));
          }
          const partners = new Set(report.filter((row) => Number(row.postbacks) > 0).map((row) => row.partner));
          for (const partner of partners) expect(['meta', 'other.skadnetwork']).toContain(partner);

          // Invalid ones: each distinct invalid id at least once (its last delivery was filed), never more than it was sent.
          const invalidIds = new Set(pool.filter((e) => !e.verified).map((e) => e.id));
          // They make no row and name no partner: the rows are the verified postbacks' alone.
          expect(invalidPostbacks).toBeGreaterThanOrEqual(invalidIds.size);
          expect(invalidPostbacks).toBeLessThanOrEqual(invalidDeliveries);
          expect(report.filter((row) => row.source_identifier === '9999')).toEqual([]);
          for (const row of report) expect(Number(row.postbacks)).toBeGreaterThan(0);
        },
      ),
      { numRuns: 300 },
    );
  });
});
