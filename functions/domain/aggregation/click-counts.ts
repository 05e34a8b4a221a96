import { type ClickCount, clickCountSortKey } from '../analytics/click-counts';
import type { DimensionValues } from '../analytics/performance';
import { dimensionValue } from './rows';

/**
 * The click-count lane (docs/adr/0008-click-counts-from-the-click-log.md): the aggregator's
 * schedule counts an app's clicks from the click log (the click_log table, and the old clicks table's
 * `by_app_hour` index for the hours before click_log: `readsLegacy`) into
 * the `click` counter items, where the link redirect used to add 1 per click. A click is counted
 * once across a crash between any two writes:
 *
 * - The app's **state** (one item: ClickLogState) holds, per UTC hour, the largest
 *   `(ts_ms, click_id)` counted (the hour's watermark), the first hour not yet closed, and the
 *   apply in flight (`pending`), with a revision every write checks.
 * - An **apply** is written in this order: (1) the state with `pending` (its id, hour, old and new
 *   watermark); (2) one conditional ADD per counter item it touches, each setting `applied = <id>`
 *   on the item and refused where it already holds that id; (3) `v` on each touched day's
 *   `perf_stamp`, after the counts, so a page built at the new `v` holds them; (4) the state with
 *   the hour's new watermark and no `pending`. A retry of an apply left pending reads the same
 *   clicks (those between its two watermarks) and writes the same items, skipping the ones that
 *   hold its id: nothing is lost or counted twice, and a stamp moved twice only rebuilds a page.
 * - Applies of an app run one at a time: the lane runs under a lease (CLICK_LANE_LEASE), so an
 *   apply a dead invocation left pending is resumed only once that invocation can no longer write.
 * - The log is read eventually consistently: an hour is counted up to `now - HORIZON_MS` only, so
 *   a click that becomes visible late is still after the watermark.
 *
 * Only a click that carries `count_day` (its local day, set by the redirect since this lane
 * counts it) is counted: one recorded before was counted by the redirect itself.
 */

/** What the lane needs of a logged click. */
export interface LoggedClick {
  readonly click_id: string;
  readonly ts_ms: number;
  readonly link_id: string;
  readonly partner: string;
  readonly campaign?: string;
  readonly country?: string;
  readonly platform: string;
  /** The click's local day in its app's zone at the redirect: present on the clicks this lane counts. */
  readonly count_day?: string;
  /** Read from the old clicks table (recorded before click_log). */
  readonly legacy?: boolean;
}

/** A position in an hour of the log: everything at or before `(ts, cid)` is counted, `n` clicks in all. */
export interface HourMark {
  readonly ts: number;
  readonly cid: string;
  readonly n: number;
}

/** An apply in flight: the clicks of `hour` after `from` up to and including `to`. */
export interface PendingApply {
  readonly id: string;
  readonly hour: string;
  readonly from: HourMark;
  readonly to: HourMark;
}

export interface ClickLogState {
  /** 1 more with every write of the state; each write is conditional on the revision it read. */
  readonly rev: number;
  /** The first UTC hour (`YYYY-MM-DDTHH`) not yet closed: every hour before it is counted whole. */
  readonly next: string;
  /** The watermarks of the hours from `next` on that have one. */
  readonly hours: Readonly<Record<string, HourMark>>;
  readonly pending?: PendingApply;
  /**
   * The hour of the first click the lane counted from click_log (absent until then): the old
   * clicks table is read for the hours up to the one after it only (readsLegacy).
   */
  readonly log_from?: string;
  /**
   * Set when the old clicks table held no click at all as the lane looked (ClickCountPorts.legacyHolds):
   * a deployment made after click_log, or one whose old clicks have all expired. The old table is then
   * never read for the app (readsLegacy), which is most of what a report's top-up would read.
   */
  readonly no_legacy?: true;
}

