/**
 * An independent oracle for the report rows: the rules of docs/aggregation.md#attribution and docs/architecture.md section 7 written the
 * plain way, in memory, over the accepted events in the order they were taken. It shares no code
 * with the aggregator (no claims, journals or tokens), so the two can only agree by both being right.
 * The aggregation property tests (through test/support/aggregation-oracle.ts) and the traffic
 * simulator's --check (sim/check.ts) both use it.
 *
 * With `performance`, the same walk also gives the performance report's cells (docs/analytics.md,
 * Rows): per (local day, partner, campaign, country, platform), installs and their flags on the
 * install's day and dimensions, revenue on the event's day and cohort revenue and retention on the
 * install's day, both under the dimensions of the install the event belongs to; ad revenue
 * (`ad_revenue` events, each impression of an install once) into counters of its own, on the same
 * days, and into the events family as any event, never the revenue family.
 */

import { localDay, UTC } from './local-days';

export interface OracleEvent {
  installUuid: string;
  eventId: string;
  name: string;
  /** Corrected time. */
  tsMs: number;
  revenueUsd?: number;
  /** On `ad_revenue` events: the impression, counted once per install whatever event ids carry it. */
  impressionId?: string;
  deviceHash?: string;
  /** The event's platform (installs). */
  platform?: string;
  /** The viewer country of the request that carried it (installs). */
  country?: string;
}

/** The attribution the test expects for an install event (it made the clicks, so it knows). */
export interface OracleAttribution {
  partner: string;
  type: 'deterministic' | 'probabilistic' | 'organic';
  fraud: boolean;
  /** The matched click's link campaign and viewer country (none for organic installs). */
  campaign?: string;
  clickCountry?: string;
}

export type OracleRows = Record<'attribution' | 'revenue' | 'cohorts' | 'events', Record<string, Record<string, number>>>;

const DAY = 86_400_000;
const micros = (usd: number | undefined) => (usd !== undefined && usd > 0 ? Math.round(usd * 1_000_000) : 0);

/** The value of a dimension nobody gave. */
export const NONE = '(none)';
/** Counters of a performance cell, as docs/analytics.md names them. */
export const CELL_COUNTERS = [
  'clicks',
  'installs',
  'organic',
  'reinstalls',
  'fraud_flagged',
  'revenue_micros',
  'cohort_d0_micros',
  'cohort_d7_micros',
  'cohort_d30_micros',
  'retained_d1',
  'retained_d7',
  'retained_d30',
  'cost_micros',
  'network_clicks',
  'impressions',
  'reengagements',
  'recent_revenue_micros',
  // Ad revenue (docs/analytics.md, "Ad revenue"): impressions on their day and cohort ad revenue, never purchases' counters.
  'ad_revenue_micros',
  'cohort_ad_d0_micros',
  'cohort_ad_d7_micros',
  'cohort_ad_d30_micros',
] as const;
export type CellCounter = (typeof CELL_COUNTERS)[number];
/** Performance cells by `day|partner|campaign|country|platform`. */
export type PerfCells = Map<string, Partial<Record<CellCounter, number>>>;

export const cellKey = (day: string, dims: readonly string[]) => [day, ...dims].join('|');

export function addToCell(cells: PerfCells, key: string, counters: Partial<Record<CellCounter, number>>): void {
  const cell = cells.get(key) ?? {};
  cells.set(key, cell);
  for (const [name, value] of Object.entries(counters) as [CellCounter, number][]) if (value !== 0) cell[name] = (cell[name] ?? 0) + value;
}

export interface OracleOptions {
  /** The app's IANA zone: every row's day is its local day (UTC by default). */
  timeZone?: string;
  /** Filled with the performance cells of the events (clicks and cost are the caller's to add). */
  performance?: PerfCells;
  /**
   * The install event each other event counts against, for a run whose counting order the caller
   * cannot know (concurrent and failed deliveries): the install named must come before the event
   * in `events`, and undefined leaves the event held. The caller checks on its own that each is an
   * install the rules allow (test/unit/aggregation/exactly-once-faults.test.ts reads them from the
   * event stream). Without it, the order of `events` decides, as the rules say.
   */
  countsAgainst?: (event: OracleEvent) => string | undefined;
}

