import { FirstLaunchAnswers } from '../../../functions/adapters/first-launch-store';
import { MemoryLedger, MemoryRowStore } from '../../../functions/adapters/memory/aggregate-store';
import { MemoryInstallStore } from '../../../functions/adapters/memory/install-store';
import { MemoryStreamStore } from '../../../functions/adapters/memory/stream-store';
import {
  type AggregationPorts,
  aggregateDeliveries,
  type DeliveryOutcome,
  isRetried,
} from '../../../functions/domain/aggregation/aggregate';
import type { DayPage } from '../../../functions/domain/aggregation/day-pages';
import { PoisonMessageError } from '../../../functions/domain/aggregation/message';
import { type LinkFacts, resolveOpen } from '../../../functions/domain/aggregation/reengagement';
import { ROW_FAMILIES, type RowFamily } from '../../../functions/domain/aggregation/rows';
import type { AttributionLookups } from '../../../functions/domain/attribution/decision';
import { installDecision } from '../../../functions/domain/attribution/first-launch';
import { auditKey } from '../../../functions/domain/audit/keys';
import { auditLines } from '../../../functions/domain/audit/lines';
import { aggregationMessage } from '../../../functions/domain/audit/message';
import type { AuditLine } from '../../../functions/domain/audit/types';
import { dayOf } from '../../../functions/domain/common/days';
import { sha256Hex } from '../../../functions/domain/common/hashing';
import { isPlainObject } from '../../../functions/domain/common/json';
import type { RevenueConversion } from '../../../functions/domain/fx/event-revenue';
import { convertToUsd } from '../../../functions/domain/fx/rates';
import { adRevenueOf, judgeEvents, refundOf } from '../../../functions/domain/ingest/event-validation';
import type { ClickRecord } from '../../../functions/domain/links/click';
import { CONSENT_SK, type ConsentRecord, isLater } from '../../../functions/domain/privacy/consent';
import type { ProbabilisticBasis } from '../../../functions/domain/privacy/probabilistic-basis';
import type { OracleRows } from '../../support/aggregation-oracle';

export const APP = 'app_0123456789abcdef0123';
export const COMPANY = 'com_0123456789abcdef0123';
export const LEASE_MS = 75_000;
export const T0 = Date.UTC(2026, 5, 1, 12);

/**
 * The aggregation use case on in-memory ports (the same ones `admin rebuild` uses), with audit
 * objects made by the real ingestion code, clicks and honeypot blocks the test sets, and a clock
 * the test moves.
 */