export interface ClickCountPorts {
  /** The app's state, read consistently; undefined before the lane's first run for the app. */
  state(appId: string): Promise<ClickLogState | undefined>;
  /** Writes the state if the stored one is still at `expectedRev` (undefined: none stored); false otherwise. */
  putState(appId: string, state: ClickLogState, expectedRev: number | undefined): Promise<boolean>;
  /** Adds `count.clicks` to its counter item and sets `applied = applyId`, unless the item already holds that id. */
  addOnce(appId: string, applyId: string, count: ClickCount): Promise<void>;
  /** `v` 1 up on the day's perf_stamp. */
  stamp(appId: string, day: string): Promise<void>;
  /** The app's logged clicks of a UTC hour with `ts_ms >= fromTs`, in any order; those of the old clicks table too when `withLegacy`. */
  clicksAfter(appId: string, hour: string, fromTs: number, withLegacy: boolean): Promise<readonly LoggedClick[]>;
  /** Whether the old clicks table holds any click, of any app (one item read). */
  legacyHolds(): Promise<boolean>;
}

/** How far behind now the lane counts: the redirect's run and the index's lag (ADR 0008). */
export const HORIZON_MS = 5_000;
/** At most this many clicks per apply: a busy hour is counted in several applies. */
export const CLICKS_PER_APPLY = 5_000;
/** An app seen for the first time is counted from this many hours back (its clicks before the lane's first run). */
export const FIRST_HOURS_BACK = 2;
/** At most this many hours of an app per run, so one app far behind does not hold up the others. */
export const HOURS_PER_RUN = 48;

const HOUR_MS = 3_600_000;
export const hourOf = (ms: number): string => new Date(ms).toISOString().slice(0, 13);
const hourStartMs = (hour: string): number => Date.parse(`${hour}:00:00.000Z`);
const nextHour = (hour: string): string => hourOf(hourStartMs(hour) + HOUR_MS);
/** Before every click of an hour (a click's ts_ms is an epoch time, never negative). */
const ZERO: HourMark = { ts: -1, cid: '', n: 0 };

/** Whether the click is after the mark in the log's order (ts_ms, then click_id). */
export const isAfter = (click: Pick<LoggedClick, 'ts_ms' | 'click_id'>, mark: Pick<HourMark, 'ts' | 'cid'>): boolean =>
  click.ts_ms > mark.ts || (click.ts_ms === mark.ts && click.click_id > mark.cid);

const byLogOrder = (a: LoggedClick, b: LoggedClick): number =>
  a.ts_ms - b.ts_ms || (a.click_id < b.click_id ? -1 : a.click_id > b.click_id ? 1 : 0);

/** The counter items the clicks add to: one per (count_day, dimensions, link), in key order. */
export function countsOf(clicks: readonly LoggedClick[]): ClickCount[] {
  const sums = new Map<string, ClickCount>();
  for (const click of clicks) {
    if (click.count_day === undefined) continue;
    const dims: DimensionValues = [
      dimensionValue(click.partner),
      dimensionValue(click.campaign),
      dimensionValue(click.country),
      dimensionValue(click.platform),
    ];
    const key = clickCountSortKey(click.count_day, dims, click.link_id);
    const sum = sums.get(key);
    sums.set(key, { day: click.count_day, dims, linkId: click.link_id, clicks: (sum?.clicks ?? 0) + 1 });
  }
  return [...sums.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, count]) => count);
}

/**
 * Whether the hour may hold clicks of the old clicks table (docs/adr/0008, section 2 revised,
 * "Migration"): until the lane has counted a click of click_log, every hour; then the hours up to
 * the one after that click's. The upgraded redirect writes only click_log, and the old one's last
 * clicks were made before the upgrade finished, so before the first click_log click but for the
 * seconds two versions of the function run side by side; the hour after covers those seconds.
 * The same state gives a retried apply the hour's same reads.
 */
export const readsLegacy = (state: Pick<ClickLogState, 'log_from' | 'no_legacy'> | undefined, hour: string): boolean =>
  state?.no_legacy !== true && (state?.log_from === undefined || hour <= nextHour(state.log_from));