/** Cohort revenue windows: N x 24 h after the install (D0 is the first 24 hours). */
const COHORT_WINDOWS = { cohort_d0_micros: 1, cohort_d7_micros: 7, cohort_d30_micros: 30 } as const;
/** The same windows of ad revenue. */
const COHORT_AD_WINDOWS = { cohort_ad_d0_micros: 1, cohort_ad_d7_micros: 7, cohort_ad_d30_micros: 30 } as const;

/** What counts an event once: its event id, or an ad impression's id (docs/ingestion.md, "Ad revenue"). */
export const identityOf = (event: Pick<OracleEvent, 'installUuid' | 'eventId' | 'name' | 'impressionId'>) =>
  event.name === 'ad_revenue' && event.impressionId !== undefined
    ? `${event.installUuid}|ad#${event.impressionId}`
    : `${event.installUuid}|${event.eventId}`;

export function oracleRows(
  events: readonly OracleEvent[],
  attribute: (event: OracleEvent, reinstall: boolean) => OracleAttribution,
  options: OracleOptions = {},
): OracleRows {
  const zone = options.timeZone ?? UTC;
  const day = (ms: number) => localDay(ms, zone);
  const perf = options.performance;
  const cell = (ms: number, dims: readonly string[], counters: Partial<Record<CellCounter, number>>) => {
    if (perf) addToCell(perf, cellKey(day(ms), dims), counters);
  };
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
  type Member = { id: string; tsMs: number; partner: string; dims: readonly string[] };
  const current = new Map<string, Member>();
  const members = new Map<string, Member>();
  const held = new Map<string, OracleEvent[]>();
  const devices = new Map<string, string>();

  const apply = (event: OracleEvent, member: Member) => {
    const revenue = micros(event.revenueUsd);
    if (revenue > 0 && event.name === 'ad_revenue') {
      // Its own counters, never the revenue report's (the interface's revenue is purchases and subscriptions).
      cell(event.tsMs, member.dims, { ad_revenue_micros: revenue });
      for (const [counter, n] of Object.entries(COHORT_AD_WINDOWS))
        if (event.tsMs < member.tsMs + n * DAY) cell(member.tsMs, member.dims, { [counter]: revenue });
    } else if (revenue > 0) {
      // The traffic has no deep_link_open: revenue by most recent attribution is the install's (reengagementOracle has the opens).
      cell(event.tsMs, member.dims, { revenue_micros: revenue, recent_revenue_micros: revenue });
      for (const [counter, n] of Object.entries(COHORT_WINDOWS))
        if (event.tsMs < member.tsMs + n * DAY) cell(member.tsMs, member.dims, { [counter]: revenue });
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
        cell(member.tsMs, member.dims, { [`retained_d${n}`]: 1 });
      }
    }
  };

  for (const event of events) {
    const identity = identityOf(event);
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
      const dims = [decided.partner, decided.campaign ?? NONE, decided.clickCountry ?? event.country ?? NONE, event.platform ?? NONE];
      cell(event.tsMs, dims, {
        installs: 1,
        organic: decided.type === 'organic' ? 1 : 0,
        reinstalls: reinstall ? 1 : 0,
        fraud_flagged: decided.fraud ? 1 : 0,
      });
      const member: Member = { id: event.eventId, tsMs: event.tsMs, partner: decided.partner, dims };
      members.set(identity, member);
      // The current install is the latest in time (a tie: the one counted last), not the latest counted.
      const previous = current.get(event.installUuid);
      if (!previous || event.tsMs >= previous.tsMs) current.set(event.installUuid, member);
      apply(event, member);
      if (first) for (const waiting of held.get(event.installUuid) ?? []) apply(waiting, member);
      held.delete(event.installUuid);
      continue;
    }
    const named = options.countsAgainst ? options.countsAgainst(event) : undefined;
    const member = named === undefined ? current.get(event.installUuid) : members.get(`${event.installUuid}|${named}`);
    if (named !== undefined && !member) throw new Error(`${identity} counts against ${named}, not an install of its uuid before it`);
    if (member) apply(event, member);
    else held.set(event.installUuid, [...(held.get(event.installUuid) ?? []), event]);
  }
  return rows;
}

