import { type BackoffPolicy, backoffMs, DEFAULT_BACKOFF } from './backoff.js';
import type { NetworkPort, PlatformPort, SchedulerPort, StoragePort } from './ports.js';
import { type Credentials, signedBody } from './signing.js';
import type { SkanHook } from './skan.js';
import {
  type ConsentDetails,
  DEFAULT_BOUNDS,
  dequeued,
  enqueued,
  type FirstLaunchAnswer,
  type InstallSignals,
  initialState,
  parseState,
  type QueueBounds,
  type QueuedEvent,
  type SdkState,
  withConsentDetails,
} from './state.js';

export const SDK_VERSION = 'attribution-sdk-core/0.1.0';
/** The one storage key the SDK writes (state.ts: one value, written whole). */
export const STATE_KEY = 'attribution.state.v1';

export interface Ports {
  readonly storage: StoragePort;
  readonly network: NetworkPort;
  readonly scheduler: SchedulerPort;
  readonly platform: PlatformPort;
  /** What the store said about the install (Android's install referrer), read once, at the first launch. */
  readonly installSignals?: () => Promise<InstallSignals | undefined>;
  /** SKAN conversion values: `skanConversions(port)` from a native platform (skan.ts); a web page passes none. */
  readonly skan?: SkanHook;
  /**
   * The device's advertising id (IDFA, GAID) when the platform may read it (ATT authorized, ad
   * tracking not limited), sent as each event's `device_id`. Asked at each event, and only while
   * measuring with consent: never for an event tracked before `setConsent(true)` when the app
   * requires consent.
   */
  readonly advertisingId?: () => string | undefined;
}

export interface RejectedEvent {
  readonly event_id: string;
  readonly event_name: string;
  readonly reason: string;
  readonly field?: string;
}

export interface SdkConfig extends Credentials {
  /** The service's base URL (its `BaseUrl` output, or the API domain). */
  readonly baseUrl: string;
  readonly sdkVersion?: string;
  /** Send at once when this many events wait (at most 1,000: the service's batch limit). Default 50. */
  readonly batchSize?: number;
  /** In the foreground, send what waits this often. Default 30 s. */
  readonly flushIntervalMs?: number;
  /** Gzip a batch of at least this many events. Default 10 (the interface's recommendation). */
  readonly gzipFrom?: number;
  /** A new session after this long in the background. Default 30 minutes. */
  readonly sessionTimeoutMs?: number;
  /** The first-launch call's timeout. Default 3 s. */
  readonly firstLaunchTimeoutMs?: number;
  /** A batch the service refuses whole (400) this many times is dropped and reported. Default 3. */
  readonly maxBatchRefusals?: number;
  readonly bounds?: Partial<QueueBounds>;
  readonly backoff?: Partial<BackoffPolicy>;
  /** Send nothing until setConsent(true). */
  readonly requireConsent?: boolean;
  /** With requireConsent: keep tracked events until consent is decided (default), or drop them. */
  readonly queueBeforeConsent?: boolean;
  readonly onAttribution?: (answer: FirstLaunchAnswer) => void;
  /** A deferred deep link: called once, when the first-launch answer names one. */
  readonly onDeepLink?: (deepLink: Record<string, string>) => void;
  readonly onEventRejected?: (rejected: RejectedEvent) => void;
  /** Something the app's developer should know: `unauthorized` (sending stopped), `batch_dropped`, `bad_answer`. */
  readonly onError?: (code: string, detail: string) => void;
}

export interface TrackOptions {
  /** An amount: in `currency` when given (the service converts it), else in USD. */
  readonly revenue?: number;
  readonly currency?: string;
  readonly params?: Readonly<Record<string, string | number | boolean | null>>;
  /**
   * A purchase's store transaction id (App Store transactionId, Google Play orderId), sent as
   * `transaction_id` so that a refund may name it. One the service would refuse (not 1 to 128
   * printable ASCII characters) is left out, the purchase still tracked.
   */
  readonly transactionId?: string;
  /** An ad impression's revenue: only on the `ad_revenue` event, which trackAdRevenue tracks. */
  readonly adRevenue?: AdRevenueImpression;
  /** A purchase refunded: only on the `refund` event, which trackRefund tracks. */
  readonly refund?: PurchaseRefund;
}