/**
 * The state with `no_legacy` when the old clicks table is empty and no apply is pending (a pending
 * apply is resumed with the reads it was opened with); the state unchanged otherwise. Looked at
 * while the lane still reads the old table for some hour: until the app's first click_log click
 * (log_from) on a deployment that had clicks before click_log, at each run; on a deployment made
 * after it, at the first. Nothing writes the old table after the upgrade, so empty stays empty;
 * the one exception is the old redirect's last seconds during the upgrade itself, when the old
 * table would have to be empty already (no click in its 30-day TTL and more), and such a click
 * is then left out of the counts (it is still found by id and by probabilistic matching).
 */
async function withoutLegacy(ports: ClickCountPorts, appId: string, state: ClickLogState): Promise<ClickLogState> {
  if (state.no_legacy === true || state.log_from !== undefined || state.pending !== undefined) return state;
  if (await ports.legacyHolds()) return state;
  const after: ClickLogState = { ...state, rev: state.rev + 1, no_legacy: true };
  await put(ports, appId, after, state.rev);
  return after;
}

/** The lane's clicks of an hour after `from`, up to and including `to` when given, in log order. */
async function clicksBetween(
  ports: Pick<ClickCountPorts, 'clicksAfter'>,
  appId: string,
  withLegacy: boolean,
  hour: string,
  from: HourMark,
  upTo: (click: LoggedClick) => boolean,
): Promise<LoggedClick[]> {
  const fromTs = Math.max(from.ts, hourStartMs(hour));
  const logged = await ports.clicksAfter(appId, hour, fromTs, withLegacy);
  return logged.filter((click) => click.count_day !== undefined && isAfter(click, from) && upTo(click)).sort(byLogOrder);
}

/** The id an apply's items carry: its hour and new watermark, which no other apply of the app shares. */
const applyIdOf = (hour: string, to: HourMark): string => `${hour}/${to.ts}/${to.cid}`;

/** Another holder wrote the state since it was read: the app is left to it. */
export class StateMoved extends Error {
  constructor(appId: string) {
    super(`click-count state of ${appId} moved`);
    this.name = 'StateMoved';
  }
}

async function put(ports: ClickCountPorts, appId: string, state: ClickLogState, expectedRev: number | undefined): Promise<void> {
  if (!(await ports.putState(appId, state, expectedRev))) throw new StateMoved(appId);
}

/** Writes (2) to (4) of an apply whose state (1) is stored at `state.rev`; returns the state after it. */
async function finish(ports: ClickCountPorts, appId: string, state: ClickLogState, clicks: readonly LoggedClick[]): Promise<ClickLogState> {
  const pending = state.pending as PendingApply;
  const counts = countsOf(clicks);
  for (const count of counts) await ports.addOnce(appId, pending.id, count);
  for (const day of new Set(counts.map((count) => count.day))) await ports.stamp(appId, day);
  const { pending: _done, ...rest } = state;
  const after: ClickLogState = { ...rest, rev: state.rev + 1, hours: { ...state.hours, [pending.hour]: pending.to } };
  await put(ports, appId, after, state.rev);
  return after;
}

export interface AppCount {
  /** Clicks counted by this run. */
  readonly clicks: number;
  readonly applies: number;
}

/**
 * One run of the lane for an app: finishes the apply a dead run left pending, then counts each hour
 * from `next` to now's, up to `now - HORIZON_MS`, and closes the hours that are over. `keepGoing`
 * is asked before each apply (the invocation's time left).
 */
