import type { HttpResponse } from './ports.js';
import { measures, type Ports, SDK_VERSION, type SdkConfig } from './sdk.js';
import { HEADERS, signature } from './signing.js';
import type { QueuedEvent, SdkState } from './state.js';

/**
 * Conversion values for SKAdNetwork 4 / AdAttributionKit, chosen on the device from the app's
 * schema (docs/skan-postbacks.md, "Choosing a conversion value on the device"). A module of its
 * own that a native platform passes in (`skanConversions(port)`), so a web build, which passes
 * nothing, bundles none of it: sdk.ts imports only its types and calls one hook from its `save`.
 *
 * The schema's wire type is defined here, not imported from functions/domain/skan/schema.ts:
 * that module imports node:crypto, and the core imports no Node built-in.
 */

export type PostbackWindow = 0 | 1 | 2;
export type CoarseValue = 'low' | 'medium' | 'high';

/** GET /sdk/v1/skan-schema's body (the service's canonical schema, with its version). */
export interface SkanSchema {
  readonly version?: number;
  readonly updated_ms?: number;
  readonly fine: readonly { readonly value: number; readonly revenue_usd: readonly [number, number]; readonly events: readonly string[] }[];
  readonly coarse: readonly {
    readonly window: PostbackWindow;
    readonly value: CoarseValue;
    readonly revenue_usd: readonly [number, number];
    readonly events: readonly string[];
  }[];
  readonly lock: readonly { readonly window: PostbackWindow; readonly events: readonly string[] }[];
}

/** One call to Apple: `fine` only in window 0; `lockWindow` ends the window early. */
export interface SkanUpdate {
  readonly window: PostbackWindow;
  readonly fine?: number;
  readonly coarse?: CoarseValue;
  readonly lockWindow: boolean;
}

/**
 * What a native platform implements (React Native, iOS): one call to
 * `SKAdNetwork.updatePostbackConversionValue(fine, coarseValue:, lockWindow:)` or AdAttributionKit's
 * `Postback.updateConversionValue`. Resolves once Apple took it; rejects when it did not (the core
 * calls again with the same update at the next change or start).
 */
export interface SkanPort {
  updateConversionValue(update: SkanUpdate): Promise<void>;
}

/** The current window's tally and what was sent in it. */
export interface SkanWindowState {
  readonly window: PostbackWindow;
  readonly revenue_usd: number;
  /** Names of the events counted in the window, each once. */
  readonly events: readonly string[];
  readonly fine?: number;
  readonly coarse?: CoarseValue;
  readonly locked: boolean;
}

/** Kept in the SDK's one state value (state.ts), so a restart remembers the schema, the tally and what was sent. */
export interface SkanState {
  readonly first_launch_ms: number;
  /** The newest queued event counted: the events after it in the queue are the new ones. */
  readonly last_counted?: string;
  readonly schema?: SkanSchema;
  readonly etag?: string;
  /** When the schema was last asked for (whatever the answer): the 5-minute cache runs from here. */
  readonly checked_ms?: number;
  readonly current?: SkanWindowState;
  /**
   * An update chosen and written with the event that caused it, not yet taken by Apple. Written
   * before the call, so a crash between the two sends it again (the same value: harmless) rather
   * than forgetting it; its window is remembered as sent, so nothing lower follows.
   */
  readonly pending?: SkanUpdate;
}

/**
 * Called by the machine at every save, inside its serial order, instead of writing `state`
 * itself: counts the events queued since the last save into the same write, calls Apple after
 * it, and asks for the schema when the cache ran out; `again` runs a save in the machine's
 * serial order (where a schema answer is applied). Made by `skanConversions`. Plain arguments,
 * not an object, because every byte of the call is in the web build too.
 */
export type SkanHook = (
  state: SdkState,
  write: (state: SdkState) => Promise<void>,
  config: SdkConfig,
  ports: Ports,
  again: () => Promise<void>,
) => Promise<void>;

const DAY_MS = 24 * 60 * 60_000;
/** Cache-Control: private, max-age=300 (functions/sdk-skan-schema.ts). */
export const SCHEMA_MAX_AGE_MS = 5 * 60_000;
const COARSE_RANK: Readonly<Record<CoarseValue, number>> = { low: 0, medium: 1, high: 2 };

/** Window 0: days 0 to 2 from the first launch; 1: days 3 to 7; 2: days 8 to 35; after that none. */
export function windowOf(firstLaunchMs: number, atMs: number): PostbackWindow | undefined {
  const day = Math.floor((atMs - firstLaunchMs) / DAY_MS);
  if (day <= 2) return 0; // A clock behind the first launch reads as its first day.
  if (day <= 7) return 1;
  if (day <= 35) return 2;
  return undefined;
}