/**
 * A purchase refunded, in part or whole (docs/sdk.md, "Refunds"): the purchase by the event id
 * `track` returned for it or by the store's transaction id it was tracked with (one at least),
 * and the amount given back (above 0) in `currency`. The service takes back at most what the
 * purchase counted.
 */
export interface PurchaseRefund {
  readonly purchaseEventId?: string;
  readonly transactionId?: string;
  readonly revenue: number;
  readonly currency: string;
}

/** The reserved name of a purchase refund's event. */
export const REFUND_EVENT = 'refund';

/**
 * Tracks a purchase refunded: a `refund` event, queued and sent as any event (an app's server
 * sends the store's refund notifications the same way, to POST /event). A function beside the
 * class rather than a method, so that the web SDK's script-tag build, within a few bytes of its
 * 10 KB budget, leaves it out unless it is used.
 */
export const trackRefund = (sdk: Pick<Sdk, 'track'>, refund: PurchaseRefund): Promise<string | undefined> =>
  sdk.track(REFUND_EVENT, { refund });

/**
 * One ad impression's revenue as the mediation SDK's callback gives it (docs/sdk.md, "Ad
 * revenue"): AppLovin MAX's onAdRevenuePaid, LevelPlay's impression data, AdMob's OnPaidEvent.
 * The service converts `revenue` from `currency` and counts each `impressionId` of the install once.
 */
export interface AdRevenueImpression {
  readonly source: 'applovin_max' | 'ironsource_levelplay' | 'admob' | 'unity' | 'custom';
  /** The ad network that served it (1 to 64 characters). */
  readonly network: string;
  readonly format: 'banner' | 'interstitial' | 'rewarded' | 'app_open' | 'native' | 'other';
  readonly placement?: string;
  readonly adUnit?: string;
  /** At least 0; at most 100 US dollars once converted. */
  readonly revenue: number;
  /** ISO 4217 (`USD`; AdMob's micros divided by 1,000,000 first). */
  readonly currency: string;
  readonly precision: 'exact' | 'estimated' | 'publisher_defined';
  /** The platform's id of the impression (1 to 128 printable ASCII characters). */
  readonly impressionId: string;
}

/** The reserved name of an ad impression's event. */
export const AD_REVENUE_EVENT = 'ad_revenue';

/** An event tracked elsewhere (another tab), with the id and time it got there: what `adopt` queues. */
export interface TrackedEvent {
  readonly event_id: string;
  readonly ts_ms: number;
  readonly name: string;
  readonly options?: TrackOptions;
}

export interface Diagnostics {
  readonly installUuid: string;
  readonly queued: number;
  readonly queuedBytes: number;
  readonly dropped: number;
  readonly paused: boolean;
  readonly sessionCount: number;
}

/** What a send attempt came to, decided from the answer (or its absence) without touching state. */
type Outcome =
  | { kind: 'answered'; results: readonly { event_id: string; status: string; reason?: string; field?: string }[] }
  | { kind: 'retry'; retryAfter?: string }
  | { kind: 'unauthorized'; detail: string }
  | { kind: 'refused'; detail: string };

const MAX_BATCH = 1_000;

/**
 * The SDK: one serialized state machine over a persisted queue, a sender with one request in
 * flight, and a backoff policy (docs/sdk.md). Every change of state is one write of the whole
 * state (state.ts) made inside `serial`, so two calls never interleave their changes; the network
 * is awaited outside it, so `track` never waits for a request.
 */
export class Sdk {
  private chain: Promise<unknown> = Promise.resolve();
  private sending = false;
  private paused = false;
  private failures = 0;
  private retryAt = 0;
  private cancelRetry?: () => void;
  private cancelInterval?: () => void;
  private stopped = false;
  private background = false;
  private readonly settings: Required<
    Pick<
      SdkConfig,
      'sdkVersion' | 'batchSize' | 'flushIntervalMs' | 'gzipFrom' | 'sessionTimeoutMs' | 'firstLaunchTimeoutMs' | 'maxBatchRefusals'
    >
  > & { bounds: QueueBounds; backoff: BackoffPolicy };