export async function countAppClicks(
  ports: ClickCountPorts,
  appId: string,
  nowMs: number,
  keepGoing: () => boolean = () => true,
): Promise<AppCount> {
  const horizonMs = nowMs - HORIZON_MS;
  let clicks = 0;
  let applies = 0;
  let state = await ports.state(appId);
  if (state === undefined) {
    state = { rev: 1, next: hourOf(horizonMs - FIRST_HOURS_BACK * HOUR_MS), hours: {} };
    await put(ports, appId, state, undefined);
  }
  if (state.pending) {
    const { hour, from, to } = state.pending;
    const resumed = await clicksBetween(ports, appId, readsLegacy(state, hour), hour, from, (click) => !isAfter(click, to));
    state = await finish(ports, appId, state, resumed);
    clicks += resumed.length;
    applies += 1;
  }
  state = await withoutLegacy(ports, appId, state);
  const lastHour = hourOf(horizonMs);
  const inHorizon = (click: LoggedClick) => click.ts_ms <= horizonMs;
  for (let hour = state.next, seen = 0; hour <= lastHour && seen < HOURS_PER_RUN; hour = nextHour(hour), seen += 1) {
    if (!keepGoing()) return { clicks, applies };
    // The hour is read once, and its clicks counted in applies of CLICKS_PER_APPLY in log order:
    // every click up to the horizon is visible by now (HORIZON_MS), so each apply's clicks are the
    // ones a read from its `from` would give, and a busy hour is not read again for each apply.
    const uncounted = await clicksBetween(ports, appId, readsLegacy(state, hour), hour, state.hours[hour] ?? ZERO, inHorizon);
    for (let at = 0; at < uncounted.length; at += CLICKS_PER_APPLY) {
      if (at > 0 && !keepGoing()) return { clicks, applies };
      const from = state.hours[hour] ?? ZERO;
      const batch = uncounted.slice(at, at + CLICKS_PER_APPLY);
      const last = batch[batch.length - 1];
      if (last === undefined) break;
      const to: HourMark = { ts: last.ts_ms, cid: last.click_id, n: from.n + batch.length };
      const logFrom = state.log_from ?? (batch.some((click) => click.legacy !== true) ? hour : undefined);
      const opened: ClickLogState = {
        ...state,
        rev: state.rev + 1,
        pending: { id: applyIdOf(hour, to), hour, from, to },
        ...(logFrom === undefined ? {} : { log_from: logFrom }),
      };
      await put(ports, appId, opened, state.rev);
      state = await finish(ports, appId, opened, batch);
      clicks += batch.length;
      applies += 1;
    }
    // An hour that ended before the horizon has every click it will ever have counted: closed.
    if (hourStartMs(hour) + HOUR_MS > horizonMs) break;
    const { [hour]: _closed, ...open } = state.hours;
    const closed: ClickLogState = { ...state, rev: state.rev + 1, next: nextHour(hour), hours: open };
    await put(ports, appId, closed, state.rev);
    state = closed;
  }
  return { clicks, applies };
}

/**
 * The clicks of an app the lane has not counted yet, for a read that must see every recorded click
 * (ADR 0008, "Freshness"): those after each hour's watermark in the hours from `next` that are at
 * most TOP_UP_HOURS old, with `count_day` in the window. A click of the apply in flight is left out
 * when its counter item, as read, already holds the apply's id (`applied`), so it is counted by
 * exactly one of the two.
 */
export const TOP_UP_HOURS = 2;

export interface ClickTopUp {
  /** The uncounted clicks as counter items. */
  readonly counts: readonly ClickCount[];
  /** Every day with an uncounted click or one of the apply in flight: a page built before them does not hold them. */
  readonly unsettledDays: ReadonlySet<string>;
}

/** The hours a top-up reads, given the state (undefined: the lane has not run for the app). */
export function topUpHours(state: ClickLogState | undefined, nowMs: number): string[] {
  const hours: string[] = [];
  for (let back = TOP_UP_HOURS - 1; back >= 0; back -= 1) {
    const hour = hourOf(nowMs - back * HOUR_MS);
    if (state === undefined || hour >= state.next) hours.push(hour);
  }
  return hours;
}

/**
 * The top-up of the uncounted clicks, given the state read before the counter items and the items'
 * `applied` ids (by sort key). The caller reads the state again after the items and the log, and
 * starts over if it moved: with the state unchanged, no apply but the pending one wrote in between.
 */
