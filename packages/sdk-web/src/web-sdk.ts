import {
  AD_REVENUE_EVENT,
  type AdRevenueImpression,
  type Choices,
  type ConsentDetails,
  type Diagnostics,
  measures,
  Sdk,
  type SdkConfig,
  type StoragePort,
  type TrackedEvent,
  type TrackOptions,
} from '@attribution/sdk-core';
import { type Landing, landingOf } from './landing.js';
import { type Leadership, lead } from './leader.js';
import { fetchNetwork } from './network.js';
import { openStore, type WebStore } from './storage.js';

export const WEB_SDK_VERSION = 'attribution-sdk-web/0.1.0';

export interface WebSdkConfig extends SdkConfig {
  /** The page's (or PWA's) version, sent with the first-launch call. Default '0'. */
  readonly appVersion?: string;
  /** Names the IndexedDB databases, the lock and the channel between tabs. Default 'attribution'. */
  readonly storageName?: string;
  /** The URL the visitor landed on, read once for a click (landing.ts). Default: the page's URL. */
  readonly landingUrl?: string;
  /** Called once with what the landing URL said (its click id, link id and deep link fields). */
  readonly onLanding?: (landing: Landing) => void;
}

/** What a tab that does not lead writes to the outbox for the leader: an event, or a call it made. */
type OutboxEntry =
  | ({ readonly kind: 'event' } & TrackedEvent)
  | { readonly kind: 'consent'; readonly granted: boolean; readonly details?: ConsentDetails }
  | { readonly kind: 'opt_out' }
  | { readonly kind: 'forget_me' };

const LANDING_KEY = 'attribution.landing.v1';
/** Consent and opt-out as last set in any tab: a tab that does not send reads them at each track. */
const CHOICES_KEY = 'attribution.choices.v1';
/** How often the leader looks at the outbox when no message came (a channel is missing, or a message was lost). */
const MERGE_EVERY_MS = 2_000;

/**
 * The web SDK: the core on IndexedDB, run by one tab at a time (leader.ts), the others handing
 * what they track to it through the outbox (storage.ts). Every call is durable when it resolves,
 * in whichever tab it is made.
 */
export class WebSdk {
  private core?: Sdk;
  private generation = 0;
  private hiding = false;
  private stopped = false;
  private merging: Promise<void> = Promise.resolve();
  private mergeQueued = false;
  private mergeTimer?: ReturnType<typeof setInterval>;
  private sequence = 0;
  private readonly channel?: BroadcastChannel;
  private readonly leadership: Leadership;
  private readonly name: string;

  private constructor(
    private readonly config: WebSdkConfig,
    private readonly store: WebStore,
  ) {
    this.name = config.storageName ?? 'attribution';
    this.hiding = document.visibilityState === 'hidden';
    if (typeof BroadcastChannel !== 'undefined') {
      this.channel = new BroadcastChannel(`${this.name}.outbox`);
      this.channel.onmessage = () => this.merge();
    }
    addEventListener('visibilitychange', this.onVisibility);
    addEventListener('pagehide', this.onHide);
    addEventListener('pageshow', this.onVisibility);
    this.leadership = lead(
      `${this.name}.sender`,
      () => void this.startLeading(),
      () => this.stopLeading(),
    );
  }

  /** Opens the storage and starts; the tab leads at once when no other tab does. */
  static async start(config: WebSdkConfig): Promise<WebSdk> {
    const sdk = new WebSdk(config, await openStore(config.storageName));
    await sdk.readLanding();
    return sdk;
  }

  /** Tracks an event (docs/sdk.md): on the device, with its event_id, when the promise resolves. */
  async track(name: string, options: TrackOptions = {}): Promise<string | undefined> {
    if (this.core) return this.core.track(name, options);
    // As the core would answer: nothing tracked once opted out, or without consent when it is required.
    if (!measures(this.config, await this.choices(), true)) return undefined;
    const event_id = crypto.randomUUID();
    await this.post({ kind: 'event', event_id, ts_ms: Date.now(), name, options });
    return event_id;
  }

  /** Tracks one ad impression's revenue (docs/sdk.md, "Ad revenue"), from any tab, as track does. */
  trackAdRevenue(impression: AdRevenueImpression): Promise<string | undefined> {
    return this.track(AD_REVENUE_EVENT, { adRevenue: impression });
  }

  /** Grants or refuses measurement, with the user's consent as the CMP gives it (docs/sdk.md, "Consent"), from any tab. */
  async setConsent(granted: boolean, details?: ConsentDetails): Promise<void> {
    await this.choose({ consent: granted });
    await (this.core ? this.core.setConsent(granted, details) : this.post({ kind: 'consent', granted, details }));
  }

  async optOut(): Promise<void> {
    await this.choose({ opted_out: true });
    await (this.core ? this.core.optOut() : this.post({ kind: 'opt_out' }));
  }

  /** Asks the service to delete this install; in a tab that does not lead, resolves once the leader has it to do. */
  async forgetMe(): Promise<void> {
    await this.choose({ opted_out: true });
    await (this.core ? this.core.forgetMe() : this.post({ kind: 'forget_me' }));
  }

  /** Sends what waits now, from the leading tab (another tab's events first reach it through the outbox). */
  async flush(): Promise<void> {
    await this.merge();
    await this.core?.flush();
  }