  private constructor(
    private readonly config: SdkConfig,
    private readonly ports: Ports,
    private state: SdkState,
  ) {
    this.settings = {
      sdkVersion: config.sdkVersion ?? SDK_VERSION,
      batchSize: Math.min(Math.max(1, config.batchSize ?? 50), MAX_BATCH),
      flushIntervalMs: config.flushIntervalMs ?? 30_000,
      gzipFrom: config.gzipFrom ?? 10,
      sessionTimeoutMs: config.sessionTimeoutMs ?? 30 * 60_000,
      firstLaunchTimeoutMs: config.firstLaunchTimeoutMs ?? 3_000,
      maxBatchRefusals: config.maxBatchRefusals ?? 3,
      bounds: { ...DEFAULT_BOUNDS, ...config.bounds },
      backoff: { ...DEFAULT_BACKOFF, ...config.backoff },
    };
  }

  /**
   * Starts the SDK from what the device kept: at the very first launch it makes the install id
   * and queues the install event in the same write, so neither exists without the other. Then a
   * session, the first-launch answer, and the periodic send.
   */
  static async start(config: SdkConfig, ports: Ports): Promise<Sdk> {
    const stored = parseState(await ports.storage.get(STATE_KEY));
    let state = stored;
    if (!state) {
      const signals = await ports.installSignals?.().catch(() => undefined);
      state = { ...initialState(ports.platform.randomUuid(), ports.scheduler.now()), ...(signals && { install_signals: signals }) };
    }
    const sdk = new Sdk(config, ports, state);
    await sdk.serial(async () => {
      // The service counts installs of an app on a platform it knows, and refuses an install
      // event without one (bad_platform): a web page, which has none, sends its events alone.
      if (!stored && ports.platform.platform) {
        const attribution = attributionOf(sdk.state.install_signals);
        sdk.state = sdk.withEvent(sdk.state, 'install', { ...(attribution && { attribution }) });
        await sdk.save();
      }
      await sdk.startSession();
      // SKAN asks for its schema at launch and sends an update a crash left unsent (skan.ts).
      if (ports.skan) await sdk.save();
    });
    sdk.scheduleInterval();
    void sdk.firstLaunch();
    void sdk.send();
    return sdk;
  }

  /**
   * Tracks an event: it gets its event_id now and is on the device before the promise resolves,
   * so no retry, crash or reload can double it or lose it. Resolves with the id, or undefined when
   * nothing is measured (opted out, or consent refused or pending without queueing).
   */
  track(name: string, options: TrackOptions = {}): Promise<string | undefined> {
    return this.serial(async () => {
      if (!this.measuring(true)) return undefined;
      this.state = this.withEvent(this.state, name, fieldsOf(options));
      await this.save();
      this.sendSoon();
      return this.state.queue.at(-1)?.event_id;
    });
  }

  /**
   * Queues events tracked elsewhere with the id and time they were given there (the web SDK's
   * other tabs, which write them to storage of their own and leave the sending to one tab), in one
   * write. An id already queued is not queued again; one already sent is sent again and counted
   * once by the service, which keeps each event_id once. Resolves once they are on the device.
   */
  adopt(events: readonly TrackedEvent[]): Promise<void> {
    return this.serial(async () => {
      if (!this.measuring(true) || events.length === 0) return;
      const queued = idsOf(this.state.queue);
      for (const event of events) {
        if (!queued.has(event.event_id)) this.state = this.withEvent(this.state, event.name, fieldsOf(event.options ?? {}), event);
      }
      await this.save();
      this.sendSoon();
    });
  }

  /** Tracks one ad impression's revenue: an `ad_revenue` event, queued and sent as any event. */
  trackAdRevenue(impression: AdRevenueImpression): Promise<string | undefined> {
    return this.track(AD_REVENUE_EVENT, { adRevenue: impression });
  }

  /** The app was opened by a link (a Universal Link, an App Link, or a URL with the link's click id): a `deep_link_open` event. */
  openedByLink(url: string): Promise<string | undefined> {
    const { linkId, clickId } = linkOf(url);
    return this.track('deep_link_open', { params: { ...(linkId && { link_id: linkId }), ...(clickId && { click_id: clickId }) } });
  }