/** The value the rule picks for a window's tally (step 4): fine in window 0, coarse in every window. */
export function chosenValues(
  schema: SkanSchema,
  tally: Pick<SkanWindowState, 'window' | 'revenue_usd' | 'events'>,
): { fine?: number; coarse?: CoarseValue } {
  const qualifies = (entry: { revenue_usd: readonly [number, number]; events: readonly string[] }) =>
    entry.revenue_usd[0] <= tally.revenue_usd && entry.events.every((name) => tally.events.includes(name));
  let fine: number | undefined;
  if (tally.window === 0) {
    for (const entry of schema.fine) if (qualifies(entry) && (fine === undefined || entry.value > fine)) fine = entry.value;
  }
  let coarse: CoarseValue | undefined;
  for (const entry of schema.coarse) {
    if (entry.window === tally.window && qualifies(entry) && (coarse === undefined || COARSE_RANK[entry.value] > COARSE_RANK[coarse])) {
      coarse = entry.value;
    }
  }
  return { ...(fine !== undefined && { fine }), ...(coarse !== undefined && { coarse }) };
}

/** The revenue in US dollars an event adds: `revenue_usd`, or an amount given in USD (the core has no exchange rates). */
function revenueOf(event: QueuedEvent): number {
  const amount = event.revenue_usd ?? (event.currency === 'USD' ? event.revenue : undefined);
  return typeof amount === 'number' && Number.isFinite(amount) ? amount : 0;
}

/**
 * Steps 5 and 6 for the window's tally: the update to send, if the choice rose or a lock event
 * occurred, and the window as it stands once sent. Pure; the property test's oracle re-implements
 * it from the doc, not from here.
 */
function decided(
  schema: SkanSchema | undefined,
  current: SkanWindowState,
  lockingEvent: string | undefined,
): { current: SkanWindowState; update?: SkanUpdate } {
  if (!schema || current.locked) return { current };
  const chosen = chosenValues(schema, current);
  const fine = higher(chosen.fine, current.fine, (v) => v);
  const coarse = higher(chosen.coarse, current.coarse, (v) => COARSE_RANK[v]);
  const locking =
    lockingEvent !== undefined && schema.lock.some((rule) => rule.window === current.window && rule.events.includes(lockingEvent));
  if (!locking && fine === current.fine && coarse === current.coarse) return { current };
  const next = { ...current, ...(fine !== undefined && { fine }), ...(coarse !== undefined && { coarse }), locked: locking };
  // Window 0 sends the fine and the coarse value together; a lock sends the values standing.
  const update: SkanUpdate = {
    window: current.window,
    ...(fine !== undefined && { fine }),
    ...(coarse !== undefined && { coarse }),
    lockWindow: locking,
  };
  return { current: next, update };
}

function higher<T>(chosen: T | undefined, sent: T | undefined, rank: (value: T) => number): T | undefined {
  if (chosen === undefined) return sent;
  if (sent === undefined) return chosen;
  return rank(chosen) > rank(sent) ? chosen : sent;
}

/** A window's state, started fresh when `window` is a later one than the kept one. */
function windowState(kept: SkanWindowState | undefined, window: PostbackWindow): SkanWindowState | undefined {
  if (kept && kept.window === window) return kept;
  if (kept && kept.window > window) return undefined; // A clock set back: the window was left already.
  return { window, revenue_usd: 0, events: [], locked: false };
}

/** The SKAN hook for a platform whose `port` calls Apple; pass the result as the `skan` port. */
export function skanConversions(port: SkanPort): SkanHook {
  let asking = false;
  let arrived: { response?: HttpResponse; at: number } | undefined;
  return async (state, write, config, ports, again) => {
    const now = ports.scheduler.now();
    let next = counted(state);
    if (arrived) next = answered(next, arrived.response, arrived.at);
    arrived = undefined;
    // Apple only updates the current window: an update left from an earlier one is dropped.
    if (next.skan) next = { ...next, skan: withoutPending(next.skan, windowOf(next.skan.first_launch_ms, now)) };
    await write(next);
    const pending = next.skan?.pending;
    // Counted before consent (the events are queued then), sent to Apple only once measuring.
    if (pending && measures(config, next)) {
      const taken = await port.updateConversionValue(pending).then(
        () => true,
        () => false,
      );
      // A rejected call stays pending: it goes again at the next save or launch, if its window lasts.
      if (taken && next.skan) {
        const { pending: _sent, ...skan } = next.skan;
        await write({ ...next, skan });
      }
    }
    if (asking || !measures(config, next) || !stale(next.skan, now)) return;
    asking = true;
    void ports
      .network(schemaRequest(config, next.skan?.etag))
      .catch(() => undefined)
      .then((response) => {
        arrived = { response, at: ports.scheduler.now() };
        asking = false;
        return again();
      })
      // A failed write: the state in memory has the answer, and the next save writes it again.
      .catch(() => undefined);
  };
}

