/**
 * An independent oracle for the report rows: the rules of docs/aggregation.md#attribution and docs/architecture.md section 7 written the
 * plain way, in memory, over the accepted events in the order they were taken. It shares no code
 * with the aggregator (no claims, journals or tokens), so the two can only agree by both being right.
 * The aggregation property tests (through test/support/aggregation-oracle.ts) and the traffic
 * simulator's --check (sim/check.ts) both use it.
 */

export interface OracleEvent {
  installUuid: string;
  eventId: string;
  name: string;
  /** Corrected time. */
  tsMs: number;
  revenueUsd?: number;
  deviceHash?: string;
}

/** The attribution the test expects for an install event (it made the clicks, so it knows). */
export interface OracleAttribution {
  partner: string;
  type: 'deterministic' | 'probabilistic' | 'organic';
  fraud: boolean;
}

export type OracleRows = Record<'attribution' | 'revenue' | 'cohorts' | 'events', Record<string, Record<string, number>>>;

const DAY = 86_400_000;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const micros = (usd: number | undefined) => (usd !== undefined && usd > 0 ? Math.round(usd * 1_000_000) : 0);

export function oracleRows(
  events: readonly OracleEvent[],
  attribute: (event: OracleEvent, reinstall: boolean) => OracleAttribution,
): OracleRows {
  const rows: OracleRows = { attribution: {}, revenue: {}, cohorts: {}, events: {} };
  const bump = (family: keyof OracleRows, key: string, counters: Record<string, number>) => {
    const row = rows[family][key] ?? {};
    rows[family][key] = row;
    for (const [name, value] of Object.entries(counters)) if (value !== 0) row[name] = (row[name] ?? 0) + value;
  };
  const seen = new Set<string>();
  const unique = new Set<string>();
  const payers = new Set<string>();
  const retained = new Set<string>();
  const current = new Map<string, { id: string; tsMs: number; partner: string }>();
  const held = new Map<string, OracleEvent[]>();
  const devices = new Map<string, string>();

  const apply = (event: OracleEvent, member: { id: string; tsMs: number; partner: string }) => {
    const revenue = micros(event.revenueUsd);
    if (revenue > 0) {
      bump('revenue', `${day(event.tsMs)}|${member.partner}`, { purchases: 1, revenue_micros: revenue });
      const payer = `${event.installUuid}|${day(event.tsMs)}|${member.partner}`;
      if (!payers.has(payer)) {
        payers.add(payer);
        bump('revenue', `${day(event.tsMs)}|${member.partner}`, { payers: 1 });
      }
    }
    for (const n of [1, 7, 30]) {
      const offset = event.tsMs - member.tsMs;
      const key = `${event.installUuid}|${member.id}|${n}`;
      if (offset >= n * DAY && offset < (n + 1) * DAY && !retained.has(key)) {
        retained.add(key);
        bump('cohorts', day(member.tsMs), { [`d${n}`]: 1 });
      }
    }
  };

  for (const event of events) {
    const identity = `${event.installUuid}|${event.eventId}`;
    if (seen.has(identity)) continue;
    seen.add(identity);
    bump('events', `${day(event.tsMs)}|${event.name}`, { events: 1, revenue_micros: micros(event.revenueUsd) });
    const uniqueKey = `${event.installUuid}|${day(event.tsMs)}|${event.name}`;
    if (!unique.has(uniqueKey)) {
      unique.add(uniqueKey);
      bump('events', `${day(event.tsMs)}|${event.name}`, { unique_installs: 1 });
    }
    if (event.name === 'install') {
      const first = !current.has(event.installUuid);
      const deviceOwner = event.deviceHash ? devices.get(event.deviceHash) : undefined;
      const reinstall = !first || (deviceOwner !== undefined && deviceOwner !== event.installUuid);
      if (event.deviceHash && first && !devices.has(event.deviceHash)) devices.set(event.deviceHash, event.installUuid);
      const decided = attribute(event, reinstall);
      bump('attribution', `${day(event.tsMs)}|${decided.partner}|${decided.type}`, {
        installs: 1,
        organic: decided.type === 'organic' ? 1 : 0,
        reinstalls: reinstall ? 1 : 0,
        fraud_flagged: decided.fraud ? 1 : 0,
      });
      bump('cohorts', day(event.tsMs), { installs: 1 });
      const member = { id: event.eventId, tsMs: event.tsMs, partner: decided.partner };
      current.set(event.installUuid, member);
      apply(event, member);
      if (first) for (const waiting of held.get(event.installUuid) ?? []) apply(waiting, member);
      held.delete(event.installUuid);
      continue;
    }
    const member = current.get(event.installUuid);
    if (member) apply(event, member);
    else held.set(event.installUuid, [...(held.get(event.installUuid) ?? []), event]);
  }
  return rows;
}

/** The rows without zero counters, and without rows left empty: how the tables compare with the oracle. */
export function dropZeros(rows: OracleRows): OracleRows {
  for (const family of Object.values(rows)) {
    for (const [key, counters] of Object.entries(family)) {
      for (const [name, value] of Object.entries(counters)) if (value === 0) delete counters[name];
      if (Object.keys(counters).length === 0) delete family[key];
    }
  }
  return rows;
}