export async function topUp(
  log: Pick<ClickCountPorts, 'clicksAfter' | 'legacyHolds'>,
  appId: string,
  state: ClickLogState | undefined,
  appliedOf: (sortKey: string) => string | undefined,
  window: { readonly firstDay: string; readonly lastDay: string },
  nowMs: number,
): Promise<ClickTopUp> {
  const pending = state?.pending;
  const hours = topUpHours(state, nowMs);
  // Before the lane has looked (a new app, or a state of before no_legacy), one scan of one item
  // instead of the old table's 16 keys an hour: an empty old table has nothing to add.
  const legacy = hours.some((hour) => readsLegacy(state, hour)) && (await log.legacyHolds());
  const perHour = await Promise.all(
    hours.map(async (hour) => {
      const from = pending?.hour === hour ? pending.from : (state?.hours[hour] ?? ZERO);
      return clicksBetween(log, appId, legacy && readsLegacy(state, hour), hour, from, () => true);
    }),
  );
  const uncounted: LoggedClick[] = [];
  const unsettledDays = new Set<string>();
  for (const click of perHour.flat()) {
    const day = click.count_day as string;
    if (day < window.firstDay || day > window.lastDay) continue;
    unsettledDays.add(day);
    const inFlight = pending !== undefined && hourOf(click.ts_ms) === pending.hour && !isAfter(click, pending.to);
    if (inFlight) {
      const [count] = countsOf([click]);
      if (count && appliedOf(clickCountSortKey(count.day, count.dims, count.linkId)) === pending.id) continue;
    }
    uncounted.push(click);
  }
  return { counts: countsOf(uncounted), unsettledDays };
}

/** The lane's schedule: the apps, and one lease for all of them (ADR 0008: an app's applies run one at a time). */
export interface ClickLanePorts extends ClickCountPorts {
  apps(): Promise<readonly string[]>;
  /** Takes the lane's lease if it is free or has run out; false if another holder has it. */
  takeLease(holder: string, nowMs: number, leaseMs: number): Promise<boolean>;
  /** Frees the lease if the holder still has it. */
  releaseLease(holder: string): Promise<void>;
}

export interface ClickLaneRun {
  /** False: another run held the lease, and this one counted nothing. */
  readonly held: boolean;
  readonly clicks: number;
  readonly applies: number;
  readonly failed: readonly { readonly appId: string; readonly error: unknown }[];
  /** Apps not reached before `stopAtMs`: the next run's. */
  readonly unfinished: readonly string[];
}

/**
 * One scheduled run: every app's clicks, under the lane's lease. The lease outlives the invocation
 * (leaseMsFor, lease.ts), so an apply left pending by a run Lambda stopped is resumed by a later
 * run only when the stopped one can write no more. An app that fails is reported and left for the
 * next run; the others go on.
 */
export async function runClickLane(
  ports: ClickLanePorts,
  options: { readonly holder: string; readonly nowMs: () => number; readonly leaseMs: number; readonly stopAtMs: number },
): Promise<ClickLaneRun> {
  const { holder, nowMs, leaseMs, stopAtMs } = options;
  if (!(await ports.takeLease(holder, nowMs(), leaseMs))) return { held: false, clicks: 0, applies: 0, failed: [], unfinished: [] };
  const keepGoing = () => nowMs() < stopAtMs;
  let clicks = 0;
  let applies = 0;
  const failed: { appId: string; error: unknown }[] = [];
  const unfinished: string[] = [];
  try {
    for (const appId of await ports.apps()) {
      if (!keepGoing()) {
        unfinished.push(appId);
        continue;
      }
      try {
        const counted = await countAppClicks(ports, appId, nowMs(), keepGoing);
        clicks += counted.clicks;
        applies += counted.applies;
      } catch (error) {
        failed.push({ appId, error });
      }
    }
  } finally {
    await ports.releaseLease(holder);
  }
  return { held: true, clicks, applies, failed, unfinished };
}