  /** Sends what waits now (still one request at a time, and not before a backoff ends). */
  async flush(): Promise<void> {
    await this.send();
  }

  /** The app came to the foreground: a new session after the timeout, and the periodic send again. */
  async onForeground(): Promise<void> {
    this.background = false;
    await this.serial(() => this.startSession());
    this.scheduleInterval();
    void this.send();
  }

  /** The app went to the background: its time is kept for the session rule, and what waits is sent at once. */
  async onBackground(): Promise<void> {
    this.background = true;
    this.cancelInterval?.();
    this.cancelInterval = undefined;
    await this.serial(async () => {
      this.state = { ...this.state, session: { ...this.state.session, last_active_ms: this.ports.scheduler.now() } };
      await this.save();
    });
    await this.send();
  }

  /**
   * Grants or refuses measurement (with requireConsent). Refused, what waits is dropped. With
   * `details` that differ from those kept, the next event tracked (and the install event, when it
   * still waits) carries them as `consent`, for the service's latest-wins store.
   */
  async setConsent(granted: boolean, details?: ConsentDetails): Promise<void> {
    await this.serial(async () => {
      this.state = granted ? { ...this.state, consent: true } : { ...dequeued(this.state, idsOf(this.state.queue)), consent: false };
      if (details && JSON.stringify(details) !== JSON.stringify(this.state.consent_details))
        this.state = withConsentDetails(this.state, details, this.sending);
      await this.save();
    });
    if (granted) {
      void this.firstLaunch();
      void this.send();
    }
  }

  /** Stops measuring on this device for good: nothing more is queued or sent, and what waits is dropped. */
  async optOut(): Promise<void> {
    await this.serial(async () => {
      this.state = { ...dequeued(this.state, idsOf(this.state.queue)), opted_out: true };
      await this.save();
    });
  }

  /**
   * Asks the service to delete this install's data (POST /privacy/delete), retried until it
   * answers 202, then stops measuring and forgets the queue. Resolves once the service took it.
   */
  async forgetMe(): Promise<void> {
    await this.optOut();
    for (let failures = 1; !this.stopped; failures++) {
      const outcome = await this.post('/privacy/delete', { install_uuid: this.state.install_uuid }, false).catch(() => undefined);
      if (outcome?.status === 202) return;
      if (outcome && outcome.status !== 429 && outcome.status < 500) {
        this.config.onError?.('forget_refused', `POST /privacy/delete answered ${outcome.status}`);
        return;
      }
      await this.wait(backoffMs(failures, this.ports.platform.random(), this.settings.backoff, outcome?.headers['retry-after']));
    }
  }

  diagnostics(): Diagnostics {
    return {
      installUuid: this.state.install_uuid,
      queued: this.state.queue.length,
      queuedBytes: this.state.queue_bytes,
      dropped: this.state.dropped,
      paused: this.paused,
      sessionCount: this.state.session.count,
    };
  }

  /** Stops the timers (a test, or an app tearing the SDK down); what waits stays on the device. */
  stop(): void {
    this.stopped = true;
    this.cancelInterval?.();
    this.cancelRetry?.();
  }

  // The machine.

  private serial<T>(operation: () => Promise<T>): Promise<T> {
    const next = this.chain.then(operation, operation);
    this.chain = next.catch(() => undefined);
    return next;
  }

  private save(): Promise<void> {
    const write = (state: SdkState) => {
      this.state = state;
      return this.ports.storage.set(STATE_KEY, JSON.stringify(state));
    };
    // SKAN counts the new events into this same write and calls Apple after it (skan.ts).
    return this.ports.skan?.(this.state, write, this.config, this.ports, () => this.serial(() => this.save())) ?? write(this.state);
  }

  private measuring(queueing = false): boolean {
    return measures(this.config, this.state, queueing);
  }

  /** In the background no periodic send runs, and the platform may suspend the app at any moment: send at once. */
  private sendSoon(): void {
    if (this.background || this.state.queue.length >= this.settings.batchSize) void this.send();
  }