/** What rule 1 of the attribution needs to know of a click. */
export interface OracleClick {
  app_id: string;
  partner: string;
  ts_ms: number;
  lookback_days?: number;
}

/**
 * Rule 1 of docs/aggregation.md#attribution written plainly, for apps without probabilistic
 * matching: of the clicks the install names, in order (its click_id, then its Play referrer's), the
 * first that is a click of the app made at or before the install and no more than its lookback (7
 * days unless the click says) before it wins; a click-to-install time under 10 s flags the install.
 * None: organic.
 */
export function attributeByClicks(
  named: readonly (string | undefined)[],
  install: { appId: string; tsMs: number },
  clickOf: (clickId: string) => OracleClick | undefined,
): OracleAttribution {
  for (const clickId of named) {
    const click = clickId === undefined ? undefined : clickOf(clickId);
    if (!click || click.app_id !== install.appId || click.ts_ms > install.tsMs) continue;
    if (install.tsMs - click.ts_ms > (click.lookback_days ?? 7) * DAY) continue;
    return { partner: click.partner, type: 'deterministic', fraud: install.tsMs - click.ts_ms < 10_000 };
  }
  return { partner: 'organic', type: 'organic', fraud: false };
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

/**
 * Re-engagement (docs/deep-links.md, "Re-engagement"), the plain way: one install of one
 * install_uuid, its objects in the order they were counted, each a list of its events. An open by a
 * link of the app later than the install re-engages: one per (local day, link). A purchase is
 * credited to the latest re-engaging open (a tie: the greater event id) of its own object or an
 * earlier one with open <= purchase < open + window; otherwise to the install. Cells are
 * "day|partner|campaign" with `reengagements` and `recent_revenue_micros`.
 */
export interface OracleEngagement {
  readonly partner: string;
  readonly campaign?: string;
}
export type OracleReengagementEvent =
  | { readonly kind: 'open'; readonly eventId: string; readonly tsMs: number; readonly link?: OracleEngagement & { readonly id: string } }
  | { readonly kind: 'purchase'; readonly eventId: string; readonly tsMs: number; readonly revenueUsd: number };

export function reengagementOracle(
  install: OracleEngagement & { readonly tsMs: number },
  objects: readonly (readonly OracleReengagementEvent[])[],
  windowDays: number,
  timeZone: string = UTC,
): Record<string, Record<string, number>> {
  const cells: Record<string, Record<string, number>> = {};
  const add = (day: string, who: OracleEngagement, counter: string, value: number) => {
    const key = [day, who.partner, who.campaign ?? NONE].join('|');
    const cell = cells[key] ?? {};
    cell[counter] = (cell[counter] ?? 0) + value;
    cells[key] = cell;
  };
  const known: { eventId: string; tsMs: number; who: OracleEngagement }[] = [];
  const counted = new Set<string>();
  for (const object of objects) {
    for (const event of object) {
      if (event.kind === 'open' && event.link && event.tsMs > install.tsMs)
        known.push({ eventId: event.eventId, tsMs: event.tsMs, who: event.link });
    }
    for (const event of object) {
      const day = localDay(event.tsMs, timeZone);
      if (event.kind === 'open') {
        if (!event.link || event.tsMs <= install.tsMs || counted.has(`${day}|${event.link.id}`)) continue;
        counted.add(`${day}|${event.link.id}`);
        add(day, event.link, 'reengagements', 1);
        continue;
      }
      let best: (typeof known)[number] | undefined;
      for (const open of known) {
        if (windowDays === 0 || open.tsMs > event.tsMs || event.tsMs >= open.tsMs + windowDays * DAY) continue;
        if (!best || open.tsMs > best.tsMs || (open.tsMs === best.tsMs && open.eventId > best.eventId)) best = open;
      }
      add(day, best ? best.who : install, 'recent_revenue_micros', micros(event.revenueUsd));
    }
  }
  return cells;
}