  /** The core's figures in the leading tab; undefined in another. */
  diagnostics(): (Diagnostics & { storage: WebStore['kind'] }) | undefined {
    return this.core && { ...this.core.diagnostics(), storage: this.store.kind };
  }

  get leading(): boolean {
    return this.core !== undefined;
  }

  /** Stops this tab's SDK (another tab takes over sending); what waits stays on the device. */
  stop(): void {
    this.stopped = true;
    this.stopLeading();
    this.leadership.release();
    this.channel?.close();
    removeEventListener('visibilitychange', this.onVisibility);
    removeEventListener('pagehide', this.onHide);
    removeEventListener('pageshow', this.onVisibility);
  }

  // Leading.

  private async startLeading(): Promise<void> {
    if (this.stopped) return;
    const generation = ++this.generation;
    const current = () => generation === this.generation;
    // A tab that stopped leading writes nothing more: the next leader's state is the one kept.
    const state = this.store.state;
    const storage: StoragePort = {
      get: (key) => state.get(key),
      set: async (key, value) => {
        if (current()) await state.set(key, value);
      },
      remove: async (key) => {
        if (current()) await state.remove(key);
      },
    };
    const core = await Sdk.start(
      { sdkVersion: WEB_SDK_VERSION, ...this.config },
      {
        storage,
        network: fetchNetwork(() => this.hiding),
        scheduler: {
          now: () => Date.now(),
          setTimeout: (callback, ms) => {
            const timer = setTimeout(callback, ms);
            return () => clearTimeout(timer);
          },
        },
        platform: { kind: 'web', appVersion: this.config.appVersion ?? '0', randomUuid: () => crypto.randomUUID(), random: Math.random },
      },
    );
    if (!current()) return core.stop();
    this.core = core;
    this.mergeTimer = setInterval(() => this.merge(), MERGE_EVERY_MS);
    await this.merge();
    if (this.hiding) await core.onBackground();
  }

  private stopLeading(): void {
    this.generation++;
    this.core?.stop();
    this.core = undefined;
    clearInterval(this.mergeTimer);
  }

  /** The leader takes the outbox into the core's queue, in the order written, then clears what it took. */
  private merge(): Promise<void> {
    if (!this.core || this.mergeQueued) return this.merging;
    this.mergeQueued = true;
    this.merging = this.merging.then(async () => {
      this.mergeQueued = false;
      const core = this.core;
      if (!core) return;
      const written = await this.store.outbox.all();
      let events: TrackedEvent[] = [];
      for (const [, text] of written) {
        const entry = entryOf(text);
        if (entry?.kind === 'event') {
          events.push(entry);
          continue;
        }
        await core.adopt(events);
        events = [];
        if (entry?.kind === 'consent') await core.setConsent(entry.granted, entry.details);
        if (entry?.kind === 'opt_out') await core.optOut();
        if (entry?.kind === 'forget_me') void core.forgetMe();
      }
      await core.adopt(events);
      // Only once they are in the core's state: a crash in between adopts them again, by the same ids.
      await this.store.outbox.remove(written.map(([key]) => key));
    });
    return this.merging.catch(() => undefined);
  }

  // Following.

  private async choices(): Promise<Choices> {
    try {
      return JSON.parse((await this.store.state.get(CHOICES_KEY)) ?? '{}') as Choices;
    } catch {
      return {};
    }
  }

  private async choose(choice: Choices): Promise<void> {
    await this.store.state.set(CHOICES_KEY, JSON.stringify({ ...(await this.choices()), ...choice }));
  }

  private async post(entry: OutboxEntry): Promise<void> {
    const at = Date.now();
    const key = `${String(at).padStart(15, '0')}.${String(this.sequence++).padStart(9, '0')}.${crypto.randomUUID()}`;
    await this.store.outbox.put(key, JSON.stringify(entry));
    this.channel?.postMessage('outbox');
  }

  // The page.

  private readonly onVisibility = () => {
    const hidden = document.visibilityState === 'hidden';
    if (hidden === this.hiding) return;
    this.hiding = hidden;
    void (hidden ? this.core?.onBackground() : this.core?.onForeground());
  };

  /** The page is going (closed, reloaded, navigated away, or into the back-forward cache): send what waits, with keepalive. */
  private readonly onHide = () => {
    this.hiding = true;
    void this.core?.onBackground();
  };

  /** Web-to-app: the landing URL's click and deep link, read once for the device (landing.ts). */
  private async readLanding(): Promise<void> {
    const landing = landingOf(this.config.landingUrl ?? location.href);
    if (!landing || (await this.store.state.get(LANDING_KEY)) !== undefined) return;
    await this.store.state.set(LANDING_KEY, JSON.stringify(landing));
    if (landing.clickId || landing.linkId) {
      await this.track('deep_link_open', {
        params: { ...(landing.linkId && { link_id: landing.linkId }), ...(landing.clickId && { click_id: landing.clickId }) },
      });
    }
    this.config.onLanding?.(landing);
    if (landing.deepLink) this.config.onDeepLink?.(landing.deepLink);
  }
}

function entryOf(text: string): OutboxEntry | undefined {
  try {
    const entry = JSON.parse(text) as OutboxEntry;
    return typeof entry?.kind === 'string' ? entry : undefined;
  } catch {
    return undefined;
  }
}