  private withEvent(
    state: SdkState,
    name: string,
    fields: Record<string, unknown>,
    given?: Pick<TrackedEvent, 'event_id' | 'ts_ms'>,
  ): SdkState {
    // Measuring without `queueing`: consent given (or not required), so an id never rides on an event tracked before consent.
    const deviceId = this.measuring() ? this.ports.advertisingId?.() : undefined;
    const consent = state.consent_unsent && state.consent_details;
    if (consent) state = { ...state, consent_unsent: false };
    const event: QueuedEvent = {
      event_id: given?.event_id ?? this.ports.platform.randomUuid(),
      event_name: name,
      install_uuid: state.install_uuid,
      ts_ms: given?.ts_ms ?? this.ports.scheduler.now(),
      ...(this.ports.platform.platform && { platform: this.ports.platform.platform }),
      ...(deviceId && { device_id: deviceId }),
      ...(consent && { consent }),
      ...fields,
    };
    return enqueued(state, event, this.settings.bounds);
  }

  private async startSession(): Promise<void> {
    const now = this.ports.scheduler.now();
    const { count, last_active_ms } = this.state.session;
    if (count > 0 && now - last_active_ms < this.settings.sessionTimeoutMs) return;
    this.state = { ...this.state, session: { count: count + 1, last_active_ms: now } };
    if (this.measuring(true)) {
      this.state = this.withEvent(this.state, 'session_start', { properties: { session_count: count + 1 } });
    }
    await this.save();
  }

  private scheduleInterval(): void {
    if (this.stopped || this.cancelInterval) return;
    this.cancelInterval = this.ports.scheduler.setTimeout(() => {
      this.cancelInterval = undefined;
      void this.send();
      this.scheduleInterval();
    }, this.settings.flushIntervalMs);
  }

  /** The sender: one request in flight, batches from the head of the queue until it is empty or a failure waits. */
  private async send(): Promise<void> {
    if (this.sending) return;
    this.sending = true;
    try {
      for (;;) {
        const batch = await this.serial(async () => this.nextBatch());
        if (!batch) return;
        const outcome = await this.attempt(batch);
        const more = await this.serial(() => this.settle(batch, outcome));
        if (!more) return;
      }
    } finally {
      this.sending = false;
    }
  }

  private nextBatch(): QueuedEvent[] | undefined {
    if (this.stopped || this.paused || !this.measuring() || this.state.queue.length === 0) return undefined;
    if (this.ports.scheduler.now() < this.retryAt) return undefined;
    return this.state.queue.slice(0, this.settings.batchSize);
  }

  /** One attempt: stamped and signed now (the service corrects event times by its stamp), the answer read. */
  private async attempt(batch: readonly QueuedEvent[]): Promise<Outcome> {
    let response: Awaited<ReturnType<NetworkPort>>;
    try {
      response = await this.post(
        '/event',
        { events: batch, sent_at_ms: this.ports.scheduler.now() },
        batch.length >= this.settings.gzipFrom,
      );
    } catch {
      return { kind: 'retry' };
    }
    if (response.status === 200) {
      const results = resultsOf(response.body);
      return results ? { kind: 'answered', results } : { kind: 'retry' };
    }
    if (response.status === 429 || response.status >= 500) return { kind: 'retry', retryAfter: response.headers['retry-after'] };
    if (response.status === 401) return { kind: 'unauthorized', detail: errorOf(response.body) };
    return { kind: 'refused', detail: `${response.status} ${errorOf(response.body)}` };
  }