export function world(
  options: {
    probabilistic?: boolean;
    probabilisticBasis?: ProbabilisticBasis;
    maxPull?: boolean;
    timeZone?: string;
    reengagementWindowDays?: number;
  } = {},
) {
  const installs = new MemoryInstallStore();
  const rows = new MemoryRowStore();
  const ledger = new MemoryLedger();
  const stream = new MemoryStreamStore();
  const objects = new Map<string, AuditLine[]>();
  const clicks = new Map<string, ClickRecord>();
  /** Links by id, as deep_link_opens resolve them (re-engagement). */
  const links = new Map<string, LinkFacts>();
  /** Honeypot blocks as `<company_id>#<ip>`: a block is its company's own. */
  const blocked = new Set<string>();
  const block = (ip: string, companyId = COMPANY) => void blocked.add(`${companyId}#${ip}`);
  const clock = { now: T0 };

  const lookups: AttributionLookups = {
    // As the old clicks table answers (by id alone): a click of another app is found and refused.
    clickById: async (_appId, clickId) => clicks.get(clickId),
    latestClick: async (query) =>
      [...clicks.values()]
        .filter(
          (c) =>
            c.app_id === query.appId &&
            c.ip === query.ip &&
            c.platform === query.platform &&
            c.ts_ms >= query.fromMs &&
            c.ts_ms <= query.toMs,
        )
        .sort((a, b) => b.ts_ms - a.ts_ms)[0],
    honeypotBlocked: async (companyId, ip) => blocked.has(`${companyId}#${ip}`),
    deviceSeenElsewhere: async (appId, deviceHash, installUuid) =>
      [...installs.items.entries()].some(
        ([pk, items]) => pk !== `${appId}#${installUuid}` && items.get('device')?.app_device === `${appId}#${deviceHash}`,
      ),
  };

  const ports: AggregationPorts = {
    installs,
    rows,
    ledger,
    stream,
    decide: (facts, known) => installDecision(facts, lookups, new FirstLaunchAnswers(installs), known),
    readAudit: async (message) => {
      const lines = objects.get(message.audit_key);
      if (!lines) throw new PoisonMessageError('missing_object', message.audit_key);
      return lines;
    },
    app: async (appId) =>
      appId === APP
        ? {
            probabilistic: options.probabilistic ?? false,
            ...(options.probabilisticBasis ? { probabilistic_basis: options.probabilisticBasis } : {}),
            ...(options.maxPull ? { max_pull: true } : {}),
            ...(options.timeZone ? { time_zone: options.timeZone } : {}),
            ...(options.reengagementWindowDays === undefined ? {} : { reengagement_window_days: options.reengagementWindowDays }),
          }
        : undefined,
    reengagementLink: ({ appId, open }) =>
      resolveOpen({ link: async (linkId) => links.get(linkId), click: async (_appId, clickId) => clicks.get(clickId) }, appId, open),
  };

  let sequence = 0;
  /** Takes a batch as POST /event would (same verdicts and audit lines) and returns its queue message. */
  function upload(
    events: readonly object[],
    batch: { receivedMs?: number; sentAtMs?: number; ip?: string; body?: string; country?: string } = {},
  ): string {
    const receivedMs = batch.receivedMs ?? clock.now;
    const audit = {
      companyId: COMPANY,
      appId: APP,
      receivedMs,
      bodySha256: sha256Hex(batch.body ?? `${JSON.stringify(events)}#${sequence++}`),
      clientIp: batch.ip ?? '198.51.100.7',
      sdkVersion: 'test/1',
      // The viewer country the edge gave the batch request (CloudFront-Viewer-Country).
      ...(batch.country ? { country: batch.country } : {}),
    };
    const { verdicts, accepted, rejected } = judgeEvents(events, batch.sentAtMs ?? receivedMs, receivedMs);
    // Ad impressions and refunds in US dollars converted as ingest does (no rate needed): their dollars are the line's revenue_usd.
    const conversions = new Map<number, RevenueConversion>();
    for (const verdict of verdicts) {
      const entry = events[verdict.index];
      const impression = verdict.status === 'accepted' && isPlainObject(entry) ? (adRevenueOf(entry) ?? refundOf(entry)) : undefined;
      const usd = impression && convertToUsd(new Map(), impression.amount, impression.currency, dayOf(verdict.corrected_ts ?? 0));
      if (impression && usd)
        conversions.set(verdict.index, { revenueUsd: usd.usd, fx: { ...impression, rate: usd.rate, rate_day: usd.rate_day } });
    }
    const key = auditKey(audit);
    objects.set(key, auditLines(events, verdicts, audit, conversions));
    return JSON.stringify(aggregationMessage('audit-bucket', key, audit, { accepted, rejected }));
  }

  async function deliver(bodies: readonly string[], using: AggregationPorts = ports): Promise<DeliveryOutcome[]> {
    return aggregateDeliveries(
      using,
      bodies.map((body, i) => ({ id: `m${i}`, body })),
      { nowMs: () => clock.now, leaseMs: LEASE_MS },
    );
  }

  /** The rows as the oracle writes them: family (every one, the perf families too) to "day|group..." to non-zero counters. */
  function table(): OracleRows & Record<RowFamily, Record<string, Record<string, number>>> {
    const out = {} as Record<RowFamily, Record<string, Record<string, number>>>;
    for (const family of ROW_FAMILIES) {
      out[family] = {};
      for (const row of rows.rowsOf(APP, family)) {
        const counters = Object.fromEntries(Object.entries(row.counters).filter(([, v]) => v !== 0));
        if (Object.keys(counters).length > 0) out[family][[row.key.day, ...row.key.group].join('|')] = counters;
      }
    }
    return out;
  }

  /** The attribution family as its day pages hold it, in table()'s form: it must equal the rows'. */
  function attributionPages(): OracleRows['attribution'] {
    const out: OracleRows['attribution'] = {};
    for (const [day, page] of [...(rows.pages.get(`${APP}#attribution`) ?? new Map<string, DayPage>())].sort(([a], [b]) =>
      a < b ? -1 : 1,
    )) {
      if (page.overflow) throw new Error(`the page of ${day} overflowed`);
      for (const row of page.rows) {
        const counters = Object.fromEntries(Object.entries(row.counters).filter(([, v]) => v !== 0));
        if (Object.keys(counters).length > 0) out[[day, ...row.group].join('|')] = counters;
      }
    }
    return out;
  }

  /** The stream's events as a reader pages them: every line of every object, in key order. */
  const streamEvents = () => stream.lines().map((line) => line.event);

  return {
    ports,
    installs,
    rows,
    ledger,
    stream,
    streamEvents,
    objects,
    clicks,
    links,
    blocked,
    block,
    clock,
    upload,
    deliver,
    table,
    attributionPages,
    lookups,
  };
}