/** The state with the events queued since the last count counted, each deciding an update in turn. */
function counted(state: SdkState): SdkState {
  const last = state.skan?.last_counted;
  const from = last === undefined ? 0 : state.queue.findIndex((event) => event.event_id === last) + 1;
  let next = state;
  for (const event of state.queue.slice(from)) next = countedEvent(next, event);
  const newest = state.queue.at(-1)?.event_id;
  return next.skan && newest ? { ...next, skan: { ...next.skan, last_counted: newest } } : next;
}

function countedEvent(state: SdkState, event: QueuedEvent): SdkState {
  const skan: SkanState = state.skan ?? { first_launch_ms: event.ts_ms };
  const window = windowOf(skan.first_launch_ms, event.ts_ms);
  const kept = window === undefined ? undefined : windowState(skan.current, window);
  if (!kept) return { ...state, skan };
  const tally: SkanWindowState = {
    ...kept,
    revenue_usd: kept.revenue_usd + revenueOf(event),
    events: kept.events.includes(event.event_name) ? kept.events : [...kept.events, event.event_name],
  };
  const { current, update } = decided(skan.schema, tally, event.event_name);
  return { ...state, skan: { ...withoutPending(skan, window), current, ...(update && { pending: update }) } };
}

/** Whether the schema is due to be asked for (never asked, or five minutes since, or a clock set back). */
function stale(skan: SkanState | undefined, nowMs: number): boolean {
  const checked = skan?.checked_ms;
  return checked === undefined || nowMs - checked >= SCHEMA_MAX_AGE_MS || nowMs < checked;
}

/** GET /sdk/v1/skan-schema, signed like POST /event over the empty body, revalidated by its ETag. */
function schemaRequest(config: SdkConfig, etag: string | undefined) {
  return {
    url: `${config.baseUrl.replace(/\/+$/, '')}/sdk/v1/skan-schema`,
    method: 'GET' as const,
    headers: {
      [HEADERS.companyKey]: config.companyKey,
      [HEADERS.appKey]: config.appKey,
      [HEADERS.signature]: signature(config.signingSecret, new Uint8Array()),
      [HEADERS.sdk]: config.sdkVersion ?? SDK_VERSION,
      ...(etag && { 'if-none-match': etag }),
    },
    timeoutMs: 10_000,
  };
}

/** The state once the schema was asked for: 200 a new schema (decided on at once), 304 kept, 404 none, anything else kept. */
function answered(state: SdkState, response: HttpResponse | undefined, nowMs: number): SdkState {
  const kept: SkanState = { ...(state.skan ?? { first_launch_ms: nowMs }), checked_ms: nowMs };
  let skan = kept;
  if (response?.status === 200) {
    const schema = schemaOf(response.body);
    if (schema) skan = { ...kept, schema, ...(response.headers.etag && { etag: response.headers.etag }) };
  } else if (response?.status === 404) {
    // no_schema: the app has none (or took it away): send no value.
    const { schema: _schema, etag: _etag, ...rest } = kept;
    skan = rest;
  }
  if (skan.schema === state.skan?.schema) return { ...state, skan };
  // A new schema may already be met by what the window counted: decided once on arrival.
  const window = windowOf(skan.first_launch_ms, nowMs);
  const current = window === undefined ? undefined : windowState(skan.current, window);
  if (!current) return { ...state, skan };
  const decision = decided(skan.schema, current, undefined);
  return {
    ...state,
    skan: { ...withoutPending(skan, window), current: decision.current, ...(decision.update && { pending: decision.update }) },
  };
}

/** The kept state without a pending update that belongs to another window (Apple only updates the current one). */
function withoutPending(skan: SkanState, window: PostbackWindow | undefined): SkanState {
  if (!skan.pending || skan.pending.window === window) return skan;
  const { pending: _dropped, ...rest } = skan;
  return rest;
}

function schemaOf(text: string): SkanSchema | undefined {
  try {
    const body = JSON.parse(text) as Partial<SkanSchema>;
    if (!Array.isArray(body.fine) || !Array.isArray(body.coarse)) return undefined;
    return { ...body, fine: body.fine, coarse: body.coarse, lock: Array.isArray(body.lock) ? body.lock : [] };
  } catch {
    return undefined;
  }
}