  /** Applies an attempt's outcome to the state; true when the sender may go on at once. */
  private async settle(batch: readonly QueuedEvent[], outcome: Outcome): Promise<boolean> {
    switch (outcome.kind) {
      case 'answered': {
        this.failures = 0;
        const byId = new Map(batch.map((event) => [event.event_id, event]));
        // The whole batch is answered: every event of it leaves the queue, accepted or rejected.
        this.state = dequeued(this.state, new Set(byId.keys()));
        await this.save();
        for (const result of outcome.results) {
          const event = byId.get(result.event_id);
          if (result.status === 'rejected' && event) {
            this.config.onEventRejected?.({
              event_id: event.event_id,
              event_name: event.event_name,
              reason: result.reason ?? 'unknown',
              field: result.field,
            });
          }
        }
        return true;
      }
      case 'unauthorized':
        // Wrong keys or secret: sending more would be refused the same way. The queue is kept for a build that fixes them.
        this.paused = true;
        this.config.onError?.('unauthorized', outcome.detail);
        return false;
      case 'refused': {
        const refusals = this.state.head_refusals + 1;
        if (refusals >= this.settings.maxBatchRefusals) {
          this.state = { ...dequeued(this.state, idsOf(batch)), dropped: this.state.dropped + batch.length };
          await this.save();
          this.config.onError?.('batch_dropped', `${batch.length} events refused as a batch ${refusals} times: ${outcome.detail}`);
          return true;
        }
        this.state = { ...this.state, head_refusals: refusals };
        await this.save();
        this.config.onError?.('bad_answer', outcome.detail);
        this.scheduleRetry();
        return false;
      }
      case 'retry':
        this.scheduleRetry(outcome.retryAfter);
        return false;
    }
  }

  private scheduleRetry(retryAfter?: string): void {
    this.failures++;
    const delay = backoffMs(this.failures, this.ports.platform.random(), this.settings.backoff, retryAfter);
    this.retryAt = this.ports.scheduler.now() + delay;
    this.cancelRetry?.();
    if (this.stopped) return;
    this.cancelRetry = this.ports.scheduler.setTimeout(() => {
      this.cancelRetry = undefined;
      void this.send();
    }, delay);
  }

  /** The first-launch answer (POST /sdk/v1/attribution), asked until the service gives one, then kept. */
  private async firstLaunch(): Promise<void> {
    const known = this.state.first_launch;
    if (known) {
      this.config.onAttribution?.(known);
      return;
    }
    // The route answers installs of an app (ios, android) and refuses any other platform: a web page asks nothing.
    if (!this.measuring() || !this.ports.platform.platform) return;
    const signals = this.state.install_signals;
    // The route reads the Play referrer; Apple's token goes with the install event only (docs/deep-links.md, "First launch").
    const body = {
      install_uuid: this.state.install_uuid,
      platform: this.ports.platform.kind,
      app_version: this.ports.platform.appVersion,
      sdk_version: this.settings.sdkVersion,
      ...(signals?.install_referrer !== undefined && { install_referrer: signals.install_referrer }),
      ...(signals?.referrer_click_ms !== undefined && { referrer_click_ms: signals.referrer_click_ms }),
      ...(signals?.install_begin_ms !== undefined && { install_begin_ms: signals.install_begin_ms }),
    };
    let response: Awaited<ReturnType<NetworkPort>> | undefined;
    try {
      response = await this.post('/sdk/v1/attribution', body, false, this.settings.firstLaunchTimeoutMs);
    } catch {
      return; // Asked again at the next start or consent.
    }
    const answer = response.status === 200 ? answerOf(response.body) : undefined;
    if (!answer) return;
    await this.serial(async () => {
      this.state = { ...this.state, first_launch: answer };
      await this.save();
    });
    this.config.onAttribution?.(answer);
    if (answer.deep_link) this.config.onDeepLink?.(answer.deep_link);
  }

  private post(path: string, payload: unknown, gzip: boolean, timeoutMs = 30_000) {
    const { body, headers } = signedBody(this.config, payload, { gzip, sdkVersion: this.settings.sdkVersion });
    // No URL class: React Native's is incomplete without a polyfill.
    return this.ports.network({ url: `${this.config.baseUrl.replace(/\/+$/, '')}${path}`, method: 'POST', headers, body, timeoutMs });
  }

  private wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      this.ports.scheduler.setTimeout(resolve, ms);
    });
  }
}

/** The device's own choices: opted out, and consent (undefined until decided). */
export type Choices = Partial<Pick<SdkState, 'opted_out' | 'consent'>>;

/**
 * Whether events are measured now; `queueing`: whether they may be queued (before consent, when
 * allowed). One rule for the core and for the web SDK's tabs that do not send (web-sdk.ts).
 */