/** The world's ports with the consent store the aggregator keeps (latest wins), as functions/aggregator.ts wires it. */
export function withConsentStore(w: ReturnType<typeof world>): AggregationPorts {
  return {
    ...w.ports,
    consents: async (appId, latest) => {
      for (const [installUuid, record] of latest) {
        const pk = `${appId}#${installUuid}`;
        const kept = await w.installs.get<ConsentRecord>(pk, CONSENT_SK);
        if (kept && !isLater(record, kept)) continue;
        const partition = w.installs.items.get(pk) ?? new Map<string, Record<string, unknown>>();
        partition.set(CONSENT_SK, { pk, sk: CONSENT_SK, ...record });
        w.installs.items.set(pk, partition);
      }
    },
  };
}

export function click(overrides: Partial<ClickRecord> & { click_id: string; ts_ms: number }): ClickRecord {
  return {
    link_id: 'link-1',
    app_id: APP,
    company_id: COMPANY,
    partner: 'meta',
    ip: '198.51.100.7',
    ip_block: '198.51.100.0/24',
    user_agent: 'ua',
    platform: 'ios',
    app_ip_platform: '',
    expires_at: Math.floor(overrides.ts_ms / 1000) + 7 * 86_400,
    ...overrides,
  };
}

/**
 * The ports with a store that dies after `limit` writes: that write and everything after it
 * fails, reads included, as when the function is killed or the table becomes unreachable.
 */
export function failingAfter(ports: AggregationPorts, limit: number) {
  let writes = 0;
  const dead = () => writes >= limit;
  const write =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      if (dead()) throw new Error('store unavailable');
      writes++;
      return fn(...args);
    };
  const read =
    <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      if (dead()) throw new Error('store unavailable');
      return fn(...args);
    };
  const { installs, ledger, rows } = ports;
  const wrapped: AggregationPorts = {
    ...ports,
    installs: {
      get: read(installs.get.bind(installs)),
      query: read(installs.query.bind(installs)),
      claimItem: write(installs.claimItem.bind(installs)),
      claimAttributes: write(installs.claimAttributes.bind(installs)),
      replaceHead: write(installs.replaceHead.bind(installs)),
    } as AggregationPorts['installs'],
    ledger: {
      marks: read(ledger.marks.bind(ledger)),
      lanes: read(ledger.lanes.bind(ledger)),
      include: write(ledger.include.bind(ledger)),
      void: write(ledger.void.bind(ledger)),
      take: write(ledger.take.bind(ledger)),
      reserveAfter: write(ledger.reserveAfter.bind(ledger)),
      settle: write(ledger.settle.bind(ledger)),
      release: write(ledger.release.bind(ledger)),
      finishLegacy: write(ledger.finishLegacy.bind(ledger)),
    },
    rows: { add: write(rows.add.bind(rows)), refreshPages: write(rows.refreshPages.bind(rows)) },
    ...(ports.usage ? { usage: { add: write(ports.usage.add.bind(ports.usage)) } } : {}),
    ...(ports.stream
      ? {
          stream: {
            get: read(ports.stream.get.bind(ports.stream)),
            put: write(ports.stream.put.bind(ports.stream)),
            delete: write(ports.stream.delete.bind(ports.stream)),
          },
        }
      : {}),
    readAudit: read(ports.readAudit),
    decide: read(ports.decide),
  };
  return { ports: wrapped, writes: () => writes };
}

/**
 * Delivers again, after the leases run out, each body that any of the deliveries left to come
 * back (`deliveries[k][i]` is the outcome of `bodies[i]` in delivery k), until none comes back;
 * the test fails when one still does after five rounds.
 */
export async function redeliverUntilDone(
  w: Pick<ReturnType<typeof world>, 'clock' | 'deliver'>,
  bodies: readonly string[],
  ...deliveries: readonly (readonly DeliveryOutcome[])[]
): Promise<void> {
  let pending = bodies.filter((_, i) => deliveries.some((outcomes) => isRetried(outcomes[i] as DeliveryOutcome)));
  for (let round = 0; round < 5 && pending.length > 0; round++) {
    w.clock.now += LEASE_MS + 1;
    const again = await w.deliver(pending);
    pending = pending.filter((_, i) => isRetried(again[i] as DeliveryOutcome));
  }
  expect(pending).toEqual([]);
}