export function measures(config: Pick<SdkConfig, 'requireConsent' | 'queueBeforeConsent'>, choices: Choices, queueing = false): boolean {
  if (choices.opted_out) return false;
  if (!config.requireConsent || choices.consent === true) return true;
  return queueing && choices.consent === undefined && (config.queueBeforeConsent ?? true);
}

/** The install event's `attribution` (docs/ingestion.md): the Play referrer and its times, and Apple's AdServices token. */
function attributionOf(signals: InstallSignals | undefined): Record<string, string | number> | undefined {
  const attribution = {
    ...(signals?.install_referrer && { referrer: signals.install_referrer }),
    ...(signals?.install_referrer && signals.referrer_click_ms !== undefined && { referrer_click_ms: signals.referrer_click_ms }),
    ...(signals?.install_referrer && signals.install_begin_ms !== undefined && { install_begin_ms: signals.install_begin_ms }),
    ...(signals?.adservices_token && { adservices_token: signals.adservices_token }),
  };
  return Object.keys(attribution).length > 0 ? attribution : undefined;
}

const idsOf = (events: readonly QueuedEvent[]) => new Set(events.map((event) => event.event_id));

/** What `track`'s options add to an event: the revenue as the interface takes it, and the params as properties. */
function fieldsOf(options: TrackOptions): Record<string, unknown> {
  const fields: Record<string, unknown> = {};
  if (options.revenue !== undefined) {
    if (options.currency !== undefined) Object.assign(fields, { revenue: options.revenue, currency: options.currency });
    else fields.revenue_usd = options.revenue;
  }
  if (options.params) fields.properties = { ...options.params };
  const transactionId = options.transactionId;
  if (typeof transactionId === 'string' && /^[!-~]{1,128}$/.test(transactionId)) fields.transaction_id = transactionId;
  if (options.adRevenue) fields.ad_revenue = snakeCase(options.adRevenue);
  if (options.refund) fields.refund = snakeCase(options.refund);
  return fields;
}

/** An option object's members as the interface names them (`impressionId` -> `impression_id`), those left undefined out. */
const snakeCase = (value: object): Record<string, unknown> =>
  Object.fromEntries(
    Object.entries(value)
      .filter(([, member]) => member !== undefined)
      .map(([name, member]) => [name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`), member]),
  );

/** An answer's body as JSON; undefined when it is none (one parse for the three readers below, and fewer bytes in the web build). */
function jsonOf(text: string): Record<string, unknown> | undefined {
  try {
    return JSON.parse(text) ?? undefined;
  } catch {
    return undefined;
  }
}

function resultsOf(text: string): Extract<Outcome, { kind: 'answered' }>['results'] | undefined {
  const results = jsonOf(text)?.results;
  return Array.isArray(results) ? (results as Extract<Outcome, { kind: 'answered' }>['results']) : undefined;
}

function errorOf(text: string): string {
  const error = jsonOf(text)?.error;
  return typeof error === 'string' ? error : 'no error code';
}

function answerOf(text: string): FirstLaunchAnswer | undefined {
  const body = jsonOf(text) as Partial<FirstLaunchAnswer> | undefined;
  if (body?.status !== 'found' && body?.status !== 'not_found') return undefined;
  return {
    status: body.status,
    attribution: body.attribution ?? null,
    deep_link: body.deep_link ?? null,
    ...(body.reason && { reason: body.reason }),
  };
}

/** The link id (`/l/{link_id}`) and click id (`click_id` query parameter) a link URL carries, if any. */
export function linkOf(url: string): { linkId?: string; clickId?: string } {
  const [beforeFragment = ''] = url.split('#');
  const [path = '', query = ''] = beforeFragment.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/?]*/i, '').split('?');
  const linkId = /^\/l\/([A-Za-z0-9_-]{1,64})\/?$/.exec(path)?.[1];
  const rawClickId = query
    .split('&')
    .map((pair) => pair.split('='))
    .find(([name]) => name === 'click_id')?.[1];
  let clickId: string | undefined;
  try {
    clickId = rawClickId === undefined ? undefined : decodeURIComponent(rawClickId);
  } catch {
    clickId = undefined;
  }
  return { ...(linkId && { linkId }), ...(clickId && /^[A-Za-z0-9._:-]{1,128}$/.test(clickId) && { clickId }) };
}
